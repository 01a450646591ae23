"""Table 3 as a model built from ledger records: what was checked at each level, how much, and what differed.

Nothing in the table is a constant: every figure is a sum over records, every row exists because records of its
(level, check) exist, and every one of the eleven registry tokenizers appears in every row's breakdown as
"not provisioned", "not run", or its figures (never as a zero it did not record).

Record conventions (how a writer's records land in the right row; see ledger/records.py for the schema)
-------------------------------------------------------------------------------------------------------
- One row per (level, check, unit), plus the control name for level "control". Use a stable `check` name;
  writing a new one adds a row by itself, and a line in reports/check_descriptions.py gives it its
  "what" (a name without one reads "no description", never its own name). Rows never merge different units.
- `level` places the row: encoder -> level 1; chunked, battery -> level 2; repair -> level 3; control -> level
  2, or the section named by `details["target_level"]`, else by `details["path"]` ("cut" -> level 2,
  "repair" -> level 3, "harness" -> harness self-tests), else level 3 for checks named "repair..."; proof,
  exhaustive, harness, benchmark -> their own sections; any other level -> "other".
- `unit` says what `comparisons` counts: "documents", "strings", "encodes", "turns", "sessions",
  "transcripts", "code points", "pairs", "cuts", "repairs"... A check counting two things writes two records
  (two units) or puts the second quantity in `details["counts"]` (e.g. {"characters": 1234567}), summed per row.
- `comparisons` = complete token-ID sequences (or code points, pairs...) compared with the record's `oracle`
  (ledger.records.ORACLES: the reference, the spec, the implementation itself, a premise or a proof);
  `differences` = how many of them differed (one differing ID counts as one difference). Each row sums its
  records per oracle (`Row.oracles`), and the verdict and "at a glance" count the oracles apart
  (reports/oracles.py); a record without one reads "oracle unknown".
- Chunked and repair records set `fast_path` (units that took the fast path: chunked at >= 1 cut, repaired
  from stored IDs) and `fallbacks` (units that fell back to a whole encode). Leave both None only where the
  path does not apply; a chunked or repair row without them reads "not recorded", and a row whose share is
  below 50% reads "mostly fell back" (neutral: a fallback is the reference's own answer), with the most frequent
  reasons when records give them in `details["fallback_reasons"]` as {reason: count}.
- One record per tokenizer, with `tokenizer` = the registry name (frozen.registry) and `tokenizer_sha256`;
  tokenizer-independent checks (class tables, proofs about patterns) set `tokenizer` None and show in the
  "(no tokenizer)" column. A tokenizer with no record in a row is "not provisioned" (files absent here) or
  "not run" -- never 0.
- Controls: level "control", `details["control"]` = the control's name (default: the check name),
  `details["killed"]` = bool, set by the writer from what the broken variant did (a record without it is listed
  as such and never counted killed: a kill is not inferred from `differences`), `details["strings_to_first_kill"]`
  = int or None,
  `details["failing_share"]` = float; `differences` are the strings the control failed (expected > 0) and
  `comparisons` the strings it ran. `details["killable"] = False` declares the removed condition redundant
  (shown as "redundant", apart from the survivors; only with a proof or test that says why).
- Fuzz campaigns: kind "fuzz", `details["cases"]`, `details["campaign"]` (series name; default check and
  tokenizer), and time as either `details["elapsed"]` = the campaign clock (seconds since the campaign started,
  at the end of the batch) or `details["elapsed_s"]` / `details["batch_seconds"]` = the batch's own duration;
  `details["cases_per_second"]` if known (else cases / duration).
- Where differences were found, `details["pointers"]` lists ids (document ids, string digests) to look at.
- A record that checked a sample of its domain says how (`details["sampled"]`, e.g. every 16th scalar value); the
  row lists each distinct sampling and the report shows it under the section, so a sampled count never reads as a
  whole one.
- Provenance keys in details (see reports/provenance.py): `unicode_regex`, `unicode_nfc` (any `unicode*`),
  `*_sha256` / `*_digest` for batteries, corpora and shards, `seed` / `seeds`, `elapsed_s` durations.
- Benchmark records (level "benchmark", written by `python -m delta_suite.benchmarks`) are rows of the Benchmarks
section and
  also feed the Performance section (reports/performance.py: figures, goals met/not met, plots), latest run per
  figure, the run being the ledger file a record was read from (`LedgerRecords.files`).
- A gate record whose test failed, errored or was interrupted carries `details["outcome"]` "failed", "error" or
  "interrupted" (ledger.gate); the row counts and shows them. The gate's session record (check "gate.session") is
  no row: `reports.gate` reads it (a gate ledger without it, or with an incomplete one, cannot PASS).
- Records that are not valid JSON, or whose names and counts have the wrong types, are listed with file and
  line in every output format, never counted and never skipped silently.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from delta_suite.frozen.errors import SuiteError
from delta_suite.frozen.loader import load_user_entry
from delta_suite.frozen.registry import rows as registry_rows
from delta_suite.frozen.user_table import UserEntry
from delta_suite.ledger.gate import KIND as GATE_KIND
from delta_suite.ledger.gate import SESSION_CHECK, did_not_pass
from delta_suite.ledger.job import PLAN_CHECK, step_rows
from delta_suite.ledger.records import LEVELS, SCHEMA, deduplicate, oracle_of, read_located
from delta_suite.reports.check_descriptions import check_title
from delta_suite.reports.gate import GateRuns, gate_runs
from delta_suite.reports.mutation_score import mutation_summary
from delta_suite.reports.performance import Performance, build_performance
from delta_suite.reports.provenance import Provenance, campaign_clock, campaign_name, gather, record_seconds
from delta_suite.reports.transcripts import RESULTS_FILE, FrontEndFigures, Recorded, read_results, transcript_figures
from delta_suite.spec.admission import admission_of
from delta_suite.subjects.protocol import is_third_party
from delta_suite.subjects.wiring import subjects_table

NO_TOKENIZER = "(no tokenizer)"

# (key, title, levels placed there). Level 2 holds the controls unless a record names another target level.
SECTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("encoder", "Level 1: the encoder (whole encodes; each row says what it compared them with)", ("encoder",)),
    ("chunked", "Level 2: the chunked path (cuts, the adversarial battery, the controls)", ("chunked", "battery")),
    ("repair", "Level 3: the repair path (transcripts, turns, stateful sessions)", ("repair",)),
    ("proof", "Proofs", ("proof",)),
    ("exhaustive", "Exhaustive per-code-point checks", ("exhaustive",)),
    ("harness", "Harness self-tests", ("harness",)),
    ("benchmark", "Benchmarks", ("benchmark",)),
    ("other", "Records of levels this report does not know", ()),
)
FAST_PATH_LEVELS = frozenset({"chunked", "repair"})
# details.path of a control record -> the section its row goes to (details.target_level wins when given)
CONTROL_PATHS = {"cut": "chunked", "chunked": "chunked", "repair": "repair", "harness": "harness"}
MOSTLY_FELL_BACK_BELOW = 0.5


class ReportInputError(SuiteError):
    """Input a report cannot be built from: a ledger path that does not exist, no ledger files, a bad format."""


@dataclass(frozen=True)
class LedgerError:
    """A ledger line that could not be used, with its file and 1-based line number (0 = the whole file)."""

    file: str
    line: int
    reason: str


@dataclass
class TokenizerInfo:
    """One tokenizer column: registry identity, provisioning here, and the file digests records carry."""

    name: str
    alias: str
    in_registry: bool
    provisioned: bool
    status: str
    cache_sha256: str
    record_sha256: list[str] = field(default_factory=list)
    user_file: dict | None = None  # a user tokenizer's file facts (path, sha256, size): never one of the eleven

    @property
    def digest_note(self) -> str:
        """Says when records were made with a file other than the one provisioned here (never silently merged)."""
        if self.user_file is not None:
            return f"user file {self.user_file.get('path', '')} ({self.user_file.get('size', '?')} bytes)"
        others = [d for d in self.record_sha256 if d and d != self.cache_sha256]
        if not self.record_sha256:
            return ""
        if self.cache_sha256 and others:
            return "records carry a digest other than the provisioned file's"
        if not self.cache_sha256:
            return "records made elsewhere (not provisioned here)"
        return ""


@dataclass
class Figures:
    """Sums over a set of records; `fast_path`/`fallbacks` stay None when no record carried them."""

    records: int = 0
    failed_records: int = 0
    comparisons: int = 0
    differences: int = 0
    fast_path: int | None = None
    fallbacks: int | None = None

    def add(self, rec: dict) -> None:
        self.records += 1
        self.failed_records += did_not_pass(rec["details"].get("outcome"))
        self.comparisons += rec["comparisons"]
        self.differences += rec["differences"]
        if rec["fast_path"] is not None:
            self.fast_path = (self.fast_path or 0) + rec["fast_path"]
        if rec["fallbacks"] is not None:
            self.fallbacks = (self.fallbacks or 0) + rec["fallbacks"]

    @property
    def fast_share(self) -> float | None:
        """fast_path / (fast_path + fallbacks), or None when neither was recorded or both are zero."""
        total = (self.fast_path or 0) + (self.fallbacks or 0)
        if self.fast_path is None and self.fallbacks is None or total == 0:
            return None
        return (self.fast_path or 0) / total


@dataclass
class Cell:
    """One tokenizer's entry in a row: "figures", "not run", "not provisioned" or "tokenizer-independent"."""

    status: str
    figures: Figures | None = None


