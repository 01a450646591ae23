"""The score a sample of mutants estimates (mutation.sample), with its 95% interval.

Per module (a stratum): killed / judged with a Wilson score interval, exact (width 0) when every mutant of the
module was judged. Overall: the stratified estimate, each module's score weighted by its population, with a 95%
interval from the stratified variance (finite-population corrected; each module's proportion taken as
(k + 1) / (n + 2), so that a module with no survivor still contributes its uncertainty) turned into a Wilson
interval through the effective sample size p(1 - p) / variance (Kish). Pure arithmetic: the report reads it.
"""

from __future__ import annotations

import math

Z95 = 1.959963984540054  # the normal quantile of a two-sided 95% interval


def wilson(killed: int, judged: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion killed / judged (judged > 0)."""
    return wilson_interval(killed / judged, judged)


def wilson_interval(p: float, n: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval around a proportion p observed on n trials (n may be an effective size)."""
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def module_estimate(killed: int, judged: int, population: int) -> dict:
    """A module's sampled score: killed / judged with its 95% interval; exact when every mutant was judged."""
    if judged == 0:
        return {"score": None, "interval": None, "exact": False}
    p = killed / judged
    if judged >= population:
        return {"score": p, "interval": [p, p], "exact": True}
    lo, hi = wilson(killed, judged)
    return {"score": p, "interval": [lo, hi], "exact": False}


def bounded_estimate(killed: int, unfinished: int, judged: int, population: int) -> dict:
    """A module's sampled score counting its `unfinished` mutants (among `judged`) as not killed; with any, never
    exact, and the interval from the lower end of that count's to the upper end of the count with them killed."""
    low = module_estimate(killed, judged, population)
    if not unfinished:
        return low
    high = module_estimate(killed + unfinished, judged, population)
    return {"score": low["score"], "interval": [low["interval"][0], high["interval"][1]], "exact": False}


def overall(strata: list[dict]) -> dict:
    """The stratified estimate over the modules' entries (each with `killed`, `judged`, `population`): the score
    weighted by population, its 95% interval (see the module docstring), the mutants judged and the population."""
    strata = [s for s in strata if s["judged"] > 0]
    population = sum(s["population"] for s in strata)
    judged = sum(s["judged"] for s in strata)
    if not strata or population == 0:
        return {"score": None, "interval": None, "judged": judged, "population": population}
    p = sum(s["population"] * s["killed"] / s["judged"] for s in strata) / population
    variance = 0.0
    for s in strata:
        n, big_n, w = s["judged"], s["population"], s["population"] / population
        q = (s["killed"] + 1) / (n + 2)
        variance += w * w * q * (1 - q) / n * max(0.0, 1 - n / big_n)  # an exhaustive stratum adds no error
    if variance == 0.0:
        return {"score": p, "interval": [p, p], "judged": judged, "population": population}
    # never more than the mutants judged (the finite-population correction could claim more): the wider interval
    effective = min(judged, max(1.0, p * (1 - p) / variance)) if 0 < p < 1 else judged
    lo, hi = wilson_interval(p, effective)
    return {"score": p, "interval": [lo, hi], "judged": judged, "population": population,
            "effective_sample": round(effective, 1)}
