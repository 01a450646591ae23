"""Admission by proof for Split stages that are none of the six known families: a derived family, or a named refusal.

For stages that `spec.patterns.identify` does not know, admission (`spec.admission.admit`) asks `derive(stages)`,
which decides exactly as the six families are checked (properties/test_proofs.py, test_pattern_pairs.py,
test_pipeline_proof.py), in this order, and refuses at the first step that fails:

1. parse every stage (`spec.proofs.regex`): a construct the encoding does not model is refused by name,
   `split_pattern_unsupported:<construct>` (lookbehind, anchor, word_boundary, backreference, lazy_quantifier,
   possessive_quantifier, capturing_group, named_group, atomic_group, inline_flag, dot, class_escape, ...);
2. build the abstract alphabet from the reference engine's membership of every atom and prove, with z3 and
   unbounded, the split-level obligations of every class pair (`spec.proofs.prove.prove_stages`: no stage matches
   the empty string, every lookahead reads one character, and per pair no straddling match, no gap, no lookahead
   evaluated at the cut: the end-of-input argument); every excluded pair's witness is confirmed on the reference
   `tokenizers` pre-tokenizer (`confirm`);
3. prove the re-synchronization lemma the repair's splice rests on (`prove_resync`) to `PIPELINE_BOUND` symbols,
   then the pipeline (all stages in order, then the byte-level stage) to the same bound on both sides of the cut,
   after the encoding is checked against the reference (`prove_pipeline`). The lemma comes first because it is
   the cheaper (about 0.5 s against 7 s for a GPT-2 split after Qwen2's): a refusal needs only one refuted step,
   and an admission needs both.

Choice for a failing accepted pair (a pair of the floor, `spec.transitions.ACCEPTED_PAIRS`): **refuse**, with
the failing pairs in the reason (`split_pattern_unproved:accepted pairs refuted: L→N,N→L`). Admitting with the
floor reduced would be sound for the cut rule alone (each pair's soundness is proved on its own), but the repair's
sync witness (`spec.repair`), the controls and the array cut evaluation read the floor as a fixed set, and none of
them takes a per-family floor: a reduced floor would leave them claiming boundaries the proof refuted.

Beyond the floor a derived family adopts what the split-level proof shows sound (and the pipeline proof finds sound
to its bound), as the six families adopt it (`spec.transitions` records theirs): every whole class pair outside
the floor, "apostrophe-free" when the apostrophe part of L->O is sound, and "CR/LF-free" when the CR/LF part of
O->S is (no known family is: their punctuation runs take the newlines after them). An excluded pair the prover
neither proves nor confirms stays excluded (conservative) and
is listed (`unresolved_exclusions`); it does not refuse.

The result is cached per stages digest under `$DELTA_HOME/derived-families/<digest>.json` (written atomically) and
re-used only when its stages, the installed z3, `regex` and `tokenizers` versions and the prover's source
(`versions`) are the ones it was derived with; an admitted result registers its family in `spec.families`
(`derived:<digest>`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import version
from pathlib import Path

import regex
from delta_suite.frozen.cache import cache_root
from delta_suite.frozen.cache_lock import computing
from delta_suite.frozen.errors import SuiteError
from delta_suite.spec.classes import CLASS_NAMES, O, S
from delta_suite.spec.families import DerivedFamily, derived_name, register, register_total, stages_digest
from delta_suite.spec.proofs.alphabet import partition
from delta_suite.spec.proofs.coverage import regex_coverage
from delta_suite.spec.proofs.lazy_z3 import z3
from delta_suite.spec.proofs.pieces import pieces_of, stages_pre_tokenizer
from delta_suite.spec.proofs.pipeline import Pipeline, pieces_to_boundaries
from delta_suite.spec.proofs.pipeline_proof import prove_pipeline, prove_resync
from delta_suite.spec.proofs.prove import FamilyProof, prove_stages
from delta_suite.spec.proofs.regex import PatternSyntaxUnsupported, atoms, parse
from delta_suite.spec.transitions import ACCEPTED_PAIRS

PIPELINE_BOUND = 4  # the gate's default bound (properties/conftest.pipeline_bound): every string of 2..4 symbols
CACHE_FORMAT = 1
CACHE_FOLDER = "derived-families"
UNSUPPORTED = "split_pattern_unsupported"
UNPROVED = "split_pattern_unproved"
APOSTROPHE_LABEL = "L→'"


# the modules whose code decides a derivation: a cached one is re-used only if their source is unchanged
PROVER_MODULES = ("spec/proofs/derive.py", "spec/proofs/prove.py", "spec/proofs/regex.py", "spec/proofs/alphabet.py",
                  "spec/proofs/z3_encoding.py", "spec/proofs/pipeline.py", "spec/proofs/pipeline_proof.py",
                  "spec/transitions.py", "spec/classes.py", "spec/families.py")


@cache
def prover_digest() -> str:
    """SHA-256 (first 16 hex digits) of the source of `PROVER_MODULES`."""
    root = Path(__file__).resolve().parents[2]
    h = hashlib.sha256()
    for name in PROVER_MODULES:
        h.update(name.encode() + b"\0" + (root / name).read_bytes())
    return h.hexdigest()[:16]


def versions() -> dict[str, str | int]:
    """What a cached derivation must have been made with to be re-used: the z3, `regex` and `tokenizers`
    (its Oniguruma decides engine membership) versions, the prover's source, the cache format and the bound."""
    return {"z3": z3.get_version_string(), "regex": regex.__version__, "tokenizers": version("tokenizers"),
            "prover": prover_digest(), "format": CACHE_FORMAT, "pipeline_bound": PIPELINE_BOUND}