@dataclass
class Row:
    """One row of Table 3: a (level, check, unit[, control]) with its sums and its per-tokenizer breakdown."""

    section: str
    level: str
    check: str
    unit: str
    control: str | None
    title: str
    total: Figures
    cells: dict[str, Cell]
    counts: dict[str, int]
    fallback_reasons: dict[str, int]
    pointers: list[str]
    kinds: list[str]
    covered: list[str]
    registry_total: int
    control_status: str | None = None  # level "control": killed | survived | redundant
    sampled: list[str] = field(default_factory=list)  # how its records sampled what they checked (details.sampled)
    oracles: dict[str, Figures] = field(default_factory=dict)  # its records summed per oracle (`figures_by_oracle`)

    @property
    def key(self) -> str:
        parts = [self.level, self.check, self.unit] + ([self.control] if self.control else [])
        return "/".join(parts)

    @property
    def independent(self) -> bool:
        """True when every record of the row is tokenizer-independent (tokenizer None)."""
        return all(c.status == "tokenizer-independent" for name, c in self.cells.items() if name != NO_TOKENIZER)

    @property
    def wants_fast_path(self) -> bool:
        return self.level in FAST_PATH_LEVELS

    @property
    def mostly_fell_back(self) -> bool:
        share = self.total.fast_share
        return share is not None and share < MOSTLY_FELL_BACK_BELOW


@dataclass
class Section:
    key: str
    title: str
    rows: list[Row]


@dataclass
class KillCell:
    """A control under one tokenizer, over every check that ran it: killed?, first kill, failing share."""

    status: str  # killed | survived | redundant | open finding | not applicable | not run | not provisioned
    records: int = 0
    comparisons: int = 0
    differences: int = 0
    strings_to_first_kill: int | None = None
    failing_share: float | None = None
    killed_by: list[str] = field(default_factory=list)


@dataclass
class KillMatrix:
    """Controls by tokenizer; a control killed under no tokenizer is a survivor (a finding, not a pass)."""

    controls: list[str]
    columns: list[str]
    cells: dict[str, dict[str, KillCell]]
    survivors: list[str]
    notes: list[str]


