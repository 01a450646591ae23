"""Every CutRules knob, broken, lets a wrong cut through on a concrete input for some provisioned tokenizer.

A property that cannot fail proves nothing: each broken variant must accept a cut that the correct rules refuse
and that changes the reference encode. Knobs that cannot be killed with the provisioned tokenizers are tested for
what can be shown (the variant differs, or provably changes nothing) and say why.
"""

from __future__ import annotations

import pytest
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.ledger.records import make_record
from delta_suite.reports.table3 import build_table3
from delta_suite.reports.verdict import verdict
from delta_suite.spec.classes import L, M, S, class_table
from delta_suite.spec.cut import CutRules, is_safe_cut
from delta_suite.spec.normalization import is_anchor
from delta_suite.spec.reference import reference_encode
from delta_suite.spec.transitions import ACCEPTED_PAIRS

from properties.conftest import ADMITTED, GateLedger


def _breaks(tok, text: str, b: int) -> bool:
    """The cut at b changes the reference encode: ref(S[:b]) + ref(S[b:]) != ref(S)."""
    return reference_encode(tok, text[:b]) + reference_encode(tok, text[b:]) != reference_encode(tok, text)


def _kills(ledger, knob: str, rules: CutRules, cases: list[tuple[str, str, int]]) -> None:
    """Each (tokenizer, text, b): the broken rules accept b, the correct rules refuse it, and it breaks the encode.

    A record kills (`killed`, and its one difference) only when the broken rules accepted the cut and the cut changes
    the reference IDs: a cut that would change them but that the broken rules refuse kills nothing."""
    killed = []
    for name, text, b in cases:
        if name not in ADMITTED:
            continue
        rec = _knob_record(ledger, knob, rules, load_tokenizer(name), text, b)
        if rec["details"]["killed"] and rec["details"]["spec_refuses"]:
            killed.append(name)
    assert killed, f"knob {knob}: no provisioned tokenizer shows a difference on {cases}"


def _knob_record(ledger, knob: str, rules: CutRules, tok, text: str, b: int) -> dict:
    """The control record of one knob on one input: killed iff the broken rules accept b and the cut at b changes
    the reference IDs; its one difference is that kill (a cut the broken rules refuse is no difference of theirs)."""
    broken_accepts = is_safe_cut(tok, text, b, rules)
    spec_refuses = not is_safe_cut(tok, text, b)
    differs = _breaks(tok, text, b)
    kill = broken_accepts and differs
    return ledger.record("control", f"knob_{knob}", tok, comparisons=1, differences=int(kill),
                         details={"text": text, "cut": b, "broken_accepts": broken_accepts,
                                  "spec_refuses": spec_refuses, "cut_changes_reference": differs, "killed": kill},
                         oracle="reference")


@pytest.mark.skipif(not ADMITTED, reason="no admitted tokenizer provisioned")
def test_a_control_whose_broken_rules_refuse_is_not_killed(ledger) -> None:
    """Test of the test: a planted "control" whose rules refuse the cut (the specification's own rules) on an input
    whose cut would change the reference IDs ("a|hello") kills nothing: its record says killed false with no
    difference, the report's kill matrix calls it survived and the verdict counts it among the survivors, never
    killed. A record of the same run that does not say whether it killed (no `killed`, one difference) is not
    counted killed either, and the report lists it as such."""
    tok = load_tokenizer(ADMITTED[0])
    planted = GateLedger("planted-refusing-control")
    rec = _knob_record(planted, "planted_refusing", CutRules(), tok, "a hello", 2)
    assert rec["details"]["cut_changes_reference"] and not rec["details"]["broken_accepts"]
    assert rec["details"]["killed"] is False and rec["differences"] == 0
    unstated = make_record("gate", "control", "knob_planted_unstated", tokenizer=tok.name,
                           tokenizer_sha256=tok.sha256, comparisons=1, differences=1, oracle="reference")
    compared = make_record("gate", "encoder", "corpus.whole", tokenizer=tok.name, tokenizer_sha256=tok.sha256,
                           comparisons=1, unit="documents", oracle="reference")
    model = build_table3([compared, *planted.records, unstated], provisioning=[
        {"name": tok.name, "alias": tok.name, "status": "provisioned (exact)", "sha256": tok.sha256}],
        with_mutation=False)
    cells = {name: model.kill_matrix.cells[name][tok.name].status for name in model.kill_matrix.controls}
    assert cells == {"knob_planted_refusing": "survived", "knob_planted_unstated": "survived"}, cells
    assert sorted(model.kill_matrix.survivors) == ["knob_planted_refusing", "knob_planted_unstated"]
    assert any("no details.killed" in n and f"knob_planted_unstated on {tok.name}" in n
               for n in model.kill_matrix.notes), model.kill_matrix.notes
    line = verdict(model).line
    assert "controls killed or proven 0/2" in line and not verdict(model).passed, line
    ledger.record("harness", "control_records.refusing_plant", tok, comparisons=2,
                  differences=sum(status != "survived" for status in cells.values()), unit="controls",
                  oracle="self")


def test_pairs_knob_killed(ledger) -> None:
    """Adding S->L to the accepted pairs accepts "a |hello", which splits a space-prefixed word."""
    rules = CutRules(pairs=ACCEPTED_PAIRS | {(S, L)})
    _kills(ledger, "pairs", rules, [(n, "a hello", 2) for n in ADMITTED])


def test_cr_lf_carveout_knob_killed(ledger) -> None:
    """Without the CR/LF carve-out, ".|\\nfoo" is accepted, but the punctuation run absorbs the newline."""
    _kills(ledger, "cr_lf_carveout", CutRules(cr_lf_carveout=False), [(n, ".\nfoo", 1) for n in ADMITTED])


