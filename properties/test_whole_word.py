"""The whole-word family (`spec.whole_word`, `spec.free_pair_cut`, `spec.whole_word_repair`) on files no one here
wrote and on files built to break it.

Propositions:
- the public Llama 2, Gemma 3 and Gemini files (npm `@lenml/tokenizer-*`) are admitted as whole-word families with
  the prefix scheme their stages give, and refused files name the premise that fails;
- every cut the rules accept (free-pair and special-token), alone and all at once, gives chunks that the chunk
  encoder turns into the whole encode's IDs, on random texts over an adversarial alphabet; the minimal
  implementation's array verdicts equal the spec's offset by offset; some cuts of each rule are found;
- every code point the vocabulary holds as a token, and one per Unicode block that it does not, beside U+2581, a
  letter, a newline and itself: each accepted cut compared with the reference;
- the chunked encode of a long real text equals the whole encode with post-processing applied once, and cuts are
  found;
- sessions that append are repaired from one cut (no window) and equal the reference every time;
- the newer Metaspace forms (prepend_scheme always / first / never, split true / false) of Llama 2's vocabulary
  are exact under their own chunk encoder, and the encoder that keeps the prefix on later chunks is caught.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from delta_suite.benchmarks.whole_word import child_main
from delta_suite.delta.cut_map import cut_map
from delta_suite.delta.cuts import encode_planned
from delta_suite.delta.session import Session
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer_file, loaded_stages
from delta_suite.ledger.records import read_ledgers
from delta_suite.spec.admission import admission_of, admit
from delta_suite.spec.cut import (
    ACCEPTED_FREE_PAIR,
    ACCEPTED_SPECIAL,
    ACCEPTED_VERDICTS,
    accepted_cuts,
    explain_cut,
)
from delta_suite.spec.free_pair_cut import chunked_ids, chunked_ids_many
from delta_suite.spec.reference import post_process, reference_encode, reference_encode_batch, reference_encode_full
from delta_suite.spec.refusals import refusal_message
from delta_suite.spec.whole_word import whole_word_rules, whole_word_shape

from properties.npm_tokenizers import npm_tokenizer
from properties.whole_word_files import (
    NPM_FAMILIES,
    PREFIX_OF,
    R,
    metaspace_form,
    npm_config,
    npm_whole_word,
    small_config,
    write_config,
)

ROOT = Path(__file__).resolve().parents[1]
ALPHABET = (list("ab cdeé\n\t.,:'") + [R, "  ", "\u00a0", "\u200b", "\ufb01", "\U0001f600", "\u6f22\u5b57", "e\u0301",
            "the", " the", "<s>", "</s>", "<start_of_turn>", "<start_of_tu", "rn>", "\n\n", "\t\t", R * 3, "\ud7a3"])


@pytest.fixture(scope="module", params=NPM_FAMILIES)
def public(request: pytest.FixtureRequest) -> FrozenTokenizer:
    return npm_whole_word(request.param)


def random_texts(seed: int, count: int, longest: int = 24) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, longest))) for _ in range(count)]


def cut_comparisons(tok: FrozenTokenizer, texts: list[str]) -> dict:
    """Every accepted cut of every text alone, then all of a text's cuts at once, against the whole encode; and
    the array verdicts against the spec's at every offset."""
    wholes = reference_encode_batch(tok, texts)
    out = {"texts": len(texts), "cuts": 0, "free_pair": 0, "special": 0, "differences": 0, "verdicts": 0,
           "verdict_differences": 0, "first": None}
    for text, whole in zip(texts, wholes, strict=True):
        verdicts = [explain_cut(tok, text, b) for b in range(1, len(text))]
        array = cut_map(tok, text)
        for b, v in enumerate(verdicts, start=1):
            out["verdicts"] += 1
            out["verdict_differences"] += (v if v in ACCEPTED_VERDICTS else None) != array.name(b)
        cuts = [b for b, v in enumerate(verdicts, start=1) if v in ACCEPTED_VERDICTS]
        out["free_pair"] += sum(v == ACCEPTED_FREE_PAIR for v in verdicts)
        out["special"] += sum(v == ACCEPTED_SPECIAL for v in verdicts)
        for group in [[b] for b in cuts] + ([cuts] if len(cuts) > 1 else []):
            out["cuts"] += 1
            if chunked_ids(tok, text, group) != whole:
                out["differences"] += 1
                out["first"] = out["first"] or (text, group)
    return out