@dataclass
class ThroughputPoint:
    """One fuzz batch: its series, where it sits on the campaign's time axis, its cases and cases per second."""

    series: str
    time: str
    at_s: float
    x_kind: str  # "campaign clock" | "summed durations"
    duration_s: float | None
    cases: int
    cases_per_s: float | None


@dataclass
class ObligationTable:
    """The proof-obligation table of spec.proofs.obligations, or why it is not available."""

    available: bool
    note: str
    columns: list[str] = field(default_factory=list)
    rows: list[dict[str, str]] = field(default_factory=list)
    # per split pattern, from its pattern-level proof record (the module's `pattern_proofs`, when it has one): where
    # the string comes from (file or reconstruction), and how deep each refuted pair's counterexample reaches
    patterns: list[dict] = field(default_factory=list)


@dataclass
class Table3:
    """The whole report model; the renderers only format it."""

    tokenizers: list[TokenizerInfo]
    sections: list[Section]
    kill_matrix: KillMatrix
    throughput: list[ThroughputPoint]
    provenance: Provenance
    obligations: ObligationTable
    ledger_files: list[str]
    ledger_errors: list[LedgerError]
    duplicate_records: int = 0  # exact duplicates dropped on reading (counted once; see ledger.records)
    subjects: list[dict] = field(default_factory=list)  # `subjects.wiring.subjects_table` rows (third-party subjects)
    performance: Performance | None = None  # the benchmark figures (reports.performance)
    transcripts: list[FrontEndFigures] = field(default_factory=list)  # level 3 by front end, this report's records
    transcripts_recorded: Recorded | None = None  # the committed full-set results (shown, never counted)
    mutation: dict | None = None  # committed mutation-profile results (reports.mutation_score; shown, not counted)
    job_steps: list[dict] = field(default_factory=list)  # the main job's steps: step, status, outcome, seconds
    unloadable: list[dict] = field(default_factory=list)  # tokenizers a run could not load: tokenizer, reason, remedy
    refused_documents: dict = field(default_factory=dict)  # corpus documents refused for bad text: count, examples
    gate: GateRuns = field(default_factory=GateRuns)  # the gate sessions behind the records, why they cannot PASS
    skipped_documents: dict = field(default_factory=dict)  # documents a level did not take: count, by check, examples

    @property
    def rows(self) -> list[Row]:
        return [r for s in self.sections for r in s.rows]

    @property
    def columns(self) -> list[str]:
        """The breakdown columns: the tokenizers in order, then the tokenizer-independent column."""
        return [t.name for t in self.tokenizers] + [NO_TOKENIZER]

    def to_dict(self) -> dict:
        """Plain data for JSON (every None kept as null, never turned into 0)."""
        out = dataclasses.asdict(self)
        for sec, sec_out in zip(self.sections, out["sections"], strict=True):
            for row, row_out in zip(sec.rows, sec_out["rows"], strict=True):
                row_out["key"] = row.key
                row_out["fast_share"] = row.total.fast_share
                row_out["mostly_fell_back"] = row.mostly_fell_back
        for tok, tok_out in zip(self.tokenizers, out["tokenizers"], strict=True):
            tok_out["digest_note"] = tok.digest_note
        return out


# --- reading -------------------------------------------------------------------------------------------------


NOT_LEDGERS = ("differences-",)  # a campaign's unshrunk difference lists: its batch records already count them


def ledger_files(paths: Iterable[Path]) -> list[Path]:
    """The *.jsonl files under the given folders (sorted) and the given files, each once; bad paths are errors.
    Inside a folder, a campaign's `differences-*.jsonl` lists are not ledgers (named files are always read)."""
    files: list[Path] = []
    seen: set[Path] = set()
    for p in paths:
        p = Path(p)
        if not p.exists():
            raise ReportInputError(f"ledger path {p} does not exist")
        found = sorted(f for f in p.rglob("*.jsonl") if not f.name.startswith(NOT_LEDGERS)) if p.is_dir() else [p]
        for f in found:
            if f.resolve() not in seen:
                seen.add(f.resolve())
                files.append(f)
    if not files:
        shown = ", ".join(str(p) for p in paths)
        raise ReportInputError(f"no ledger files (*.jsonl) under {shown}")
    return files


def _bad_field(rec: dict) -> str | None:
    """Why a schema-tagged record cannot be counted, or None: names and counts must have the right types."""
    for name in ("kind", "level", "check", "unit"):
        if not isinstance(rec.get(name), str) or not rec[name]:
            return f"field {name!r} is not a non-empty string"
    for name in ("comparisons", "differences"):
        v = rec.get(name)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            return f"field {name!r} is not a non-negative integer"
    for name in ("fast_path", "fallbacks"):
        v = rec.get(name)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            return f"field {name!r} is neither null nor a non-negative integer"
    if rec.get("tokenizer") is not None and not isinstance(rec["tokenizer"], str):
        return "field 'tokenizer' is neither null nor a string"
    if not isinstance(rec.get("details"), dict):
        return "field 'details' is not an object"
    if not isinstance(rec.get("provenance"), dict):
        return "field 'provenance' is not an object"
    return None


class LedgerRecords(list):
    """The records `load_records` read, remembering the ledger file of each (`files[id(record)]`), so a figure can
    say which run it came from without adding a field to the records, and how many exact duplicates were dropped."""

    def __init__(self) -> None:
        super().__init__()
        self.files: dict[int, str] = {}
        self.duplicates = 0


