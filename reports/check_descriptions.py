"""What each ledger check is, in one line: the report's "what" column (`describe`), one place for every check name.

A check name is looked up exactly (`CHECKS`), then against the families (`FAMILIES`: a full-match pattern whose
groups fill the text, for names with a tokenizer, family, range, control or case suffix), longest pattern first.
Control checks take their text from the control itself (`controls.registry.Control.breaks`), never from here.
A writer that adds a check name adds its line here; `properties/test_check_descriptions.py` scans the source for
every name a writer can produce and fails on one without a description (or with its own name as description).
"""

from __future__ import annotations

import re
from functools import lru_cache

from delta_suite.fuzz.checker import INTERNAL_BREAKS

from delta_suite import controls

UNDESCRIBED = "(no description: add one to reports/check_descriptions.py)"

CHECKS: dict[str, str] = {
    # level 1: the encoder and the reference oracle
    "samples.single_vs_batch_and_postprocess": "built-in samples: single vs batch encode and post-processing",
    "samples.load": "built-in samples: a tokenizer that could not be loaded (no comparison)",
    "corpus.whole": "whole encodes of corpus documents vs the reference",
    "corpus.whole_encode": "whole encodes of corpus documents vs the reference",
    "corpus.whole_encode.delta": "corpus documents: the library's batch path (delta's whole encode, no cut) vs its "
                                 "single encode (the library against itself, not an independent reference)",
    "corpus.whole_encode.reference-batch": "corpus documents: the library's batch encode vs its single encode (the "
                                           "library against itself)",
    "reference.library_meter": "the reference library meter: one call and its time per library encode",
    "reference.batch_vs_single": "reference oracle: the batch encode equals one encode per text",
    "reference.chunk_rows_vs_batch": "reference oracle: the chunked encoder's IDs-only batch call equals the batch "
                                     "encode",
    "reference.post_process_once": "reference oracle: special tokens added once, to the assembled sequence",
    "reference.unit_lengths_vs_units": "reference oracle: pre-token units rebuilt from their lengths equal the units",
    "post_process_once": "add_special_tokens applies the post-processor once, to the assembled sequence",
    # level 2: cuts and the chunked path
    "accepted_cut_splits_reference": "every cut the rules accept splits the reference encode (a token boundary)",
    "accepted_cut_sets_concatenate": "the pieces at all accepted cuts, encoded apart, concatenate to the reference",
    "encode_chunked_equals_reference": "encode_chunked on generated texts equals the whole reference encode",
    "no_accepted_cut_inside_special": "no accepted cut falls inside a selected special-token occurrence",
    "inadmissible_to_reference": "a tokenizer admission refuses gets no cut and a whole reference encode",
    "nfc_window_special_conservative": "under NFC, a cut whose anchor window touches a special token is refused",
    "repeated_letter_whole": "a document of one repeated letter has no accepted cut: one whole encode",
    "short_text_never_cut": "a text shorter than 256 code points is never cut, at any chunk count",
    "short_texts_drawn": "drawn texts of up to 255 characters: chunked encode and session equal the reference",
    "short_texts_exact": "empty, one-character and marker-only texts: chunked encode and session equal the reference",
    "u0958_counterexample": "U+0958 before '/': refused under NFC (M->O after normalization), accepted without NFC",
    "corpus.chunked": "corpus documents split at the planner's cuts vs whole encodes",
    "corpus.chunked_encode": "corpus documents split at the planner's cuts vs whole encodes",
    "corpus.short_rows": "a user corpus of empty, one- and two-character rows compared at every level",
    "chunked.planner_cuts": "documents split at the planner's cuts vs whole encodes",
    "pattern_pairs.gain": "corpus documents: cuts gained by the pattern's proved pairs over the floor's",
    "pattern_pairs.accepted_cuts": "each pair the pattern proves: the floor refuses the cut, the rules accept it, "
                                   "and the reference agrees",
    "battery.cut": "adversarial battery, cut path: every accepted cut vs the reference",
    "battery.repair": "adversarial battery, repair path: sessions vs the reference",
    "battery.encoder": "adversarial battery, encoder: whole encodes vs the reference",
    "battery.determinism": "the battery regenerated with its seed is identical byte for byte (its digest too)",
    "battery.apostrophe": "adversarial battery: apostrophe seams vs the reference",
    "battery.nfc_seams": "adversarial battery: NFC seams vs the reference",
    "campaign.oracle_time_in_library": "fuzz campaign: the oracle's time is counted inside the library meter, "
                                       "never around the library call",
    "cut_map.battery": "array cut evaluation vs the specification at every offset of the ci battery",
    "cut_map.control_rules": "array cut evaluation vs the specification under every cut control's rules",
    "cut_map.no_special_rule": "array cut evaluation vs the specification with the special-token rule off, on texts "
                               "holding special tokens",
    "cut_map.selection": "array evaluation's special-token selection vs the specification's two-stage scan, per text",
    "cut_map.windows_at_specials": "array cut evaluation on windows that end where a special-token string starts, "
                                   "or start where one ends, equals the whole text's map there",
    "cut_map.windows": "array cut evaluation on a scan window equals the whole text's map there",
    "special_cut.any_set_concatenates": "marker-dense texts: every set of accepted cuts concatenates to the reference",
    "special_cut.non_special_chat_replay": "chat replay with the non-special added tokens, turn by turn",
    "special_cut.non_special_edges_and_cuts": "non-special added tokens: occurrence edges and cuts vs the reference",
    "special_cut.non_special_encode_special_tokens": "encode_special_tokens on: special strings encode as text",
    "special_cut.non_special_flag_changes_no_id": "the special flag of the non-special added tokens changes no ID",
    "special_cut.planner_prefers_markers": "a rendered chat with markers is cut at markers only, and equals the "
                                           "reference",
    "special_cut.role_marker_edges": "every edge of a selected special-token occurrence in a chat is an accepted cut",
    "special_cut.selection_matches_reference": "the special-token scan selects exactly the reference's occurrences",
    "derived.admission": "a derived split pattern: admitted with the pairs its proof shows",
    "derived.battery_cut": "derived-family tokenizer: ci battery, cut path vs the reference",
    "derived.battery_repair": "derived-family tokenizer: ci battery, repair path vs the reference",
    "derived.gpt2_form_equivalence": "ByteLevel(use_regex) gives the pre-tokens of Split(GPT-2 pattern) then "
                                     "ByteLevel",
    "derived.kill_matrix": "derived-family tokenizer: the kill matrix (unbroken clean, every control killed or "
                           "proven)",
    "derived.prefix_space_refusal": "add_prefix_space=true: admission refuses (the reference prepends spaces)",
    "derived.public_battery": "public GPT-2-form file: admitted under the derived family, ci battery vs the reference",
    "derived.public_file_admission": "public GPT-2-form file: its ByteLevel stage read as the GPT-2 split stage",
    "derived.refusal": "a pattern that runs letters and digits together: admission refuses it",
    "whole_word.admission": "public whole-word file (npm): admitted as a bpe-whole-word family with the prefix scheme "
                            "its stages give",
    "whole_word.random_cuts": "whole-word file: every accepted cut of random adversarial texts, alone and all at once, "
                              "through the chunk encoder vs the whole encode; array verdicts vs the spec's",
    "whole_word.code_points": "whole-word file: every single-character token and one code point per Unicode block "
                              "beside U+2581, a letter, a newline and itself, each accepted cut vs the reference",
    "whole_word.chunked_long_text": "whole-word file: encode_chunked of a long real text vs the whole encode, and the "
                                    "post-processor applied once",
    "whole_word.session_repair": "whole-word file: sessions of appends repaired from one cut vs the reference",
    "whole_word.metaspace_forms": "Llama 2's vocabulary in each Metaspace form (always / first / never, split or "
                                  "not): every accepted cut through its own chunk encoder vs the reference",
    "whole_word.small_file": "a small whole-word file built to join across spaces: every accepted cut vs the "
                             "reference",
    "whole_word.prefix_on_later_chunks": "test of the test: the prefix kept on later chunks differs from the whole "
                                         "encode under the schemes that prefix",
    "admission.whole_word": "whole-word file: its own premises (the family's judgement, no added token that strips "
                            "or matches as a single word, each premise of the merge-locality lemma on its model)",
    "whole_word.control_statuses": "whole-word file (Llama 2's): each control's kill-matrix status as expected, the "
                                   "byte-level-only ones not applicable, the whole-word ones killed on IDs",
    "whole_word.control_worked_example": "whole-word file: on one worked text each whole-word control's rules or "
                                         "parameters give a wrong ID, the specification's none",
    "admission.piece_local": "piece-local test file (trained or public): admitted with its model's family, or "
                             "refused with its named reason",
    "piece_local.random_cuts": "piece-local file: every accepted separator cut of random texts, alone and all "
                               "together, vs the reference; array verdicts vs the spec",
    "piece_local.battery": "piece-local file: every accepted cut, chunked encode and repair split of the ci battery "
                           "(its separator hazard included) vs the reference",
    "piece_local.chunked_long_text": "piece-local file: this repository's documentation through the chunked encode "
                                     "(2, 8, 64 chunks), post-processing applied once, vs the reference",
    "piece_local.session_repair": "piece-local file: sessions of appends repaired from one separator cut vs the "
                                  "reference",
    "piece_local.normalizer_code_points": "a normalizer stage the piece-local family admits, per code point: each "
                                          "ASCII candidate kept exactly where N(c + s) and N(s + c) split, or the "
                                          "stage character by character",
    "piece_local.lowercase_context": "Lowercase and the Bert normalizer: no final-sigma context (U+03A3 to U+03C3 "
                                     "wherever it stands)",
    "piece_local.pre_tokenizer_code_points": "a hard pre-tokenizer stage, per code point: it splits before its "
                                             "separator whatever precedes it",
    "piece_local.sequence_settings": "a file's truncation and padding, each setting: post_process of the whole "
                                     "encode and the chunked encode vs the reference's encode under the settings",
    "piece_local.built_against": "a file built against one piece-local premise: refused by name, or the candidate "
                                 "the premise is about is no separator (and the others still cut exactly)",
    "piece_local.control_statuses": "piece-local file: each control's kill-matrix status as expected, the "
                                    "byte-level and whole-word ones not applicable",
    "nfkc.public_anchor_cuts": "the public Claude file (NFKC): cuts at NFKC anchors exact, and a cut at an NFC "
                               "anchor that NFKC changes (U+FF9E) differs",
    "nfkc.public_battery": "the public Claude file (NFKC): every accepted cut, chunked encode and repair split of "
                           "its ci battery vs the reference",
    "synthetic.admitted_with_feature": "synthetic tokenizers: each admitted under its pattern, with its feature",
    "synthetic.battery.cut": "synthetic tokenizers: every accepted cut of the ci battery splits the reference",
    "synthetic.chunked_and_post_processing": "synthetic tokenizers: encode_chunked and post-processing vs the "
                                             "reference",
    "synthetic.fuzz_all_covers_both_kinds": "`fuzz --tokenizer all` covers an NFC and a non-NFC tokenizer",
    "synthetic.marker_interior_window_masking": "NFC tokenizer: every cut inside a marker's window is refused",
    "control.kill_matrix": "the kill matrix: unbroken paths clean, every control killed or proven redundant",
    "control_records.refusing_plant": "test of the test: a planted control that refuses the cut is not killed",
    "knob_planted_unstated": "test of the test: a control record without its kill verdict is never counted killed",
    "knob_anchor_probes": "cut-rule knob: the anchor predicate's probes removed, on single inputs",
    "repair_knob:witness_verdict": "the proof tool calls the sync witness necessary exactly where an input needs it",
    "repair_knob:require_witness=False+require_bound=False": "neither the witness nor the bound alone is needed "
                                                             "here, but dropping both gives a wrong ID",
    "knob_guard_selected": "cut-rule knob: the guard checks only selected occurrences, on single inputs",
    # level 3: repair, sessions, the store
    "bound_premise": "the bound covers the longest decoded token (one below violates the premise)",
    "margin_premise": "margin = max(8, longest special string); one less violates the premise",
    "overlap_keys": "repair's match keys: exactly the tokens inside a range, by the definition, on byte pieces",
    "wide_bound_second_window": "a bound of 512: the first window never accepts, the second does",
    "window_covers_all": "a window covering all of S: S + D encoded whole",
    "session_append": "a session given S then S + D returns the reference encode of S + D",
    "session_chained_appends": "appends on repaired state: every turn and every stored span is the reference's",
    "chat_replay": "chat transcripts rendered turn by turn through a session vs the reference",
    "chat.template_special_tokens": "chat templates get the config's special-token strings",
    "fastokens_whitespace_replay": "raw turns appended as they are: the session equals the reference",
    "corpus.session_replay": "corpus documents appended in halves through a session vs the reference",
    "corpus.transcripts": "chat transcripts replayed turn by turn",
    "repair.transcripts": "chat transcripts replayed turn by turn",
    "repair_property_unchecked_reuse": "test of the test: unchecked reuse (no seam check) gives a wrong ID",
    "repair_redundancy_premises": "the premises under which margin 0 and no bound change no answer",
    "store_content_lookup": "session store: a text extending a stored one found by content",
    "store_entry_bound": "session store: entries beyond the limit drop the oldest first; answers stay exact",
    "store_injected_collision": "session store: colliding digests rejected by the byte comparison",
    "store_longest_prefix": "session store: of two stored prefixes, the longer one is extended",
    "store_memory_bound": "session store: the memory bound evicts least recently used sessions only over budget",
    "store_state_machine": "session store as a state machine: every answer is the reference's",
    "store_switch_tokenizer": "session store: after switching tokenizer, answers use the new tokenizer's IDs",
    # proofs, exhaustive tables
    "merge_locality.z3_all_tables": "z3 proof of merge locality over the proof's abstraction of BPE, for every merge "
                                    "table and every cut of every word up to the gate's length",
    "proof.scan_lemmas": "the special-token scan's two lemmas, on every short text",
    "proof.transitions": "machine-checked proof of the accepted transitions",
    "proofs.alphabet_partition": "the alphabet's blocks cover every scalar value once, each inside or outside a class",
    "proofs.atom_parse": "each pattern atom's parsed membership equals the engine's",
    "proofs.bounded_enumeration": "every string up to the bound: accepted transitions split the reference's pieces",
    "proofs.bounded_enumeration.pattern_only": "every string up to the bound, pattern stage only: accepted "
                                               "transitions split the pieces",
    "proofs.contraction_folding": "case-insensitive contractions match only as apostrophe + letters",
    "proofs.pattern_pairs": "each family's proved pairs equal the pairs outside its pattern's conflicts",
    "proofs.pipeline_encoding.synthetic": "the z3 pipeline encoding equals the engine's pieces on short strings",
    "proofs.pipeline_z3.pattern": "z3 proof of the pre-tokenizer pipeline to the gate's bound",
    "proofs.representatives": "sampled members of every block cut like their block's representative",
    "proofs.resync_z3.pattern": "z3 proof of the re-synchronization lemma to the gate's bound",
    "proofs.transitions_z3": "z3 proof of the accepted transitions",
    "proofs.transitions_z3.pattern": "z3 proof of the accepted transitions for the pattern",
    "proofs.transitions_z3.pattern_only": "z3 proof of the accepted transitions, pattern stage only",
    "coverage.code_points": "every scalar value stays one piece under the split stage",
    "coverage.split_stage": "z3 verdict on the split stage's coverage agrees with the reference",
    "anchor_predicate_tables": "every scalar value: the anchor predicate's table equals the reference normalizer's",
    "python_class_disagreement": "Python's regex/unicodedata classes differ from the engine's only where expected",
    "reference_nfc_version": "the reference NFC implements the expected Unicode version",
    "unassigned_planes_alike": "the unassigned planes 4-13 behave alike in every input the checks use",
    "exhaustive.class_table": "per-code-point class table vs the reference",
    # harness: the suite checking itself
    "admission.provisioned": "admission of every provisioned tokenizer (admitted or refused, and why)",
    "harness.replay_provisioning": "tokenizers not provisioned are recorded as such, never passed",
    "gate.test": "a gate test that did not pass (failed, error or interrupted)",
    "gate.session": "one pytest session of the gate (collected, ran, passed)",
    "job.plan": "the main job's plan: the steps it means to run",
    "job.step": "one step of the main job: its exit status",
    "main_job.crashing_planner": "main job: a crashing step makes the verdict FAIL, naming the step",
    "main_job.lost_row": "main job: a step row that cannot be written exits 3 and is named",
    "main_job.plan_rows": "main job: every planned step has its row, else the verdict says which is missing",
    "layers.contracts": "import-linter floors, test-package and acyclicity contracts kept",
    "packaging.user_project": "a user project with its own fuzz, spec, reports and benchmarks packages runs its tests "
                              "with the suite installed; the plugin loads nothing else of the suite",
    "provisioning.recipe": "a rebuild recipe's output equal to the frozen digest is installed",
    "provisioning.real_recipe": "the real recipe downloads its package and rebuilds the frozen bytes exactly",
    "corpus.build_determinism": "two corpus builds of the same sources give byte-identical shards",
    "corpus.readers_formats": "corpus readers: JSONL, .gz, .zst and Parquet yield the same documents",
    "loader.facts_cache": "the loader's per-digest facts of a tokenizer.json, written and read back, equal the "
                          "facts computed from the file",
    "corpus.tokenizer_selection": "`--tokenizer all` lists every registry row as compared or not provisioned",
    "corpus.load": "corpus comparison: a tokenizer that could not be loaded (no comparison)",
    "corpus.worker_refused": "corpus comparison: a unit a worker refused (no comparison)",
    "corpus.pool_equals_single": "corpus comparison with 2 workers equals the single-process run",
    "corpus.dask_killed_worker_equals_single": "corpus comparison on Dask with a killed worker equals the single run",
    "corpus.isolated_workers_equal_single": "corpus comparison on isolated workers equals the single run",
    "corpus.resume_single_machine": "corpus comparison resumed: nothing redone, a deleted unit redone",
    "corpus.sigterm_resume": "corpus comparison stopped by SIGTERM exits 130 and resumes exactly",
    "fuzz.cut": "fuzzing: texts chunked at the planner's cuts",
    "fuzz.repair": "fuzzing: appends repaired from stored IDs",
    "fuzz.seams": "fuzzing: seam texts vs the reference",
    "fuzz.load": "fuzzing: a tokenizer that could not be loaded (no comparison)",
    "fuzz.clean_campaign": "a short fuzz campaign on both paths finds no difference and exits 0",
    "fuzz.resume_after_sigkill": "a fuzz campaign killed and resumed records every batch exactly once",
    "fuzz.version_skew_codepoints": "code points whose Unicode data changed between versions vs the reference",
    "reports.performance_goals": "report: the performance goals read from benchmark points",
    "reports.performance_real_ledger": "report: the performance section from a real benchmark ledger",
    "reports.scale_on_paper_arithmetic": "report: the scale-on-paper arithmetic",
    "reports.table3_figures": "report: every row's figures equal the sums of its records",
    "mutation.verdict.every_uncovered_symbol_a_witness": "mutation verdict: coverage witness taken from any "
                                                        "uncovered symbol",
    "mutation.verdict.guard_window": "mutation verdict: the guard's scan window one character short",
    "mutation.verdict.ids_only_batch_path": "mutation verdict: the IDs-only batch path",
    "mutation.verdict.isolated_split_ignores_invert": "mutation verdict: an isolated split ignoring `invert`",
    "mutation.verdict.probe_pairs_in_the_tables": "mutation verdict: the Unicode tables pair a probe only as U+1100 "
                                                  "+ a V jamo",
    "mutation.verdict.word_ids_align": "mutation verdict: word IDs zipped without strict length",
    # third-party subjects
    "subject.gate": "a user's subject: bound to the tokenizer, or recorded not installed",
    "subject.property": "a user's subject: encode equals the reference on seam texts",
    "subject_install": "a subject version the index lacks is 'not installed'",
    "subject_chunked": "a subject's chunked encode vs the reference",
    "subject_session_replay": "a subject's session on the whitespace-seam replay vs the reference",
    "subject_wiring.battery": "subject wiring: the kill matrix's battery rows on a subject",
    "subject_wiring.compare": "subject wiring: `corpora compare --subject` writes subject records",
    "subject_wiring.fastokens_trigger": "subject wiring: fuzz finds fastokens 0.1.2's whitespace divergence",
    "subject_wiring.fuzz": "subject wiring: `fuzz --subject` writes subject rows per path",
    "subject_wiring.peer_timing": "subject wiring: a peer's batches carry subject and reference time",
    "subject_wiring.repair_checker": "subject wiring: the fuzz repair checker on a subject",
    "subject_wiring.report": "subject wiring: the report's subjects section",
    "subject_wiring.timing_split": "subject wiring: subject time and reference time counted apart",
    "subject_wiring.unknown_subject": "subject wiring: an unknown subject is a usage error (exit 2)",
    "fastokens_forked_sessions": "fastokens: forked sessions answer like fresh ones",
    "fastokens_minimal_trigger": "fastokens: the shrunk whitespace trigger still diverges",
    "fastokens_nfc_skew": "fastokens 0.1.2: the NFC skew vs the reference",
    "fastokens_sweep": "fastokens: every release replays the transcript",
    "fastokens_sweep_verdicts": "fastokens: each release's verdict vs the expectations table",
    "gigatoken_unicode_skew": "gigatoken: marks reordered by newer Unicode data vs the reference",
    "gigatoken_unicode_skew_all": "gigatoken: every Unicode skew candidate on whole encodes",
    "lopt_cjk_byte_split": "LoPT (position-only) on the CJK fixture: the known one-token difference",
    "lopt_ordinary_text": "LoPT on ordinary multi-script text vs the reference",
    "paralleltokenizer_stitch": "paralleltokenizer's ID-run stitching vs the reference",
    "toktier_battery": "toktier on the battery vs the reference",
    "toktier_chunked": "toktier's chunked encode vs the reference",
    "toktier_corpus": "toktier's whole, chunked and session encodes of corpus documents vs the reference",
    "toktier_session": "toktier's session vs the reference",
    # benchmarks
    "benchmark.campaign": "benchmark: fuzz campaign throughput at 1 and 2 workers",
    "benchmark.campaign_baseline_in_run": "benchmark: the campaign baseline commit run beside the current one",
    "benchmark.chunked": "benchmark: encode_chunked at each chunk count vs one reference encode",
    "benchmark.chunked_fit": "benchmark: fit of the chunked speed-up over chunk counts",
    "benchmark.compare_workers": "benchmark: the corpus comparison at 1 and 2 workers",
    "benchmark.fallback_confinement": "benchmark: one non-NFC sequence confines the fallback to its chunk",
    "benchmark.gate_durations": "benchmark: the gate's duration",
    "benchmark.peer": "benchmark: a PyPI peer through its server process",
    "benchmark.peer_chunked": "benchmark: a peer's chunked encode",
    "benchmark.peer_repair_vs_whole": "benchmark: a peer's repair vs whole encode",
    "benchmark.quick_run_wellformed": "benchmark: a quick run writes well-formed records",
    "benchmark.repair_growth": "benchmark: repair time as the session grows",
    "benchmark.repair_vs_whole": "benchmark: repair vs whole encode at one (context, append) point",
    "benchmark.scale": "benchmark: throughput of the document set per level",
    "benchmark.scale_efficiency": "benchmark: parallel efficiency of identical tasks on the cores",
    "benchmark.scale_quick": "benchmark: quick per-core rates per level",
    "benchmark.suite_throughput": "benchmark: differential-check throughput of the cut and repair paths",
}

