"""The generated Table 3 matches the ledgers it was built from, lists all eleven tokenizers, reports every bad line,
and is byte-identical when rebuilt."""

from __future__ import annotations

import csv
import json
import re
import sys
from collections import defaultdict
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import pytest
from delta_suite.frozen.provision import status as provisioning_status
from delta_suite.frozen.registry import rows as registry_rows
from delta_suite.ledger.records import append_records, make_record
from delta_suite.reports.cli import main as reports_main
from delta_suite.reports.table3 import NO_TOKENIZER, build_table3, load_records
from delta_suite.spec.proofs.obligations import PIPELINE_PROOF_CHECK, declare
from delta_suite.subjects.records import subject_record

REGISTRY = [r.name for r in registry_rows()]
PROVISIONED_HERE = {line["name"] for line in provisioning_status(rehash=False) if line["status"].startswith("prov")}


def _rec(level: str, check: str, tok: str | None, **kw) -> dict:
    digest = f"sha-{tok}" if tok else None
    kw.setdefault("oracle", "reference")  # these hand-made records stand for comparisons with the reference
    return make_record("test-reports", level, check, tokenizer=tok, tokenizer_sha256=digest, **kw)


def recorded_ledgers(root: Path) -> tuple[list[dict], dict[str, int]]:
    """Write small ledgers: two files, a control row, a not-provisioned tokenizer with records, a corrupt line and
    a wrongly typed record. Returns the good records and the (file name -> line number) of the two bad lines."""
    a = [
        _rec("encoder", "corpus.whole", "qwen3_8b", comparisons=1200, differences=0, unit="documents",
             details={"counts": {"characters": 98765}, "corpus_sha256": "c0ffee", "seed": 7,
                      "unicode_regex": "15.0", "elapsed_s": 3.5}),
        _rec("encoder", "corpus.whole", "gpt_oss_120b", comparisons=800, differences=2, unit="documents",
             details={"counts": {"characters": 5000}, "pointers": ["doc-17", "doc-3"]}),
        _rec("encoder", "corpus.whole", "minimax_m3", comparisons=40, differences=0, unit="documents"),
        _rec("chunked", "chunked.planner_cuts", "qwen3_8b", comparisons=100, differences=0, fast_path=90,
             fallbacks=10, unit="documents", details={"fallback_reasons": {"no_cut": 10}}),
        _rec("chunked", "chunked.planner_cuts", "deepseek_v3", comparisons=20, differences=0, fast_path=2,
             fallbacks=18, unit="documents"),
        _rec("battery", "battery.nfc_seams", "qwen3_8b", comparisons=500, differences=0, unit="strings",
             details={"battery_sha256": "ba77e5", "seed": 11}),
    ]
    b = [
        _rec("encoder", "corpus.whole", "qwen3_8b", comparisons=300, differences=1, unit="documents",
             details={"counts": {"characters": 1235}}),
        _rec("repair", "repair.transcripts", "llama_3_1_8b", comparisons=10, differences=0, fast_path=3,
             fallbacks=7, unit="turns"),
        _rec("control", "battery.nfc_seams", "qwen3_8b", comparisons=1000, differences=21, unit="strings",
             details={"control": "no_normalization_check", "killed": True, "strings_to_first_kill": 17,
                      "failing_share": 0.021}),
        _rec("control", "battery.apostrophe", "deepseek_v3", comparisons=400, differences=0, unit="strings",
             details={"control": "no_apostrophe_carveout", "killed": False, "strings_to_first_kill": None,
                      "failing_share": 0.0}),
        _rec("control", "repair_knob:margin=0", None, comparisons=12, differences=0, unit="candidates",
             details={"path": "repair", "killable": False}),
        _rec("proof", "proof.transitions", None, comparisons=25, differences=0, unit="pairs",
             details={"pattern": "qwen2"}),
        _rec("exhaustive", "exhaustive.class_table", None, comparisons=1114112, differences=0, unit="code points",
             details={"unicode_nfc": "16.0"}),
        _rec("chunked", "chunked.planner_cuts", "synthetic_bpe", comparisons=5, differences=0, fast_path=5,
             fallbacks=0, unit="documents"),
    ]
    for i, (elapsed, cases) in enumerate([(2.0, 400), (2.0, 380), (1.0, 150)]):
        b.append(make_record("fuzz", "battery", "fuzz.seams", tokenizer="qwen3_8b", comparisons=cases,
                             unit="cases", details={"elapsed_s": elapsed, "cases": cases, "segment": i},
                             oracle="reference"))
    for clock, cases, rate in [(3.0, 120, 90.0), (1.5, 100, 80.0)]:  # as fuzz batches carry time: a campaign clock
        b.append(make_record("fuzz", "chunked", "fuzz.cut", tokenizer="qwen3_8b", comparisons=cases, unit="cuts",
                             fast_path=cases, fallbacks=0,
                             details={"campaign": "c1", "elapsed": clock, "cases": cases, "cases_per_second": rate,
                                      "batch_seconds": cases / rate}, oracle="reference"))
    append_records(root / "run-a" / "a.jsonl", a)
    append_records(root / "run-b" / "b.jsonl", b[:4])
    bad = root / "run-b" / "b.jsonl"
    with bad.open("ab") as fh:  # a torn line (line 5) and a record whose count is not a number (line 6)
        fh.write(b'{"schema": "delta-suite.ledger.v1", "kind": "torn", "lev\n')
        broken = dict(b[0], comparisons="many")
        fh.write((json.dumps(broken) + "\n").encode())
    append_records(bad, b[4:])
    return a + b, {"b.jsonl:5": 5, "b.jsonl:6": 6}


