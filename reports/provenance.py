"""Provenance of a report, gathered only from its ledger records: versions, digests, seeds, hosts, dates, wall time.

Nothing here reads the clock or the machine: the same records always give the same provenance. Each item is a
list of (value, number of records carrying it), sorted, so a mixed campaign (two commits, two hosts) shows as
such instead of as whichever record came last. Conventions read from `details`: keys starting with `unicode`
(e.g. `unicode_regex`, `unicode_nfc`) are Unicode versions; keys ending in `_sha256` or `_digest` (e.g.
`battery_sha256`, `corpus_sha256`, `shard_digest`) are input digests; `seed` / `seeds` are seeds. Time comes in
two kinds that must not be mixed: a duration of the record's own work (`elapsed_s`, else `batch_seconds`), summed
into the wall time, and a campaign clock (`elapsed`: seconds since the campaign started, as fuzz batches carry it),
of which only the largest per campaign counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

Tally = list[tuple[str, int]]


def tally(values: Iterable[object]) -> Tally:
    """Distinct values as strings with how many records carry each, sorted by value (None values left out)."""
    counts = Counter(str(v) for v in values if v is not None and v != "")
    return sorted(counts.items())


DURATION_KEYS = ("elapsed_s", "batch_seconds")
CLOCK_KEY = "elapsed"


def _seconds(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def record_seconds(details: dict) -> float | None:
    """How long the record's own work took (`elapsed_s`, else `batch_seconds`), or None when it carries none."""
    for key in DURATION_KEYS:
        if _seconds(details.get(key)) is not None:
            return _seconds(details[key])
    return None


def campaign_clock(details: dict) -> float | None:
    """Seconds since the record's campaign started (`elapsed`), or None."""
    return _seconds(details.get(CLOCK_KEY))


def campaign_name(rec: dict) -> str:
    """The series a record belongs to: `details.campaign`, else its check and tokenizer."""
    name = rec["details"].get("campaign")
    return str(name) if name else f"{rec['check']} [{rec.get('tokenizer') or 'no tokenizer'}]"


@dataclass
class Provenance:
    """What can move between runs, as carried by the records; every field is a tally or derived from one."""

    records: int = 0
    kinds: Tally = field(default_factory=list)
    suite_versions: Tally = field(default_factory=list)
    suite_commits: Tally = field(default_factory=list)
    reference: Tally = field(default_factory=list)
    reference_versions: Tally = field(default_factory=list)
    pythons: Tally = field(default_factory=list)
    hosts: Tally = field(default_factory=list)
    cores: Tally = field(default_factory=list)
    dates: Tally = field(default_factory=list)
    first_time: str | None = None
    last_time: str | None = None
    recorded_elapsed_s: float | None = None
    records_with_elapsed: int = 0
    campaign_seconds: dict[str, float] = field(default_factory=dict)
    unicode: dict[str, Tally] = field(default_factory=dict)
    tokenizer_digests: dict[str, Tally] = field(default_factory=dict)
    input_digests: dict[str, Tally] = field(default_factory=dict)
    seeds: Tally = field(default_factory=list)


def _seed_values(details: dict) -> list[object]:
    out: list[object] = []
    if "seed" in details:
        out.append(details["seed"])
    seeds = details.get("seeds")
    if isinstance(seeds, list):
        out.extend(seeds)
    elif seeds is not None:
        out.append(seeds)
    return out


