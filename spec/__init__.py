"""Executable statement of the cut and repair propositions: predicates, parameters, admission, reference oracle."""

from spec.reference import post_process, reference_encode, reference_encode_with_offsets, reference_version

__all__ = ["post_process", "reference_encode", "reference_encode_with_offsets", "reference_version"]