def _key(r: dict) -> tuple:
    control = (r["details"].get("control") or r["check"]) if r["level"] == "control" else None
    return (r["level"], r["check"], r["unit"], control)


def expected_rows(records: list[dict]) -> dict[tuple, dict]:
    """Sums per row and per (row, tokenizer), computed here from the records the test wrote."""
    out: dict[tuple, dict] = defaultdict(lambda: {"comparisons": 0, "differences": 0, "fast_path": None,
                                                  "fallbacks": None, "by_tok": defaultdict(lambda: [0, 0])})
    for r in records:
        row = out[_key(r)]
        row["comparisons"] += r["comparisons"]
        row["differences"] += r["differences"]
        for f in ("fast_path", "fallbacks"):
            if r[f] is not None:
                row[f] = (row[f] or 0) + r[f]
        cell = row["by_tok"][r["tokenizer"] or NO_TOKENIZER]
        cell[0] += r["comparisons"]
        cell[1] += r["differences"]
    return out


def _run(ledgers: Path, out: Path, *extra: str) -> int:
    return reports_main(["table3", "--ledgers", str(ledgers), "--out", str(out), *extra])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("ledgers")
    records, bad = recorded_ledgers(root)
    out1, out2 = root.parent / "report1", root.parent / "report2"
    assert _run(root, out1) == 0
    assert _run(root, out2) == 0
    return root, records, bad, out1, out2


def test_figures_equal_the_sums_of_the_ledgers(built, ledger) -> None:
    """Every row's comparisons, differences, fast path and fallbacks, and every per-tokenizer cell, equal the sums
    of the records written; every registry tokenizer appears in every row as figures, not run or not provisioned."""
    _root, records, _bad, out, _ = built
    model = json.loads((out / "table3.json").read_text())
    got = {(r["level"], r["check"], r["unit"], r["control"]): r for s in model["sections"] for r in s["rows"]}
    want = expected_rows(records)
    assert set(got) == set(want)
    compared, wrong = 0, []  # every figure and cell compared with the sums of the records, and those that differ
    for key, exp in want.items():
        row = got[key]
        total = row["total"]
        for f in ("comparisons", "differences", "fast_path", "fallbacks"):
            if total[f] != exp[f]:
                wrong.append((key, f))
            compared += 1
        assert set(row["cells"]) == set(REGISTRY) | {"synthetic_bpe", NO_TOKENIZER}
        independent = set(exp["by_tok"]) == {NO_TOKENIZER}
        for name, cell in row["cells"].items():
            if name in exp["by_tok"]:
                ok = cell["status"] == "figures" and [cell["figures"]["comparisons"],
                                                      cell["figures"]["differences"]] == exp["by_tok"][name]
            elif name == NO_TOKENIZER:
                ok = cell["status"] == "not run" and cell["figures"] is None
            elif independent:
                ok = cell["status"] == "tokenizer-independent"
            elif name in REGISTRY and name not in PROVISIONED_HERE:
                ok = cell["status"] == "not provisioned" and cell["figures"] is None
            else:
                ok = cell["status"] == "not run" and cell["figures"] is None
            if not ok:
                wrong.append((key, name))
            compared += 1
    ledger.record("harness", "reports.table3_figures", comparisons=compared, differences=len(wrong), unit="figures",
                  details={"wrong": [str(w) for w in wrong[:5]]}, oracle="self")
    assert wrong == []
    chars = sum(r["details"].get("counts", {}).get("characters", 0) for r in records if r["check"] == "corpus.whole")
    assert got[("encoder", "corpus.whole", "documents", None)]["counts"] == {"characters": chars}
    repair = got[("repair", "repair.transcripts", "turns", None)]
    assert repair["mostly_fell_back"] is True and repair["fast_share"] == 3 / 10
    md = (out / "table3.md").read_text()
    assert "mostly fell back: 30.0%" in md and "MOSTLY" not in md  # neutral, and why (reason codes) when recorded


