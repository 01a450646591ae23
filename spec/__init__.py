"""Executable statement of the cut and repair propositions: predicates, parameters, admission, reference oracle.

Names are re-exported lazily (PEP 562) so that importing one premise does not import every other module.
"""

from __future__ import annotations

from importlib import import_module

_EXPORTS = {
    "reference_encode": "delta_suite.spec.reference",
    "reference_encode_with_offsets": "delta_suite.spec.reference",
    "post_process": "delta_suite.spec.reference",
    "reference_version": "delta_suite.spec.reference",
    "admit": "delta_suite.spec.admission",
    "Admission": "delta_suite.spec.admission",
    "admission_of": "delta_suite.spec.admission",
    "CutRules": "delta_suite.spec.cut",
    "DEFAULT_CUT_RULES": "delta_suite.spec.cut",
    "is_safe_cut": "delta_suite.spec.cut",
    "explain_cut": "delta_suite.spec.cut",
    "accepted_cuts": "delta_suite.spec.cut",
    "reference_nfc_version": "delta_suite.spec.unicode_version",
    "RepairParams": "delta_suite.spec.repair",
    "DEFAULT_REPAIR_PARAMS": "delta_suite.spec.repair",
    "RepairResult": "delta_suite.spec.repair",
    "Splice": "delta_suite.spec.repair",
    "repair": "delta_suite.spec.repair",
    "repair_splice": "delta_suite.spec.repair",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'spec' has no attribute {name!r}")
