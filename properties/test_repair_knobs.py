"""Each RepairParams knob, turned to its broken value, returns a wrong ID on a concrete input (or is shown redundant).

For every knob the correct spec (the defaults) returns the reference on the same inputs, so the input isolates the
knob. Knobs for which no single-knob counterexample exists on the provisioned tokenizers are reported as xfail
with the reason (see spec/repair.py: under the full match key, the witness, bound, margin and two-token
conditions do not carry the proof for special-token sets without overlapping strings); the separate controls
helper builds the full kill matrix.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from delta_suite.checks.battery import FIRST_WINDOW, PHASE_DIGITS, TAIL_PHASE, TAIL_WINDOW_NEWLINES
from delta_suite.controls.findings import OPEN_FINDINGS
from delta_suite.controls.proofs import bound_covers_margin, overlap_interiors_without_witness, overlapping_specials
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer
from delta_suite.spec.admission import admission_of
from delta_suite.spec.patterns import GPT2, TEKKEN
from delta_suite.spec.proofs.__main__ import witness_mechanisms, witness_verdict
from delta_suite.spec.reference import reference_encode, reference_encode_with_offsets
from delta_suite.spec.repair import (
    DEFAULT_REPAIR_PARAMS,
    MARK_TAIL_PAIRS,
    RepairParams,
    mark_joins_punctuation,
    newline_joins_whitespace,
    repair,
)

from properties.conftest import ADMITTED
from properties.synthetic import KANNADA_MARK, KANNADA_PUNCT, mark_parity_tokenizer, stages_tokenizer

FILLER = "The quick brown fox jumps over the lazy dog. " * 20
CODE = "def step(state):\n    total = 0\n    for item in state.items:\n        total += item.cost\n    return total\n"
CODE = CODE * 8


@dataclass(frozen=True)
class Candidate:
    """An old text and a delta, for one tokenizer (or every admitted one when `tok` is None)."""

    old: str
    delta: str
    tok: str | None = None
    why: str = ""


KNOBS: dict[str, tuple[RepairParams, tuple[Candidate, ...]]] = {
    "check_seam=False": (
        RepairParams(check_seam=False),
        (Candidate(CODE + "prev_host_state\n      ", "\n              return x\n",
                   why="fastokens: a whitespace run split by the seam"),),
    ),
    "match_key=ids": (
        RepairParams(match_key="ids"),
        (Candidate(" a" * 700, "b", why="periodic IDs: the run with the later end is misaligned by one token"),),
    ),
    "match_key=spans": (
        RepairParams(match_key="spans"),
        (Candidate(FILLER + "\U000210a4", "\ud1b1", tok="llama_3_1_8b",
                   why="a 4-byte character whose byte pieces regroup when a letter follows; spans stay (p, p+1)"),
         Candidate(FILLER + "\U000220a4", "\ud697", tok="qwen3_8b",
                   why="a 4-byte character whose byte pieces regroup when a letter follows; spans stay (p, p+1)"),),
    ),
    "require_witness=False": (
        RepairParams(require_witness=False),
        (
            Candidate("x " + "1234567890" * 70, "1", why="digit groups counted from the run start (llama3 {1,3})"),
            Candidate("x " + "\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18\uff19\uff10" * 55 + "\uff11\uff12", "12",
                      why="a fullwidth digit run of 552 (no token joins two of them) grouped by three from the run "
                      "start in the whole text and from the window start (40 digits in: off phase) in the window: the "
                      "streams agree token for token over the run, and the appended ASCII digits join the wrong "
                      "group"),
            Candidate("word " * 3 + "!" + "\n" * 561 + "  \nabcdefghijkl", " end",
                      why="a newline run after '!' (one piece in the whole text, ending with the run), then blanks "
                      "and a newline: the window starts 64 newlines into the run and takes the rest with the blanks "
                      "in one piece, whose last newline joins them ('\\n  \\n') where the vocabulary has that token "
                      "(qwen2, llama3, olmo3 vocabularies), while both streams chunk the run alike"),
            Candidate("word !!" + "\u0c82" * 600 + "\u0c84", " end",
                      why="a Kannada anusvara run between punctuation: one punctuation piece in the whole text, a "
                      "letter piece ending before U+0C84 in the window (letter and punctuation alternatives both take "
                      "marks: o200k, tekken), and the whole text's last mark joins the first bytes of U+0C84 in one "
                      "token where the vocabulary has it (tekken's), while both streams agree mark for mark"),
            Candidate("hello " + "abcabd" * 150, "e", why="a long letter run straddling ws"),
            Candidate("ok " + "｜DSML" * 150, "｜", tok="deepseek_v4_flash", why="a chain of overlapping specials"),
        ),
    ),
    "require_bound=False": (
        RepairParams(require_bound=False),
        (
            Candidate(FILLER * 2 + "<|im_", "end|>", why="special-token head ends S"),
            Candidate("ok " + "｜DSML" * 150, "｜", tok="deepseek_v4_flash", why="a chain of overlapping specials"),
            Candidate("ok " + "|||EMAIL_ADDRESS" * 111, "|||", tok="olmo_3_7b",
                      why="olmo3's PII markers overlap on '|||' and their tails hold letter-to-'|' transitions: a "
                      "run inside the chain has a witness, and only the bound refuses it"),
        ),
    ),
    "margin=0": (
        RepairParams(margin=0),
        (
            Candidate(FILLER * 2 + "<|im_start|>" + (FILLER * 2)[: 512 - 6], "x",
                      why="a special token straddling ws (ws six characters into it)"),
            Candidate(FILLER * 2 + "<|begin_of_text|>" + (FILLER * 2)[: 512 - 3], "x",
                      why="a special token straddling ws (ws fourteen characters into it)"),
            Candidate("ok " + "｜DSML" * 150, "｜", tok="deepseek_v4_flash", why="a chain of overlapping specials"),
        ),
    ),
    "anchor_window_start=False": (
        RepairParams(anchor_window_start=False),
        (
            Candidate(FILLER * 2 + "1e\u0301" * 400 + "1", "x", tok="qwen3_8b",
                      why="the first window starts on a combining acute (the anchored start is one earlier): NFC "
                      "joins it with the e before it in the whole text, not in the window; witnesses 1->e in the run"),
            Candidate(FILLER * 2 + "1\u1100\u1161" * 400 + "1", "x", tok="qwen3_8b",
                      why="the first window starts on a Hangul V jamo that composes with the L jamo before it"),
        ),
    ),
    "min_match_tokens=1": (
        RepairParams(min_match_tokens=1),
        (Candidate(FILLER * 2, "s", why="one-token runs at the end"),),
    ),
}

REDUNDANT = {
    "require_witness=False": "killed wherever a pattern groups digits by up to three (llama3, o200k, deepseek "
    "stages, olmo3: the fullwidth digit run above) and wherever the vocabulary joins a newline with the blank after "
    "it (the newline run above) or a mark with the punctuation after it (the mark run above): one of them kills it "
    "on every provisioned tokenizer. On a tokenizer none of them reaches it would be open: proved, pieces agree after "
    "a shared piece boundary (python -m delta_suite.spec.proofs); not proved, that equal keys force one",
    "require_bound=False": "redundant alone where no special string overlapping another holds an accepted "
    "transition past the overlap (delta_suite.controls.proofs.accepted_runs_resynchronize: a run the whole text's "
    "selection "
    "crosses lies inside an occurrence the window's selection overlaps; test_single_knob_redundancy_premises; "
    "olmo_3_7b, where one does, kills it); jointly needed with the witness (test_witness_and_bound_are_jointly_needed)",
    "margin=0": "redundant given a bound that spans the longest special string in input characters "
    "(delta_suite.controls.proofs.accepted_runs_resynchronize): the whole text's selection then has nothing across "
    "the run's "
    "start, and from a point both select nothing across, it and the window's select alike "
    "(test_single_knob_redundancy_premises)",
    "min_match_tokens=1": "implied: a one-token run has no internal boundary (witness) and cannot exceed the bound",
    "anchor_window_start=False": "redundant: with anchors on both sides of the witness, NFC splits the window text "
    "there whatever its first characters normalize to (delta_suite.controls.proofs.accepted_runs_resynchronize, step "
    "3)",
}


# the control of each knob that has one; a knob whose control is an open finding on a provisioned tokenizer
# (controls/findings.py) is reported as open there, never as redundant; the witness has no argument at all where
# none of its inputs kills it
KNOB_CONTROLS = {"margin=0": "repair.margin_0", "require_bound=False": "repair.no_bound",
                 "anchor_window_start=False": "repair.nfc_window_start_unanchored",
                 "require_witness=False": "repair.no_witness"}
OPEN_KNOBS = {"require_witness=False"} | {
    knob for knob, control in KNOB_CONTROLS.items()
    if any(c == control and t in ADMITTED for c, t in OPEN_FINDINGS)
}


def _kills(tok_name: str, cand: Candidate, params: RepairParams) -> tuple[bool, bool, str]:
    """(broken variant wrong, default wrong, broken path) on one candidate."""
    return _kills_on(load_tokenizer(tok_name), cand, params)


def _kills_on(tok: FrozenTokenizer, cand: Candidate, params: RepairParams) -> tuple[bool, bool, str]:
    """(broken variant wrong, default wrong, broken path) on one candidate, for a loaded tokenizer."""
    ids, spans = reference_encode_with_offsets(tok, cand.old)
    expected = reference_encode(tok, cand.old + cand.delta)
    broken = repair(tok, cand.old, ids, spans, cand.delta, params)
    default = repair(tok, cand.old, ids, spans, cand.delta, DEFAULT_REPAIR_PARAMS)
    return broken.ids != expected, default.ids != expected, broken.path


@pytest.mark.parametrize("knob", sorted(KNOBS))
def test_knob_is_killed(knob: str, ledger) -> None:
    """The broken variant returns a wrong ID on some candidate, while the correct spec returns the reference."""
    params, candidates = KNOBS[knob]
    kills, tried = [], 0
    for cand in candidates:
        names = [cand.tok] if cand.tok else ADMITTED
        for name in names:
            if name not in ADMITTED:
                continue  # not provisioned here: counted as not tried, reported in details
            tried += 1
            wrong, default_wrong, path = _kills(name, cand, params)
            assert not default_wrong, f"the correct spec is wrong on {name}: {cand.why}"
            if wrong:
                kills.append(f"{name}:{path}:{cand.why}")
    details = {"kills": kills, "tried": tried}
    if not kills and knob not in REDUNDANT:
        ledger.record("control", f"repair_knob:{knob}", None, comparisons=2 * tried, differences=len(kills),
                      unit="candidate", details={**details, "survived_without_argument": True, "killed": False},
                      oracle="reference")
        pytest.fail(f"{knob} survived all {tried} candidates and no argument says why (not in REDUNDANT): the "
                    "property tests cannot see this knob", pytrace=False)
    if not kills:  # say what the survival is: a stated open finding, or redundant with the argument named
        details.update({"open_finding": REDUNDANT[knob]} if knob in OPEN_KNOBS else
                       {"killable": False, "redundant_because": REDUNDANT[knob]})
    ledger.record("control", f"repair_knob:{knob}", None, comparisons=2 * tried, differences=len(kills),
                  unit="candidate", details={**details, "killed": bool(kills)}, oracle="reference")
    if not kills:
        pytest.xfail(f"no single-knob kill for {knob} on provisioned tokenizers ({tried} tried): {REDUNDANT[knob]}")
    assert kills


def test_witness_and_bound_are_jointly_needed(ledger) -> None:
    """On this input neither require_witness nor require_bound alone is needed, but one of them is: with
    overlapping special strings ("｜DSML｜" overlaps itself in deepseek_v4_flash), a window starting inside the chain
    selects the other half of the overlapping occurrences; at the end of S it agrees with T on two plain tokens
    ("DS", "ML": no witness, four characters) that the whole encode puts inside an occurrence crossing len(S)."""
    name = "deepseek_v4_flash"
    if name not in ADMITTED:
        pytest.xfail(f"{name} is not provisioned; the combined kill needs its overlapping special strings")
    cand = Candidate("hello world " + "｜DSML" * 111, "｜", why="a chain of overlapping specials straddling ws")
    both = RepairParams(require_witness=False, require_bound=False)
    wrong, default_wrong, path = _kills(name, cand, both)
    singles = [_kills(name, cand, RepairParams(require_witness=False))[0],
               _kills(name, cand, RepairParams(require_bound=False))[0]]
    ledger.record("control", "repair_knob:require_witness=False+require_bound=False", load_tokenizer(name),
                  comparisons=4, differences=int(wrong) + sum(singles), unit="candidate",
                  details={"path": path, "single_knob_wrong": singles, "killed": wrong}, oracle="reference")
    assert not default_wrong and wrong and not any(singles)



def test_single_knob_redundancy_premises(tok, ledger) -> None:
    """The tokenizer-level premises under which margin=0 and require_bound=False cannot change an answer
    (controls.proofs.accepted_runs_resynchronize): the bound spans the longest special string in input characters
    (`bound_covers_margin`); no special string O overlapping another on k characters has an accepted transition
    between its characters i-1, i for k < i < len(O) - 1 (`overlap_interiors_without_witness`). Where the second
    fails (olmo_3_7b), require_bound=False is not redundant: a concrete input must show it wrong there."""
    assert bound_covers_margin(tok)
    overlaps = overlapping_specials(tok.special_strings)
    witnessed = not overlap_interiors_without_witness(tok)
    kills = []
    if witnessed:
        params, candidates = KNOBS["require_bound=False"]
        kills = [c.why for c in candidates if c.tok == tok.name and _kills(tok.name, c, params)[0]]
    ledger.record("proof", "repair_redundancy_premises", tok, comparisons=len(overlaps) + 1,
                  differences=int(witnessed) if not kills else 0, unit="premise",
                  details={"overlaps": len(overlaps), "witnessed_overlaps": witnessed,
                           "bound_needed_here": bool(kills)}, oracle="premise")
    assert not witnessed or kills, f"{tok.name}: overlapped interiors with a witness, but no input shows " \
                                   "require_bound=False wrong here"


def newline_tail_candidates() -> list[Candidate]:
    """The newline-tail input at the first window (checks.battery.h_newline_tail): a punctuation character, a
    newline run whose chunks the window starts a multiple of 64 into, blanks, a newline and a word that leave 497
    newlines in the window, then D."""
    out = []
    for head, fill, k in (("!", "  ", 1), (",", " ", 2), (":", "\t", 1), ("?", "    ", 3)):
        word = "abcdefghijklmn"[: FIRST_WINDOW - 1 - len(fill) - TAIL_WINDOW_NEWLINES]
        run = "\n" * (TAIL_WINDOW_NEWLINES + TAIL_PHASE * k)
        out.append(Candidate("word " * 3 + head + run + fill + "\n" + word, " end"))
    return out


def test_witness_verdict_of_the_proofs_matches_the_reference(tok, ledger) -> None:
    """`python -m delta_suite.spec.proofs` calls the witness necessary for a tokenizer exactly where one of the inputs
    it names
    repairs wrongly without it on the tokenizer's reference IDs (and the default stays exact): the digit-phase input
    where the pattern groups digits by three, the newline-tail input where the pattern has the newline tail and the
    vocabulary joins a newline with the blank after it (spec.repair.newline_joins_whitespace), the mark-tail input
    where letters and punctuation both take marks and the vocabulary joins a mark with the punctuation after it
    (spec.repair.mark_joins_punctuation)."""
    family = admission_of(tok).pattern
    mechanisms = witness_mechanisms(family)
    candidates = [Candidate("x " + "".join(digits[(7 * i) % 10] for i in range(552)), tail)
                  for digits in PHASE_DIGITS for tail in ("1", "12", "123")]  # the window starts 40 digits in
    candidates += newline_tail_candidates()
    candidates += [Candidate("word " + head + mark * (FIRST_WINDOW + 88) + punct, " end")
                   for mark, punct in MARK_TAIL_PAIRS for head in ("!!", "((")]
    kills, default_wrong = [], []
    for cand in candidates:
        wrong, wrong_default, path = _kills(tok.name, cand, RepairParams(require_witness=False))
        default_wrong.append(wrong_default)
        if wrong:
            kills.append((cand.old[:2] + "..." + cand.old[-4:], cand.delta, path))
    claimed = witness_verdict(family).startswith("NECESSARY") and (
        "digit_phase" in mechanisms
        or ("newline_tail" in mechanisms and newline_joins_whitespace(tok))
        or ("mark_tail" in mechanisms and mark_joins_punctuation(tok)))
    ledger.record("control", "repair_knob:witness_verdict", tok, comparisons=2 * len(default_wrong),
                  differences=len(kills), unit="candidate",
                  details={"family": family, "mechanisms": list(mechanisms), "claimed_necessary": claimed,
                           "kills": kills[:3], "killed": bool(kills)}, oracle="reference")
    assert not any(default_wrong)
    assert claimed == bool(kills), (family, kills[:3])


def test_a_vocabulary_without_the_joining_token_does_not_join_a_mark_to_punctuation(tmp_path: Path) -> None:
    """mark_joins_punctuation is false for a vocabulary with no token from a Kannada mark into U+0C84 (the synthetic
    power vocabulary: its merges join ASCII), and true for some provisioned tokenizer (tekken's vocabulary joins
    them), so its answer is read from the vocabulary, not fixed."""
    assert not mark_joins_punctuation(stages_tokenizer("synthetic_marks", tmp_path, (GPT2,)))
    assert any(mark_joins_punctuation(load_tokenizer(name)) for name in ADMITTED)


def _mark_run_crosses(tok: FrozenTokenizer, marks: int) -> bool:
    """The reference encode of "!!", `marks` marks U+0C82 and U+0C84 has a token crossing into the U+0C84."""
    text = "!!" + KANNADA_MARK * marks + KANNADA_PUNCT
    _, spans = reference_encode_with_offsets(tok, text)
    return any(s < len(text) - 1 < e for s, e in spans)


def test_the_mark_tail_probe_is_right_on_a_vocabulary_that_joins_odd_runs_only(tmp_path: Path, ledger) -> None:
    """On an admitted tekken-pattern vocabulary whose mark joins U+0C84 after an odd run of marks only
    (properties.synthetic.mark_parity_config), the witness verdict (`witness_verdict` with
    `mark_joins_punctuation`) says what real repairs show: without its sync witness the repair is wrong after a
    run of FIRST_WINDOW + 89 marks (odd) and right after FIRST_WINDOW + 88, the default right after both. The
    probe's own run of five marks is odd, so it finds the joining token; a run of four or six would not, and the
    verdict would call a necessary witness unneeded. So the probe's run length is not free: its answer is the
    same for every run length on some vocabularies only (the provisioned ones among them)."""
    tok = mark_parity_tokenizer(tmp_path, TEKKEN)
    verdict = admission_of(tok)
    assert verdict.admitted and verdict.pattern == "tekken"
    assert "mark_tail" in witness_mechanisms(verdict.pattern) and not newline_joins_whitespace(tok)
    assert {k: _mark_run_crosses(tok, k) for k in range(1, 9)} == {k: k % 2 == 1 for k in range(1, 9)}
    kills, default_wrong = [], []
    for extra in (88, 89):
        for head in ("!!", "(("):
            cand = Candidate("word " + head + KANNADA_MARK * (FIRST_WINDOW + extra) + KANNADA_PUNCT, " end")
            wrong, wrong_default, path = _kills_on(tok, cand, RepairParams(require_witness=False))
            default_wrong.append(wrong_default)
            if wrong:
                kills.append((extra, head, path))
    claimed = witness_verdict(verdict.pattern).startswith("NECESSARY") and mark_joins_punctuation(tok)
    ledger.record("control", "repair_knob:witness_verdict_mark_parity", tok, comparisons=2 * len(default_wrong),
                  differences=len(kills), unit="candidate",
                  details={"claimed_necessary": claimed, "kills": kills, "killed": bool(kills)}, oracle="reference")
    assert not any(default_wrong)
    assert sorted(extra for extra, _, _ in kills) == [89, 89]
    assert claimed
