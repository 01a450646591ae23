"""A sampled mutant left unfinished within its budget, settled by a run of the same module source that judged it.

A sample's first pass (`sample --budget S`) leaves unfinished the mutants whose covering tests outran S seconds,
mostly survivors: the score is a lower bound until a second pass judges them whole. When the same module has been
run whole (or a checkpointed session of it has finished that mutant), the mutant has been judged already: the same
mutant (operator, occurrence and position) of the same source (SHA-256 of the unmutated module), by all of its
covering tests. `settle` takes that outcome for the sample.

Invariant: a sampled mutant is settled only by an outcome recorded for that very mutant of that very source, the
complete run's per-mutant outcomes (`outcomes`, mutation.session.judged_outcomes) or a checkpoint's finished mutants
(mutation.carry); a run without a recorded source digest or per-mutant outcomes settles nothing, and a mutant no
such run judged stays unfinished. It is the same trust as carrying a checkpoint into a session: the mutant was judged
by the tests of the run's commit, which the entry names. What the sample drew and how many it judged in its own
session are kept apart (`settled`), so the report can say how much of its estimate rests on another run.
"""

from __future__ import annotations

from mutation.estimate import bounded_estimate

Key = tuple[str, int, int, int]  # operator, occurrence, line, column


def _complete_outcomes(entry: dict) -> dict[Key, str]:
    """A complete run's judged mutants by key: killed, timeout, survived or incompetent."""
    return {(op, int(occ), int(line), int(col)): outcome
            for outcome, keys in entry.get("outcomes", {}).items() for op, occ, line, col in keys}


def _checkpoint_outcome(m: dict) -> str:
    """A checkpoint's finished mutant's outcome, named as a complete run names it."""
    if str(m.get("worker_outcome")) == "skipped":
        return "skipped"
    if m.get("timeout"):
        return "timeout"
    return str(m.get("test_outcome") or m.get("worker_outcome"))


def _checkpoint_survivor(m: dict) -> dict:
    return {"operator": m["operator"], "line_number": m["line"], "column": m["column"], "line": m.get("source", ""),
            "diff": m.get("diff", ""), **({"equivalent": m["equivalent"]} if m.get("equivalent") else {})}


def judging_runs(sample_entry: dict, complete: dict | None, partial: dict | None) -> list[tuple[str, str, dict]]:
    """The runs that can settle the entry's unfinished mutants, as (what, commit, {key: (outcome, survivor)}): the
    complete run and the checkpoint of the module, each only when its source digest is the sample's."""
    sha = sample_entry.get("module_sha")
    runs: list[tuple[str, str, dict]] = []
    if not sha:
        return runs
    if complete and complete.get("module_sha") == sha and complete.get("outcomes"):
        survivors = {(s["operator"], s["line_number"], s["column"], s.get("diff", "")): s
                     for s in complete.get("survivors", [])}
        judged = {key: (outcome, None) for key, outcome in _complete_outcomes(complete).items()}
        runs.append(("complete run", str(complete.get("commit", "")), {"judged": judged, "survivors": survivors}))
    if partial and partial.get("module_sha") == sha:
        judged = {(m["operator"], int(m["occurrence"]), int(m["line"]), int(m["column"])):
                  (_checkpoint_outcome(m), _checkpoint_survivor(m)) for m in partial.get("mutants", [])}
        runs.append(("checkpoint", str(partial.get("commit", "")), {"judged": judged, "survivors": {}}))
    return runs


def judged_keys(data: dict, module: str, sha: str) -> set[Key]:
    """The mutants of `module` with source digest `sha` that a run recorded in the results `data` judged (its
    complete run, its checkpoint): what a sample's second pass need not run again."""
    runs = judging_runs({"module_sha": sha}, data.get("modules", {}).get(module), data.get("partial", {}).get(module))
    return {key for _, _, run in runs for key, (outcome, _) in run["judged"].items()
            if outcome in ("killed", "timeout", "survived", "incompetent")}


def settle(sample_entry: dict, complete: dict | None = None, partial: dict | None = None) -> dict:
    """The sample's module entry with each unfinished mutant that a run of the same source judged (judging_runs)
    counted by that run's outcome: killed (timeouts among them) or survived (its survivor added, marked `settled`,
    so its verdict is the one the run's survivor has), an incompetent one left out of the judged. The estimate is
    recomputed; `settled` says how many of each, by which run at which commit, and lists them. An entry with nothing
    settled is returned unchanged."""
    unfinished = sample_entry.get("unfinished_mutants", [])
    runs = judging_runs(sample_entry, complete, partial) if unfinished else []
    if not runs:
        return sample_entry
    killed, timeouts, survived, incompetent = (sample_entry["killed"], sample_entry.get("timeouts", 0),
                                               sample_entry["survived"], sample_entry.get("incompetent", 0))
    judged, left, survivors, settled = sample_entry["judged"], [], list(sample_entry.get("survivors", [])), []
    for m in unfinished:
        key = (m["operator"], int(m.get("occurrence", -1)), int(m["line_number"]), int(m["column"]))
        found = next(((what, commit, run["judged"][key], run["survivors"]) for what, commit, run in runs
                      if run["judged"].get(key, ("skipped",))[0] in ("killed", "timeout", "survived", "incompetent")),
                     None)
        if found is None:
            left.append(m)
            continue
        what, commit, (outcome, survivor), complete_survivors = found
        if outcome == "survived":
            survivor = survivor or complete_survivors.get((m["operator"], m["line_number"], m["column"], m["diff"]))
            if survivor is None:  # the run's survivors do not hold this mutant's diff: not the same mutant
                left.append(m)
                continue
            survived += 1
            survivors.append({**survivor, "settled": True})
        elif outcome == "incompetent":
            incompetent += 1
            judged -= 1
        else:
            killed += 1
            timeouts += outcome == "timeout"
        settled.append({**m, "outcome": outcome, "by": what, "commit": commit})
    if not settled:
        return sample_entry
    population = sample_entry["population"]
    return {**sample_entry, "killed": killed, "timeouts": timeouts, "survived": survived,
            "incompetent": incompetent, "judged": judged, "unfinished": len(left), "unfinished_mutants": left,
            "lower_bound": bool(left), **bounded_estimate(killed, len(left), judged, population),
            "survivors": survivors,
            "settled": {"killed": sum(s["outcome"] in ("killed", "timeout") for s in settled),
                        "survived": sum(s["outcome"] == "survived" for s in settled),
                        "incompetent": sum(s["outcome"] == "incompetent" for s in settled),
                        "by": sorted({f"{s['by']} at {s['commit']}" for s in settled}), "mutants": settled}}
