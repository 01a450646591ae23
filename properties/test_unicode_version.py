"""The evidence behind the reference NFC's Unicode version (spec/unicode_version.py): a probe counts as left
inert only when the reference changes it under neither NFC nor NFD."""

from __future__ import annotations

from spec.unicode_version import _inert


def test_a_probe_changed_by_one_form_only_is_not_inert() -> None:
    """"e" + U+0301 is changed by NFC only, U+00E9 by NFD only: neither is inert; "a" is changed by neither."""
    assert _inert("a")
    assert not _inert("e\u0301")  # NFC composes it, NFD leaves it
    assert not _inert("\u00e9")  # NFD decomposes it, NFC leaves it
