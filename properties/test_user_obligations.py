"""A user's tokenizer file gets an obligation column of its own, with the premises of its kind of family.

Synthetic records: a whole-word column has the whole-word premises (merge locality, the chunk encoder, the one-cut
repair) and the premises of both kinds, and reads "not applicable" for the byte-level ones (the pattern proofs, the
NFC anchors, the repair window's premises); each is discharged when its evidence exists and open when it does not;
a byte-level column has the byte-level premises and none of the whole-word ones; a column whose kind is not known
takes every premise. The report puts the user columns after the registry's, learns their kind from the file's
admission record or from the file itself, leaves out a premise no column has, and the verdict counts the user
cells apart. The merge-locality command's own part (a whole-word file's premises) is checked on small files; its
lemma checks are the gate's (properties/test_merge_locality.py).
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from delta_suite.frozen.loader import load_tokenizer_file
from delta_suite.frozen.user_files import resolve_tokenizer
from delta_suite.frozen.user_table import USER_TABLE_ENV
from delta_suite.ledger.records import make_record
from delta_suite.reports.table3 import build_table3, user_columns
from delta_suite.reports.verdict import verdict
from delta_suite.spec.admission import KINDS as ADMISSION_KINDS
from delta_suite.spec.proofs.__main__ import main as proofs_main
from delta_suite.spec.proofs.__main__ import whole_word_premises
from delta_suite.spec.proofs.obligations import (
    ADMISSION,
    BOUNDED,
    BYTE_LEVEL,
    CONTROL,
    DISCHARGED,
    KINDS,
    NOT_APPLICABLE,
    OPEN,
    PARTIAL,
    PIECE_LOCAL,
    WHOLE_WORD,
    WHOLE_WORD_ADMISSION_CHECK,
    Z3,
    declare,
    declared,
    obligations,
    status_details,
    with_user_columns,
)

from properties.synthetic import base_config, write
from properties.whole_word_files import small_config, write_config

WHOLE_WORD_ONLY = {"cut.free_pair_locality", "cut.whole_word_chunk_encoder", "repair.whole_word_free_cut"}
PIECE_LOCAL_ONLY = {"cut.separator_normalizer", "cut.separator_pre_tokenizer", "cut.piece_local_chunks",
                    "repair.piece_local_one_cut"}
BOTH = {"cut.special_token_guard", "cut.special_token_cut", "cut.post_processing_once", "repair.fallback"}
BYTE_LEVEL_ONLY = {"cut.normalization_equation", "cut.class_table", "cut.transition_soundness", "cut.end_of_input",
                   "cut.per_piece_bpe", "repair.margin", "repair.bound", "repair.match_key", "repair.sync_witness",
                   "repair.nfc_window_start"}
WW, BL = "llama2-npm", "gpt4o-npm"
COLUMNS = {"tokenizers": ["qwen3_8b", WW, BL], "families": {"qwen3_8b": "qwen2", WW: "bpe-whole-word:0123456789ab",
                                                             BL: "o200k"},
           "provisioned": ["qwen3_8b", WW, BL], "normalizing": ["qwen3_8b"], "kinds": {WW: WHOLE_WORD, BL: BYTE_LEVEL}}


@pytest.fixture(autouse=True)
def fresh_user_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no user tokenizer named, and its own names do not outlive it."""
    monkeypatch.setenv(USER_TABLE_ENV, "{}")


def _rec(level: str, check: str, tok: str | None = None, comparisons: int = 10, differences: int = 0, **details):
    rec = make_record("test", level, check, tokenizer=tok, comparisons=comparisons, differences=differences,
                      details=details, oracle="reference")
    return declare(rec)


def _killed(check: str, tok: str | None = None) -> dict:
    return _rec("control", check, tok, differences=3, killed=True, status="killed")


