"""The controls on piece-local tokenizers (`spec.piece_local`): which apply, and that each one that applies is killed
by the kill matrix or proven redundant, on the trained WordPiece, Unigram and BPE files and on a Unigram variant
whose Metaspace has prepend_scheme "first" (the one premise the others hold: special-token edges are not exact), and
a WordPiece variant under NFKC (where "=" + U+0338 composes: the S2 premise that NFKC alone breaks).

A piece-local tokenizer is cut by the guard, the special-token rule and the separator rule and repaired from one
accepted cut, so the byte-level controls are "not applicable" there (`controls.registry._byte_level`) and so are
the whole-word ones. Three controls break the piece-local premises: cut.separator_ignores_normalizer (S2: the Bert
normalizer drops U+000B and U+000C, killed on the WordPiece file), cut.separator_ignores_pre_tokenizer (S3:
Metaspace keeps a tab inside a word, Whitespace groups "!."; killed on the Unigram and BPE files) and
cut.piece_special_edges_ignored (the chunk after an added token gets the prefix under "first"; killed on the
variant). cut.no_guard is killed where an added-token string holds a separator ("[CLS]" ends in "]", a Bert
separator) and survives by proof elsewhere (`controls.proofs.special_interiors_joined`, the piece-local premise:
no interior separator). cut.special_ignores_strip is killed on each file's stripping derivation (its markers
single_word too, plus a marker of letters, `controls.derived.stripping_markers`).

Each of the three applies to every piece-local file and is proven redundant where the premise it skips refuses no
candidate by itself (`controls.proofs.piece_local_variant_is_spec`: the control's rules are then the spec's).
Plants: `premise=_pre_tokenizer_variant_is_spec` replaced by `_always` on cut.separator_ignores_pre_tokenizer -> the
Unigram file's row is "killed" where a proof is claimed and `control_problems` fails;
`_interiors_without_separator` made to always hold -> cut.no_guard is "killed" on a row claimed redundant and
`control_problems` fails.
"""

from __future__ import annotations

import json

import pytest
from delta_suite.controls import get, names
from delta_suite.controls.kill_matrix import KillRow, run_matrix
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer_file
from delta_suite.spec.admission import admission_of
from delta_suite.spec.piece_local import piece_local_rules

from properties.piece_local_files import load, path_of
from properties.test_kill_matrix import control_problems, record_rows, survival_problems, unbroken_problems

HARNESS = {name: "killed" for name in names("harness")}
SBP = "survives-by-proof"
COMMON = {"repair.unchecked_reuse": "killed", "cut.guard_selected_only": SBP, "cut.special_ignores_strip": "killed",
          "cut.separator_ignores_normalizer": SBP, "cut.separator_ignores_pre_tokenizer": SBP,
          "cut.piece_special_edges_ignored": SBP, **HARNESS}
STATUS = {
    "bert-wordpiece-uncased": {**COMMON, "cut.no_guard": "killed", "cut.vector_guard_misses_last_interior": "killed",
                               "cut.separator_ignores_normalizer": "killed"},
    "unigram-metaspace-nfkc": {**COMMON, "cut.no_guard": SBP, "cut.separator_ignores_pre_tokenizer": "killed"},
    "bpe-nfkc-lowercase-digits": {**COMMON, "cut.no_guard": SBP, "cut.separator_ignores_pre_tokenizer": "killed"},
    "unigram-metaspace-first": {**COMMON, "cut.no_guard": SBP, "cut.separator_ignores_pre_tokenizer": "killed",
                                "cut.piece_special_edges_ignored": "killed"},
    "bert-wordpiece-nfkc": {**COMMON, "cut.no_guard": "killed", "cut.vector_guard_misses_last_interior": "killed",
                            "cut.separator_ignores_normalizer": "killed"},
}
VARIANTS = ("unigram-metaspace-first", "bert-wordpiece-nfkc")
PIECE_LOCAL_CONTROLS = ("cut.separator_ignores_normalizer", "cut.separator_ignores_pre_tokenizer",
                        "cut.piece_special_edges_ignored")


def _variant(tmp_path_factory: pytest.TempPathFactory, name: str) -> FrozenTokenizer:
    """unigram-metaspace-first: the Unigram file with prepend_scheme "first"; bert-wordpiece-nfkc: the WordPiece
    file under Sequence[NFKC, Lowercase], where "<", "=" and ">" compose with a following U+0338 (premise S2
    refuses them; the Bert pre-tokenizer would split before each)."""
    source = "unigram-metaspace-nfkc" if name == "unigram-metaspace-first" else "bert-wordpiece-uncased"
    config = json.loads(path_of(source).read_text(encoding="utf-8"))
    if name == "unigram-metaspace-first":
        config["pre_tokenizer"] = {**config["pre_tokenizer"], "prepend_scheme": "first"}
    else:
        config["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]}
    path = tmp_path_factory.mktemp(name) / "tokenizer.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return load_tokenizer_file(path, name=name)


@pytest.fixture(scope="module", params=sorted(STATUS))
def subject(request, tmp_path_factory: pytest.TempPathFactory) -> tuple[FrozenTokenizer, dict[str, KillRow]]:
    """A file and its ci kill matrix, every control (a few seconds each: the byte-level ones are not run)."""
    name = request.param
    tok = _variant(tmp_path_factory, name) if name in VARIANTS else load(name)
    return tok, {r.control: r for r in run_matrix(tok, names(), "ci", 0)}


def test_the_matrix_on_piece_local_files(subject, ledger) -> None:
    """The kill matrix's own checks pass: the unbroken paths are clean and served by the fast path, each control
    is killed, proven redundant or not applicable, none survives; each row is recorded."""
    tok, matrix = subject
    assert admission_of(tok).piece_local
    record_rows(ledger, tok, matrix)
    problems = unbroken_problems(matrix) + control_problems(tok, matrix) + survival_problems(tok, matrix)
    assert not problems, "\n".join(problems)


def test_which_controls_apply_to_piece_local_files(subject, ledger) -> None:
    """Every control has the status `STATUS` gives it on the file; every other one is "not applicable", not run,
    and its `applies` says so; the piece-local controls that apply are killed on IDs."""
    tok, matrix = subject
    want = {n: STATUS[tok.name].get(n, "not applicable") for n in names()}
    got = {n: matrix[n].status for n in names()}
    wrong = {n: (got[n], want[n]) for n in names() if got[n] != want[n]}
    ledger.record("harness", "piece_local.control_statuses", tok, comparisons=len(want), differences=len(wrong),
                  unit="controls", oracle="none",
                  details={"wrong": wrong, "separators": sorted(piece_local_rules(tok).separators),
                           "kills": {n: {"failing": matrix[n].failing, "strings": matrix[n].strings,
                                         "where": (matrix[n].first or {}).get("where")}
                                     for n in PIECE_LOCAL_CONTROLS if got[n] == "killed"}})
    assert not wrong, wrong
    for name in names():
        assert get(name).applies(tok) == (matrix[name].status != "not applicable"), name
    for name in PIECE_LOCAL_CONTROLS:
        if got[name] == "killed":
            assert matrix[name].failing > 0, (name, matrix[name].first)
