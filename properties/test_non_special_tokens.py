"""Non-special added tokens (`"special": false`): nemotron_3_nano_4b's `<think>` ... `</tool_response>`.

The reference's added-token scan ignores the `special` flag (`spec.special_cut`, "Special or not"): what the flag
changes is decoding with skip_special_tokens, and the scan only under the run-time setting
`encode_special_tokens` (P4). Checked on the reference, exhaustively over every non-special added token between
every pair of a fixed set of neighbours (letters, blanks, CR/LF, apostrophes, digits, accents, CJK, fragments of
the markers, special and non-special markers):

- a twin of the file with the six tokens made special encodes every such text to the same IDs, and only
  decoding with skip_special_tokens tells the two apart;
- the occurrence is selected by the spec's scan as by the reference, each of its edges is accepted by the
  special-token rule and splits the reference exactly, and every cut either rule accepts in these texts splits
  it exactly;
- with `encode_special_tokens` on, special strings are text while the non-special tokens are still matched: the
  spec follows the reference (before P4 it accepted "a <s> b" at 2, which the reference does not split there);
- a chat replayed through the generic template (recorded "no config") renders them verbatim from the messages,
  where the reference encodes them as their IDs; the replay equals the reference turn by turn.
"""

from __future__ import annotations

import json
from collections import Counter
from itertools import product

import pytest
from delta_suite.delta.chat import NO_CONFIG, render_turns
from delta_suite.delta.cut_map import cut_map
from delta_suite.delta.session import Session
from delta_suite.frozen.cache import tokenizers_dir
from delta_suite.frozen.loader import FrozenTokenizer, build, load_tokenizer
from delta_suite.frozen.provision import installed
from delta_suite.frozen.registry import TOKENIZER_FILE, lookup
from delta_suite.spec.cut import ACCEPTED_SPECIAL, ACCEPTED_VERDICTS, explain_cut
from delta_suite.spec.reference import reference_encode, reference_encode_batch
from delta_suite.spec.special_cut import reference_selection, scans_special_tokens, two_stage_scan

from properties.conftest import ADMITTED

NAME = "nemotron_3_nano_4b"
NON_SPECIAL = ("<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>")
NEIGHBOURS = ("", "a", "word", " ", "  ", "x ", " x", "\n", "\r\n", "\n\n ", "\t", "'", "'s", "1", "2024", "é",
              "e\u0301", "中文", "!", "<", ">", "/", "<think", "think>", "</", "tool_call", "<s>", "[INST]",
              "<|im_end|>", " <s>", "<s> ", "x [INST]", "<think>", "</tool_call>")


def _tok() -> FrozenTokenizer:
    if NAME not in ADMITTED:
        pytest.fail(f"{NAME} is not provisioned/admitted; this test needs it (corpora tokenizers pull nemotron3-nano)")
    return load_tokenizer(NAME)


def _texts() -> list[tuple[str, str, str]]:
    """(left, token, right) for every non-special token between every pair of neighbours."""
    return [(left, token, right) for token in NON_SPECIAL for left, right in product(NEIGHBOURS, NEIGHBOURS)]


def _ids(tok: FrozenTokenizer) -> dict[str, int]:
    return {t["content"]: t["id"] for t in tok.admission_inputs.added_tokens}


def test_nemotron_has_exactly_the_six_non_special_tokens() -> None:
    """The frozen file (rebuilt by its recipe) leaves ids 12-17 non-special and normalized=false, and nothing else."""
    tok = _tok()
    flags = {t["content"]: (t["id"], t["special"], t["normalized"]) for t in tok.admission_inputs.added_tokens
             if not t["special"]}
    assert flags == {c: (12 + i, False, False) for i, c in enumerate(NON_SPECIAL)}
    assert set(NON_SPECIAL) <= set(tok.special_strings)  # the margin and the guard count them like any other
    assert lookup(NAME).recipe is not None and set(lookup(NAME).recipe.token_flags) == set(range(12, 18))


def _flag_twin(tok: FrozenTokenizer) -> FrozenTokenizer:
    """The same tokenizer.json with the six tokens made special (nothing else changed)."""
    assert installed(lookup(NAME)) is not None
    config = json.loads((tokenizers_dir() / NAME / TOKENIZER_FILE).read_bytes())
    for token in config["added_tokens"]:
        token["special"] = True
    return build(f"{NAME}_all_special", json.dumps(config).encode("utf-8"), None, provenance="file")