def whole_word_evidence(tok: str = WW) -> list[dict]:
    """What a --only run of a whole-word file records: the lemma's checks (no tokenizer), the file's premises, the
    kill matrix's battery and controls, a campaign, the corpus, the samples."""
    return [
        _rec("proof", "merge_locality.z3_all_tables", comparisons=15),
        _rec("proof", "merge_locality.exhaustive:byte_fallback", comparisons=885_593),
        _rec("proof", "merge_locality.abstraction:unk", comparisons=265_356),
        _killed("merge_locality.planted:ignore_merges"),
        _rec("harness", WHOLE_WORD_ADMISSION_CHECK, tok, comparisons=7, kind=WHOLE_WORD),
        _rec("battery", "battery.cut", tok),
        _rec("battery", "battery.repair", tok),
        _killed("control.cut.no_guard", tok),
        _killed("control.cut.special_any_occurrence", tok),
        _killed("control.repair.unchecked_reuse", tok),
        _killed("control.cut.free_pair_forgets_first_merge", tok),
        _killed("control.cut.prefix_on_later_chunks", tok),
        _killed("control.repair.free_cut_one_off", tok),
        _rec("chunked", "fuzz.cut", tok),
        _rec("repair", "fuzz.repair", tok),
        _rec("encoder", "samples.single_vs_batch_and_postprocess", tok),
    ]


def test_the_kinds_are_admissions() -> None:
    """The obligations' kinds are admission's (which the obligations module may not import), and every premise
    names at least one; the whole-word premises are exactly the three of the family, the piece-local ones the four
    of theirs, the others byte-level or every kind's."""
    assert KINDS == ADMISSION_KINDS
    by_kind = {o["id"]: set(o["kinds"]) for o in obligations()}
    assert all(kinds and kinds <= set(KINDS) for kinds in by_kind.values())
    assert {i for i, k in by_kind.items() if k == {WHOLE_WORD}} == WHOLE_WORD_ONLY
    assert {i for i, k in by_kind.items() if k == {BYTE_LEVEL}} == BYTE_LEVEL_ONLY
    assert {i for i, k in by_kind.items() if k == {PIECE_LOCAL}} == PIECE_LOCAL_ONLY
    assert {i for i, k in by_kind.items() if k == set(KINDS)} == BOTH


def test_a_whole_word_column_has_its_premises_and_no_byte_level_one() -> None:
    """With no record, the whole-word column is open on its own premises and those of both kinds, and reads "not
    applicable" on every byte-level premise; the byte-level columns read "not applicable" on the whole-word ones."""
    table = status_details([], **COLUMNS)
    for pid, row in table.items():
        assert row[WW]["status"] == (OPEN if pid in WHOLE_WORD_ONLY | BOTH else NOT_APPLICABLE), pid
        other = WHOLE_WORD_ONLY | PIECE_LOCAL_ONLY
        want = NOT_APPLICABLE if pid in other or (pid in ("cut.normalization_equation",
                                                          "repair.nfc_window_start")) else OPEN
        assert row[BL]["status"] == want, pid
        assert row["qwen3_8b"]["status"] == (NOT_APPLICABLE if pid in other else OPEN), pid


def test_the_whole_word_premises_are_discharged_by_their_evidence() -> None:
    """Every premise of the whole-word column is discharged by what its run records: the lemma's proof, bounded
    enumeration and planted controls (global: they name no tokenizer), the file's premises, its controls killed,
    the campaign, the battery and the samples."""
    table = status_details(whole_word_evidence(), **COLUMNS)
    for pid in WHOLE_WORD_ONLY | BOTH:
        assert table[pid][WW]["status"] == DISCHARGED, (pid, table[pid][WW])
    locality = table["cut.free_pair_locality"][WW]["mechanisms"]
    assert locality == {Z3: DISCHARGED, BOUNDED: DISCHARGED, CONTROL: DISCHARGED, ADMISSION: DISCHARGED}
    # the lemma's records are global, but a byte-level column has no whole-word premise to discharge
    assert table["cut.free_pair_locality"][BL]["status"] == NOT_APPLICABLE


