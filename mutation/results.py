"""The committed results of the mutation profile (mutation/results.json), merged module by module, with verdicts.

Each module's entry is replaced whole when the module is run again; the other modules' entries stay, with the
commit and date they were run at. The score of a module is killed / (killed + survived): timeouts count as kills
(cosmic-ray's rule, shown apart), incompetent mutants (the module no longer imports) and filtered operators are
left out of both. A survivor carries the verdict matched from mutation/verdicts.toml, or none; so does a survivor
of an unfinished session (the "partial" section): it survived the tests already, whatever the rest of its module does.
The "samples" section holds the stated samples (mutation.sample): per sample (seed, mutants per module) and module,
what was drawn from which population, the outcomes and the survivors; a sample's score is an estimate with its
interval, shown apart from the complete runs and never added to their score; a sampled mutant left unfinished within
its budget takes the outcome a run of the same module source recorded for it (mutation.settle). The "confirmations"
section holds what `python -m mutation confirm` found of each 'killed' verdict (mutation.confirm: the survivor's
place, mutated line and diff, the test, the outcome, the commit). A record counts for a survivor only while the
survivor's diff is the one it checked; a module run again keeps the records of the survivors it still has (a session
with older tests lets them survive again) and drops the others.
"""

from __future__ import annotations

import fcntl
import json
from pathlib import Path

from mutation.estimate import overall
from mutation.modules import mutated_modules
from mutation.settle import settle
from mutation.verdicts import Key, Verdict, find_verdict, mutated_line, read_verdicts

RESULTS_FILE = Path(__file__).resolve().parent / "results.json"
SCHEMA = "delta-suite.mutation-results.v1"
OUTCOMES = ("killed", "timeout", "survived", "incompetent", "skipped", "pending")  # of a mutant, as counted


def read_results(path: Path = RESULTS_FILE) -> dict:
    """The results file ({"schema", "modules": {module: entry}}), or an empty one when there is none."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"schema": SCHEMA, "modules": {}}
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable results file: {exc}") from exc
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("modules"), dict) \
            or not isinstance(data.get("partial", {}), dict) or not isinstance(data.get("confirmations", []), list) \
            or not isinstance(data.get("samples", {}), dict):
        raise ValueError(f"{path}: not a mutation results file (schema {SCHEMA})")
    return data


def write_results(data: dict, path: Path = RESULTS_FILE) -> None:
    """Write the results file atomically (a crash leaves the old file, never half of one)."""
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def update_results(entry: dict, path: Path = RESULTS_FILE) -> dict:
    """Merge one module's entry into the results file under an exclusive lock (two sessions of different modules
    may finish at the same moment: each re-reads the file under the lock, so neither loses the other's module)."""
    return _locked_update(path, lambda data: merge(data, entry))


def update_partial(entry: dict, path: Path = RESULTS_FILE) -> dict:
    """Record an unfinished session's checkpoint (mutation.carry) under the same lock, replacing the module's older
    one; a finished module's entry is left as it is."""
    return _locked_update(path, lambda data: merge_partial(data, entry))


def _locked_update(path: Path, change) -> dict:
    lock = path.with_name(path.name + ".lock")
    with open(lock, "a", encoding="ascii") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            data = change(read_results(path))
            write_results(data, path)
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
    return data


def merge(data: dict, entry: dict) -> dict:
    """`data` with `entry` replacing its module's previous entry; the module's checkpoint, now finished, is dropped."""
    modules = dict(data.get("modules", {}))
    modules[entry["module"]] = entry
    partial = {m: p for m, p in data.get("partial", {}).items() if m != entry["module"]}
    still = {(entry["module"], s["line_number"], s["column"], s["operator"], mutated_line(s.get("diff", "")),
              s.get("diff", "")) for s in entry.get("survivors", [])}
    kept = [c for c in data.get("confirmations", [])
            if c["module"] != entry["module"] or (*confirmation_key(c), c.get("diff", "")) in still]
    return _shaped(modules, partial, kept, data)