def test_corrupt_and_mistyped_lines_are_reported_with_file_and_line(built) -> None:
    """A torn line and a record with a non-integer count are listed (file, line) in every format, not skipped."""
    root, _records, _bad, out, _ = built
    bad_file = str(root / "run-b" / "b.jsonl")
    errs = json.loads((out / "table3.json").read_text())["ledger_errors"]
    assert [(e["file"], e["line"]) for e in errs] == [(bad_file, 5), (bad_file, 6)]
    assert "not a JSON record" in errs[0]["reason"] and "comparisons" in errs[1]["reason"]
    md = (out / "table3.md").read_text()
    assert f"| {bad_file} | 5 |" in md and f"| {bad_file} | 6 |" in md
    assert f"{bad_file},5," in (out / "table3-ledger-errors.csv").read_text()
    assert bad_file in (out / "table3.html").read_text()


def test_kill_matrix_and_control_rows(built) -> None:
    """The kill matrix has a cell per control and tokenizer; the survivor is named; first kills are recorded."""
    _root, records, _bad, out, _ = built
    model = json.loads((out / "table3.json").read_text())
    km = model["kill_matrix"]
    runs = [r for r in records if r["level"] == "control"]
    name = {id(r): r["details"].get("control") or r["check"] for r in runs}
    assert km["controls"] == sorted(set(name.values()))
    redundant = [name[id(r)] for r in runs if r["details"].get("killable") is False]
    assert km["survivors"] == [name[id(r)] for r in runs
                               if not r["details"].get("killed") and name[id(r)] not in redundant]
    rows = {r["check"]: (s["key"], r) for s in model["sections"] for r in s["rows"] if r["level"] == "control"}
    for r in runs:
        section, row = rows[r["check"]]
        assert section == ("repair" if r["details"].get("path") == "repair" else "chunked")
        want = "redundant" if name[id(r)] in redundant else ("killed" if r["details"]["killed"] else "survived")
        assert row["control_status"] == want
    killed = next(r for r in runs if r["details"].get("killed"))
    cell = km["cells"][killed["details"]["control"]][killed["tokenizer"]]
    assert cell["status"] == "killed"
    assert cell["strings_to_first_kill"] == killed["details"]["strings_to_first_kill"]
    assert cell["failing_share"] == killed["differences"] / killed["comparisons"]
    for name in REGISTRY:
        if name not in PROVISIONED_HERE:
            assert km["cells"][killed["details"]["control"]][name]["status"] == "not provisioned"


def test_rebuilding_is_byte_identical(built) -> None:
    """Two runs on the same ledgers write the same files, byte for byte (plots included)."""
    _root, _records, _bad, out1, out2 = built
    names = sorted(p.name for p in out1.iterdir())
    assert names == sorted(p.name for p in out2.iterdir())
    assert {"table3.md", "table3.html", "table3.json", "table3.csv", "table3-by-tokenizer.csv"} <= set(names)
    for name in names:
        assert (out1 / name).read_bytes() == (out2 / name).read_bytes(), name


