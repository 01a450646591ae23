"""What a reader needs on the first screen: Table 3 by level (rows = levels, as in the paper), what is missing,
and the proof obligations as one narrow status cell per tokenizer (the statements listed apart).

Every state is spelled in one vocabulary wherever it appears: provisioned / not provisioned / provisioned but not
run for tokenizers; discharged / partial / open / open finding / failed / not applicable / pattern only for
obligation cells; killed / redundant (proven) / open finding / survived / not applicable for controls.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from delta_suite.frozen.registry import lookup
from delta_suite.reports.oracles import group_totals, other_text
from delta_suite.reports.table3 import Table3
from delta_suite.reports.text import checks_by_sampling

LEVELS = (
    ("encoder", "1", "the encoder: whole encodes"),
    ("chunked", "2", "the chunked path: cuts, the battery, the controls"),
    ("repair", "3", "the repair path: sessions, transcripts, turns"),
    ("proof", "proofs", "z3 proofs, control proofs, premises"),
    ("exhaustive", "exhaustive", "per-code-point tables"),
)
SHORT_STATE = {
    "discharged": "ok", "partial": "partial", "open": "open", "failed": "FAILED", "not applicable": "n/a",
    "not provisioned": "n/p", "pattern only": "pattern",
}


def short_state(state: str) -> str:
    """The narrow cell of an obligation state ("failed (first difference: ...)" reads FAILED; details below)."""
    return "FAILED" if state.startswith("failed") else SHORT_STATE.get(state, state)


@dataclass(frozen=True)
class LevelRow:
    """One level of Table 3: checks, comparisons, differences, fast-path share and tokenizers with figures."""

    level: str
    what: str
    checks: int
    comparisons: int
    differences: int
    tokenizers: int
    # comparisons per oracle group (reports.oracles.GROUPS): "reference" apart from spec, self, premise and proof
    by_group: dict[str, int] = field(default_factory=dict)

    @property
    def reference(self) -> int:
        """Comparisons with the reference (a whole encode of the reference library) on this level."""
        return self.by_group.get("reference", 0)

    @property
    def other(self) -> str:
        """The level's other checks, one number per oracle group ("spec 1,234; premise and proof 9,830,400")."""
        return other_text(self.by_group)


def levels(model: Table3) -> list[LevelRow]:
    """Table 3 by level, from the report's own rows (controls excluded from the differences and from the counts by
    oracle, `by_group`: comparisons with the reference apart from the level's other checks)."""
    provisioned = {t.name for t in model.tokenizers if t.provisioned}
    out = []
    for key, level, what in LEVELS:
        rows = [r for s in model.sections if s.key == key for r in s.rows]
        own = [r for r in rows if r.level != "control"]
        covered = {c for r in rows for c, cell in r.cells.items() if cell.status == "figures" and c in provisioned}
        by_group = {k: n for k, (n, _d) in group_totals(own).items()}
        out.append(LevelRow(level, what, len(rows), sum(r.total.comparisons for r in rows),
                            sum(r.total.differences for r in own), len(covered), by_group))
    return out


def is_hub_only(name: str) -> bool:
    """Whether the registry row `name` can come only from the model hub (`RegistryRow.hub_only`)."""
    return lookup(name).hub_only


def missing(model: Table3) -> list[str]:
    """What this report does not cover: tokenizers not provisioned, provisioned ones no record names, empty levels."""
    out = []
    absent = [t for t in model.tokenizers if t.in_registry and not t.provisioned]
    hub_only = [t.alias for t in absent if is_hub_only(t.name)]
    others = [t.alias for t in absent if not is_hub_only(t.name)]
    if hub_only:
        out.append("not provisioned (not checked at all), hub only: no package ships them and no recipe rebuilds "
                   f"them, only the model hub has them: {', '.join(hub_only)}")
    if others:
        out.append(f"not provisioned (not checked at all): {', '.join(others)}")
    named = {c for r in model.rows for c, cell in r.cells.items() if cell.status == "figures"}
    idle = [t.alias for t in model.tokenizers if t.provisioned and t.name not in named]
    if idle:
        out.append(f"provisioned but not run: {', '.join(idle)}")
    for row in levels(model):
        if row.checks == 0:
            out.append(f"level {row.level} ({row.what}): no records in this report")
    if not model.transcripts:
        out.append("level 3's turn-by-turn replay of chat transcripts by front end: no record in this report")
    return out