def merge_partial(data: dict, entry: dict) -> dict:
    """`data` with `entry` as its module's checkpoint; an older checkpoint of the same module source (same SHA-256)
    made by another session folder keeps the mutants `entry` does not hold (two sessions of one module: a sample's
    and the complete run's), so checkpointing one never drops what the other judged. A checkpoint of the same
    folder (the session again, or a fresh one there, seeded from it unless started over on purpose) or of other
    source is replaced whole: what its session no longer holds (a result found wrong and removed) is gone."""
    partial = dict(data.get("partial", {}))
    older = partial.get(entry["module"])
    if older and older.get("module_sha") == entry.get("module_sha") and older.get("session") != entry.get("session"):
        by_key = {_mutant_key(m): m for m in older.get("mutants", [])}
        by_key.update((_mutant_key(m), m) for m in entry.get("mutants", []))
        entry = {**entry, "mutants": sorted(by_key.values(), key=_mutant_order)}
    partial[entry["module"]] = entry
    return _shaped(dict(data.get("modules", {})), partial, data.get("confirmations", []), data)


def _mutant_key(m: dict) -> tuple:
    return m["operator"], m["occurrence"], m["line"], m["column"]


def _mutant_order(m: dict) -> tuple:
    return m["line"], m["column"], m["operator"], m["occurrence"]


def sample_key(seed: int, per_module: int) -> str:
    """The name of a sample in the results file's "samples" section."""
    return f"seed {seed}, {per_module} per module"


def update_sample(seed: int, per_module: int, entry: dict, path: Path = RESULTS_FILE) -> dict:
    """Record one module's entry of a sample (mutation.sample) under the lock, replacing the module's older entry in
    the same sample; the sample's overall estimate is recomputed from its modules by the reader (sample_summary)."""
    def change(data: dict) -> dict:
        samples = dict(data.get("samples", {}))
        key = sample_key(seed, per_module)
        sample = dict(samples.get(key, {"seed": seed, "per_module": per_module, "modules": {}}))
        sample["modules"] = dict(sorted({**sample.get("modules", {}), entry["module"]: entry}.items()))
        samples[key] = sample
        return {**data, "samples": dict(sorted(samples.items()))}
    return _locked_update(path, change)


def confirmation_key(record: dict) -> tuple:
    """Which survivor a confirmation is of: module, line, column, operator and the mutated line."""
    return (record["module"], record["line_number"], record["column"], record["operator"], record["mutant"])


def update_confirmations(records: list[dict], path: Path = RESULTS_FILE) -> dict:
    """Record what `confirm` found, each record replacing an older one of the same survivor, under the lock."""
    new = {confirmation_key(r) for r in records}

    def change(data: dict) -> dict:
        kept = [c for c in data.get("confirmations", []) if confirmation_key(c) not in new]
        return _shaped(dict(data.get("modules", {})), dict(data.get("partial", {})), kept + records, data)
    return _locked_update(path, change)


def bounded_overall(sampled: list[dict]) -> dict:
    """A sample's overall estimate (mutation.estimate.overall) counting its unfinished mutants as not killed; with
    any unfinished, a lower bound whose interval runs up to the upper end of the estimate with them killed."""
    low = overall(sampled)
    unfinished = sum(e.get("unfinished", 0) for e in sampled)
    if not unfinished or low["score"] is None:
        return {**low, "unfinished": unfinished, "lower_bound": False}
    high = overall([{**e, "killed": e["killed"] + e.get("unfinished", 0)} for e in sampled])
    return {**low, "interval": [low["interval"][0], high["interval"][1]], "unfinished": unfinished,
            "lower_bound": True}


def _judged(mutants: list[dict]) -> dict[str, int]:
    """Of a checkpoint's finished mutants: how many were judged (not filtered out), killed and survived."""
    judged = [m for m in mutants if str(m.get("worker_outcome")) != "skipped"]
    return {"judged": len(judged), "killed": sum(str(m.get("test_outcome")) == "killed" for m in judged),
            "survived": sum(_survived(m) for m in judged)}