def load_records(paths: Iterable[Path]) -> tuple[list[dict], list[LedgerError], list[str]]:
    """Every usable record of the ledgers (one per identity), every unusable line as (file, line, reason), and the
    files read.

    Lines are read by ledger.records.read_located and deduplicated across all files by ledger.records.deduplicate
    (exact duplicates dropped and counted in `records.duplicates`, conflicting ones listed with file and line); a
    record that parses but has wrongly typed fields is also listed with its line and not counted.
    """
    records = LedgerRecords()
    errors: list[LedgerError] = []
    files = ledger_files(paths)
    located: list[tuple[dict, str, int]] = []
    for f in files:
        got, bad = read_located([f])
        foreign = [e for e in bad if e[2] == f"not a {SCHEMA} record"]
        if not got and bad and len(foreign) == len(bad):
            # a JSON-lines file of another kind (e.g. saved differences) next to the ledgers: one line, not N
            errors.append(LedgerError(str(f), 0, f"not a ledger file: {len(foreign)} lines, none a ledger record"))
            continue
        errors.extend(LedgerError(file, line, reason) for file, line, reason in bad)
        for rec, file, line in got:
            why = _bad_field(rec)
            if why is None:
                located.append((rec, file, line))
            else:
                errors.append(LedgerError(file, line, f"record not counted: {why}"))
    kept = deduplicate(located)
    for rec, (file, _line) in zip(kept.records, kept.kept_at, strict=True):
        records.append(rec)
        records.files[id(rec)] = file
    records.duplicates = kept.duplicates
    errors.extend(LedgerError(file, line, reason) for file, line, reason in kept.conflicts)
    return records, errors, [str(f) for f in files]


# --- building ------------------------------------------------------------------------------------------------


def section_of(rec: dict) -> str:
    """The section a record's row belongs to (control rows: level 2 unless details name a target level)."""
    level = rec["level"]
    if level == "control":
        target = rec["details"].get("target_level") or CONTROL_PATHS.get(str(rec["details"].get("path")))
        if target is None and rec["check"].startswith("repair"):
            target = "repair"
        return target if target in ("encoder", "chunked", "repair", "harness") else "chunked"
    for key, _title, levels in SECTIONS:
        if level in levels:
            return key
    return "other"


def tokenizer_infos(records: list[dict], provisioning: list[dict]) -> list[TokenizerInfo]:
    """The eleven registry tokenizers in registry order, then any other tokenizer named by records (sorted)."""
    by_name = {line["name"]: line for line in provisioning}
    digests: dict[str, set[str]] = {}
    for r in records:
        if r["tokenizer"]:
            digests.setdefault(r["tokenizer"], set()).add(r.get("tokenizer_sha256") or "")
    out = []
    for row in registry_rows():
        line = by_name.get(row.name, {})
        status = str(line.get("status", "missing"))
        provisioned = status.startswith("provisioned")
        out.append(
            TokenizerInfo(
                name=row.name,
                alias=f"{row.alias} (sibling)" if "sibling" in status else row.alias,  # marked in every table/plot
                in_registry=True,
                provisioned=provisioned,
                status=status if provisioned or status.startswith("corrupt") else "not provisioned",
                cache_sha256=str(line.get("sha256") or ""),
                record_sha256=sorted(d for d in digests.get(row.name, ()) if d),
            )
        )
    known = {t.name for t in out}
    users = user_files_of(records)
    for name in sorted(set(digests) - known):
        facts = users.get(name)
        if facts is not None:
            sha = str(facts.get("sha256") or "")
            out.append(TokenizerInfo(name, f"user tokenizer: {name}, sha256 {sha[:16]}…", False, False, "user file",
                                     sha, sorted(d for d in digests[name] if d), user_file=facts))
            continue
        out.append(
            TokenizerInfo(name, name, False, False, "not in the registry", "", sorted(d for d in digests[name] if d))
        )
    return out


def user_files_of(records: list[dict]) -> dict[str, dict]:
    """The file facts (`tokenizer_file`, source "user file") of each user tokenizer the records name."""
    out: dict[str, dict] = {}
    for r in records:
        facts = r.get("tokenizer_file")
        if r.get("tokenizer") and isinstance(facts, dict) and facts.get("source") == "user file":
            out.setdefault(r["tokenizer"], facts)
    return out


def separate_user_files(records: list[dict]) -> None:
    """A user tokenizer is its file, never one of the eleven: records of a user file are renamed, in place, so no
    column merges two files or a user file with a registry row. A user name that records carry with two or more
    digests becomes NAME@SHA12 per file (a changed file is a different tokenizer), and a user record that bears a
    registry name or alias becomes user:NAME@SHA12 (a ledger not written by this suite's resolver)."""
    digests: dict[str, set[str]] = {}
    for r in records:
        facts = r.get("tokenizer_file")
        if r.get("tokenizer") and isinstance(facts, dict) and facts.get("source") == "user file":
            digests.setdefault(r["tokenizer"], set()).add(str(facts.get("sha256")))
    taken = {row.name.lower() for row in registry_rows()} | {row.alias.lower() for row in registry_rows()}
    for r in records:
        name = r.get("tokenizer")
        if name not in digests:
            continue
        sha = str(r["tokenizer_file"].get("sha256"))[:12]
        if name.lower() in taken:
            r["tokenizer"] = f"user:{name}@{sha}"
        elif len(digests[name]) > 1:
            r["tokenizer"] = f"{name}@{sha}"


def _cells(records: list[dict], tokenizers: list[TokenizerInfo]) -> dict[str, Cell]:
    per: dict[str, Figures] = {}
    for r in records:
        per.setdefault(r["tokenizer"] or NO_TOKENIZER, Figures()).add(r)
    independent_only = set(per) == {NO_TOKENIZER}
    cells: dict[str, Cell] = {}
    for t in tokenizers:
        if t.name in per:
            cells[t.name] = Cell("figures", per[t.name])
        elif independent_only:
            cells[t.name] = Cell("tokenizer-independent")
        elif not t.provisioned and t.in_registry:
            cells[t.name] = Cell("not provisioned")
        else:
            cells[t.name] = Cell("not run")
    cells[NO_TOKENIZER] = Cell("figures", per[NO_TOKENIZER]) if NO_TOKENIZER in per else Cell("not run")
    return cells