def test_the_public_files_are_admitted_as_whole_word_families(public: FrozenTokenizer, ledger) -> None:
    decided = admission_of(public)
    family = public.name.removesuffix("-npm")
    rules = whole_word_rules(public)
    ok = decided.whole_word and decided.family.startswith("bpe-whole-word:") and rules.shape.prefix == PREFIX_OF[family]
    ledger.record("harness", "whole_word.admission", public, comparisons=1, differences=int(not ok),
                  unit="tokenizers", oracle="premise",
                  details={"family": decided.family, "reason": decided.reason, "prefix": rules.shape.prefix,
                           "inner_pairs": len(rules.inner_pairs), "single_chars": len(rules.single_chars)})
    assert ok, (decided, rules.shape)
    assert len(rules.inner_pairs) > 1000 and not rules.fuses_unknowns  # byte fallback: nothing is unknown


def test_every_accepted_cut_of_random_texts_gives_the_whole_encode(public: FrozenTokenizer, ledger) -> None:
    got = cut_comparisons(public, random_texts(7, 300))
    ledger.record("chunked", "whole_word.random_cuts", public, comparisons=got["cuts"] + got["verdicts"],
                  differences=got["differences"] + got["verdict_differences"], unit="cuts and verdicts",
                  oracle="reference", details={k: v for k, v in got.items() if k != "first"} |
                  {"first": repr(got["first"])})
    assert got["differences"] == 0, got["first"]
    assert got["verdict_differences"] == 0
    assert got["free_pair"] > 100 and got["special"] > 10  # both rules find cuts


def neighbours_table(tok: FrozenTokenizer) -> list[str]:
    """Two-character texts: every single-character vocabulary token, and the first code point of every Unicode
    block (by name prefix) that is not one, each before and after U+2581, "a", a newline and itself."""
    singles = sorted(whole_word_rules(tok).single_chars)
    outside: dict[str, int] = {}
    for cp in range(0x20, 0x30000):
        if cp in whole_word_rules(tok).single_chars or 0xD800 <= cp < 0xE000:
            continue
        name = unicodedata.name(chr(cp), "")
        if name:
            outside.setdefault(name.split(" ")[0], cp)
    texts = []
    for cp in [*singles, *outside.values()]:
        ch = chr(cp)
        for other in (R, "a", "\n", ch):
            texts += [other + ch, ch + other, "a " + ch + other]
    return texts


def test_each_code_point_beside_the_families_neighbours(public: FrozenTokenizer, ledger) -> None:
    texts = neighbours_table(public)
    wholes = reference_encode_batch(public, texts)
    jobs = [(i, b) for i, text in enumerate(texts) for b in accepted_cuts(public, text)]
    got = chunked_ids_many(public, [(texts[i], [b]) for i, b in jobs])
    wrong = [(texts[i], b) for (i, b), ids in zip(jobs, got, strict=True) if ids != wholes[i]]
    compared, differences, first = len(jobs), len(wrong), wrong[:1]
    ledger.record("exhaustive", "whole_word.code_points", public, comparisons=compared, differences=differences,
                  unit="cuts", oracle="reference", details={"texts": len(texts), "first": repr(first)})
    assert compared > len(texts) // 4
    assert differences == 0, first


