"""What every check shares, at the bottom of the checks floor: the versioned seam battery (`checks.battery`),
the differential per-case checks against the reference (`checks.differential`), and the reference-classified
character palette they draw from (`checks.palette`). Campaigns (`fuzz`), controls and their kill matrix
(`controls`), corpus comparisons (`corpora`) and the benchmarks build on it.
"""