def _sum_counts(records: list[dict], key: str) -> dict[str, int]:
    total: Counter[str] = Counter()
    for r in records:
        value = r["details"].get(key)
        if isinstance(value, Mapping):
            for k, v in value.items():
                if isinstance(v, int) and not isinstance(v, bool):
                    total[str(k)] += v
    return dict(sorted(total.items()))


def _pointers(records: list[dict], limit: int = 10) -> list[str]:
    found: set[str] = set()
    for r in records:
        ptrs = r["details"].get("pointers")
        if isinstance(ptrs, list):
            found.update(str(p) for p in ptrs)
    return sorted(found)[:limit]


def build_rows(records: list[dict], tokenizers: list[TokenizerInfo]) -> list[Section]:
    """Group records by (level, check, unit[, control]) into rows, rows into sections, all in a stable order."""
    groups: dict[tuple[str, str, str, str, str], list[dict]] = {}
    for r in records:
        control = control_name(r) if r["level"] == "control" else ""
        groups.setdefault((section_of(r), r["level"], r["check"], r["unit"], control), []).append(r)
    registry_total = sum(t.in_registry for t in tokenizers)
    level_order = {lvl: i for i, lvl in enumerate(LEVELS)}
    by_section: dict[str, list[Row]] = {}
    for (section, level, check, unit, control), recs in sorted(
        groups.items(), key=lambda kv: (level_order.get(kv[0][1], len(LEVELS)),) + kv[0][1:]
    ):
        total = Figures()
        for r in recs:
            total.add(r)
        cells = _cells(recs, tokenizers)
        covered = [t.name for t in tokenizers if cells[t.name].status == "figures"]
        control_status = control_outcome(recs) if level == "control" else None
        title = check_title(check)
        if control:
            title = f"control {control}: {title}"
        by_section.setdefault(section, []).append(
            Row(
                section=section,
                level=level,
                check=check,
                unit=unit,
                control=control or None,
                title=title,
                total=total,
                cells=cells,
                counts=_sum_counts(recs, "counts"),
                fallback_reasons=_sum_counts(recs, "fallback_reasons"),
                pointers=_pointers(recs),
                kinds=sorted({r["kind"] for r in recs}),
                covered=covered,
                registry_total=registry_total,
                control_status=control_status,
                sampled=sorted({str(r["details"]["sampled"]) for r in recs if r["details"].get("sampled")}),
                oracles=figures_by_oracle(recs),
            )
        )
    return [Section(key, title, by_section.get(key, [])) for key, title, _levels in SECTIONS]


def figures_by_oracle(records: Iterable[dict]) -> dict[str, Figures]:
    """Records summed per oracle they name (`ledger.records.oracle_of`: "unknown" for a record that names none, so
    an older ledger's count is never read as a comparison with the reference)."""
    out: dict[str, Figures] = {}
    for rec in records:
        out.setdefault(oracle_of(rec), Figures()).add(rec)
    return dict(sorted(out.items()))


def control_name(rec: dict) -> str:
    """The control a level-"control" record ran: `details.control`, else its check name."""
    name = rec["details"].get("control")
    return str(name) if name else rec["check"]


def _not_killable(rec: dict) -> bool:
    """A control record that declares its removed condition redundant (`details.killable` is False), or that the
    kill matrix marks proven redundant on its tokenizer (status "survives-by-proof")."""
    return rec["details"].get("killable") is False or rec["details"].get("status") == "survives-by-proof"


def control_outcome(recs: list[dict]) -> str:
    """killed if any record killed; redundant if every record declares itself not killable; "open finding" if every
    surviving record is a stated open finding (details.open_finding, controls.findings); else survived."""
    if any(_killed(r) for r in recs):
        return "killed"
    if all(r["details"].get("status") in ("not applicable", "not provisioned") for r in recs):
        return "not applicable"  # the broken condition does not exist there (or nothing ran): no evidence either way
    if all(_not_killable(r) or r["details"].get("status") in ("not applicable", "not provisioned") for r in recs):
        return "redundant"
    if all(_not_killable(r) or r["details"].get("open_finding") for r in recs):
        return "open finding"
    return "survived"


def _killed(rec: dict) -> bool:
    """A control record kills only when it says so (`details["killed"]` is true); a difference count is never read
    as a kill (it may count what the broken variant was shown, not what it accepted)."""
    return rec["details"].get("killed") is True