def _survived(m: dict) -> bool:
    return str(m.get("worker_outcome")) != "skipped" and str(m.get("test_outcome")) == "survived"


def partial_survivors(entry: dict) -> list[dict]:
    """The survivors among an unfinished session's kept mutants (mutation.carry), shaped as a finished module's
    survivors are: operator, line_number, column, the stripped source line, diff, and the session's mechanical
    equivalence verdict if it made one."""
    return [{"operator": m["operator"], "line_number": m["line"], "column": m["column"], "line": m.get("source", ""),
             "diff": m.get("diff", ""), **({"equivalent": m["equivalent"]} if m.get("equivalent") else {})}
            for m in entry.get("mutants", []) if _survived(m)]


def all_survivors(data: dict) -> list[tuple[str, dict, bool]]:
    """Every survivor of the results file as (module, survivor, finished): the finished modules' and the unfinished
    sessions' (partial_survivors); a sampled survivor (mutation.sample) is finished, and carries its sample's name
    (`sample`)."""
    out = [(m, s, True) for m, e in data.get("modules", {}).items() for s in e.get("survivors", [])]
    out += [(m, {**s, "sample": key}, True) for key, sample in data.get("samples", {}).items()
            for m, e in sample.get("modules", {}).items() for s in e.get("survivors", [])]
    return out + [(m, s, False) for m, e in data.get("partial", {}).items() for s in partial_survivors(e)]


KNOWN_SECTIONS = ("schema", "modules", "partial", "confirmations")


def _shaped(modules: dict, partial: dict, confirmations: list[dict] | None = None, old: dict | None = None) -> dict:
    """The results file's content; a top-level section this version does not know is kept as it was, so a session
    run with an older or newer copy of the tool never drops what another wrote."""
    out = {k: v for k, v in (old or {}).items() if k not in KNOWN_SECTIONS}
    out.update({"schema": SCHEMA, "modules": dict(sorted(modules.items()))})
    if partial:
        out["partial"] = dict(sorted(partial.items()))
    if confirmations:
        out["confirmations"] = sorted(confirmations, key=confirmation_key)
    return out


def score(counts: dict) -> float | None:
    """killed (with timeouts) / (killed + timeouts + survived), or None when no mutant was judged."""
    killed = counts.get("killed", 0) + counts.get("timeout", 0)
    judged = killed + counts.get("survived", 0)
    return killed / judged if judged else None


def score_without_equivalent(counts: dict, equivalent: int) -> float | None:
    """The score with the survivors judged equivalent left out of the mutants (they compute the same thing)."""
    killed = counts.get("killed", 0) + counts.get("timeout", 0)
    judged = killed + counts.get("survived", 0) - equivalent
    return killed / judged if judged > 0 else None


def confirmations_by_survivor(data: dict) -> dict[tuple, dict]:
    """The results file's confirmations by confirmation_key."""
    return {confirmation_key(c): c for c in data.get("confirmations", [])}


def judged_survivors(entry: dict, verdicts: dict[Key, Verdict],
                     confirmed: dict[tuple, dict] | None = None) -> list[dict]:
    """The module's survivors, each with `verdict`, `reason` and `test` from the verdicts file, else equivalent when
    the session decided it mechanically (`equivalent`: a change of annotations that are never evaluated), else
    verdict None. A 'killed' one carries `confirmation`: what `confirm` last found with the verdict's test (outcome,
    commit), or None when it has not checked that test on it."""
    out = []
    for s in entry.get("survivors", []):
        v = find_verdict(verdicts, entry["module"], s)
        if v is not None and v.verdict == "killed":
            c = (confirmed or {}).get((entry["module"], s["line_number"], s["column"], s["operator"],
                                       mutated_line(s.get("diff", ""))))
            held = c is not None and c["test"] == v.test and c.get("diff") == s.get("diff", "")
            s = {**s, "confirmation": c if held else None}
        if v is None and s.get("equivalent"):
            out.append({**s, "verdict": "equivalent", "reason": s["equivalent"], "test": ""})
            continue
        out.append({**s, "verdict": v.verdict if v else None, "reason": v.reason if v else "",
                    "test": v.test if v else ""})
    return out