@dataclass(frozen=True)
class Derivation:
    """The decision for one sequence of Split stages: admitted under `name`, or refused with `reason`."""

    name: str
    stages: tuple[str, ...]
    admitted: bool
    reason: str  # "admitted" or the refusal code
    pairs: tuple[tuple[int, int], ...] = ()  # adopted beyond the floor
    apostrophe_free: bool = False
    details: dict = field(default_factory=dict)
    cached: bool = False
    crlf_free: bool = False

    def family(self) -> DerivedFamily:
        return DerivedFamily(self.name, self.stages, frozenset(self.pairs), self.apostrophe_free, self.crlf_free)

    def as_dict(self) -> dict:
        return {"name": self.name, "stages": list(self.stages), "admitted": self.admitted, "reason": self.reason,
                "pairs": [f"{CLASS_NAMES[a]}→{CLASS_NAMES[b]}" for a, b in self.pairs],
                "apostrophe_free": self.apostrophe_free, "crlf_free": self.crlf_free, "details": self.details,
                "cached": self.cached}


def adopted(proof: FamilyProof) -> tuple[frozenset[tuple[int, int]], bool, bool, list[str]]:
    """What a family adopts from its split-level proof: the whole class pairs outside the floor proved sound, whether
    the apostrophe part of L->O is sound, whether the CR/LF part of O->S is, and the labels of all three."""
    pairs, apostrophe, crlf, labels = set(), False, False, []
    for r in proof.excluded():
        if not r.sound:
            continue
        cls_pair = (r.pair.left_cls, r.pair.right_cls)
        labels.append(r.pair.label)
        if cls_pair not in ACCEPTED_PAIRS:
            pairs.add(cls_pair)
        elif r.pair.label == APOSTROPHE_LABEL:
            apostrophe = True
        elif cls_pair == (O, S):
            crlf = True
        else:
            raise ValueError(f"unexpected sound carve-out {r.pair.label}")
    return frozenset(pairs), apostrophe, crlf, labels


def _refused(name: str, stages: tuple[str, ...], reason: str, details: dict) -> Derivation:
    return Derivation(name, stages, False, reason, details=details)