def test_the_special_flag_changes_no_id_only_decoding(ledger) -> None:
    """Every text encodes to the same IDs whether the six tokens are special or not (the scan does not read the
    flag); decoding with skip_special_tokens (the library's default) keeps a non-special token and drops it once
    it is special, while a special token is dropped by both."""
    tok = _tok()
    twin = _flag_twin(tok)
    texts = [left + token + right for left, token, right in _texts()]
    ours, theirs = reference_encode_batch(tok, texts), reference_encode_batch(twin, texts)
    differences = sum(a != b for a, b in zip(ours, theirs, strict=True))
    ids = _ids(tok)
    decoded = {c: (tok.tokenizer.decode([ids[c]]), twin.tokenizer.decode([ids[c]])) for c in NON_SPECIAL}
    ledger.record("chunked", "special_cut.non_special_flag_changes_no_id", tok, comparisons=len(texts),
                  differences=differences, unit="strings", details={"twin": "ids 12-17 special", "decoded": decoded},
                  oracle="reference")
    assert differences == 0
    assert all(ids[c] in got for c, got in zip([t for _, t, _ in _texts()], ours, strict=True))
    assert decoded == {c: (c, "") for c in NON_SPECIAL}
    assert tok.tokenizer.decode([ids["<|im_start|>"]]) == ""
    assert tok.tokenizer.decode([ids["<|im_start|>"]], skip_special_tokens=False) == "<|im_start|>"


def _bad_accepted_cuts(tok: FrozenTokenizer, text: str, stats: Counter) -> list[int]:
    """The cuts either rule accepts in `text` (as `explain_cut` judges them, and the array rules agree) that do
    not split the reference exactly."""
    verdicts = {b: explain_cut(tok, text, b) for b in range(1, len(text))}
    accepted = [b for b, v in verdicts.items() if v in ACCEPTED_VERDICTS]
    cmap = cut_map(tok, text)
    stats["offsets"] += len(verdicts)
    stats["map_disagreements"] += sum(cmap.name(b) != (v if v in ACCEPTED_VERDICTS else None)
                                      for b, v in verdicts.items())
    if not accepted:
        return []
    pieces = reference_encode_batch(tok, [text[:b] for b in accepted] + [text[b:] for b in accepted])
    whole = reference_encode(tok, text)
    stats["cuts"] += len(accepted)
    return [b for i, b in enumerate(accepted) if pieces[i] + pieces[len(accepted) + i] != whole]


def test_cuts_at_non_special_token_edges_are_the_special_rule(ledger) -> None:
    """Exhaustive over the six tokens and every pair of neighbours: the reference selects the occurrence as the
    spec's scan does; both its inner edges are accepted by the special-token rule and split the reference
    exactly; every cut accepted anywhere in the text splits it exactly, and the array rules give the same
    verdicts."""
    tok = _tok()
    stats: Counter = Counter()
    failures: list[tuple[str, str]] = []
    for left, token, right in _texts():
        text = left + token + right
        selected = two_stage_scan(tok, text)
        stats["strings"] += 1
        if selected != reference_selection(tok, text) or (len(left), len(left) + len(token)) not in selected:
            failures.append((text, "selection"))
            continue
        for b in (len(left), len(left) + len(token)):
            if 0 < b < len(text):
                stats["edges"] += 1
                if explain_cut(tok, text, b) != ACCEPTED_SPECIAL:
                    failures.append((text, f"edge {b} refused: {explain_cut(tok, text, b)}"))
        failures += [(text, f"cut {b} not exact") for b in _bad_accepted_cuts(tok, text, stats)]
    ledger.record("chunked", "special_cut.non_special_edges_and_cuts", tok,
                  comparisons=stats["strings"] + stats["edges"] + stats["cuts"],
                  differences=len(failures) + stats["map_disagreements"], unit="comparisons",
                  details={"tokens": list(NON_SPECIAL), "neighbours": len(NEIGHBOURS), "strings": stats["strings"],
                           "edges": stats["edges"], "cuts": stats["cuts"], "offsets_mapped": stats["offsets"],
                           "map_disagreements": stats["map_disagreements"]}, oracle="reference")
    assert stats["edges"] > 0 and stats["cuts"] > 0
    assert not failures, failures[:5]
    assert stats["map_disagreements"] == 0


