"""The engine masks' probe itself (spec.engine_classes.probe_membership), which the gate otherwise runs only when a
mask's disk cache misses: on given code points it probes those only, and the array of all scalar values it shares
between probes is read-only and holds every scalar value, U+E000 (the first after the surrogates) included."""

from __future__ import annotations

from delta_suite.spec import engine_classes

DIGITS = r"\p{Nd}"
SOME = [0x30, 0x39, 0x41, 0x661, 0x1F600]  # '0', '9', 'A', ARABIC-INDIC DIGIT ONE, an emoji


def test_a_probe_of_given_code_points_marks_members_among_them_only() -> None:
    """The mask of a probe on some code points has its members among them only, and agrees there with the mask of
    every scalar value (the cached engine_mask): the given list is what is probed."""
    part = engine_classes.probe_membership(DIGITS, SOME)
    whole = engine_classes.engine_mask(DIGITS)
    assert len(part) == len(whole) == engine_classes.CODE_SPACE
    assert [part[cp] for cp in SOME] == [1, 1, 0, 1, 0] == [whole[cp] for cp in SOME]
    assert sum(part) == 3


def test_the_shared_array_of_all_scalar_values_is_read_only() -> None:
    """Every probe of the whole code space reads one array built once per process: a caller cannot change what the
    later probes see."""
    cps, text = engine_classes._all_scalars()
    assert not cps.flags.writeable
    assert len(cps) == len(text) == 0x110000 - 0x800  # every code point but the 2,048 surrogates, U+D800..U+DFFF
    assert (cps[0xD7FF], cps[0xD800]) == (0xD7FF, 0xE000)  # the last scalar before them, then the first after
    assert text[0xD800] == "\ue000"