def prove_derivation(stages: tuple[str, ...], bound: int = PIPELINE_BOUND) -> Derivation:
    """Decide the stages by proof (the module docstring's steps), without the cache."""
    name = derived_name(stages)
    start = time.perf_counter()
    details: dict = {"digest": stages_digest(stages), "versions": versions(), "bound": bound}
    try:
        asts = tuple(parse(stage) for stage in stages)
    except PatternSyntaxUnsupported as exc:
        details["error"] = str(exc)
        return _refused(name, stages, f"{UNSUPPORTED}:{exc.construct}", details)
    try:
        derivation = _decide(name, stages, asts, bound, details)
    except (SuiteError, ValueError) as exc:  # z3 unknown, a carve-out character sharing a block, too many symbols
        details["error"] = str(exc)
        details["seconds"] = round(time.perf_counter() - start, 3)
        return _refused(name, stages, f"{UNPROVED}:inconclusive", details)
    details["seconds"] = round(time.perf_counter() - start, 3)
    return derivation


def _decide(name: str, stages: tuple[str, ...], asts: tuple, bound: int, details: dict) -> Derivation:
    """Steps 2 and 3 of the module docstring for parsed stages."""
    proof = prove_stages(name, stages)
    summary = proof.summary()
    details.update(symbols=proof.symbols, split_seconds=round(proof.wall_seconds, 3),
                   accepted_pairs_proved=summary["accepted_pairs_proved"],
                   excluded_sound=summary["excluded_sound_conservative"],
                   counterexamples={k: {"text": v["text"], "cut": v["cut"], "obligation": v["obligation"]}
                                    for k, v in summary["counterexamples"].items()},
                   unresolved_exclusions=summary["unresolved_exclusions"])
    failed_stage = [o for o in proof.stage_obligations if not o.proved]
    if failed_stage:
        return _refused(name, stages, f"{UNPROVED}:{failed_stage[0].name} (stage {failed_stage[0].stage})", details)
    if proof.accepted_failures():
        labels = ",".join(r.pair.label for r in proof.accepted_failures())
        return _refused(name, stages, f"{UNPROVED}:accepted pairs refuted: {labels}", details)
    pairs, apostrophe_free, crlf_free, adopted_labels = adopted(proof)
    resync = prove_resync(Pipeline(proof.alphabet, asts), name, bound)
    details["resync"] = resync.as_dict(proof.alphabet)
    if not details["resync"]["holds"]:  # before the pipeline proof: a refusal needs only one refuted step
        details["resync"]["confirmed"] = resync_confirmed(stages, details["resync"])
        return _refused(name, stages, f"{UNPROVED}:re-synchronization refuted", details)
    pipeline = prove_pipeline(name, stages, bound, alphabet=proof.alphabet)
    p = pipeline.summary()
    details["pipeline"] = {"faithful": p["faithful"], "faithfulness_strings": p["faithfulness_strings"],
                           "accepted_proved": p["accepted_proved"], "sides": p["sides"],
                           "excluded_sound_to_bound": p["excluded_sound_to_bound"],
                           "seconds": p["seconds"]}
    if not pipeline.faithfulness.faithful:
        details["pipeline"]["mismatches"] = p["faithfulness_mismatches"]
        return _refused(name, stages, f"{UNPROVED}:pipeline encoding differs from the reference", details)
    if not pipeline.accepted_proved:
        return _refused(name, stages, f"{UNPROVED}:pipeline refuted an accepted cut", details)
    # No sequence of stages reaches this refusal while both proofs are right: a pair the split-level proof finds
    # sound has a clean stage after transparent ones (spec.proofs.prove), so for every string the pieces of the
    # whole are the pieces of its two halves, and the pipeline, encoding the same stages on the same alphabet,
    # can refute the pair only at a string where it and the reference disagree, which faithfulness samples but
    # does not exclude. So it is dead code for a correct prover and stands as the cross-check of the two: it
    # refuses where one of them errs (properties/test_derived_admission.py feeds it a split-level proof that
    # calls a refuted pair sound).
    unsound = [label for label in adopted_labels if label not in p["excluded_sound_to_bound"]]
    if unsound:
        return _refused(name, stages, f"{UNPROVED}:pipeline refuted pairs the split-level proof found sound: "
                        f"{','.join(unsound)}", details)
    return Derivation(name, stages, True, "admitted", tuple(sorted(pairs)), apostrophe_free, details,
                      crlf_free=crlf_free)


