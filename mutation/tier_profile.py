"""A pytest plugin (`-p mutation.tier_profile`) that registers the kill tier's Hypothesis budget, `mutation-tier`.

The kill tier (mutation.mutant_tests.kill_tier) runs a mutant's quick covering tests under this budget first, with
`DELTA_HYPOTHESIS_PROFILE=mutation-tier`, which the gate's conftest loads; a plugin named with `-p` is imported before
any conftest, so the profile exists when it is loaded. A mutant the tier lets through meets the same tests under
the gate's own profile.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

PROFILE = "mutation-tier"
EXAMPLES = 10  # a quarter of the gate's `ci` budget; derandomized, so a mutant and the unmutated module see the same

settings.register_profile(
    PROFILE,
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