def long_text() -> str:
    parts = [(ROOT / "README.md").read_text(encoding="utf-8"), (ROOT / "spec" / "cut.py").read_text(encoding="utf-8"),
             "\u6f22\u5b57\u304b\u306a\u6df7\u3058\u308a\u306e\u6587\u3002" * 200, " \u00e9t\u00e9 \U0001f600" * 300]
    return "</s>".join(parts) * 2


def test_the_chunked_encode_of_a_long_text_is_the_whole_encode(public: FrozenTokenizer, ledger) -> None:
    text = long_text()
    whole = reference_encode(public, text)
    got, cuts = encode_planned(public, text, chunks=8, workers=2)
    with_bos = post_process(public, got)
    ok = got == whole and with_bos == reference_encode_full(public, text)
    ledger.record("chunked", "whole_word.chunked_long_text", public, comparisons=2, differences=2 - ok - ok,
                  unit="encodes", oracle="reference", details={"characters": len(text), "cuts": len(cuts)})
    assert len(cuts) >= 5
    assert got == whole
    assert with_bos == reference_encode_full(public, text)


def test_sessions_repair_from_one_cut(public: FrozenTokenizer, ledger) -> None:
    rng = random.Random(11)
    compared = differences = 0
    session = None
    for _ in range(60):
        session = Session(public)
        text = ""
        for _ in range(8):
            text += "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 10)))
            compared += 1
            differences += session.encode(text) != reference_encode(public, text)
    assert session is not None
    repaired = session.stats.repaired.get("free_cut", 0)
    ledger.record("repair", "whole_word.session_repair", public, comparisons=compared, differences=differences,
                  unit="turns", oracle="reference", details={"repaired_last_session": repaired})
    assert differences == 0 and repaired > 0


@pytest.mark.parametrize(("scheme", "split"), [("always", False), ("always", True), ("first", False),
                                               ("first", True), ("never", False), ("never", True)])
def test_the_metaspace_forms_are_exact_under_their_own_chunk_encoder(scheme: str, split: bool, tmp_path: Path,
                                                                      ledger) -> None:
    tok = load_tokenizer_file(write_config(tmp_path / "m", metaspace_form(npm_config("llama2"), scheme, split)),
                              name=f"llama2-metaspace-{scheme}-{'split' if split else 'whole'}")
    expected = {"always": "per_stretch", "first": "first", "never": "none"}[scheme]
    assert admission_of(tok).whole_word and whole_word_rules(tok).shape.prefix == expected
    got = cut_comparisons(tok, random_texts(13, 150))
    ledger.record("chunked", "whole_word.metaspace_forms", tok, comparisons=got["cuts"], differences=got["differences"],
                  unit="cuts", oracle="reference", details={k: v for k, v in got.items() if k != "first"} |
                  {"scheme": scheme, "split": split, "first": repr(got["first"])})
    assert got["differences"] == 0, got["first"]
    assert got["free_pair"] > 50


def test_keeping_the_prefix_on_later_chunks_is_caught(tmp_path: Path, ledger) -> None:
    """The broken chunk encoder (every chunk by the tokenizer itself) differs on free cuts of every scheme that
    prefixes; for scheme "none" the two are the same encoder."""
    caught = {}
    for scheme in ("always", "first"):
        tok = load_tokenizer_file(write_config(tmp_path / scheme, metaspace_form(npm_config("llama2"), scheme, False)),
                                  name=f"llama2-metaspace-{scheme}")
        texts = random_texts(17, 60)
        wholes = reference_encode_batch(tok, texts)
        caught[scheme] = sum(chunked_ids(tok, t, [b], prefix="full") != w
                             for t, w in zip(texts, wholes, strict=True) for b in accepted_cuts(tok, t))
    ledger.record("control", "whole_word.prefix_on_later_chunks", comparisons=len(caught),
                  differences=sum(n > 0 for n in caught.values()), unit="controls", oracle="reference",
                  details={"failing_cuts": caught, "killed": all(n > 0 for n in caught.values())})
    assert all(n > 0 for n in caught.values()), caught


# --- premises: each broken by a file built against it ------------------------------------------------------------