def summary(data: dict, verdicts: dict | None = None) -> dict:
    """Per module and in all: counts, score, survivors by verdict; the modules of spec/ and delta/ never run; the
    unfinished sessions with their survivors without a verdict (counted in `unjudged` too, not in the score); how
    many survivors have a 'killed' verdict (`killed_claims`) and how many of those `confirm` found held."""
    verdicts = read_verdicts() if verdicts is None else verdicts
    rows, total = [], {k: 0 for k in OUTCOMES}
    unjudged: list[dict] = []
    confirmed = confirmations_by_survivor(data)
    claims: list[dict] = []  # every survivor with a 'killed' verdict, finished or not
    for module, entry in data.get("modules", {}).items():
        survivors = judged_survivors(entry, verdicts, confirmed)
        claims += [s for s in survivors if s["verdict"] == "killed"]
        by_verdict = {k: sum(s["verdict"] == k for s in survivors) for k in ("killed", "equivalent", "open")}
        by_verdict["none"] = sum(s["verdict"] is None for s in survivors)
        unjudged += [{"module": module, **s} for s in survivors if s["verdict"] is None]
        for k in OUTCOMES:
            total[k] += entry["counts"].get(k, 0)
        rows.append({"module": module, "counts": entry["counts"], "score": score(entry["counts"]),
                     "score_without_equivalent": score_without_equivalent(entry["counts"], by_verdict["equivalent"]),
                     "survivors": by_verdict, "commit": entry.get("commit"), "date": entry.get("date"),
                     "seconds": entry.get("seconds"), "tests": len(entry.get("tests", []))})
    not_run = [m for m in mutated_modules() if m not in data.get("modules", {})]
    partial = []
    for module, e in data.get("partial", {}).items():
        survivors = judged_survivors({"module": module, "survivors": partial_survivors(e)}, verdicts, confirmed)
        claims += [s for s in survivors if s["verdict"] == "killed"]
        unjudged += [{"module": module, **s} for s in survivors if s["verdict"] is None]
        partial.append({"module": module, "finished": len(e.get("mutants", [])), "commit": e.get("commit"),
                        "date": e.get("date"), **_judged(e.get("mutants", [])),
                        "without_verdict": sum(s["verdict"] is None for s in survivors)})
    samples = []
    for key, sample in data.get("samples", {}).items():
        sampled = []
        for module, e in sample.get("modules", {}).items():
            e = settle(e, data.get("modules", {}).get(module), data.get("partial", {}).get(module))
            survivors = judged_survivors(e, verdicts, confirmed)
            own = [s for s in survivors if not s.get("settled")]  # a settled one is listed with its own run
            claims += [s for s in own if s["verdict"] == "killed"]
            unjudged += [{"module": module, "sample": key, **s} for s in own if s["verdict"] is None]
            by_verdict = {k: sum(s["verdict"] == k for s in survivors) for k in ("killed", "equivalent", "open")}
            by_verdict["none"] = sum(s["verdict"] is None for s in survivors)
            sampled.append({**{k: v for k, v in e.items() if k != "survivors"}, "survivors": by_verdict})
        settled = sum(len(e.get("settled", {}).get("mutants", [])) for e in sampled)
        samples.append({"key": key, "seed": sample.get("seed"), "per_module": sample.get("per_module"),
                        "modules": sampled, "overall": {**bounded_overall(sampled), "settled": settled},
                        "not_drawn": [m for m in mutated_modules() if m not in sample.get("modules", {})]})
    equivalent = sum(r["survivors"]["equivalent"] for r in rows)
    return {"modules": rows, "total": total, "score": score(total), "unjudged": unjudged, "not_run": not_run,
            "partial": partial, "samples": samples, "killed_claims": len(claims),
            "killed_confirmed": sum((s["confirmation"] or {}).get("outcome") == "confirmed" for s in claims),
            "equivalent": equivalent, "score_without_equivalent": score_without_equivalent(total, equivalent)}
