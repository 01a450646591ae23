"""Built-in sample texts: short, real-looking text in several scripts, with the seams the suite cares about.

They are defined on the spec floor (`spec.vacuity.PROBE_TEXTS`), where admission probes a file with them."""

from __future__ import annotations

from delta_suite.spec.vacuity import PROBE_TEXTS

SAMPLES: tuple[str, ...] = PROBE_TEXTS  # one list: admission's vacuity probe reads the same texts (spec/vacuity.py)