def obligation_grid(model: Table3) -> tuple[list[str], list[list[str]], list[tuple[str, str, str]]]:
    """(header, rows of [id, one short state per tokenizer], [(id, statement, how it is discharged)])."""
    ob = model.obligations
    if not ob.available:
        return [], [], []
    tokenizers = [t for t in model.tokenizers if t.in_registry or t.user_file is not None]  # user columns last
    rebuilt = reconstructed_tokenizers(model)
    header = ["obligation", *[f"{t.alias} {RECONSTRUCTION_MARK}" if t.name in rebuilt else t.alias
                              for t in tokenizers]]
    rows, statements = [], []
    for r in ob.rows:
        ident = r.get("id", "?")
        rows.append([ident, *[short_state(r.get(t.name, "")) for t in tokenizers]])
        statements.append((ident, r.get("statement", ""), r.get("discharge", "")))
    return header, rows, statements


RECONSTRUCTION_MARK = "(rec.)"
PATTERN_HEADER = ["pattern", "string from", "tokenizers", "accepted pairs proved",
                  "proved sound beyond the floor (adopted)", "refuted: IDs / units only / pieces only",
                  "IDs checked on", "whole pipeline (z3, bounded)"]
REFUTED_HEADER = ["pattern", "pair", "verdict", "witness", "IDs: whole vs left + right"]


def reconstructed_tokenizers(model: Table3) -> dict[str, str]:
    """Tokenizer name -> "PATTERN, a reconstruction: FROM WHAT" for each tokenizer whose split pattern is not yet
    confirmed against a file (from the pattern-level proof records)."""
    return {tok: f"{p['pattern']}, a {p['origin']}" for p in model.obligations.patterns if p.get("reconstructed")
            for tok in p.get("tokenizers") or []}


def pattern_rows(model: Table3) -> list[list[str]]:
    """One row per split pattern under PATTERN_HEADER (empty without pattern-level proof records)."""
    out = []
    for p in model.obligations.patterns:
        depths = p.get("depths") or {}
        refuted = (f"{depths.get('ids', 0)} / {depths.get('units', 0)} / {depths.get('pieces', 0)}" if depths
                   else f"{len(p.get('refuted') or [])} confirmed on pieces (depth not recorded)")
        failed = p.get("accepted_failed") or []
        proved = f"{len(p.get('accepted_proved') or [])}" + (f", FAILED {', '.join(failed)}" if failed else "")
        out.append([p["pattern"], p.get("origin", ""), ", ".join(p.get("tokenizers") or []), proved,
                    ", ".join(p.get("excluded_sound") or []) or "none", refuted,
                    ", ".join(p.get("ids_checked_on") or []) or p.get("ids_note") or "not recorded",
                    p.get("pipeline") or "not recorded"])
    return out


def _ids_text(ids: dict) -> str:
    parts = []
    for tok, e in ids.items():
        if e.get("skipped"):
            parts.append(f"{tok}: not consulted ({e['skipped']})")
        else:
            parts.append(f"{tok}: {e.get('whole')} vs {e.get('left')} + {e.get('right')}")
    return "; ".join(parts)


def refuted_rows(model: Table3) -> list[list[str]]:
    """One row per refuted pair of each pattern under REFUTED_HEADER: its verdict ("confirmed on IDs (tokenizer:
    ...)", "excluded, conservative: confirmed on units only", ...), the witness kept (code points, cut, where it
    came from) and its IDs per tokenizer."""
    out = []
    for p in model.obligations.patterns:
        for r in p.get("refuted") or []:
            text = r.get("text") or ""
            witness = f"{' '.join(f'U+{ord(c):04X}' for c in text)} cut {r.get('cut')} ({r.get('source')})"
            out.append([p["pattern"], str(r.get("pair")), str(r.get("verdict")), witness,
                        _ids_text(r.get("ids") or {})])
    return out


SAMPLED_EVIDENCE_LEVELS = {"exhaustive": "exhaustive per-code-point test", "proof": "bounded proof"}


def sampled_evidence(model: Table3) -> list[str]:
    """The samplings of the records the obligations read whose mechanism is a whole domain (per-code-point tests,
    level "exhaustive"; bounded proofs, level "proof"; `Row.sampled`), one line each with its checks: a cell their
    mechanism discharges rests on that sample or bound, and the table says so."""
    if not model.obligations.available:
        return []
    out = []
    for level, label in SAMPLED_EVIDENCE_LEVELS.items():
        by_note = checks_by_sampling([r for r in model.rows if r.level == level])
        out += [f"the \"{label}\" records of {len(checks)} checks were sampled: {note}"
                for note, checks in by_note.items()]
    return out


def failed_cells(model: Table3) -> list[str]:
    """Every failed obligation cell with its first difference, as "id on alias: failed (first difference: ...)"."""
    ob = model.obligations
    if not ob.available:
        return []
    return [f"{r.get('id', '?')} on {t.alias}: {r[t.name]}" for r in ob.rows for t in model.tokenizers
            if str(r.get(t.name, "")).startswith("failed")]