@pytest.mark.parametrize(("missing", "premises"), [
    (["merge_locality.z3_all_tables"], {"cut.free_pair_locality"}),
    ([WHOLE_WORD_ADMISSION_CHECK], {"cut.free_pair_locality", "cut.special_token_guard"}),
    (["control.cut.free_pair_forgets_first_merge", "control.cut.prefix_on_later_chunks"],
     {"cut.whole_word_chunk_encoder"}),
    (["fuzz.repair", "battery.repair"], {"repair.whole_word_free_cut", "repair.fallback"}),
], ids=["z3", "admission", "chunk-controls", "repair-runs"])
def test_a_whole_word_premise_without_its_evidence_is_not_discharged(missing: list[str], premises: set[str]) -> None:
    """Without every record of one of its mechanisms a premise is partial, never discharged; the others stay
    discharged."""
    table = status_details([r for r in whole_word_evidence() if r["check"] not in missing], **COLUMNS)
    for pid in WHOLE_WORD_ONLY | BOTH:
        assert table[pid][WW]["status"] == (PARTIAL if pid in premises else DISCHARGED), (pid, table[pid][WW])


def test_a_surviving_whole_word_control_fails_its_premise() -> None:
    survived = _rec("control", "control.repair.free_cut_one_off", WW, differences=0, killed=False, status="survived")
    records = [r for r in whole_word_evidence() if r["check"] != "control.repair.free_cut_one_off"] + [survived]
    assert status_details(records, **COLUMNS)["repair.whole_word_free_cut"][WW]["status"].startswith("failed")


def test_a_byte_level_user_column_reads_the_byte_level_premises() -> None:
    """A byte-level user file's column is discharged by the byte-level evidence of its name or its pattern family,
    as a registry row is."""
    records = [_rec("proof", "proofs.transitions_z3.pattern", family="o200k"),
               _rec("exhaustive", "proofs.bounded_enumeration", BL),
               _rec("exhaustive", "proofs.representatives", family="o200k"),
               _killed("control.cut.add_S_L", BL)]
    table = status_details(records, **COLUMNS)
    assert table["cut.transition_soundness"][BL]["status"] == DISCHARGED
    assert table["cut.transition_soundness"][WW]["status"] == NOT_APPLICABLE
    assert table["repair.whole_word_free_cut"][BL]["status"] == NOT_APPLICABLE


def test_a_column_of_unknown_kind_takes_every_premise() -> None:
    table = status_details([], **{**COLUMNS, "kinds": {WW: None, BL: BYTE_LEVEL}})
    assert all(row[WW]["status"] == (NOT_APPLICABLE if pid in ("cut.normalization_equation",
                                                                 "repair.nfc_window_start") else OPEN)
               for pid, row in table.items())


def test_the_new_checks_declare_what_they_are_evidence_for() -> None:
    """Each check a whole-word run writes declares its whole-word obligations, and a name that only looks like
    another premise's (merge locality under byte fallback, not the repair's fallback) does not declare it."""
    assert declared("merge_locality.exhaustive:byte_fallback", "proof") == [
        "cut.free_pair_locality:bounded enumeration"]
    assert declared("merge_locality.abstraction:byte_fallback", "proof") == [
        "cut.free_pair_locality:bounded enumeration"]
    assert declared("merge_locality.z3_all_tables", "proof") == ["cut.free_pair_locality:z3 proof"]
    assert declared("merge_locality.planted:merge_takes_byte_tokens", "control") == [
        "cut.free_pair_locality:control kill"]
    assert declared(WHOLE_WORD_ADMISSION_CHECK, "harness") == ["cut.free_pair_locality:admission check",
                                                              "cut.special_token_guard:admission check"]
    assert "cut.whole_word_chunk_encoder:property test" in declared("fuzz.cut", "chunked")
    assert "repair.whole_word_free_cut:property test" in declared("corpus.session_replay", "repair")
    assert declared("control.repair.free_cut_one_off", "control") == ["repair.whole_word_free_cut:control kill"]
    assert "repair.fallback:property test" in declared("battery.repair", "battery")