def _edit(change) -> dict:
    config = small_config()
    change(config)
    return config


def _add_merge(config: dict, left: str, right: str) -> None:
    config["model"]["vocab"].setdefault(left, len(config["model"]["vocab"]))
    config["model"]["vocab"].setdefault(right, len(config["model"]["vocab"]))
    config["model"]["vocab"][left + right] = len(config["model"]["vocab"])
    config["model"]["merges"].append([left, right])


BROKEN = {
    "byte_fallback_token_merged": lambda c: _add_merge(c, "<0xC3>", "<0xA9>"),
    "byte_fallback_token_made": lambda c: _add_merge(c, "<0x4", "1>"),
    "unk_token_merged": lambda c: _add_merge(c, "<unk>", "a"),
    "byte_fallback_incomplete": lambda c: c["model"]["vocab"].pop("<0x80>"),
    "no_unknown_symbol": lambda c: c["model"].update(byte_fallback=False, unk_token=None),
    "ignore_merges": lambda c: c["model"].update(ignore_merges=True),
    "bpe_subword_affix:continuing_subword_prefix": lambda c: c["model"].update(continuing_subword_prefix="##"),
    "bpe_subword_affix:end_of_word_suffix": lambda c: c["model"].update(end_of_word_suffix="</w>"),
    "bpe_dropout": lambda c: c["model"].update(dropout=0.1),
    "normalized_added_token_under_whole_word": lambda c: c["added_tokens"][2].update(normalized=True),
    "two prefixes": lambda c: c.update(pre_tokenizer={"type": "Metaspace", "replacement": R,
                                                      "prepend_scheme": "always", "split": False}),
    "a real split on spaces": lambda c: c.update(normalizer={"type": "Prepend", "prepend": R}, pre_tokenizer={
        "type": "Split", "pattern": {"String": " "}, "behavior": "Isolated", "invert": False}),
    "NFKC": lambda c: c["normalizer"]["normalizers"].append({"type": "NFKC"}),
    "Replace of another string": lambda c: c["normalizer"]["normalizers"].append(
        {"type": "Replace", "pattern": {"String": "a"}, "content": "b"}),
    "Metaspace writing another character": lambda c: c.update(pre_tokenizer={
        "type": "Metaspace", "replacement": "_", "prepend_scheme": "never", "split": False}),
}
CODE_OF = {"byte_fallback_token_made": "byte_fallback_token_merged", "two prefixes": "whole_word_stage",
           "a real split on spaces": "whole_word_stage", "NFKC": "whole_word_stage",
           "Replace of another string": "whole_word_stage", "Metaspace writing another character": "whole_word_stage"}


def test_the_small_file_is_admitted_and_exact(tmp_path: Path, ledger) -> None:
    tok = load_tokenizer_file(write_config(tmp_path / "small", small_config()), name="small-whole-word")
    assert admission_of(tok).whole_word, admission_of(tok)
    texts = ["".join(random.Random(i).choice(["a", "b", " ", "c", ".", "\n", "é", "<s>", "</s>", R, "ab ba"])
                     for _ in range(random.Random(-i).randint(1, 20))) for i in range(400)]
    got = cut_comparisons(tok, texts)
    ledger.record("chunked", "whole_word.small_file", tok, comparisons=got["cuts"], differences=got["differences"],
                  unit="cuts", oracle="reference", details={k: v for k, v in got.items() if k != "first"} |
                  {"first": repr(got["first"])})
    assert got["differences"] == 0 and got["verdict_differences"] == 0, got["first"]
    assert got["free_pair"] > 100


@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_a_file_built_against_a_premise_is_refused_by_name(broken: str) -> None:
    config = _edit(BROKEN[broken])
    decided = admit(config, config["added_tokens"])
    code = CODE_OF.get(broken, broken)
    assert not decided.admitted and decided.reason.startswith(code), decided
    assert not refusal_message(decided.reason).startswith("refused: "), decided.reason  # it has words


