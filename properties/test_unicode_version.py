"""The evidence behind the reference NFC's Unicode version (spec/unicode_version.py): a probe counts as left
inert only when the reference changes it under neither NFC nor NFD; the version read from the evidence is the one
up to which every version's additions agree, its own included, and after which every addition is left inert."""

from __future__ import annotations

import pytest
from delta_suite.spec import unicode_version
from delta_suite.spec.unicode_version import UnicodeVersionUnclear, _inert, reference_nfc_version


def test_a_probe_changed_by_one_form_only_is_not_inert() -> None:
    """"e" + U+0301 is changed by NFC only, U+00E9 by NFD only: neither is inert; "a" is changed by neither."""
    assert _inert("a")
    assert not _inert("e\u0301")  # NFC composes it, NFD leaves it
    assert not _inert("\u00e9")  # NFD decomposes it, NFC leaves it


def test_the_version_needs_agreement_up_to_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """Evidence per version (probes, agreeing, inert): 15.1 is the answer when 15.0 and 15.1 agree and 16.0 is
    inert; when 15.1's own additions disagree, no version is (UnicodeVersionUnclear), not 15.1."""
    evidence = {(15, 0): (3, 3, 0), (15, 1): (2, 2, 0), (16, 0): (2, 0, 2)}
    monkeypatch.setattr(unicode_version, "version_evidence", lambda: evidence)
    reference_nfc_version.cache_clear()
    try:
        assert reference_nfc_version() == (15, 1)
        reference_nfc_version.cache_clear()
        evidence[(15, 1)] = (2, 1, 0)
        with pytest.raises(UnicodeVersionUnclear):
            reference_nfc_version()
    finally:
        reference_nfc_version.cache_clear()  # the next caller computes the real evidence's version again
