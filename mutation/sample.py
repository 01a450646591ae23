"""A stated sample of the mutants of spec/ and delta/: a seeded, stratified draw, judged like any session, and the
score it estimates with its 95% interval.

A complete run judges every mutant of a module; on 2 cores that takes days for all of them. Studies of mutation
sampling (Gopinath et al., ISSRE 2015) find a random sample of about a thousand mutants estimates a project's score
within a few points. The draw here is stratified: per module (a stratum) up to K mutants, taken round-robin over
the operator kinds present (the operator's name without its last two parts: `core/ReplaceComparisonOperator`), in
an order seeded by the seed and the module's path, so that every kind a module has is represented when K allows it
and the same seed draws the same mutants on any machine (`stratified_choice`).

What a sample says, and how it is never mixed with a complete run:
- per module: killed (timeouts included) of the mutants drawn and judged (incompetent ones left out, as in a complete
  run), the population it was drawn from (the module's mutants after the operator filter), and a 95% Wilson score
  interval (`wilson`); a module whose every mutant was drawn has its exact score (an interval of width 0);
- overall: the stratified estimate, each module's score weighted by its population, with a 95% interval from the
  stratified variance (finite-population corrected, each module's proportion taken as (k + 1) / (n + 2) so that a
  module with no survivor still contributes its uncertainty) turned into a Wilson interval through the effective
  sample size p(1 - p) / variance (Kish) (mutation.estimate).
Every sampled survivor needs a verdict in mutation/verdicts.toml like any other.

A budget (`--budget S`) makes a first pass affordable: a survivor must run every test that executes its statement,
which is most of a sample's time (hundreds of seconds each where a kill takes seconds). With a budget a mutant whose
covering tests outrun S seconds after the kill tier is "unfinished": the estimate counts it as not killed, so the
score is a lower bound while any is left (`lower_bound`; its interval runs from the lower end of that count's to the
upper end of the count with them killed, never exact), and each one is listed; running the sample again with a
larger budget or none judges exactly those mutants, the finished ones kept.
"""

from __future__ import annotations

import random
from collections import defaultdict

from mutation.estimate import bounded_estimate
from mutation.operators import operator_kind
from mutation.session import Candidate, ModuleRun, Selection


def stratified_choice(seed: int, per_module: int, module: str) -> Selection:
    """The selection of a module's sample: up to `per_module` candidates, one per operator kind in turn (kinds in
    a seeded order, each kind's candidates in a seeded order) until the count is reached or none is left."""

    def choose(candidates: list[Candidate]) -> set[str]:
        rng = random.Random(f"{seed}:{module}")
        by_kind: dict[str, list[Candidate]] = defaultdict(list)
        for c in candidates:
            by_kind[operator_kind(c.operator)].append(c)
        queues = [by_kind[k] for k in sorted(by_kind)]
        rng.shuffle(queues)
        for q in queues:
            rng.shuffle(q)
        chosen: set[str] = set()
        while len(chosen) < per_module and any(queues):
            for q in queues:
                if q and len(chosen) < per_module:
                    chosen.add(q.pop().job_id)
        return chosen

    return choose


def sample_entry(run: ModuleRun, tool: str, budget: float | None = None) -> dict:
    """A module's entry in a sample: what was drawn from which population, what the tests made of it, the estimate,
    and every survivor (shaped as a complete run's survivors, so verdicts match them the same way); with a
    `budget`, the mutants left unfinished within it (counted as not killed)."""
    full = run.entry(tool)
    population = sum(m.outcome not in ("skipped",) for m in run.mutants)
    drawn = population - run.count("unselected")
    killed = run.count("killed") + run.count("timeout")
    unfinished = run.count("unfinished")
    judged = killed + run.count("survived") + unfinished  # an unfinished mutant counts as not killed: a lower bound
    return {
        "module": run.module, "population": population, "drawn": drawn, "judged": judged, "killed": killed,
        "timeouts": run.count("timeout"), "survived": run.count("survived"),
        "incompetent": run.count("incompetent"), "pending": run.count("pending"),
        "unfinished": unfinished, "lower_bound": unfinished > 0, "budget": budget,
        "unfinished_mutants": [{"operator": m.operator, "occurrence": m.occurrence, "line_number": m.line_number,
                                "column": m.column, "line": m.line, "diff": m.diff}
                               for m in run.mutants if m.outcome == "unfinished"],
        **bounded_estimate(killed, unfinished, judged, population),
        "kill_tier": full["kill_tier"], "seconds": run.seconds, "commit": run.commit, "date": full["date"],
        "tool": tool, "runner": run.runner, "module_sha": run.module_sha, "survivors": full["survivors"],
    }