def build_kill_matrix(records: list[dict], tokenizers: list[TokenizerInfo]) -> KillMatrix:
    """Controls by tokenizer from level-"control" records; a control killed nowhere is listed as a survivor."""
    # a "not provisioned" note (a tokenizer the kill matrix could not run on) is coverage, not a control's run
    controls = [r for r in records if r["level"] == "control" and r["details"].get("status") != "not provisioned"]
    names = sorted({control_name(r) for r in controls})
    columns = [t.name for t in tokenizers] + [NO_TOKENIZER]
    info = {t.name: t for t in tokenizers}
    notes = []
    unstated = sorted({f"{control_name(r)} on {r['tokenizer'] or NO_TOKENIZER}" for r in controls
                       if not isinstance(r["details"].get("killed"), bool)})
    if unstated:
        notes.append("control records that do not say whether they killed (no details.killed), never counted "
                     "killed: " + ", ".join(unstated))
    grouped: dict[tuple[str, str], list[dict]] = {}
    for r in controls:
        key = (control_name(r), r["tokenizer"] or NO_TOKENIZER)
        grouped.setdefault(key, []).append(r)
    cells: dict[str, dict[str, KillCell]] = {}
    for name in names:
        row: dict[str, KillCell] = {}
        for col in columns:
            recs = grouped.get((name, col), [])
            if not recs:
                t = info.get(col)
                status = "not provisioned" if t is not None and t.in_registry and not t.provisioned else "not run"
                row[col] = KillCell(status)
                continue
            kills = [r for r in recs if _killed(r)]
            status = control_outcome(recs)
            firsts = [
                r["details"]["strings_to_first_kill"]
                for r in kills
                if isinstance(r["details"].get("strings_to_first_kill"), int)
            ]
            comparisons = sum(r["comparisons"] for r in recs)
            differences = sum(r["differences"] for r in recs)
            shares = [
                float(r["details"]["failing_share"])
                for r in recs
                if isinstance(r["details"].get("failing_share"), (int, float))
            ]
            share = differences / comparisons if comparisons else (max(shares) if shares else None)
            row[col] = KillCell(
                status=status,
                records=len(recs),
                comparisons=comparisons,
                differences=differences,
                strings_to_first_kill=min(firsts) if firsts else None,
                failing_share=share,
                killed_by=sorted({r["check"] for r in kills}),
            )
        cells[name] = row
    survivors = [n for n in names if any(c.status == "survived" for c in cells[n].values())
                 and not any(c.status == "killed" for c in cells[n].values())]
    redundant = [n for n in names if all(c.status in ("redundant", "not run", "not provisioned")
                                         for c in cells[n].values())
                 and any(c.status == "redundant" for c in cells[n].values())]
    if redundant:
        notes.append("declared redundant by their records (details.killable false), shown apart from survivors: "
                     + ", ".join(redundant))
    findings = sorted(f"{n} on {col}" for n in names for col, c in cells[n].items() if c.status == "open finding")
    if findings:
        notes.append("open findings (controls/findings.py: surviving with neither a kill nor a proof, each stated "
                     "with what is known; not a failure of the suite): " + ", ".join(findings))
    return KillMatrix(names, columns, cells, survivors, notes)


def build_throughput(records: list[dict]) -> list[ThroughputPoint]:
    """Fuzz batches (kind "fuzz" with `cases` and a rate or a duration) as points of (campaign seconds, cases/s).

    The x position is the campaign clock (`details.elapsed`) when every record of the series carries one, else the
    running sum of the records' durations; the rate is `details.cases_per_second`, else cases / duration.
    """
    series: dict[str, list[tuple[str, float | None, float | None, int, float | None]]] = {}
    for r in records:
        d = r["details"]
        cases = d.get("cases")
        if r["kind"] != "fuzz" or not isinstance(cases, int) or isinstance(cases, bool):
            continue
        duration, clock = record_seconds(d), campaign_clock(d)
        rate = d.get("cases_per_second")
        if not isinstance(rate, (int, float)) or isinstance(rate, bool):
            rate = cases / duration if duration else None
        if rate is None and clock is None and duration is None:
            continue
        series.setdefault(campaign_name(r), []).append(
            (str(r["provenance"].get("time", "")), clock, duration, cases, rate)
        )
    out: list[ThroughputPoint] = []
    for name in sorted(series):
        pts = series[name]
        if all(p[1] is not None for p in pts):
            pts.sort(key=lambda p: (p[1], p[0], p[3]))
            xs = [float(p[1] or 0.0) for p in pts]
            clock = "campaign clock"
        else:
            pts.sort(key=lambda p: (p[0], p[2] or 0.0, p[3]))
            running, xs = 0.0, []
            for p in pts:
                running += p[2] or 0.0
                xs.append(running)
            clock = "summed durations"
        for (time, _clock, duration, cases, rate), x in zip(pts, xs, strict=True):
            out.append(ThroughputPoint(name, time, round(x, 6), clock, duration, cases,
                                       None if rate is None else round(float(rate), 6)))
    return out


def throughput_summary(points: list[ThroughputPoint]) -> list[dict]:
    """Per series: batches, cases, campaign seconds (the clock's end, or the summed durations) and cases/s."""
    by: dict[str, list[ThroughputPoint]] = {}
    for p in points:
        by.setdefault(p.series, []).append(p)
    out = []
    for name, pts in by.items():
        cases = sum(p.cases for p in pts)
        seconds = max(p.at_s for p in pts)
        out.append({"series": name, "batches": len(pts), "cases": cases, "seconds": seconds, "x": pts[0].x_kind,
                    "cases_per_s": cases / seconds if seconds > 0 else None})
    return out


def _plain(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, Mapping):
        return dict(value)
    return value