def gather(records: list[dict]) -> Provenance:
    """Provenance of these records: tallies of every version, host, digest and seed they carry, and their time span."""
    prov = [r.get("provenance") if isinstance(r.get("provenance"), dict) else {} for r in records]
    details = [r.get("details") if isinstance(r.get("details"), dict) else {} for r in records]
    times = sorted(str(p["time"]) for p in prov if p.get("time"))
    elapsed = [e for e in (record_seconds(d) for d in details) if e is not None]
    clocks: dict[str, float] = {}
    for r, d in zip(records, details, strict=True):
        clock = campaign_clock(d)
        if clock is not None and r.get("check"):
            name = campaign_name({**r, "details": d})
            clocks[name] = max(clocks.get(name, 0.0), clock)

    unicode: dict[str, list[object]] = {}
    digests: dict[str, list[object]] = {}
    for d in details:
        for key, value in d.items():
            if key.startswith("unicode"):
                unicode.setdefault(key, []).append(value)
            elif key.endswith("_sha256") or key.endswith("_digest"):
                digests.setdefault(key, []).append(value)
    tok_digests: dict[str, list[object]] = {}
    for r in records:
        if r.get("tokenizer"):
            tok_digests.setdefault(str(r["tokenizer"]), []).append(r.get("tokenizer_sha256"))

    return Provenance(
        records=len(records),
        kinds=tally(r.get("kind") for r in records),
        suite_versions=tally(p.get("suite_version") for p in prov),
        suite_commits=tally(p.get("suite_commit") for p in prov),
        reference=tally(p.get("reference") for p in prov),
        reference_versions=tally(p.get("reference_version") for p in prov),
        pythons=tally(p.get("python") for p in prov),
        hosts=tally(p.get("host") for p in prov),
        cores=tally(p.get("cores") for p in prov),
        dates=tally(t[:10] for t in times),
        first_time=times[0] if times else None,
        last_time=times[-1] if times else None,
        recorded_elapsed_s=round(sum(elapsed), 3) if elapsed else None,
        records_with_elapsed=len(elapsed),
        campaign_seconds={k: round(v, 3) for k, v in sorted(clocks.items())},
        unicode={k: tally(v) for k, v in sorted(unicode.items())},
        tokenizer_digests={k: tally(v) for k, v in sorted(tok_digests.items())},
        input_digests={k: tally(_flatten(v)) for k, v in sorted(digests.items())},
        seeds=tally(_flatten([s for d in details for s in _seed_values(d)])),
    )


def _flatten(values: list[object]) -> list[object]:
    out: list[object] = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.extend(v)
        elif isinstance(v, dict):
            out.extend(f"{k}={v[k]}" for k in sorted(v))
        else:
            out.append(v)
    return out


def show_tally(items: Tally, limit: int = 8) -> str:
    """A tally as text: `value (n records)` joined by commas, the tail summarised as `and N more`."""
    if not items:
        return "not recorded"
    shown = [f"{v} ({n} record{'s' if n != 1 else ''})" for v, n in items[:limit]]
    if len(items) > limit:
        shown.append(f"and {len(items) - limit} more")
    return ", ".join(shown)


def provenance_items(p: Provenance) -> list[tuple[str, str]]:
    """The provenance as (label, text) pairs in a fixed order, for the Markdown and HTML tables."""
    span = "not recorded"
    if p.first_time and p.last_time:
        span = f"{p.first_time} to {p.last_time}"
    wall = "not recorded"
    if p.recorded_elapsed_s is not None:
        wall = f"{p.recorded_elapsed_s:,.1f} s summed over {p.records_with_elapsed} records carrying a duration"
    items = [
        ("records", f"{p.records:,}"),
        ("writers (kind)", show_tally(p.kinds)),
        ("suite version", show_tally(p.suite_versions)),
        ("suite commit", show_tally(p.suite_commits)),
        ("reference", show_tally(p.reference)),
        ("reference version", show_tally(p.reference_versions)),
        ("python", show_tally(p.pythons)),
        ("hosts", show_tally(p.hosts)),
        ("cores", show_tally(p.cores)),
        ("dates", show_tally(p.dates)),
        ("first and last record", span),
        ("wall time", wall),
    ]
    items += [(f"campaign clock: {k}", f"{v:,.1f} s") for k, v in p.campaign_seconds.items()]
    if p.unicode:
        items += [(f"Unicode: {k}", show_tally(v)) for k, v in p.unicode.items()]
    else:
        items.append(("Unicode versions", "not recorded"))
    items += [(f"digest: {k}", show_tally(v, limit=4)) for k, v in p.input_digests.items()]
    if not p.input_digests:
        items.append(("battery and corpus digests", "not recorded"))
    items.append(("seeds", show_tally(p.seeds, limit=12)))
    items += [(f"tokenizer digest: {k}", show_tally(v, limit=4)) for k, v in p.tokenizer_digests.items()]
    return items