# (full-match pattern, text with {name} fields from its groups), tried in this order
FAMILIES: tuple[tuple[str, str], ...] = (
    (r"corpus\.(?P<level>whole_encode|chunked_encode|session_replay)\.(?P<subject>.+)",
     "corpus documents on subject {subject}: {level} vs the reference"),
    (r"corpus\.(?P<level>.+)", "corpus documents on a subject, level {level}, vs the reference"),
    (r"battery\.(?P<path>.+)", "adversarial battery, {path} path, vs the reference"),
    (r"subject\.battery\.(?P<path>.+)", "a user's subject on the battery, {path} path, vs the reference"),
    (r"classes_(?P<family>.+)", "every scalar value: the {family} pattern's class boundaries vs the reference"),
    (r"batched_boundaries_(?P<family>.+)", "the per-code-point batch route for {family}: probes batched vs one "
                                           "reference call each"),
    (r"end_of_input_(?P<family>.+)", "every scalar value at the end of input: {family} pieces vs the reference"),
    (r"transition_boundaries_(?P<side>left|right)_(?P<family>.+)",
     "every scalar value on the {side} of each accepted transition of {family}: a reference boundary"),
    (r"transition_boundaries_(?P<rest>.+)", "every scalar value at the accepted transitions ({rest}): a reference "
                                            "boundary"),
    (r"cut_map\.code_points\.(?P<range>.+)", "array cut evaluation vs the specification at every offset of the "
                                             "code points {range}"),
    (r"cut_map\.fault\.(?P<fault>.+)", "test of the test: the array evaluation's fault {fault} disagrees with the "
                                       "specification"),
    (r"proof\.(?P<proof>[^:]+)(?::(?P<variant>.+))?",
     "redundancy proof {proof} (delta_suite.controls.proofs) checked on the "
                                                     "tokenizer (case {variant})"),
    (r"knob_(?P<knob>.+)", "cut-rule knob {knob} off the specification, on single inputs"),
    (r"repair_knob:(?P<knob>.+)", "repair parameter {knob} off the specification, on single inputs"),
    (r"fuzz\.(?P<path>cut|repair)\.control\.(?P<control>.+)", "fuzzing the {path} path against control {control}"),
    (r"fuzz\.kill\.(?P<control>.+)", "a campaign against control {control}: killed and its case replays"),
    (r"fuzz\.(?P<path>.+)", "fuzzing the {path} path of a subject vs the reference"),
    (r"regression\.real\.(?P<case>.+)", "saved regression replayed on the implementation"),
    (r"regression\.control\.(?P<case>.+)", "saved regression replayed on its control"),
    (r"synthetic\.control\.(?P<control>.+)", "synthetic tokenizer: control {control} caught by the comparison"),
    (r"layers\.planted:(?P<plant>.+)", "test of the test: a planted upward import ({plant}) fails lint-imports"),
    (r"merge_locality\.exhaustive:(?P<mode>.+)", "merge locality: every free cut of every word and merge list up to "
                                                 "the bound splits the whole word's BPE ({mode}), vs the reference"),
    (r"merge_locality\.planted:(?P<plant>.+)", "test of the test: merge locality with a premise broken ({plant}) "
                                               "finds a cut that differs"),
    (r"merge_locality\.abstraction:(?P<mode>.+)", "merge locality: the proof's abstraction (least (rank, position) "
                                                   "merged first) gives the reference's IDs on every word and merge "
                                                   "list up to the bound ({mode})"),
    (r"merge_locality\.abstraction_planted:(?P<plant>.+)", "test of the test: a wrong abstraction of BPE ({plant}) "
                                                           "differs from the reference"),
    (r"merge_locality\.z3_control:(?P<control>.+)", "test of the test: the z3 merge-locality query with a premise "
                                                    "dropped ({control}) is satisfiable"),
    (r"benchmark\.(?P<figure>.+)", "benchmark figure {figure}"),
)


def control_breaks(control: str) -> str | None:
    """What a control breaks, from the control itself (None for a name no control registry knows)."""
    if control in INTERNAL_BREAKS:
        return INTERNAL_BREAKS[control]
    try:
        return controls.get(control).breaks
    except KeyError:
        return None


@lru_cache(maxsize=1)
def _families() -> list[tuple[re.Pattern[str], str]]:
    return [(re.compile(p), text) for p, text in FAMILIES]


def describe(check: str) -> str | None:
    """The description of `check`: exact, a control's (`control.NAME`), or its family's; None when unknown."""
    if check in CHECKS:
        return CHECKS[check]
    if check.startswith("control."):
        return control_breaks(check.removeprefix("control."))  # the report prefixes "control NAME: "
    for pattern, text in _families():
        m = pattern.fullmatch(check)
        if m:
            return text.format(**{k: v or "" for k, v in m.groupdict().items()}).replace(" (case )", "")
    return None


def check_title(check: str) -> str:
    """The report's "what" for `check`: its description, or a line saying none is registered (never the name)."""
    return describe(check) or UNDESCRIBED
