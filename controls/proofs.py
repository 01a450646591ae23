"""Redundancy proofs: why some controls survive the battery for some split patterns, with checks of each premise.

A control that survives is a finding unless the condition it removes is redundant. Each function below states
the argument in its docstring and checks its premise against the reference (pre-tokenizer, added-token scan,
normalizer) exhaustively over the code points concerned; it returns how many premises it checked and the
counterexamples it found (a proof holds only with none). `properties/test_control_proofs.py` runs them.

A proof about pre-tokens or repair windows has nothing to say about a whole-word tokenizer (`spec.whole_word`: no
splitting pre-tokenizer, a repair without windows): there it returns a check marked `not_applicable` (with the
reason), which never holds. The whole-word family has proofs of its own (`special_interiors_joined`,
`forgotten_pair_guarded`, `chunk_encoder_is_tokenizer`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain

from delta_suite.checks.palette import class_pool
from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.spec.admission import admission_of
from delta_suite.spec.classes import L, M, N, O, class_table
from delta_suite.spec.cut import DEFAULT_CUT_RULES, CutRules, accepted_cuts, rules_for
from delta_suite.spec.free_pair_cut import chunk_encoder, chunk_pieces, forgotten_pair
from delta_suite.spec.guard import literal_trie
from delta_suite.spec.normalization import is_anchor, normalize
from delta_suite.spec.piece_local import piece_local_rules
from delta_suite.spec.reference import reference_encode_with_offsets
from delta_suite.spec.repair import (
    RepairParams,
    anchored_window_start,
    judge_run,
    longest_common_run,
    overlap_keys,
    repair,
    sync_witness,
)
from delta_suite.spec.transitions import is_accepted_transition
from delta_suite.spec.whole_word import whole_word_rules
from tokenizers.normalizers import NFC, NFD

_NFC = NFC()
_NFD = NFD()


@dataclass
class ProofCheck:
    """What a premise check compared and the counterexamples it found."""
    name: str
    tokenizer: str
    checked: int = 0
    counterexamples: list = field(default_factory=list)
    not_applicable: str = ""  # why the proof does not speak about this tokenizer (then nothing is checked)

    @property
    def holds(self) -> bool:
        return self.checked > 0 and not self.counterexamples and not self.not_applicable


WHOLE_WORD_HAS_NO_PRE_TOKENS = ("whole-word tokenizer (spec.whole_word): no splitting pre-tokenizer, each stretch "
                                "is one word, so there are no pre-token boundaries to prove")
WHOLE_WORD_HAS_NO_WINDOWS = ("whole-word tokenizer (spec.whole_word_repair): its repair re-encodes from one accepted "
                             "cut, with no window, matched run, bound or witness")
NOT_WHOLE_WORD = "not a whole-word tokenizer: the proof is about the whole-word family (spec.whole_word)"


def _not_applicable(check: ProofCheck, why: str) -> ProofCheck:
    check.not_applicable = why
    return check


def _whole_word(tok: FrozenTokenizer) -> bool:
    return admission_of(tok).whole_word


def _pieces(tok: FrozenTokenizer, text: str) -> tuple[str, list[tuple[int, int]]]:
    """The normalized text and the character spans of its pre-tokens (the reference's own normalizer and
    pre-tokenizer; a tokenizer without a pre-tokenizer has one pre-token, the whole normalized text). The callers
    return "not applicable" for a whole-word tokenizer before they get here."""
    norm = tok.tokenizer.normalizer.normalize_str(text) if tok.tokenizer.normalizer is not None else text
    if tok.tokenizer.pre_tokenizer is None:
        return norm, [(0, len(norm))] if norm else []
    return norm, [span for _, span in tok.tokenizer.pre_tokenizer.pre_tokenize_str(norm)]


def single_digit_pretokens(tok: FrozenTokenizer) -> ProofCheck:
    """cut.add_N_N is redundant for the qwen2 pattern: every digit is a pre-token of its own.

    Argument. In the qwen2 pattern (the contractions, the letter run `[^\\r\\n\\p{L}\\p{N}]?\\p{L}+`, `\\p{N}`,
    the punctuation run ` ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*` and the whitespace alternatives) no alternative but
    `\\p{N}` can consume a character of class N: the contractions hold ' and letters, the letter and punctuation
    runs exclude \\p{N}, and no N character is \\s; `\\p{N}` consumes exactly one. So the boundary between two N
    characters is a pre-token boundary in every text, and at the end of a chunk the one-character pre-token
    closes exactly as it does in the whole text (the end-of-input property). The guard and normalization
    conditions are unchanged in the control, so an N->N cut keeps the special-token scan and the normalized
    text the same; the pieces are then the same pre-tokens and the same IDs.

    Premise checked: with every N code point (as the engine classes it) placed after a letter, a digit, an N
    character, punctuation and a space, and NFC applied first, each N character of the normalized text is
    exactly one pre-token.
    """
    out = ProofCheck("single_digit_pretokens", tok.name)
    if _whole_word(tok):
        return _not_applicable(out, WHOLE_WORD_HAS_NO_PRE_TOKENS)
    table = class_table()
    digits = [chr(c) for c in class_pool(N)]
    text = "".join(f"a{c}{c}1{c}.{c} {c}" for c in digits)
    norm, spans = _pieces(tok, text)
    starts = {s: e for s, e in spans}
    for i, ch in enumerate(norm):
        if table[ord(ch)] == N:
            out.checked += 1
            if starts.get(i) != i + 1:
                out.counterexamples.append(f"U+{ord(ch):04X} at {i}")
    return out


def letter_runs_stop_before_apostrophe(tok: FrozenTokenizer, stride: int = 1) -> ProofCheck:
    """cut.no_apostrophe_carveout is redundant for the qwen2, llama3 and deepseek patterns.

    Argument. Only o200k-style letter runs carry an optional contraction suffix `(?i:'s|'t|...)?`. In qwen2 and
    llama3 the letter run is `[^\\r\\n\\p{L}\\p{N}]?\\p{L}+`, in deepseek `[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+`.
    An apostrophe is neither a letter nor a mark, so a letter run always ends right before it, in the whole
    text and at the end of a chunk alike; after it, matching restarts at the apostrophe in both (the patterns
    have no lookbehind). So an L->' boundary is a pre-token boundary whatever follows, and the carve-out only
    refuses cuts that are safe.

    Premise checked: every L code point followed by each contraction ('s, 't, 're, 've, 'm, 'll, 'd, and upper
    case) and by a lone apostrophe, NFC applied first: wherever the normalized text has a letter right before
    an apostrophe, a pre-token starts at the apostrophe. `stride` > 1 checks every stride-th letter (the
    default gate); stride 1 is the exhaustive check.
    """
    out = ProofCheck("letter_runs_stop_before_apostrophe", tok.name)
    if _whole_word(tok):
        return _not_applicable(out, WHOLE_WORD_HAS_NO_PRE_TOKENS)
    table = class_table()
    suffixes = ("'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "' ", "'.")
    letters = [chr(c) for c in class_pool(L)[::stride]]
    for k, suffix in enumerate(suffixes):
        chunk = letters if k < 2 else letters[k::len(suffixes)]  # all letters for 's and 't, a share for the rest
        norm, spans = _pieces(tok, "".join(c + suffix + " " for c in chunk))
        starts = {s for s, _ in spans}
        for i in range(1, len(norm)):
            if norm[i] == "'" and table[ord(norm[i - 1])] == L:
                out.checked += 1
                if i not in starts:
                    out.counterexamples.append(f"U+{ord(norm[i - 1]):04X}{suffix!r}")
    return out


def marks_end_before_other(tok: FrozenTokenizer, stride: int = 1) -> ProofCheck:
    """cut.add_M_O is redundant for the deepseek pattern: a mark is always the last character of a letter run
    before a character of class O.

    Argument. The third DeepSeek stage (`[!"#...][A-Za-z]+`, `[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+`, the
    punctuation run ` ?[\\p{P}\\p{S}]+[\\r\\n]*` and the whitespace alternatives) puts every mark into a letter
    run `[\\p{L}\\p{M}]+` (a mark may also be the optional one-character prefix, but only of a letter run, which
    then contains it). An O character is neither a letter nor a mark, so the run ends right before it, in the
    whole text and at the end of a chunk alike, and matching restarts at the O
    character in both. The first two stages (digit groups, the CJK ranges) only add boundaries; where an O
    character and a mark share a CJK piece (U+3099 U+309B), the third stage still splits them. So M->O is a
    pre-token boundary in every text.

    Premise checked: every mark (class M) followed by a sample of O characters, and every assigned O character
    after a mark, NFC applied first where the tokenizer has it: a pre-token starts at each O character that
    follows a mark in the normalized text.
    """
    out = ProofCheck("marks_end_before_other", tok.name)
    if _whole_word(tok):
        return _not_applicable(out, WHOLE_WORD_HAS_NO_PRE_TOKENS)
    table = class_table()
    marks = [chr(c) for c in class_pool(M)]
    others = [chr(c) for c in class_pool(O)]
    sample = [*others[:: max(1, len(others) // 40)], "'s", "'t"]  # with o200k's contraction after a mark
    texts = ["".join(f"a{m}{o} " for m in marks[::stride] for o in sample),
             "".join(f"a\u0301{o} x\u3099{o} " for o in others[::stride]),
             # a mark after an O character, where a punctuation run may take it (tekken, qwen2, llama3)
             "".join(f"!{m}{o} \x00{m}{o} " for m in marks[::stride] for o in sample[:8])]
    for text in texts:
        norm, spans = _pieces(tok, text)
        starts = {a for a, _ in spans}
        for i in range(1, len(norm)):
            if table[ord(norm[i - 1])] == M and table[ord(norm[i])] == O:
                out.checked += 1
                if i not in starts:
                    out.counterexamples.append(f"U+{ord(norm[i - 1]):04X} U+{ord(norm[i]):04X}")
    return out


def selected_occurrences_match_reference(tok: FrozenTokenizer, texts: list[str]) -> ProofCheck:
    """cut.guard_selected_only is redundant wherever the guard's selection is the reference's own selection.

    Argument. The reference scans special-token strings leftmost-longest, left to right. Let b lie strictly
    inside no selected occurrence. The scan of S[:b] reads the same characters as the whole scan up to b and
    makes the same selections there, since none of them crosses b. In the whole scan, the last selection
    starting before b ends at some p <= b, and no occurrence starts in [p, b) (it would have been selected
    before b); so the next selection is the leftmost-longest occurrence starting at or after b, which is also
    the first selection of the scan of S[b:], and from there both scans read the same characters. Hence each
    chunk's scan selects exactly the whole scan's occurrences on its side, and an unselected occurrence that
    crosses b changes nothing. (NFC tokenizers: the reference normalizes the stretches between selected
    occurrences, so the anchor window needs to avoid only those as well.) The premise is that the guard's
    "selected" occurrences are the reference's.

    Premise checked: on each given text, the occurrences `spec.guard` selects are exactly the character spans
    of the special-token IDs in the reference encode.
    """
    out = ProofCheck("selected_occurrences_match_reference", tok.name)
    trie = literal_trie(tok)
    specials = {tok.tokenizer.token_to_id(s) for s in tok.special_strings}
    for text in texts:
        ids, offsets = reference_encode_with_offsets(tok, text)
        ref = [tuple(o) for i, o in zip(ids, offsets, strict=True) if i in specials]
        mine = trie.selected(text)
        out.checked += 1
        if ref != mine:
            out.counterexamples.append({"text": text, "reference": ref, "selected": mine})
    return out


def reorder_probes_implied(tok: FrozenTokenizer, limit: int = 0x110000) -> ProofCheck:
    """cut.anchor_no_reorder is redundant: the reordering probes never refuse a character the other tests pass.

    Argument. Canonical reordering moves only characters with a non-zero combining class, and composition with
    a following mark starts only from a starter; the anchor predicate already refuses every mark (class M) and
    every character NFC changes alone. If every non-mark character that NFC leaves alone also stays unchanged
    after U+0301 and before U+0335, the two probes refuse nothing more, and the control is the specification.

    Premise checked: for every code point below `limit` (default: all scalar values) that is not class M and
    that NFC leaves unchanged, NFC(U+0301 c) and NFC(c U+0335) leave it unchanged too (the reference's own
    normalizer).
    """
    return _probe_scan(tok, "reorder_probes_implied", limit, ("\u0301", ""), ("", "\u0335"))


def hangul_probes_class_preserving(tok: FrozenTokenizer, limit: int = 0x110000) -> ProofCheck:
    """cut.anchor_no_hangul is redundant: a character only the Hangul probes refuse is a letter that composes into a
    letter, so neither the cut's raw pair nor its normalized pair can change class through it.

    Argument. Without the Hangul probes, a Hangul V or T jamo (class L) can serve as an anchor although NFC
    composes it with a preceding L jamo or LV syllable. A raw accepted pair never has a jamo on the right after a
    letter (L->L is not accepted) and a digit or other character does not compose with a jamo, so NFC still
    splits at the cut itself; a misplaced anchor changes only which stretch is normalized in the window test,
    and every composition it misses maps letters to a letter (a Hangul syllable), so the last normalized
    character before the cut and the first after it keep their classes.

    Premise checked: every code point below `limit` (default: all scalar values) that is not a mark, that NFC
    leaves alone, but that composes after U+1100 or U+AC00 is class L, and so is the composed result.
    """
    out = ProofCheck("hangul_probes_class_preserving", tok.name)
    table = class_table()
    sep = "\x00"
    cps = _scalars(limit)
    for start in range(0, len(cps), 20000):
        chunk = [chr(cp) for cp in cps[start : start + 20000]]
        alone = _NFC.normalize_str(sep.join(chunk)).split(sep)
        stable = [c for c, n in zip(chunk, alone, strict=True) if c == n]
        for lead in ("\u1100", "\uac00"):
            probed = [lead + c for c in stable]
            got = _NFC.normalize_str(sep.join(probed)).split(sep)
            for want, have in zip(probed, got, strict=True):
                if want != have:
                    out.checked += 1
                    cp = ord(want[1])
                    if table[cp] != L or any(table[ord(x)] != L for x in have):
                        out.counterexamples.append(f"U+{cp:04X} after U+{ord(lead):04X}")
    return out


def _scalars(limit: int) -> list[int]:
    """Non-ASCII scalar values below `limit` that are not class M."""
    table = class_table()
    return [cp for cp in range(0x80, min(limit, 0x110000)) if not 0xD800 <= cp < 0xE000 and table[cp] != M]


def _probe_scan(tok: FrozenTokenizer, name: str, limit: int, *probes: tuple[str, str]) -> ProofCheck:
    """Every non-mark code point that NFC leaves alone also stays unchanged inside each (before, after) probe."""
    out = ProofCheck(name, tok.name)
    cps = _scalars(limit)
    sep = "\x00"
    for start in range(0, len(cps), 20000):
        chunk = [chr(cp) for cp in cps[start : start + 20000]]
        alone = _NFC.normalize_str(sep.join(chunk)).split(sep)
        stable = [c for c, n in zip(chunk, alone, strict=True) if c == n]
        for before, after in probes:
            probed = [before + c + after for c in stable]
            got = _NFC.normalize_str(sep.join(probed)).split(sep)
            for want, have in zip(probed, got, strict=True):
                out.checked += 1
                if want != have:
                    out.counterexamples.append(f"U+{ord(want[len(before)]):04X} in {before!r}+c+{after!r}")
    return out


def one_token_runs_rejected(tok: FrozenTokenizer, texts: list[str]) -> ProofCheck:
    """repair.one_token_match is redundant: with the witness required, a one-token run is never accepted.

    Argument. The sync witness is an internal boundary of the matched run, the start of its second or a later
    token; a run of one token has none, so `judge_run` refuses it whatever `min_match_tokens` says (and a single
    token never covers more than the bound either, by `bound_premise`). The control therefore accepts exactly
    the runs the specification accepts.

    Premise checked: for every token of the reference encode of each text, taken as a one-token run, `judge_run`
    with min_match_tokens=1 (everything else as specified) does not accept it.
    """
    out = ProofCheck("one_token_runs_rejected", tok.name)
    if _whole_word(tok):
        return _not_applicable(out, WHOLE_WORD_HAS_NO_WINDOWS)
    params = RepairParams(min_match_tokens=1)
    for text in texts:
        _, spans = reference_encode_with_offsets(tok, text)
        for i in range(len(spans)):
            out.checked += 1
            verdict = judge_run(tok, text, spans, (i, i, 1), params, tok.bound)
            if verdict == "accepted":
                out.counterexamples.append({"text": text[:80], "token": i})
    return out


def overlap_interiors_without_witness(tok: FrozenTokenizer) -> bool:
    """The tokenizer-level premise of the no_bound redundancy (accepted_runs_resynchronize): for every pair of
    overlapping special strings Z, O (Z's last k characters are O's first k), O has no accepted class transition
    between its characters i-1 and i for k < i < len(O) - 1, the stretch of O that can hold an accepted run's
    witness when O is the occurrence the whole text selects across len(S) and the window selects Z instead.
    False on olmo_3_7b, whose PII markers ("|||EMAIL_ADDRESS|||", ...) overlap on "|||" and carry a letter-to-"|"
    transition there (the bound is needed: the battery's overlap chains kill repair.no_bound); true on
    deepseek_v4_flash, whose "｜DSML｜" overlaps itself and "<｜/table>｜" on "｜" with letters only in between."""
    for _z, o, k in overlapping_specials(tok.special_strings):
        if any(is_accepted_transition(o[i - 1], o[i]) for i in range(k + 1, len(o) - 1)):
            return False
    return True


@lru_cache(maxsize=1)
def nfd_expansion() -> int:
    """The most characters one scalar value decomposes to under the reference's NFD (the most NFC can make of one
    character, as NFC composes what NFD gives); newlines, which NFD neither moves nor decomposes, keep the
    characters apart in one call."""
    chars = map(chr, chain(range(0x0A), range(0x0B, 0xD800), range(0xE000, 0x110000)))
    return max(map(len, _NFD.normalize_str("\n".join(chars)).split("\n")))


def bound_covers_margin(tok: FrozenTokenizer) -> bool:
    """The tokenizer-level premise of the margin_0 redundancy (accepted_runs_resynchronize): a run whose normalized
    length exceeds the bound spans at least as many input characters as the longest special string, so it starts at
    least that far before len(S). Normalizing k characters gives at most k * nfd_expansion() (NFC composes what NFD
    gives; the identity gives k), so the premise is bound >= E * (longest - 1), E = 1 without NFC."""
    longest = max((len(s) for s in tok.special_strings), default=0)
    expansion = nfd_expansion() if tok.is_nfc else 1
    return tok.bound >= expansion * max(longest - 1, 0)


def overlapping_specials(specials: tuple[str, ...]) -> list[tuple[str, str, int]]:
    """(Z, O, k): special strings where Z's last k characters are O's first k (0 < k < both lengths)."""
    by_prefix: dict[str, list[str]] = {}
    for s in specials:
        for k in range(1, len(s)):
            by_prefix.setdefault(s[:k], []).append(s)
    return [(z, o, k) for z in specials for k in range(1, len(z)) for o in by_prefix.get(z[len(z) - k :], ())]


def accepted_runs_resynchronize(tok: FrozenTokenizer, cases: list, params) -> ProofCheck:
    """repair.margin_0 (where `bound_covers_margin` holds), repair.no_bound (where `overlap_interiors_without_witness`
    holds) and repair.nfc_window_start_unanchored are redundant: every run these controls accept splices exactly.

    Notation: S' = S + D; T, U, R the reference encodes of S, of the window S'[ws:], of S'; the accepted run covers
    [p, e) with e <= len(S), its tokens equal (start, end, ordinal, ID) in T and U, with a witness b (p < b < e, an
    accepted transition with anchors around it under NFC). A selected special occurrence is one token, so neither T
    nor U selects an occurrence crossing a boundary of the run. Two facts of the leftmost-longest scan:
    (S1) the scan of S' selects the occurrences of the scan of S up to the first difference, and that first
    differing occurrence ends past len(S) (S' has the matches of S and others, all ending past len(S)); so every
    occurrence R selects that ends by len(S) is one T selects, and R selects nothing within S after one that is not.
    (S2) two scans of one text that both select nothing across a point x select the same occurrences from x on.
    Step 1, R selects nothing across p. Otherwise, by S1, R's occurrence [a, c) across p ends past len(S) >= e,
    so it holds the whole run. margin_0 (the bound kept): the run spans more than the bound in normalized
    characters, hence at least the longest special string in input characters (`bound_covers_margin`), so
    a > len(S) - longest >= p: no occurrence across p. no_bound (the margin kept): [a, c) cannot start before ws
    (it would hold [ws, ws + margin), and the run starts after it), so U, which has a boundary at p, selected an
    occurrence Z = [a', c') with a' < a < c' <= p (else U and R, both free at a, would select the same, by S2):
    Z overlaps O = S'[a:c] on k = c' - a characters, and c' <= p < b < e <= len(S) < c puts the witness pair at O's
    characters i - 1, i with i = b - a and k < i < len(O) - 1, which `overlap_interiors_without_witness` rules out.
    Step 2: R and U are free at p, so by S2 they select the same occurrences from p on; T and R select the same
    before p (S1, as R's first differing occurrence ends past len(S)). Step 3: at b, the pre-tokenizer ends a piece
    whatever precedes it (an accepted transition, proved per pattern by `python -m delta_suite.spec.proofs`) and NFC
    splits the
    text (anchors), so R's tokens from b are U's and R's tokens before b are T's: the splice is R. Neither the
    window-start anchor nor the witness being a cut of the window text alone enters the argument: with anchors on
    both sides of b, NFC splits the window text at b whatever its first characters normalize to
    (nfc_window_start_unanchored; the anchor predicate is checked per code point in test_cut_exhaustive).

    Checked on each case: for every split the control's parameters repair, the whole text's selection (spec.guard's
    leftmost-longest model, itself checked against the reference by selected_occurrences_match_reference) has no
    occurrence across the accepted run's start and agrees with the window's from there on (steps 1 and 2), and under
    NFC the window text and the whole text normalize to the same characters from the first witness on (step 3).
    """
    out = ProofCheck("accepted_runs_resynchronize", tok.name)
    if _whole_word(tok):
        return _not_applicable(out, WHOLE_WORD_HAS_NO_WINDOWS)
    trie = literal_trie(tok)
    for case in cases:
        for s in case.splits:
            old, delta = case.text[:s], case.text[s:]
            ids, spans = reference_encode_with_offsets(tok, old)
            result = repair(tok, old, ids, spans, delta, params)
            if not result.repaired:
                continue
            text = old + delta
            start = len(old) - params.first_window * 2**result.window
            ws = anchored_window_start(tok, text, start) if params.anchor_window_start else start
            margin = tok.margin if params.margin is None else params.margin
            win_ids, win_local = reference_encode_with_offsets(tok, text[ws:])
            win_spans = [(a + ws, e + ws) for a, e in win_local]
            old_keys = overlap_keys(ids, spans, ws + margin, len(old), params.match_key)
            new_keys = overlap_keys(win_ids, win_spans, ws + margin, len(old), params.match_key)
            run = longest_common_run(old_keys, new_keys, spans)
            assert run is not None
            p = spans[run[0]][0]
            whole = trie.selected(text)
            window = [(a + ws, c + ws) for a, c in trie.selected(text[ws:])]
            out.checked += 1
            across = [occ for occ in whole if occ[0] < p < occ[1]]
            b = next((spans[i][0] for i in range(run[0] + 1, run[0] + run[2]) if sync_witness(tok, old, spans[i][0])),
                     None)
            tail = normalize(text[b:], tok.normal_form) if tok.is_nfc and b is not None else ""
            if b is None or across or [o for o in whole if o[0] >= p] != [o for o in window if o[0] >= p] or not (
                    normalize(text[ws:], tok.normal_form).endswith(tail) and
                    normalize(text, tok.normal_form).endswith(tail)):
                out.counterexamples.append({"case": case.index, "split": s, "run_start": p, "witness": b,
                                            "across": across[:1]})
    return out


def nfc_specials_edged_by_anchors(tok: FrozenTokenizer) -> ProofCheck:
    """cut.nfc_window_ignores_specials is equivalent for an NFC tokenizer whose special strings all begin and end
    with an anchor.

    Argument. The reference splits the text at its selected special tokens before it normalizes (premise P1 of
    spec.special_cut), so NFC never reaches across a selected occurrence's edge. A cut at b is an accepted
    transition with anchors around it, so the NFC window [a, c) differs from the stretch it lies in only by
    characters of an occurrence touching it; when every special string begins and ends with an anchor, NFC splits
    at those characters anyway, and the equation and the pair at b read the same with or without the occurrence.
    So the refusal only costs cuts (properties/test_cut_spec.py shows one: "<think>\u037e b" at 8).

    Premise checked: the first and last character of every special string is an anchor (spec.normalization).
    """
    out = ProofCheck("nfc_specials_edged_by_anchors", tok.name)
    table = class_table()
    for special in tok.special_strings:
        for ch in (special[0], special[-1]):
            out.checked += 1
            if not is_anchor(ch, table[ord(ch)], form=tok.normal_form):
                out.counterexamples.append({"special": special, "edge": f"U+{ord(ch):04X}"})
    return out


def pattern_pairs_equal(tok: FrozenTokenizer, family: str = "qwen2") -> ProofCheck:
    """cut.pattern_pairs_of_qwen2 is equivalent for the qwen2 pattern: applying qwen2's proved pairs to a
    tokenizer of that pattern is its own rule. Checked: the rules the control gives `tok` equal the specification's
    (spec.cut.rules_for), pair set and carve-outs."""
    out = ProofCheck("pattern_pairs_equal", tok.name)
    out.checked = 1
    if rules_for(tok, CutRules(pattern_pairs=family)) != rules_for(tok, DEFAULT_CUT_RULES):
        out.counterexamples.append({"pattern": admission_of(tok).pattern, "control_pairs_of": family})
    return out


# --- the whole-word family (spec.whole_word, spec.free_pair_cut) -------------------------------------------------


def _interiors_without_separator(tok: FrozenTokenizer, out: ProofCheck) -> ProofCheck:
    """The piece-local premise of `special_interiors_joined`: no interior character of an added-token string is a
    separator."""
    separators = piece_local_rules(tok).separators
    for special in tok.special_strings:
        for i in range(1, len(special)):
            out.checked += 1
            if special[i] in separators:
                out.counterexamples.append({"special": special, "separator_at": i, "char": f"U+{ord(special[i]):04X}"})
    return out


def special_interiors_joined(tok: FrozenTokenizer) -> ProofCheck:
    """cut.no_guard is redundant for a whole-word tokenizer none of whose added-token strings has a free interior
    pair (Llama 2's "<s>", "</s>", "<unk>"; Gemini's; not Gemma 3's "<image_soft_token>": "e_" and "_s" are free).

    Argument. Without the guard, an offset b strictly inside an occurrence of an added-token string Z is judged by
    the special-token rule and then the free-pair rule (`spec.cut`, whole-word dispatch). (a) b strictly inside a
    selected occurrence: selected occurrences do not overlap, so b is no edge of a selected one and the special-token
    rule refuses it; the free-pair rule reads (S[b-1], S[b]), an interior pair of Z, which by the premise a
    vocabulary token joins (or two unknown characters fuse): refused, as the guard refuses it. (b) b strictly
    inside unselected occurrences only: the control judges b as the guard "selected" does (cut.guard_selected_only),
    which `selected_occurrences_match_reference` proves safe (scan locality needs only that no selected occurrence
    contains b; the free-pair argument of `spec.free_pair_cut` then goes through unchanged). So every cut the
    control accepts is safe. The array evaluation (`delta.cut_map`) masks the same offsets: with the guard off its
    clear mask is everywhere true, and the free-pair and special-token masks are the spec's.

    Premise checked: for every added-token string Z and 0 < i < len(Z), `WholeWordRules.pair_refusal(Z[i-1], Z[i])`
    refuses the pair. Not applicable to a byte-level tokenizer (its guard is needed: cut.no_guard is killed there).

    A piece-local tokenizer (`spec.piece_local`) by the same argument, its separator rule in place of the free-pair
    rule: the rule reads S[b] = Z[i], so the premise is that no interior character Z[i] (0 < i < len(Z)) is a
    separator (`_interiors_without_separator`; the trained WordPiece files' "[CLS]" ends in "]", a separator
    under the Bert pre-tokenizer, so the control is killed there).
    """
    out = ProofCheck("special_interiors_joined", tok.name)
    if admission_of(tok).piece_local:
        return _interiors_without_separator(tok, out)
    if not _whole_word(tok):
        return _not_applicable(out, NOT_WHOLE_WORD)
    rules = whole_word_rules(tok)
    for special in tok.special_strings:
        for i in range(1, len(special)):
            out.checked += 1
            if rules.pair_refusal(special[i - 1], special[i]) is None:
                out.counterexamples.append({"special": special, "free_at": i,
                                            "pair": f"U+{ord(special[i - 1]):04X},U+{ord(special[i]):04X}"})
    return out


def forgotten_pair_guarded(tok: FrozenTokenizer) -> ProofCheck:
    """cut.free_pair_forgets_first_merge is redundant where every raw pair that normalizes to the first merge's
    junction pair is itself an added-token string (Gemma 3's and Gemini's first merges join newlines, and two
    newlines are one of their added tokens; not Llama 2's first merge, U+2581 + "t").

    Argument. The broken table differs from the specification's only in the pair it forgets
    (`spec.free_pair_cut.forgotten_pair`), and the free-pair rule is read only after the guard and the special-token
    rule. An offset b whose raw pair (S[b-1], S[b]) normalizes to the forgotten pair has S[b-1:b+1] among the
    added-token strings by the premise, so the occurrence [b-1, b+1) strictly contains b and the guard refuses b
    before the table is read: every verdict is the specification's (in `delta.cut_map` too, whose guard mask is
    applied to the free-pair mask).

    Premise checked: with (x, y) the forgotten normalized pair, every raw pair (a, b), a in {x} plus a space when
    the family writes x for a space, b likewise, has a + b among the added-token strings. Not applicable where no
    pair is forgotten (no first merge) or the tokenizer is not whole-word.
    """
    out = ProofCheck("forgotten_pair_guarded", tok.name)
    if not _whole_word(tok):
        return _not_applicable(out, NOT_WHOLE_WORD)
    rules = whole_word_rules(tok)
    if forgotten_pair(rules) is None or rules.first_merge is None:
        return _not_applicable(out, "no first merge: the broken table forgets nothing")
    x, y = rules.first_merge[0][-1], rules.first_merge[1][0]

    def raw(ch: str) -> list[str]:
        return [ch, " "] if rules.shape.space == ch else [ch]

    specials = set(tok.special_strings)
    for a in raw(x):
        for b in raw(y):
            out.checked += 1
            if a + b not in specials:
                out.counterexamples.append({"pair": f"U+{ord(a):04X},U+{ord(b):04X}",
                                            "forgotten": forgotten_pair(rules)})
    return out


def chunk_encoder_is_tokenizer(tok: FrozenTokenizer, texts: Sequence[str] = ()) -> ProofCheck:
    """cut.prefix_on_later_chunks is redundant for the prefix scheme "none" (Gemma 3, Gemini): there the chunk
    encoder of `spec.free_pair_cut` is the tokenizer itself, so encoding every chunk by the tokenizer (the control)
    is the specification.

    Argument. `chunk_pieces` returns one full piece for every chunk when the scheme is "none", whatever its
    `prefix` says, and `chunk_encoder` returns the reference object; the control changes no piece and no encoder.

    Premise checked: the scheme is "none" and `chunk_encoder(tok)` is the reference object (one premise), and, for
    each given text and each cut the specification accepts there, the pieces of the chunk from that cut are the
    same under both prefix values. Not applicable to a tokenizer that is not whole-word.
    """
    out = ProofCheck("chunk_encoder_is_tokenizer", tok.name)
    if not _whole_word(tok):
        return _not_applicable(out, NOT_WHOLE_WORD)
    scheme = whole_word_rules(tok).shape.prefix
    out.checked += 1
    if scheme != "none" or chunk_encoder(tok) is not tok.tokenizer:
        out.counterexamples.append({"scheme": scheme})
        return out
    for text in texts:
        for lo in accepted_cuts(tok, text):
            out.checked += 1
            if chunk_pieces(tok, text, lo, len(text), "full") != chunk_pieces(tok, text, lo, len(text)):
                out.counterexamples.append({"text": text[:80], "cut": lo})
    return out


PROOFS = {
    "single_digit_pretokens": single_digit_pretokens,
    "letter_runs_stop_before_apostrophe": letter_runs_stop_before_apostrophe,
    "reorder_probes_implied": reorder_probes_implied,
    "hangul_probes_class_preserving": hangul_probes_class_preserving,
    "selected_occurrences_match_reference": selected_occurrences_match_reference,
    "marks_end_before_other": marks_end_before_other,
    "one_token_runs_rejected": one_token_runs_rejected,
    "accepted_runs_resynchronize": accepted_runs_resynchronize,
    "pattern_pairs_equal": pattern_pairs_equal,
    "nfc_specials_edged_by_anchors": nfc_specials_edged_by_anchors,
    "special_interiors_joined": special_interiors_joined,
    "forgotten_pair_guarded": forgotten_pair_guarded,
    "chunk_encoder_is_tokenizer": chunk_encoder_is_tokenizer,
}


# --- the piece-local family (spec.piece_local) ------------------------------------------------------------------


def piece_local_variant_is_spec(tok: FrozenTokenizer, which: str) -> ProofCheck:
    """cut.separator_ignores_normalizer and cut.separator_ignores_pre_tokenizer are the specification itself on a
    piece-local file where no candidate is refused by that premise alone, and cut.piece_special_edges_ignored on a
    file whose special-token edges are exact (no Metaspace with prepend_scheme "first").

    Argument. The control's rules read the separators through `PieceLocalRules.chosen(which)` (the array evaluation
    too), which adds only the candidates refused by the skipped premise alone; with none, it is the separator set
    itself. The special-edge knob is read only where `special_edges` is false. So the control accepts exactly the
    specification's cuts, and cannot be killed: the equality is the proof.

    Premise checked: `chosen(which) == separators` (which "ignore_normalizer" / "ignore_pre_tokenizer"), or
    `special_edges` (which "special_edges"). Not applicable to a tokenizer that is not piece-local.
    """
    out = ProofCheck(f"piece_local_variant_is_spec:{which}", tok.name)
    if not admission_of(tok).piece_local:
        return _not_applicable(out, "not a piece-local tokenizer: the proof is about its separator rule "
                                    "(spec.piece_local)")
    rules = piece_local_rules(tok)
    out.checked += 1
    if which == "special_edges":
        if not rules.special_edges:
            out.counterexamples.append({"special_edges": False})
    elif rules.chosen(which) != rules.separators:
        out.counterexamples.append({"added": sorted(rules.chosen(which) - rules.separators)})
    return out
