"""Every control describes itself: `fuzz --list-controls` prints, per control, its path, the provisioned tokenizers it
applies to and a one-line description of what it breaks, kept with the control (`Control.breaks`,
`fuzz.checker.INTERNAL_BREAKS`).

Plants: `Control.breaks` of `cut.nfc_window_is_pair` set to "" and to its own name -> test_every_control_describes
fails naming it (so does the former harness text "planted fault: swap ids": two words beyond the name);
`_applies_cell` returning "all N provisioned" always -> test_listing_says_where_each_control_applies fails.
"""

from __future__ import annotations

import json
import re

import pytest
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.fuzz.checker import control_applies, control_breaks, control_names
from delta_suite.fuzz.cli import main
from delta_suite.fuzz.control_list import control_lines, render_json, render_table

from properties.conftest import provisioned


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def test_every_control_describes() -> None:
    """Each control's description is a sentence of its own: not empty, not its name, and not just its name's words
    (e.g. "planted fault: swap ids" for `harness.swap_ids` says nothing the name did not)."""
    bad = []
    for name in control_names():
        text = control_breaks(name).strip()
        new_words = set(_words(text)) - set(_words(name))
        if not text or text == name or len(new_words) < 3:
            bad.append(f"{name}: {text!r}")
    assert not bad, "controls without a description of what they break: " + "; ".join(bad)


def test_listing_says_where_each_control_applies() -> None:
    """The listing has one line per control with its description, and names exactly the tokenizers whose
    `applies(tok)` holds ("all N provisioned" when every one does)."""
    names = provisioned()
    if not names:
        pytest.skip("no tokenizer provisioned")
    toks = [load_tokenizer(n) for n in names]
    lines = control_lines(toks)
    assert [ln.name for ln in lines] == control_names()
    table = render_table(lines, names).splitlines()
    assert table[0].split()[:2] == ["control", "path"] and len(table) == len(lines) + 1
    for ln, row in zip(lines, table[1:], strict=True):
        want = [t.name for t in toks if control_applies(ln.name, t)]
        assert ln.applies_to == want
        assert row.startswith(ln.name + " ") and row.endswith(ln.breaks)
        cell = f"all {len(names)} provisioned" if len(want) == len(names) else ", ".join(want) or "none of the"
        assert cell in row, (ln.name, row)
    parsed = json.loads(render_json(lines, names))
    assert parsed["provisioned"] == names
    assert {c["name"]: c["breaks"] for c in parsed["controls"]} == {ln.name: ln.breaks for ln in lines}


def test_list_controls_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    """`fuzz --list-controls --json` exits 0 with every control, each with a description."""
    assert main(["--list-controls", "--json"]) == 0
    parsed = json.loads(capsys.readouterr().out)
    assert [c["name"] for c in parsed["controls"]] == control_names()
    assert all(c["breaks"] for c in parsed["controls"])