def _text(value: object) -> str:
    value = _plain(value)
    if isinstance(value, dict):
        return "; ".join(f"{k}={_text(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else value
        return ", ".join(_text(v) for v in items)
    return "" if value is None else str(value)


NOT_APPLICABLE = "not applicable"  # spec.proofs.obligations.NOT_APPLICABLE (that module is imported by name)


def user_columns(records: list[dict]) -> dict[str, dict]:
    """Each user tokenizer the records name (as `separate_user_files` left the names), with what its obligation
    column needs: {"kind": "byte_level" | "whole_word" | None, "family", "normalizing": NFC or not, "source"}.

    From the file's admission record when the records hold one (`details.kind`, e.g. `admission.whole_word`),
    else from the file itself, when it is still where the records say and has their digest (`frozen.user_files`:
    loaded and admitted, `spec.admission.admission_of`); else the kind is not known (None: the column takes the
    premises of every kind, never fewer) and "source" says why."""
    out: dict[str, dict] = {}
    for name, facts in user_files_of(records).items():
        said = next((r["details"] for r in records if r.get("tokenizer") == name
                     and str(r.get("check", "")).startswith("admission") and r["details"].get("kind")), None)
        if said is not None:
            out[name] = {"kind": said["kind"], "family": said.get("family"),
                         "normalizing": said.get("normalizer") == "nfc", "source": f"record {said.get('kind')}"}
            continue
        out[name] = _admitted_user_file(facts)
    return out


def _admitted_user_file(facts: dict) -> dict:
    """The kind, family and normalizer of a user file read again from its path (digest re-checked)."""
    try:
        entry = UserEntry(**{k: v for k, v in facts.items() if k != "source"})
        tok = load_user_entry(entry)
        decided = admission_of(tok)
    except (SuiteError, OSError, TypeError, ValueError) as exc:
        return {"kind": None, "family": None, "normalizing": False,
                "source": f"kind not known: {type(exc).__name__}: {str(exc)[:160]}"}
    return {"kind": decided.kind, "family": decided.family or decided.pattern, "normalizing": tok.is_nfc,
            "source": "file"}


def obligation_table(records: list[dict], module_name: str = "delta_suite.spec.proofs.obligations",
                     provisioned: list[str] | None = None,
                     users: dict[str, dict] | None = None) -> ObligationTable:
    """The proof-obligation table from `obligations()` and `status_from_ledger(records)`, if that module exists.

    `records` must be the suite's own (a third-party subject's record never discharges or fails an obligation of
    the suite: `build_table3` passes only those); `provisioned` (the names provisioned when the report is made)
    keeps a provisioned tokenizer without records from reading "not provisioned". `users` (`user_columns`) adds a
    column per user file after the registry's, with the premises of its kind (`with_user_columns`); a premise
    that applies to no column at all (every cell "not applicable": a whole-word premise in a report of byte-level
    tokenizers only) is left out."""
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            return ObligationTable(False, f"obligation table not available: module {module_name} has not landed")
        return ObligationTable(False, f"obligation table not available: {module_name} failed to import ({exc})")
    try:
        obligations = [_plain(o) for o in module.obligations()]
        kwargs: dict = {"provisioned": provisioned} if provisioned is not None else {}
        if users and hasattr(module, "with_user_columns"):
            kwargs.update(module.with_user_columns(users))
            if provisioned is not None:
                kwargs["provisioned"] = sorted(set(provisioned) | set(users))
        status = _plain(module.status_from_ledger(records, **kwargs))
        patterns = _plain(module.pattern_proofs(records)) if hasattr(module, "pattern_proofs") else []
    except Exception as exc:  # a bug in the proofs module must show in the report, not abort it
        why = f"{module_name} raised {type(exc).__name__}: {exc}"
        return ObligationTable(False, f"obligation table not available: {why}")
    rows: list[dict[str, str]] = []
    columns: list[str] = []
    for i, ob in enumerate(obligations):
        ob = ob if isinstance(ob, dict) else {"obligation": ob}
        ident = ob.get("id", ob.get("name", ob.get("premise", i)))
        if isinstance(status, dict):
            st = status.get(ident, status.get(str(ident)))
        elif isinstance(status, list) and i < len(status):
            st = status[i]
        else:
            st = None
        row = {str(k): _text(v) for k, v in ob.items()}
        cells = _plain(st)
        if isinstance(cells, dict) and cells and all(v == NOT_APPLICABLE for v in cells.values()):
            continue  # a premise of no column's kind
        if isinstance(_plain(st), dict):
            row.update({f"status: {k}" if k in row else str(k): _text(v) for k, v in _plain(st).items()})
        else:
            row["status"] = _text(st) if st is not None else "open (no status recorded)"
        for k in row:
            if k not in columns:
                columns.append(k)
        rows.append(row)
    note = f"from {module_name}"
    if users:
        note += "; user files, each with the premises of its kind of family: " + ", ".join(
            f"{name} ({facts.get('kind') or 'kind not known: every premise'}"
            + (f", {facts['family']}" if facts.get("family") else "")
            + (f"; {facts['source']}" if str(facts.get("source", "")).startswith("kind not known") else "") + ")"
            for name, facts in users.items())
    return ObligationTable(True, note, columns, [{c: r.get(c, "") for c in columns} for r in rows],
                           [p for p in patterns if isinstance(p, dict)] if isinstance(patterns, list) else [])


SUBJECT_HEADER = ["subject", "version", "tokenizer", "level", "status", "comparisons", "differences", "reasons",
                  "counterexample"]
NO_SUBJECTS = "No third-party subject records: only the minimal implementation was checked."


def provisioned_names(tokenizers: list[TokenizerInfo], records: list[dict]) -> list[str] | None:
    """The tokenizers provisioned now, plus those the records say were provisioned when they ran; None when the
    report has no provisioning status (then the obligations module infers it from the records)."""
    now = [t.name for t in tokenizers if t.provisioned]
    if not now:
        return None
    ran = {r["tokenizer"] for r in records if r.get("tokenizer") and (r.get("tokenizer_sha256") or "")}
    return sorted(set(now) | ran)


def third_party_subject(rec: dict) -> bool:
    """Whether a record is evidence about a third-party subject (kind "subject", or a fuzz batch run on one), which
    goes to the Subjects section and never counts for the minimal implementation's rows."""
    if rec.get("kind") == "subject":
        return True
    name = (rec.get("details") or {}).get("subject")
    if rec.get("kind") != "fuzz" or not isinstance(name, str) or rec.get("level") == "control":
        return False

    return is_third_party(name)


def _counterexample_text(examples: dict) -> str:
    parts = []
    for check in sorted(examples):
        ex = examples[check] or {}
        text = ex.get("text") or ""
        where = f"token {ex.get('position')}: subject {ex.get('subject_ids')} vs reference {ex.get('reference_ids')}"
        if ex.get("error"):
            where = f"error {ex['error']}"
        parts.append(f"{check}: {len(text)} chars {json.dumps(text[:40], ensure_ascii=False)}, {where}")
    return "; ".join(parts)


def subject_rows(model: Table3) -> tuple[list[list[str]], list[list[str]]]:
    """(rows of subjects that ran, rows of subjects that could not run) as text cells under SUBJECT_HEADER."""
    ran, unavailable = [], []
    for r in model.subjects:
        cells = [str(r["subject"]), str(r["subject_version"] or "default"), str(r["tokenizer"] or "-"),
                 str(r["level"]), str(r["status"]), f"{r['comparisons']:,}", f"{r['differences']:,}",
                 "; ".join(r["reasons"]), _counterexample_text(r.get("counterexamples") or {})]
        (unavailable if r["status"] == "not installed" else ran).append(cells)
    return ran, unavailable


def _subjects_table(records: list[dict]) -> list[dict]:
    if not records:
        return []

    return subjects_table(records)


def build_table3(
    records: list[dict],
    *,
    provisioning: list[dict],
    ledger_errors: list[LedgerError] | None = None,
    ledger_files_read: list[str] | None = None,
    obligations_module: str = "delta_suite.spec.proofs.obligations",
    results_file: Path | None = RESULTS_FILE,
    with_mutation: bool = True,
) -> Table3:
    """The report model from validated records and the provisioning status of the eleven tokenizers."""
    steps = [r for r in records if r["kind"] == "job" and r["check"] == "job.step"]
    plans = [r for r in records if r["kind"] == "job" and r["check"] == PLAN_CHECK]
    unloadable = [r for r in records if r["details"].get("status") == "not loadable"]
    gate = gate_runs(records)  # the gate's session records are no row: reports.gate reads them
    sessions = [r for r in records if r["kind"] == GATE_KIND and r["check"] == SESSION_CHECK]
    records = _without(records, steps + plans + unloadable + sessions)
    separate_user_files(records)
    tokenizers = tokenizer_infos(records, provisioning)
    subject_recs = [r for r in records if third_party_subject(r)]
    own = [r for r in records if not third_party_subject(r)]
    return Table3(
        tokenizers=tokenizers,
        sections=build_rows(own, tokenizers),
        kill_matrix=build_kill_matrix(own, tokenizers),
        throughput=build_throughput(own),
        subjects=_subjects_table(subject_recs),
        provenance=gather(records),
        obligations=obligation_table(own, obligations_module, provisioned_names(tokenizers, own),
                                     user_columns(own)),
        ledger_files=list(ledger_files_read or []),
        ledger_errors=sorted(ledger_errors or [], key=lambda e: (e.file, e.line, e.reason)),
        duplicate_records=getattr(records, "duplicates", 0),
        performance=build_performance(own, getattr(records, "files", None)),
        transcripts=transcript_figures(own),
        transcripts_recorded=read_results(results_file) if results_file is not None else None,
        mutation=mutation_summary() if with_mutation else None,
        job_steps=step_rows(steps, plans),  # every planned step: a step without a row is listed as such
        unloadable=_unloadable(unloadable),
        refused_documents=_refused(own),
        skipped_documents=_skipped(own),
        gate=gate,
    )


def _refused(records: list[dict]) -> dict:
    """Corpus documents refused for bad text (`details.refused_documents`). Every unit of a shard refuses the same
    documents, so a shard counts once: the largest count of its units. Examples: the first 10, deduplicated."""
    per_shard: dict[str, int] = {}
    examples: list[dict] = []
    for r in records:
        d = r["details"]
        n = d.get("refused_documents")
        if not isinstance(n, int) or n <= 0:
            continue
        shard = str(d.get("shard_sha256") or d.get("shard") or r.get("id"))
        per_shard[shard] = max(per_shard.get(shard, 0), n)
        for e in d.get("refused") or []:
            if e not in examples and len(examples) < 10:
                examples.append(e)
    return {"count": sum(per_shard.values()), "examples": examples} if per_shard else {}


def _skipped(records: list[dict]) -> dict:
    """Documents a level did not take (`details.skipped_documents`, level 2: too long to chunk), summed per check
    and tokenizer, with their reason."""
    by: Counter[str] = Counter()
    examples: list[dict] = []
    for r in records:
        n = r["details"].get("skipped_documents")
        if not isinstance(n, int) or n <= 0:
            continue
        by[f"{r['check']} / {r['tokenizer']}"] += n
        for e in r["details"].get("skipped") or []:
            if len(examples) < 5:
                examples.append({**e, "tokenizer": r["tokenizer"]})
    return {"count": sum(by.values()), "by_check": dict(sorted(by.items())), "examples": examples} if by else {}


def _unloadable(recs: list[dict]) -> list[dict]:
    """One entry per tokenizer some run could not load: its first reason, remedy, and the checks that skipped it."""
    by: dict[str, dict] = {}
    for r in recs:
        entry = by.setdefault(str(r["tokenizer"]), {"tokenizer": r["tokenizer"], "checks": [],
                                                     "reason": r["details"].get("reason", ""),
                                                     "remedy": r["details"].get("remedy", "")})
        if r["check"] not in entry["checks"]:
            entry["checks"].append(r["check"])
    return [by[k] for k in sorted(by)]


def _without(records: list[dict], drop: list[dict]) -> list[dict]:
    """`records` less the `drop` ones (by identity), keeping the ledger-file memory of a LedgerRecords."""
    gone = {id(r) for r in drop}
    if not gone:
        return records
    kept = LedgerRecords()
    for r in records:
        if id(r) not in gone:
            kept.append(r)
            if isinstance(records, LedgerRecords):
                kept.files[id(r)] = records.files.get(id(r), "")
    kept.duplicates = getattr(records, "duplicates", 0)
    return kept