class _Structure(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: dict[str, int] = defaultdict(int)
        self.external: list[str] = []
        self.breakdown_headers: list[str] = []
        self._table_class: list[str] = []
        self._in_th = False
        self.style = ""
        self._in_style = False
        self.svg_depth = 0
        self.page_styles = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        a = dict(attrs)
        for name, value in attrs:
            value = value or ""
            inline = not value or value.startswith(("#", "data:"))
            if name in ("src", "href", "xlink:href", "action", "data") and not inline:
                self.external.append(f"<{tag} {name}={value}>")
            if re.search(r"url\((?!#)", value) or "@import" in value:
                self.external.append(f"<{tag} {name}={value}>")
        self.svg_depth += tag == "svg"
        self.page_styles += tag == "style" and self.svg_depth == 0
        if tag == "table":
            self._table_class.append(a.get("class") or "")
        if tag == "th" and self._table_class and self._table_class[-1] == "breakdown" and a.get("title"):
            self.breakdown_headers.append(a["title"])
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self.svg_depth -= tag == "svg"
        if tag == "table" and self._table_class:
            self._table_class.pop()
        if tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.style += data


def test_html_is_one_self_contained_page(built) -> None:
    """The HTML has the tables, every breakdown table names all eleven tokenizers, the plots are inline SVG, and
    nothing refers to an external resource (no script, link, src, external href, url() or @import)."""
    _root, _records, _bad, out, _ = built
    page = _Structure()
    page.feed((out / "table3.html").read_text())
    assert page.tags["html"] == 1 and page.page_styles == 1
    assert page.tags["script"] == 0 and page.tags["link"] == 0 and page.tags["img"] == 0
    assert page.external == []
    assert not re.search(r"url\((?!#)", page.style) and "@import" not in page.style
    assert page.tags["svg"] == 3  # comparisons per tokenizer, kill matrix, throughput
    assert page.tags["table"] >= 10
    breakdown_tables = len(page.breakdown_headers) // (len(REGISTRY) + 2)
    assert breakdown_tables >= 4
    for i in range(breakdown_tables):
        chunk = page.breakdown_headers[i * (len(REGISTRY) + 2):(i + 1) * (len(REGISTRY) + 2)]
        assert chunk == REGISTRY + ["synthetic_bpe", NO_TOKENIZER]


def test_bad_input_exits_2_with_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A missing ledger path, a folder without ledgers and an unknown format exit 2 (input); an --out that is a file
    exits 3 (the environment: one meaning per exit code)."""
    good = tmp_path / "l"
    append_records(good / "x.jsonl", [_rec("encoder", "corpus.whole", "qwen3_8b", comparisons=1)])
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("x")
    cases = [
        (["--ledgers", str(tmp_path / "nope")], "does not exist"),
        (["--ledgers", str(tmp_path / "empty")], "no ledger files"),
        (["--ledgers", str(good), "--format", "md,pdf"], "unknown report format pdf"),
        (["--ledgers", str(good), "--out", str(tmp_path / "file")], "not a folder"),
    ]
    for args, message in cases:
        argv = ["table3", *args] + ([] if "--out" in args else ["--out", str(tmp_path / "o")])
        assert reports_main(argv) == (3 if "--out" in args else 2)
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err
    with pytest.raises(SystemExit) as exc:
        reports_main(["table3", "--help"])
    assert exc.value.code == 0
    assert "--ledgers" in capsys.readouterr().out


def test_obligation_table_present_or_absent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the obligations module the report says it is not available; with one, its rows and statuses show."""
    records, _ = load_records([_write_one(tmp_path)])[:2]
    absent = build_table3(records, provisioning=[], obligations_module="no_such_pkg.obligations")
    assert not absent.obligations.available and "not available" in absent.obligations.note
    (tmp_path / "fake_obligations.py").write_text(
        "def obligations():\n"
        "    return [{'id': 'guard', 'mechanism': 'exhaustive'}, {'id': 'nfc', 'mechanism': 'z3'}]\n"
        "def status_from_ledger(records):\n"
        "    return {'guard': 'discharged (%d records)' % len(records)}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    present = build_table3(records, provisioning=[], obligations_module="fake_obligations")
    assert present.obligations.available
    assert present.obligations.rows == [
        {"id": "guard", "mechanism": "exhaustive", "status": f"discharged ({len(records)} records)"},
        {"id": "nfc", "mechanism": "z3", "status": "open (no status recorded)"},
    ]
    sys.modules.pop("fake_obligations", None)


def _write_one(tmp_path: Path) -> Path:
    path = tmp_path / "one.jsonl"
    append_records(path, [_rec("encoder", "corpus.whole", "qwen3_8b", comparisons=3)])
    return path


def test_not_recorded_is_never_zero(built) -> None:
    """Cells with no records have empty figures in CSV; a fast path nobody recorded is 'not recorded', not 0%."""
    _root, _records, _bad, out, _ = built
    with (out / "table3-by-tokenizer.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["tokenizer"] for r in rows} >= set(REGISTRY)
    for r in rows:
        if r["status"] != "figures":
            assert r["comparisons"] == "" and r["differences"] == "" and r["fast_share"] == "", r


def test_levels_without_records_say_so_and_repeats_are_flagged(tmp_path: Path) -> None:
    """A level nobody recorded shows "No records of this level" (no row of zeros); a record written twice is
    counted once and the report says how many repeats it dropped."""
    rec = _rec("encoder", "corpus.whole", "qwen3_8b", comparisons=9, differences=0, unit="documents")
    append_records(tmp_path / "l" / "x.jsonl", [rec, rec])
    assert _run(tmp_path / "l", tmp_path / "o", "--format", "md,json") == 0
    model = json.loads((tmp_path / "o" / "table3.json").read_text())
    by_key = {s["key"]: s for s in model["sections"]}
    assert [r["total"]["comparisons"] for r in by_key["encoder"]["rows"]] == [rec["comparisons"]]
    assert by_key["chunked"]["rows"] == [] and by_key["repair"]["rows"] == []
    assert model["duplicate_records"] == 1
    md = (tmp_path / "o" / "table3.md").read_text()
    for title in (by_key["chunked"]["title"], by_key["repair"]["title"]):
        assert f"### {title}\n\nNo records of this level." in md
    assert "1 records repeat one already read" in md
    assert not (tmp_path / "o" / "table3.html").exists()


def test_a_sampled_check_says_so_in_every_format(tmp_path: Path) -> None:
    """Records that checked a sample (`details.sampled`) give their row the sampling, and the markdown and HTML say
    it under the section with the checks it applies to, and under the obligations they discharge; an unsampled
    row says nothing of the kind."""
    note = "every 16th code point of the unassigned planes"
    bounded = "proved to 4 abstract symbols, not 5"
    recs = [declare(r) for r in (
        _rec("exhaustive", "classes_qwen2", "qwen3_8b", comparisons=5, details={"sampled": note, "range": "a"}),
        _rec("exhaustive", "classes_qwen2", "qwen3_8b", comparisons=7, details={"range": "b"}),
        _rec("exhaustive", "anchor_predicate_tables", None, comparisons=3),
        _rec("proof", PIPELINE_PROOF_CHECK, None, comparisons=4, details={"sampled": bounded}))]
    append_records(tmp_path / "l" / "x.jsonl", recs)
    assert _run(tmp_path / "l", tmp_path / "o", "--format", "md,html,json") == 0
    model = json.loads((tmp_path / "o" / "table3.json").read_text())
    rows = {r["check"]: r for s in model["sections"] for r in s["rows"]}
    assert rows["classes_qwen2"]["sampled"] == [note] and rows["classes_qwen2"]["total"]["comparisons"] == 12
    assert rows["anchor_predicate_tables"]["sampled"] == []
    line = f"sampled ({note}): classes_qwen2"
    assert f"- {line}" in (tmp_path / "o" / "table3.md").read_text()
    html = (tmp_path / "o" / "table3.html").read_text()
    assert line in html and html.count("sampled (") == 2
    assert f"- sampled ({bounded}): {PIPELINE_PROOF_CHECK}" in (tmp_path / "o" / "table3.md").read_text()
    # the obligations the sampled records discharge say what they rest on, per-code-point tests and bounded proofs
    for label, said in (("exhaustive per-code-point test", note), ("bounded proof", bounded)):
        evidence = f'Sampled evidence: the "{label}" records of 1 checks were sampled: {said}.'
        assert evidence in (tmp_path / "o" / "table3.md").read_text()
        assert evidence.replace('"', "&#34;") in html or evidence in html


def test_throughput_and_wall_time_follow_the_records(built) -> None:
    """Per campaign: cases summed, seconds = the campaign clock's end if every batch carries one, else the summed
    durations; provenance wall time sums durations only (never a campaign clock)."""
    _root, records, _bad, out, _ = built
    model = json.loads((out / "table3.json").read_text())
    fuzz = [r for r in records if r["kind"] == "fuzz"]
    want: dict[str, dict] = {}
    for r in fuzz:
        name = r["details"].get("campaign") or f"{r['check']} [{r['tokenizer']}]"
        w = want.setdefault(name, {"cases": 0, "clock": [], "durations": 0.0})
        w["cases"] += r["details"]["cases"]
        if "elapsed" in r["details"]:
            w["clock"].append(r["details"]["elapsed"])
        w["durations"] += r["details"].get("elapsed_s", r["details"].get("batch_seconds", 0.0))
    points = model["throughput"]
    assert {p["series"] for p in points} == set(want)
    for name, w in want.items():
        mine = [p for p in points if p["series"] == name]
        assert sum(p["cases"] for p in mine) == w["cases"]
        end = max(w["clock"]) if w["clock"] else w["durations"]
        assert max(p["at_s"] for p in mine) == pytest.approx(end)
        assert [p["at_s"] for p in mine] == sorted(p["at_s"] for p in mine)
    durations = [r["details"].get("elapsed_s", r["details"].get("batch_seconds")) for r in records]
    total = sum(d for d in durations if d is not None)
    assert model["provenance"]["recorded_elapsed_s"] == pytest.approx(total, abs=5e-4)  # reported in milliseconds
    assert model["provenance"]["campaign_seconds"] == {n: max(w["clock"]) for n, w in want.items() if w["clock"]}


def test_missing_tokenizers_show_as_not_provisioned_whatever_the_cache(built) -> None:
    """With a cache holding one tokenizer, every other registry tokenizer without records reads "not provisioned"
    in every per-tokenizer row, one with records from elsewhere shows its figures, and a digest that differs from
    the provisioned file's is flagged."""
    root, records, _bad, _out, _ = built
    good, _errors, _files = load_records([root])
    only = "qwen3_8b"
    model = build_table3(good, provisioning=[{"name": only, "status": "provisioned (exact)", "sha256": "f" * 64}])
    named = {r["tokenizer"] for r in records if r["tokenizer"]}
    for row in model.rows:
        if row.independent:
            continue
        mine = {r["tokenizer"] for r in good if (r["level"], r["check"], r["unit"]) == (row.level, row.check, row.unit)
                and (row.control is None or (r["details"].get("control") or r["check"]) == row.control)}
        for name in REGISTRY:
            want = "figures" if name in mine else ("not run" if name == only else "not provisioned")
            assert row.cells[name].status == want, (row.key, name)
    info = {t.name: t for t in model.tokenizers}
    assert [t.name for t in model.tokenizers][: len(REGISTRY)] == REGISTRY
    assert info[only].digest_note == "records carry a digest other than the provisioned file's"
    for name in named & set(REGISTRY) - {only}:
        assert info[name].digest_note == "records made elsewhere (not provisioned here)"


def _obligation_cells(model) -> dict[str, dict[str, str]]:
    return {row["id"]: {k: v for k, v in row.items() if k in REGISTRY} for row in model.obligations.rows}


def test_a_subject_record_never_changes_an_obligation(tmp_path: Path) -> None:
    """A third-party subject's record with differences (fastokens 0.1.2's NFC skew, matching the `*nfc*` pattern
    of the normalization premise) goes to the Subjects section and leaves every obligation cell as it was."""
    own = [declare(_rec("exhaustive", "anchor_predicate_tables", "qwen3_8b", comparisons=1000, differences=0,
                        unit="code points"))]
    fastokens = SimpleNamespace(name="fastokens", version="0.1.2")
    qwen3 = SimpleNamespace(name="qwen3_8b", sha256="sha-qwen3_8b")
    skew = subject_record(fastokens, qwen3, "encoder", "fastokens_nfc_skew", comparisons=279, differences=150,
                          unit="strings")
    provisioning = [{"name": "qwen3_8b", "alias": "qwen3", "status": "provisioned (exact)", "sha256": "x"}]
    before = build_table3(own, provisioning=provisioning)
    after = build_table3([*own, skew], provisioning=provisioning)
    assert before.obligations.available
    assert _obligation_cells(after) == _obligation_cells(before)
    assert all(cells.get("qwen3_8b") != "failed" for cells in _obligation_cells(after).values())
    assert [r["subject"] for r in after.subjects] == ["fastokens"]


def test_a_provisioned_tokenizer_without_records_is_never_not_provisioned() -> None:
    """A tokenizer the provisioning status lists as provisioned reads "open" (or better) in every obligation
    cell even when no record names it; only a tokenizer that is not provisioned reads "not provisioned"."""
    provisioning = [{"name": "gpt_oss_120b", "alias": "gpt-oss", "status": "provisioned (exact)", "sha256": "x"}]
    model = build_table3([_rec("encoder", "corpus.whole", "qwen3_8b", comparisons=3)], provisioning=provisioning)
    cells = _obligation_cells(model)
    assert cells and all(c["gpt_oss_120b"] != "not provisioned" for c in cells.values())
    assert any(c["glm_5_2"] in ("not provisioned", "pattern only") for c in cells.values())