def resync_confirmed(stages: tuple[str, ...], resync: dict) -> bool:
    """Whether the reference pre-tokenizer confirms a re-synchronization counterexample: the whole text and its
    window share the common boundary and their piece boundaries differ after it."""
    pieces = pieces_of(stages_pre_tokenizer(stages))
    text, w, b = resync["counterexample"], resync["window_start"], resync["common_boundary"]
    whole = [x for x in pieces_to_boundaries(pieces(text)) if x >= b]
    window = [x + w for x in pieces_to_boundaries(pieces(text[w:])) if x + w >= b]
    return bool(whole) and bool(window) and whole[0] == window[0] == b and whole != window


def unsupported_construct(regex: str) -> str | None:
    """The construct of `regex` the proofs do not model (the detail of `split_pattern_unsupported`, one of
    `spec.proofs.regex.CONSTRUCTS`), or None when the regex parses: the same verdict step 1 of `derive` reaches,
    for a stage in any form."""
    try:
        parse(regex)
    except PatternSyntaxUnsupported as exc:
        return exc.construct
    except ValueError:  # a malformed escape the parser reads as a number
        return "syntax"
    return None


@cache
def prove_total(regex: str) -> bool:
    """Whether `regex` matches a non-empty string at every position of every text (`spec.proofs.coverage`, over the
    abstract alphabet of its own atoms), so that its Removed and inverted form keeps exactly the pieces of its
    Isolated form; a total regex is registered (`spec.families.register_total`). A regex the parser refuses, or
    that z3 cannot decide, is not total."""
    try:
        ast = parse(regex)
        alphabet = partition(f"coverage {stages_digest((regex,))[:12]}", atoms(ast))
        total = regex_coverage(regex, alphabet.name, 0, alphabet=alphabet).total
    except (SuiteError, ValueError, RuntimeError):
        return False
    if total:
        register_total(regex)
    return total


def cache_path(stages: tuple[str, ...]) -> Path:
    return cache_root() / CACHE_FOLDER / f"{stages_digest(stages)}.json"


def read_cached(stages: tuple[str, ...]) -> Derivation | None:
    """The cached derivation of exactly these stages made with the installed versions, else None."""
    try:
        data = json.loads(cache_path(stages).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or tuple(data.get("stages") or ()) != stages or data.get("versions") != versions():
        return None
    d = data.get("derivation") or {}
    return Derivation(d["name"], stages, bool(d["admitted"]), str(d["reason"]),
                      tuple((int(a), int(b)) for a, b in d.get("pairs") or ()), bool(d.get("apostrophe_free")),
                      dict(d.get("details") or {}), cached=True, crlf_free=bool(d.get("crlf_free")))


def write_cached(derivation: Derivation) -> Path | None:
    """Write the derivation atomically (a temporary file renamed into place); None when the cache is not writable."""
    path = cache_path(derivation.stages)
    record = {"stages": list(derivation.stages), "versions": versions(),
              "derivation": {"name": derivation.name, "admitted": derivation.admitted, "reason": derivation.reason,
                             "pairs": [list(p) for p in derivation.pairs],
                             "apostrophe_free": derivation.apostrophe_free, "crlf_free": derivation.crlf_free,
                             "details": derivation.details}}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(record, ensure_ascii=False, indent=1), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        return None
    return path


@cache
def derive(stages: tuple[str, ...]) -> Derivation:
    """The derivation of `stages`: from the cache when it holds one for these stages and versions, else proved and
    cached. An admitted derivation registers its family (`spec.families.register`)."""
    derivation = read_cached(stages)
    if derivation is None:
        with computing(cache_path(stages)):  # a second process needing these stages waits, then reads the file
            derivation = read_cached(stages)
            if derivation is None:
                derivation = prove_derivation(stages)
                write_cached(derivation)
    if derivation.admitted:
        register(derivation.family())
    return derivation
