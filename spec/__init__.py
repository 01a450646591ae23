"""Executable statement of the cut and repair propositions: predicates, parameters, admission, reference oracle.

Names are re-exported lazily (PEP 562) so that importing one premise does not import every other module.
"""

from __future__ import annotations

from importlib import import_module

_EXPORTS = {
    "reference_encode": "spec.reference",
    "reference_encode_with_offsets": "spec.reference",
    "post_process": "spec.reference",
    "reference_version": "spec.reference",
    "admit": "spec.admission",
    "Admission": "spec.admission",
    "admission_of": "spec.admission",
    "CutRules": "spec.cut",
    "DEFAULT_CUT_RULES": "spec.cut",
    "is_safe_cut": "spec.cut",
    "explain_cut": "spec.cut",
    "accepted_cuts": "spec.cut",
    "reference_nfc_version": "spec.unicode_version",
    "RepairParams": "spec.repair",
    "DEFAULT_REPAIR_PARAMS": "spec.repair",
    "RepairResult": "spec.repair",
    "Splice": "spec.repair",
    "repair": "spec.repair",
    "repair_splice": "spec.repair",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'spec' has no attribute {name!r}")