def test_the_benchmark_figures_compare_every_output(tmp_path: Path) -> None:
    """`python -m delta_suite.benchmarks --only whole-word` (its quick plan, in this process): every timed output
    equals the whole encode, and the free-pair share is counted from the array verdicts."""
    records = child_main(str(write_config(tmp_path / "bench", small_config())), quick=True)
    checks = {r["check"] for r in records}
    assert checks == {"benchmark.whole_word_chunked", "benchmark.whole_word_repair", "benchmark.whole_word_free_share"}
    assert all(r["comparisons"] > 0 and r["differences"] == 0 for r in records), records
    assert all(0 < r["details"]["accepted_share"] <= 1 for r in records if "accepted_share" in r["details"])


def test_a_campaign_on_the_public_gemma3_file_checks_cuts_and_repairs(tmp_path: Path) -> None:
    """`fuzz --tokenizer <gemma3 folder> --budget 5s`: exit 0, every record of the user file, cuts and repairs
    both checked, no difference."""

    folder = npm_tokenizer("gemma3")
    got = subprocess.run([sys.executable, "-m", "delta_suite.fuzz.cli", "--tokenizer", str(folder), "--name",
                          "gemma3-npm", "--budget", "5s", "--out", str(tmp_path / "f")], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert got.returncode == 0, got.stdout[-1500:] + got.stderr[-1500:]
    records = read_ledgers([tmp_path / "f"]).records
    by_check = {r["check"]: r for r in records}
    assert all(r["tokenizer"] == "gemma3-npm" for r in records)
    assert by_check["fuzz.cut"]["comparisons"] > 0 and by_check["fuzz.repair"]["comparisons"] > 0, sorted(by_check)
    assert sum(r["differences"] for r in records) == 0


def test_the_pair_table_is_the_vocabularys_own_pairs(public: FrozenTokenizer) -> None:
    """The cached pair table equals the pairs read here straight from the file's vocabulary (byte-fallback tokens
    left out), and the single-character tokens likewise."""
    vocab = npm_config(public.name.removesuffix("-npm"))["model"]["vocab"]
    text_tokens = [t for t in vocab if not re.fullmatch(r"<0x[0-9A-F]{2}>", t)]
    pairs = {(ord(a) << 21) | ord(b) for t in text_tokens for a, b in zip(t, t[1:], strict=False)}
    rules = whole_word_rules(public)
    assert rules.inner_pairs == pairs
    assert rules.single_chars == {ord(t) for t in text_tokens if len(t) == 1}


@pytest.mark.parametrize(("normalizer", "pre_tokenizer", "want"), [
    ({"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": R},
                                          {"type": "Replace", "pattern": {"String": " "}, "content": R}]},
     None, ("per_stretch", False)),
    ({"type": "Replace", "pattern": {"String": " "}, "content": R},
     {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious", "invert": False}, ("none", False)),
    (None, {"type": "Metaspace", "replacement": R, "add_prefix_space": True}, ("per_stretch", True)),
    (None, {"type": "Metaspace", "replacement": R, "prepend_scheme": "first", "split": False}, ("first", False)),
    (None, {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"String": " "}, "behavior": "Isolated", "invert": False},
        {"type": "Metaspace", "replacement": R, "prepend_scheme": "never", "split": False}]}, None),
])
def test_the_shape_is_read_from_the_loaded_stages(normalizer, pre_tokenizer, want) -> None:
    """The prefix scheme and split as the reference loads the stages (a legacy `add_prefix_space: true` Metaspace is
    "always" with split); a Split on spaces before anything replaced them really splits, and is refused."""
    shape = whole_word_shape(*loaded_stages(normalizer, pre_tokenizer))
    if want is None:
        assert isinstance(shape, str) and shape.startswith("pre_tokenizer Split"), shape
    else:
        assert not isinstance(shape, str), shape
        assert (shape.prefix, shape.split) == want