def test_apostrophe_carveout_knob_killed(ledger) -> None:
    """Without the apostrophe carve-out, "don|'t" is accepted; o200k letter runs carry the contraction."""
    _kills(ledger, "apostrophe_carveout", CutRules(apostrophe_carveout=False), [("gpt_oss_120b", "don't", 3)])


@pytest.mark.parametrize("guard", ["off"])
def test_guard_off_knob_killed(ledger, guard: str) -> None:
    """With the guard off, a cut inside a special-token string at a letter->other transition is accepted."""
    cases = [
        ("qwen3_8b", "<|object_ref_start|>", 8),
        ("gpt_oss_120b", "<|reserved_200000|>", 10),
        ("llama_3_1_8b", "<|reserved_special_token_100|>", 10),
        ("deepseek_v3", "<｜place▁holder▁no▁100｜>", 7),
    ]
    _kills(ledger, "guard_off", CutRules(guard=guard), cases)


def _overlap_texts(specials: tuple[str, ...]) -> set[str]:
    """Texts where one special-token string contains, or overlaps the end of, another (with some context)."""
    texts: set[str] = set()
    by_first: dict[str, list[str]] = {}
    for t in specials:
        by_first.setdefault(t[0], []).append(t)
    for s in specials:
        for t in specials:
            if s != t and t in s:
                texts.update({s, "a" + s + "a"})
        for j in range(1, len(s)):
            for t in by_first.get(s[j], ()):
                if t != s and t.startswith(s[j:]) and len(t) > len(s) - j:
                    texts.update({s[:j] + t, "x " + s[:j] + t + " y"})
    return texts


def test_guard_selected_accepts_more_but_is_not_killed_here(ledger) -> None:
    """guard="selected" is a real variant: it accepts cuts inside occurrences the leftmost-longest scan skips.
    It is not expected to be killable with the provisioned tokenizers: a cut inside only an unselected occurrence
    changes no chunk's own leftmost-longest selection, and these configurations have almost no overlapping or
    nested special strings. The differences found are recorded (killable iff > 0)."""
    selected = CutRules(guard="selected")
    extra_total = 0
    for name in ADMITTED:
        tok = load_tokenizer(name)
        texts = sorted(_overlap_texts(tok.special_strings))
        extra = [(t, b) for t in texts for b in range(1, len(t))
                 if is_safe_cut(tok, t, b, selected) and not is_safe_cut(tok, t, b)]
        differs = [(t, b) for t, b in extra if _breaks(tok, t, b)]
        extra_total += len(extra)
        ledger.record("control", "knob_guard_selected", tok, comparisons=len(extra), differences=len(differs),
                      details={"overlap_texts": len(texts), "killable": bool(differs), "killed": bool(differs),
                               "examples": differs[:3]},
                      oracle="reference")
    assert extra_total > 0, "guard='selected' never differs from 'all' on the provisioned overlaps"


def test_check_normalization_knob_killed(ledger) -> None:
    """Without the NFC condition, "U+0958|/a" is accepted on an NFC tokenizer: the raw L->O pair becomes M->O
    after NFC, so the mark and the slash share a pre-token in the whole text while the chunk starts "/a"."""
    _kills(ledger, "check_normalization", CutRules(check_normalization=False), [("qwen3_8b", "\u0958/a", 1)])


def test_class_source_knob_killed(ledger) -> None:
    """With Python's class table, a Unicode 15 digit (U+11F50, unassigned for Python 3.11) counts as O, so
    "U+11F50|1234" is accepted; the engine groups digits by three from the run start, so the groups shift."""
    cases = [(n, "\U00011f501234", 1) for n in ("llama_3_1_8b", "gpt_oss_120b", "deepseek_v3")]
    _kills(ledger, "class_source", CutRules(class_source="python"), cases)


def test_anchor_probe_knobs_change_nothing_or_only_hangul(ledger) -> None:
    """The reorder probes are redundant given the engine's M class, and dropping the Hangul probes only makes V/T
    jamo (class L) anchors; Hangul composition joins adjacent L-class characters, so neither knob can produce a
    wrong cut (unkillable by construction). Checked here on the mark blocks and the jamo; every code point is
    checked by test_cut_exhaustive.py::test_anchor_predicate_equals_tables_at_reference_version."""
    table = class_table()
    anchor = is_anchor.__wrapped__
    sample = [*range(0x300, 0x370), *range(0x591, 0x5C8), *range(0x900, 0x980), *range(0x1100, 0x1200), 0x1E944]
    reorder = [cp for cp in sample if anchor(chr(cp), table[cp]) != anchor(chr(cp), table[cp], False, True)]
    hangul = [cp for cp in sample if anchor(chr(cp), table[cp]) != anchor(chr(cp), table[cp], True, False)]
    jamo = [*range(0x1161, 0x1176), *range(0x11A8, 0x11C3)]
    # differences: anchors the knobs move beyond what the argument allows (none for the reorder probes; exactly
    # the V/T jamo for the Hangul ones)
    unexpected = len(reorder) + len(set(hangul) ^ set(jamo))
    ledger.record("control", "knob_anchor_probes", None, comparisons=len(sample), differences=unexpected,
                  details={"reorder_changed": len(reorder), "hangul_changed": len(hangul), "killable": False,
                           "killed": False},
                  oracle="spec")
    assert reorder == []
    assert hangul == jamo
    assert all(table[cp] == L for cp in hangul) and all(table[cp] == M for cp in range(0x300, 0x370))