# --- the report: user columns, their kinds, the verdict -------------------------------------------------------


def _user_files(tmp_path: Path) -> tuple:
    ww = resolve_tokenizer(str(write_config(tmp_path / "ww", small_config()).parent), "ww-small")
    write(tmp_path / "bl", base_config())
    bl = resolve_tokenizer(str(tmp_path / "bl"), "bl-small")
    return ww, bl


def _tok_rec(level: str, check: str, tok, **details) -> dict:
    rec = make_record("test", level, check, tokenizer=tok.name, tokenizer_sha256=tok.sha256, comparisons=10,
                      details=details, oracle="reference")
    return declare(rec)


def test_the_report_gives_each_user_file_a_column_of_its_kind(tmp_path: Path) -> None:
    """User files named by records get columns after the registry's: the whole-word one's kind from its
    admission record, the byte-level one's from its file; their cells are counted in the verdict, and apart."""
    ww, bl = _user_files(tmp_path)
    records = [_tok_rec("chunked", "fuzz.cut", ww), _tok_rec("chunked", "fuzz.cut", bl),
               declare(make_record("proofs", "harness", WHOLE_WORD_ADMISSION_CHECK, tokenizer=ww.name,
                                   comparisons=7, oracle="premise",
                                   details={"kind": WHOLE_WORD, "family": "bpe-whole-word:feed", "normalizer": "x"}))]
    assert all(r["tokenizer_file"]["source"] == "user file" for r in records)
    columns = user_columns(records)
    assert columns[ww.name]["kind"] == WHOLE_WORD and columns[ww.name]["family"] == "bpe-whole-word:feed"
    assert columns[bl.name]["kind"] == BYTE_LEVEL and columns[bl.name]["source"] == "file"
    model = build_table3(records, provisioning=[], with_mutation=False, results_file=None)
    rows = {r["id"]: r for r in model.obligations.rows}
    assert rows["cut.whole_word_chunk_encoder"][ww.name] == PARTIAL  # fuzz.cut alone: its controls not killed
    assert rows["cut.whole_word_chunk_encoder"][bl.name] == NOT_APPLICABLE
    assert rows["cut.transition_soundness"][ww.name] == NOT_APPLICABLE
    assert rows["cut.transition_soundness"][bl.name] == OPEN
    assert "ww-small (whole_word, bpe-whole-word:feed)" in model.obligations.note
    applicable = sum(r.get(n) not in (None, "", NOT_APPLICABLE) for r in model.obligations.rows
                     for n in (ww.name, bl.name))
    # records of user files only: their cells alone are counted, the eleven's (none provisioned here) are not
    assert applicable and f"PARTIAL: 0 of {applicable} obligations discharged;" in verdict(model).line


def test_the_verdict_counts_the_user_cells_with_the_elevens_and_apart(tmp_path: Path) -> None:
    """With records of a provisioned registry tokenizer too, its cells count beside the user files', which the line
    also counts apart; with records of user files only, the provisioned registry tokenizers' cells do not count."""
    ww, _bl = _user_files(tmp_path)
    provisioning = [{"name": "qwen3_8b", "alias": "qwen3", "status": "provisioned (exact)", "sha256": "x"}]
    own = [_tok_rec("chunked", "fuzz.cut", ww)]
    registry_applicable = len(BYTE_LEVEL_ONLY | BOTH)  # qwen3_8b normalizes: every byte-level premise applies
    user_applicable = len(WHOLE_WORD_ONLY | BOTH)
    alone = verdict(build_table3(own, provisioning=provisioning, with_mutation=False, results_file=None)).line
    assert alone.startswith(f"PARTIAL: 0 of {user_applicable} obligations discharged;"), alone
    both = verdict(build_table3([*own, _rec("encoder", "corpus.whole", "qwen3_8b")], provisioning=provisioning,
                                with_mutation=False, results_file=None)).line
    assert both.startswith(f"PARTIAL: 0 of {registry_applicable + user_applicable} obligations discharged (user "
                           f"files: 0 of {user_applicable});"), both


