"""The piece-local family (`spec.piece_local`): WordPiece, Unigram and BPE files whose pre-tokenizer splits at
characters, on files made by the real trainers and on public ones (`properties.piece_local_files`).

Checked here:
- admission: every file is admitted with its model's family, or refused with its named reason (SentencePiece's
  Precompiled charsmap, a Strip, a Regex Replace; a public Unigram file without an unknown ID);
- every accepted cut of random texts (from a palette of every separator candidate, compatibility characters,
  marks, control characters, CJK and the added tokens) gives the whole encode, alone and all together, and the
  minimal implementation's array verdicts (`delta.cut_map`) are the spec's, offset by offset;
- the ci battery (its separator hazard included): every accepted cut, the chunked encode and every repair split;
- a long real text (this repository's documentation) through the chunked encode, post-processing applied once;
- sessions of appends repaired from one cut (`spec.whole_word_repair`'s argument, separator cuts);
- the premises per code point against the reference: each normalizer stage the family admits leaves every ASCII
  candidate where it is after any code point (NFC/NFD/NFKC/NFKD and the Bert normalizer with accents stripped: for
  every candidate; the character-by-character stages: their output on all code points at once equals the
  concatenation of their outputs one by one), and each hard pre-tokenizer stage splits before its separator after
  any code point; Lowercase turns U+03A3 into U+03C3 wherever it stands (no final-sigma context);
- files built against each premise are refused, or lose exactly the candidate the premise is about.
Plants: `spec.piece_local._hard` saying a Digits stage splits before any character -> on bpe-nfkc-lowercase-digits
"!" becomes a separator after the Whitespace stage, which groups "?!" in one piece, and the random-cut test records
differences; `COMPOSES_WITH_NEXT` emptied -> the normal-form test disagrees on "<", "=", ">" under NFC and NFKC.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from delta_suite.delta.cut_map import cut_map
from delta_suite.delta.cuts import encode_chunked
from delta_suite.frozen.loader import load_tokenizer_file
from delta_suite.spec.admission import admission_of
from delta_suite.spec.cut import accepted_cuts
from delta_suite.spec.piece_local import (
    CANDIDATES,
    PUNCTUATION,
    WHITESPACE,
    piece_local_rules,
    stage_image,
)
from delta_suite.spec.proofs.separators import (
    SeparatorCheck,
    character_stage_check,
    hard_stage_check,
    normal_form_check,
)
from delta_suite.spec.reference import (
    post_process,
    reference_encode,
    reference_encode_full,
    reference_encode_with_offsets,
)
from delta_suite.spec.refusals import refusal_message
from delta_suite.spec.repair import repair_splice

from properties.battery_exactness import run_battery
from properties.piece_local_files import ADMITTED, CORE, REFUSED, load, path_of
from properties.synthetic import base_config, write
from properties.trained_files import corpus_documents

PALETTE = (list(CANDIDATES) + list("abcdeXYZ0159") + ["the", "ing", "un", "##", "\u2581", "\u0301", "\u0300",
           "\ufb01", "\u00bd", "\u2460", "\u0391\u03a3", "\u00e9", "\uff76\uff9e", "\u6771\u4eac", "\u00a0", "\u3000",
           "\x00", "\u200b", "\U0001f600"])


def _texts(tok, count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    specials = list(tok.special_strings[:8])
    pool = PALETTE + specials
    return ["".join(rng.choice(pool) for _ in range(rng.randint(2, 60))) for _ in range(count)]


@pytest.mark.parametrize("name", sorted(ADMITTED) + sorted(REFUSED))
def test_each_file_is_admitted_with_its_family_or_refused_by_name(name: str, ledger) -> None:
    tok = load(name)
    decided = admission_of(tok)
    if name in ADMITTED:
        want = f"piece-local:{ADMITTED[name]}:"
        ok = decided.piece_local and decided.family.startswith(want) and bool(piece_local_rules(tok).separators)
        said = decided.family
    else:
        ok = not decided.admitted and decided.reason.startswith(REFUSED[name]) and \
            "[code " in refusal_message(decided.reason)
        said = decided.reason
    ledger.record("harness", "admission.piece_local", tok, comparisons=1, differences=int(not ok), unit="file",
                  details={"decided": said, "separators": sorted(piece_local_rules(tok).separators)
                           if decided.piece_local else []}, oracle="premise")
    assert ok, (name, decided)


@pytest.mark.parametrize("name", sorted(ADMITTED))
def test_every_accepted_cut_of_random_texts_gives_the_whole_encode(name: str, ledger) -> None:
    tok = load(name)
    texts = _texts(tok, 150, seed=len(name))
    cuts = differences = map_differences = 0
    first: list = []
    for text in texts:
        whole = reference_encode(tok, text)
        accepted = accepted_cuts(tok, text)
        map_differences += cut_map(tok, text).accepted() != accepted
        for b in accepted:
            cuts += 1
            if reference_encode(tok, text[:b]) + reference_encode(tok, text[b:]) != whole:
                differences += 1
                first = first or [text, b]
        if accepted:
            bounds = [0, *accepted, len(text)]
            got = [i for lo, hi in zip(bounds, bounds[1:], strict=False) for i in reference_encode(tok, text[lo:hi])]
            differences += got != whole
    ledger.record("chunked", "piece_local.random_cuts", tok, comparisons=cuts + len(texts), differences=differences,
                  unit="accepted cut or partition", details={"texts": len(texts), "accepted_cuts": cuts,
                                                             "cut_map_differences": map_differences,
                                                             "first": first}, oracle="reference")
    assert cuts > len(texts) and differences == 0 and map_differences == 0, first


@pytest.mark.parametrize("name", CORE)
def test_the_battery_cuts_chunks_and_repairs_give_the_whole_encode(name: str, ledger) -> None:
    tok = load(name)
    run = run_battery(tok)
    ledger.record("battery", "piece_local.battery", tok, comparisons=run.comparisons, differences=len(run.failed),
                  unit="accepted cut or repair split", details=run.details(), oracle="reference")
    assert run.accepted > 100 and not run.failed, run.first_failures()


@pytest.mark.parametrize("name", CORE)
def test_the_chunked_encode_of_the_documentation_is_the_whole_encode(name: str, ledger) -> None:
    tok = load(name)
    text = "\n".join(p.read_text(encoding="utf-8") for p in corpus_documents()[:12])
    whole = reference_encode_full(tok, text)
    compared = differences = 0
    for chunks in (2, 8, 64):
        compared += 1
        differences += list(encode_chunked(tok, text, chunks=chunks, workers=1, add_special_tokens=True)) != whole
    ledger.record("chunked", "piece_local.chunked_long_text", tok, comparisons=compared, differences=differences,
                  unit="chunked encode", details={"chars": len(text), "ids": len(whole), "chunks": [2, 8, 64]},
                  oracle="reference")
    assert differences == 0


@pytest.mark.parametrize("name", CORE)
def test_sessions_repair_from_one_cut(name: str, ledger) -> None:
    tok = load(name)
    rng = random.Random(7)
    compared = differences = repaired = 0
    for text in _texts(tok, 60, seed=11):
        old, ids, spans = "", [], []
        for _turn in range(4):
            delta = text[: rng.randint(1, max(1, len(text)))] + rng.choice(["\n", " ", ". ", ""])
            edit = repair_splice(tok, old, ids, spans, delta)
            ids, spans = ids[: edit.keep] + edit.ids, spans[: edit.keep] + edit.spans
            old += delta
            compared += 1
            repaired += edit.path.startswith("repaired")
            differences += ids != reference_encode(tok, old)
            ids, spans = reference_encode_with_offsets(tok, old)  # the stored state a session keeps
    ledger.record("repair", "piece_local.session_repair", tok, comparisons=compared, differences=differences,
                  unit="append", details={"repaired": repaired}, oracle="reference")
    assert differences == 0 and repaired > compared // 3


# --- the premises, per code point (`spec.proofs.separators`) --------------------------------------------------------

ANCHORED_STAGES = {"NFC": {"type": "NFC"}, "NFD": {"type": "NFD"}, "NFKC": {"type": "NFKC"}, "NFKD": {"type": "NFKD"},
                   "BertStrip": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                                 "strip_accents": True, "lowercase": True}}
CHARACTER_STAGES = {"Lowercase": {"type": "Lowercase"}, "Nmt": {"type": "Nmt"},
                    "StripAccents": {"type": "StripAccents"},
                    "BertCased": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                                  "strip_accents": False, "lowercase": False}}


def _record_check(ledger, name: str, check: SeparatorCheck, label: str) -> None:
    assert check.check == name
    ledger.record("exhaustive", name, None, comparisons=check.comparisons, differences=len(check.disagree),
                  unit="code point and candidate", details={**check.details, "label": label,
                                                            "disagree": check.disagree}, oracle="reference")


@pytest.mark.exhaustive
@pytest.mark.parametrize("group", [WHITESPACE, PUNCTUATION[:16], PUNCTUATION[16:]], ids=["space", "punct1", "punct2"])
@pytest.mark.parametrize("label", sorted(ANCHORED_STAGES))
def test_a_normal_form_never_joins_across_an_ascii_candidate(label: str, group: str, ledger) -> None:
    """`normal_form_check`: for every code point c and every candidate s the stage maps to one character s',
    N(c + s) == N(c) + s' and N(s + c) == s' + N(c) hold exactly for the candidates the premise keeps: "<", "=" and
    ">" compose with a following U+0338 under NFC and NFKC, and are refused there."""
    check = normal_form_check(ANCHORED_STAGES[label], group)
    _record_check(ledger, "piece_local.normalizer_code_points", check, label)
    assert check.holds or not check.comparisons, check.disagree
    assert not check.disagree


@pytest.mark.exhaustive
@pytest.mark.parametrize("label", sorted(CHARACTER_STAGES))
def test_a_character_stage_works_character_by_character(label: str, ledger) -> None:
    """`character_stage_check`: the stage's output on all code points at once (and with a space, a tab, a newline
    and a full stop after each) is the concatenation of its outputs on each: nothing it does depends on a
    neighbour."""
    check = character_stage_check(CHARACTER_STAGES[label])
    _record_check(ledger, "piece_local.normalizer_code_points", check, label)
    assert check.holds, check.disagree


def test_lowercase_has_no_final_sigma_context(ledger) -> None:
    """Rust's str::to_lowercase maps a final U+03A3 to U+03C2; the reference's Lowercase and Bert normalizers map
    each character alone (U+03C3 everywhere), so they are character stages: measured, not assumed."""
    texts = ["\u0391\u03a3", "\u0391\u03a3 ", "\u03a3", "\u0391\u03a3\u0391", "x\u03a3."]
    got = {label: [stage_image(stage, t) for t in texts]
           for label, stage in (("Lowercase", {"type": "Lowercase"}), ("Bert", ANCHORED_STAGES["BertStrip"]))}
    wrong = [(label, t) for label, outs in got.items() for t, o in zip(texts, outs, strict=True)
             if "\u03c2" in o or o.count("\u03c3") != t.count("\u03a3")]
    ledger.record("exhaustive", "piece_local.lowercase_context", None, comparisons=len(texts) * len(got),
                  differences=len(wrong), unit="text", details={"wrong": wrong}, oracle="reference")
    assert not wrong


HARD = {"Whitespace": ({"type": "Whitespace"}, WHITESPACE),
        "WhitespaceSplit": ({"type": "WhitespaceSplit"}, WHITESPACE),
        "BertPreTokenizer": ({"type": "BertPreTokenizer"}, " \n.,!"),
        "Punctuation": ({"type": "Punctuation", "behavior": "Isolated"}, ".,"),
        "CharDelimiterSplit": ({"type": "CharDelimiterSplit", "delimiter": "|"}, "|"),
        "Split": ({"type": "Split", "pattern": {"String": ";"}, "behavior": "Removed", "invert": False}, ";"),
        "Metaspace": ({"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}, " ")}


@pytest.mark.exhaustive
@pytest.mark.parametrize("label", sorted(HARD))
def test_a_hard_stage_splits_before_its_separator_after_any_code_point(label: str, ledger) -> None:
    """`hard_stage_check`: for every code point c and separator s the stage is claimed hard for, the pieces of the
    text holding every "c + s" are the pieces of each c followed by those of s."""
    stage, separators = HARD[label]
    check = hard_stage_check(stage, separators)
    _record_check(ledger, "piece_local.pre_tokenizer_code_points", check, label)
    assert check.holds, check.disagree


def test_the_separators_command_checks_a_files_own_stages(tmp_path: Path) -> None:
    """`python -m delta_suite.spec.proofs --separators --tokenizer PATH`: the Unigram file's premises and the checks
    of its NFKC stage and its Metaspace, recorded under the file's name (exit 0); a byte-level file is not
    piece-local (exit 2); a piece-local candidate whose premise fails (a Strip normalizer) exits 1 and still leaves
    its record, with the difference counted."""
    ledger_file = tmp_path / "separators.jsonl"
    got = subprocess.run([sys.executable, "-m", "delta_suite.spec.proofs", "--separators", "--tokenizer",
                          str(path_of("unigram-metaspace-nfkc")), "--name", "uni", "--ledger", str(ledger_file)],
                         capture_output=True, text=True, timeout=900)
    assert got.returncode == 0, got.stdout[-1500:] + got.stderr[-1500:]
    records = [json.loads(line) for line in ledger_file.read_text(encoding="utf-8").splitlines()]
    checks = {(r["check"], r["details"].get("stage", {}).get("type") if isinstance(r["details"].get("stage"), dict)
               else None) for r in records}
    assert ("admission.piece_local", None) in checks and ("piece_local.normalizer_code_points", "NFKC") in checks
    assert ("piece_local.pre_tokenizer_code_points", "Metaspace") in checks
    assert all(r["tokenizer"] == "uni" and r["differences"] == 0 for r in records)
    refused = subprocess.run([sys.executable, "-m", "delta_suite.spec.proofs", "--separators", "--tokenizer",
                              str(write_claude_like(tmp_path))], capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and "not a piece-local file" in refused.stderr
    _variant(tmp_path, _set("normalizer", {"type": "Strip", "strip_left": True, "strip_right": True}), "strip")
    failing_ledger = tmp_path / "failing.jsonl"
    failed = subprocess.run([sys.executable, "-m", "delta_suite.spec.proofs", "--separators", "--tokenizer",
                             str(tmp_path / "strip.json"), "--ledger", str(failing_ledger)],
                            capture_output=True, text=True, timeout=300)
    (record,) = [json.loads(line) for line in failing_ledger.read_text(encoding="utf-8").splitlines()]
    assert failed.returncode == 1 and "FAILED: piece_local_family" in failed.stdout, failed.stdout + failed.stderr
    assert record["check"] == "admission.piece_local" and record["differences"] == 1


def write_claude_like(tmp_path: Path) -> Path:
    """A byte-level file (the synthetic base configuration): not piece-local."""
    path, _ = write(tmp_path / "bytelevel", base_config())
    return path


# --- files built against a premise --------------------------------------------------------------------------------


def _variant(tmp_path: Path, edit, name: str):
    config = json.loads(path_of("bert-wordpiece-uncased").read_text(encoding="utf-8"))
    edit(config)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return load_tokenizer_file(path, name=name)


def _set(key: str, value):
    def edit(config: dict) -> None:
        config[key] = value
    return edit


def _pre(stage: dict):
    return _set("pre_tokenizer", stage)


BUILT_AGAINST = {
    # (edit of the trained Bert file, the refusal code, or None with the candidates that must not be separators)
    "prepend": (_set("normalizer", {"type": "Prepend", "prepend": "\u2581"}), "piece_local_normalizer:Prepend", ""),
    "strip": (_set("normalizer", {"type": "Strip", "strip_left": True, "strip_right": True}),
              "piece_local_normalizer:Strip", ""),
    "replace_regex": (_set("normalizer", {"type": "Replace", "pattern": {"Regex": " +"}, "content": " "}),
                      "piece_local_normalizer:Replace(Regex)", ""),
    "no_split": (_pre({"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": False}),
                 "piece_local_no_separator", ""),
    "digits_only": (_pre({"type": "Digits", "individual_digits": True}), "piece_local_no_separator", ""),
    # a Replace of the String " " turns the space into U+2581, a Whitespace stage then keeps it in a word: no cut
    "replace_space": (_set("normalizer", {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}),
                      None, " "),
    # Whitespace groups punctuation runs ("!." is one piece): only whitespace separates
    "whitespace_groups_punctuation": (_pre({"type": "Whitespace"}), None, PUNCTUATION),
    # a Metaspace with prepend "first" after a stage that keeps the separator in its own piece
    "metaspace_first_after_isolated": (
        _pre({"type": "Sequence", "pretokenizers": [
            {"type": "Punctuation", "behavior": "Isolated"},
            {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True}]}),
        None, PUNCTUATION),
    # a Split on a String that holds the separator may match across it (and the Bert normalizer turns every other
    # whitespace candidate into a space or drops it): no separator is left
    "split_string_holds_separator": (_pre({"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"String": "a b"}, "behavior": "Isolated", "invert": False},
        {"type": "WhitespaceSplit"}]}), "piece_local_no_separator:stage_not_local:Split:U+0020", ""),
}


@pytest.mark.parametrize("name", sorted(BUILT_AGAINST))
def test_a_file_built_against_a_premise_is_refused_or_loses_that_separator(name: str, tmp_path: Path, ledger) -> None:
    edit, code, lost = BUILT_AGAINST[name]
    tok = _variant(tmp_path, edit, name)
    decided = admission_of(tok)
    if code is not None:
        ok = not decided.admitted and decided.reason.startswith(code)
        seps: list[str] = []
    else:
        seps = sorted(piece_local_rules(tok).separators) if decided.piece_local else []
        ok = decided.piece_local and not set(lost) & set(seps)
    ledger.record("harness", "piece_local.built_against", tok, comparisons=1, differences=int(not ok), unit="file",
                  details={"variant": name, "decided": decided.reason, "separators": seps}, oracle="premise")
    assert ok, (name, decided, seps)
    if code is None and name != "replace_space":  # the separators it keeps still cut exactly
        for text in _texts(tok, 60, seed=3) + ["a b!. c", "x a b y", "q .r ,s"]:
            whole = reference_encode(tok, text)
            for b in accepted_cuts(tok, text):
                assert reference_encode(tok, text[:b]) + reference_encode(tok, text[b:]) == whole, (name, text, b)


# --- truncation and padding, applied once ----------------------------------------------------------------------------

TRUNCATION = [{"direction": d, "max_length": m, "strategy": "LongestFirst", "stride": 0}
              for d in ("Right", "Left") for m in (1, 2, 3, 16, 128)]
PADDING = [{"strategy": strategy, "direction": d, "pad_to_multiple_of": multiple, "pad_id": 0, "pad_type_id": 0,
            "pad_token": "[PAD]"} for d in ("Right", "Left") for strategy in ({"Fixed": 32}, "BatchLongest")
           for multiple in (None, 8)]
EMBEDDING = (TRUNCATION[4], {**PADDING[0], "strategy": {"Fixed": 128}})  # an embedding model's: 128, padded to 128
SETTINGS = [(t, None) for t in TRUNCATION] + [(None, p) for p in PADDING] + [EMBEDDING]


@pytest.mark.parametrize("name", ["bert-wordpiece-uncased", "spm-unigram-identity-t5"])
def test_truncation_and_padding_are_applied_once_to_the_assembled_sequence(name: str, tmp_path: Path, ledger) -> None:
    """Under each truncation and padding setting (a limit below the template's tokens, equal to them, and above;
    either direction; a fixed length or the sequence's own, rounded to a multiple or not), `post_process` of the
    whole encode and the chunked encode with post-processing both equal the reference's own encode with the file's
    settings (embedding models' files truncate and pad to 128 or 512)."""
    base = json.loads(path_of(name).read_text(encoding="utf-8"))
    texts = ["", "a", "hello world", "The quick brown fox jumps over the lazy dog. " * 20] + _texts(load(name), 20, 5)
    compared = differences = 0
    for k, (truncation, padding) in enumerate(SETTINGS):
        path = tmp_path / f"settings{k}.json"
        path.write_text(json.dumps({**base, "truncation": truncation, "padding": padding}), encoding="utf-8")
        tok = load_tokenizer_file(path, name=f"{name}+settings{k}")
        assert admission_of(tok).piece_local, admission_of(tok)
        for text in texts:
            compared += 2
            differences += post_process(tok, reference_encode(tok, text)) != reference_encode_full(tok, text)
            long = text * 3
            differences += list(encode_chunked(tok, long, chunks=4, workers=1, add_special_tokens=True)) != \
                reference_encode_full(tok, long)
    ledger.record("encoder", "piece_local.sequence_settings", None, comparisons=compared, differences=differences,
                  unit="text and setting", details={"file": name, "settings": len(SETTINGS), "texts": len(texts)},
                  oracle="reference")
    assert differences == 0