def test_encode_special_tokens_leaves_only_the_non_special_tokens_in_the_scan(ledger) -> None:
    """P4: with the reference's `encode_special_tokens` on, a special string is text and a non-special token is
    still matched; the spec's scan follows it, so "a <s> b" is not cut at 2 (the reference joins the blank to
    "<" there), "<think>"'s edges still are, and every accepted cut over the exhaustive texts (special markers
    among the neighbours) splits the reference exactly."""
    tok = load_tokenizer(NAME, fresh=True) if NAME in ADMITTED else _tok()  # its own object: the flag is set on it
    tok.tokenizer.encode_special_tokens = True
    assert not scans_special_tokens(tok) and scans_special_tokens(_tok())
    text = "a <s> b <think> c"
    think = text.index("<think>")
    assert two_stage_scan(tok, text) == reference_selection(tok, text) == [(think, think + 7)]
    left, right = reference_encode_batch(tok, [text[:2], text[2:]])
    assert left + right != reference_encode(tok, text) and explain_cut(tok, text, 2) != ACCEPTED_SPECIAL
    assert explain_cut(tok, text, think) == explain_cut(tok, text, think + 7) == ACCEPTED_SPECIAL
    stats: Counter = Counter()
    failures: list[tuple[str, str]] = []
    for left_ctx, token, right_ctx in _texts():
        text = left_ctx + token + right_ctx
        stats["strings"] += 1
        if two_stage_scan(tok, text) != reference_selection(tok, text):
            failures.append((text, "selection"))
        failures += [(text, f"cut {b} not exact") for b in _bad_accepted_cuts(tok, text, stats)]
    ledger.record("chunked", "special_cut.non_special_encode_special_tokens", tok,
                  comparisons=stats["strings"] + stats["cuts"], differences=len(failures) + stats["map_disagreements"],
                  unit="comparisons", details={"encode_special_tokens": True, "strings": stats["strings"],
                                               "cuts": stats["cuts"], "offsets_mapped": stats["offsets"],
                                               "map_disagreements": stats["map_disagreements"]}, oracle="reference")
    assert not failures, failures[:5]
    assert stats["map_disagreements"] == 0


TOOL_CHAT = [
    {"role": "system", "content": "You can call tools. " + "Answer briefly, in the user's language. " * 30},
    {"role": "user", "content": "What's the weather in Paris?"},
    {"role": "assistant", "content": "<think>\nThe user wants the weather; call the tool.\n</think>\n\n"
                                     "<tool_call>\n{\"name\": \"weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
                                     "</tool_call>"},
    {"role": "user", "content": "<tool_response>\n{\"temp\": 21}\n</tool_response>"},
    {"role": "assistant", "content": "<think>\n21 degrees.\n</think>\n\nIt's 21 °C in Paris."},
    {"role": "user", "content": "Thanks!  \n"},
]


def test_chat_replay_renders_them_verbatim_through_the_generic_template(ledger) -> None:
    """nemotron has no config here: every turn renders with the generic template (recorded "no config"), which
    passes `<think>` ... `</tool_response>` through from the messages (its own role strings are not nemotron's
    tokens); the reference encodes each as its ID, the special-token rule accepts their edges, and one Session
    replaying the turns equals the reference on every turn."""
    tok = _tok()
    rendered = render_turns(tok, TOOL_CHAT)
    session, differences, paths = Session(tok), 0, Counter()
    for turn in rendered:
        differences += session.encode(turn.text) != reference_encode(tok, turn.text)
        paths[session.last_path.split(":")[0]] += 1
    last = rendered[-1].text
    ids = _ids(tok)
    edges = sorted({b for s, e in two_stage_scan(tok, last) for b in (s, e) if 0 < b < len(last)})
    accepted = sum(explain_cut(tok, last, b) == ACCEPTED_SPECIAL for b in edges)
    ledger.record("repair", "special_cut.non_special_chat_replay", tok, comparisons=len(rendered),
                  differences=differences, fast_path=paths["repaired"], fallbacks=paths["fallback"], unit="turn",
                  details={"template": sorted({r.source for r in rendered}), "paths": dict(paths),
                           "marker_edges": len(edges), "special_rule_accepted": accepted}, oracle="reference")
    assert {r.source for r in rendered} == {NO_CONFIG}
    assert "<|im_start|>" not in last and "<|user|>" in last
    assert {ids[c] for c in NON_SPECIAL} <= set(reference_encode(tok, last))
    assert edges and accepted == len(edges)
    assert differences == 0 and paths["repaired"] >= 1