def test_a_report_of_registry_rows_only_shows_no_whole_word_premise() -> None:
    """No column is whole-word: the whole-word premises apply to none, and the table leaves them out (the
    registry's report is as it was), while the module still lists them."""
    model = build_table3([_rec("encoder", "corpus.whole", "qwen3_8b")], provisioning=[], with_mutation=False,
                         results_file=None)
    ids = {r["id"] for r in model.obligations.rows}
    assert ids == BYTE_LEVEL_ONLY | BOTH
    assert model.obligations.note == "from delta_suite.spec.proofs.obligations"
    assert "user files" not in verdict(model).line


def test_a_user_file_of_unknown_kind_is_said_so(tmp_path: Path) -> None:
    """A user file whose records outlive the file (moved away): its kind is not known, so its column takes every
    premise, and the note says why."""
    ww, _bl = _user_files(tmp_path)
    rec = _tok_rec("chunked", "fuzz.cut", ww)
    rec["tokenizer_file"] = {**rec["tokenizer_file"], "path": str(tmp_path / "gone" / "tokenizer.json")}
    model = build_table3([rec], provisioning=[], with_mutation=False, results_file=None)
    rows = {r["id"]: r for r in model.obligations.rows}
    assert rows["cut.transition_soundness"][ww.name] == OPEN and rows["cut.free_pair_locality"][ww.name] == OPEN
    assert "kind not known" in model.obligations.note


def test_with_user_columns_keeps_the_registry_first() -> None:
    kwargs = with_user_columns({WW: {"kind": WHOLE_WORD, "family": "bpe-whole-word:x", "normalizing": False}})
    assert kwargs["tokenizers"][-1] == WW and len(kwargs["tokenizers"]) == 12
    assert kwargs["kinds"] == {WW: WHOLE_WORD} and kwargs["families"][WW] == "bpe-whole-word:x"


# --- the merge-locality command's per-file part ------------------------------------------------------------------


def test_a_whole_word_files_premises_are_recorded_and_a_broken_one_is_named(tmp_path: Path) -> None:
    """`whole_word_premises`: every premise of the small whole-word file holds; with ignore_merges on, the family
    is refused and the lemma's premise named; a byte-level file has none of these premises (None)."""
    tok = resolve_tokenizer(str(write_config(tmp_path / "ww", small_config()).parent), "ww-small")
    said, record, held = whole_word_premises(tok)
    assert held and record["check"] == WHOLE_WORD_ADMISSION_CHECK and record["differences"] == 0
    assert record["tokenizer"] == "ww-small" and record["tokenizer_file"]["source"] == "user file"
    assert record["details"]["kind"] == WHOLE_WORD and record["details"]["family"].startswith("bpe-whole-word:")
    broken = copy.deepcopy(small_config())
    broken["model"]["ignore_merges"] = True
    bad = resolve_tokenizer(str(write_config(tmp_path / "bad", broken).parent), "ww-bad")
    said, record, held = whole_word_premises(bad)
    assert not held and record["details"]["premises"]["no_ignore_merges"] is False and "ignore_merges" in said
    write(tmp_path / "bl", base_config())
    assert whole_word_premises(load_tokenizer_file(tmp_path / "bl" / "tokenizer.json")) is None


def test_the_merge_locality_command_refuses_what_it_cannot_record(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture) -> None:
    """A byte-level file is refused before any check (exit 2, nothing recorded); family arguments and --ledger
    outside --merge-locality are usage errors."""
    write(tmp_path / "bl", base_config())
    ledger = tmp_path / "ml.jsonl"
    assert proofs_main(["--merge-locality", "--tokenizer", str(tmp_path / "bl"), "--ledger", str(ledger)]) == 2
    assert "not a whole-word file" in capsys.readouterr().err and not ledger.exists()
    for argv in (["--merge-locality", "qwen2"], ["--ledger", str(ledger)]):
        with pytest.raises(SystemExit) as exc:
            proofs_main(argv)
        assert exc.value.code == 2
