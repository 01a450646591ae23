"""`fuzz --list-controls`: each control with the path it breaks, the tokenizers it applies to and what it breaks.

The descriptions are the controls' own (`controls.registry.Control.breaks`, `fuzz.checker.INTERNAL_BREAKS`); this
module only lays them out, as aligned columns or (`--json`) one JSON list.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from delta_suite.frozen.errors import SuiteError
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer
from delta_suite.frozen.registry import rows
from delta_suite.fuzz.checker import INTERNAL_CONTROLS, control_applies, control_breaks, control_names

from delta_suite import controls

HEADER = ("control", "path", "applies to", "breaks")


@dataclass(frozen=True)
class ControlLine:
    """One control as listed: `applies_to` are the names of the given tokenizers where its broken condition exists
    (`applies(tok)`); `campaign` says whether `fuzz --control NAME` can run it (harness controls are the kill
    matrix's only)."""

    name: str
    path: str
    campaign: bool
    breaks: str
    applies_to: list[str]


def loadable_tokenizers() -> list[FrozenTokenizer]:
    """The registry tokenizers provisioned here that load, in registry order (a missing or corrupt one is left out:
    listing the controls never fails on the tokenizers; `corpora tokenizers status` reports them)."""
    out = []
    for row in rows():
        try:
            out.append(load_tokenizer(row.name))
        except SuiteError:
            continue
    return out


def _path(name: str) -> str:
    return INTERNAL_CONTROLS[name] if name in INTERNAL_CONTROLS else controls.get(name).path


def control_lines(tokenizers: Sequence[FrozenTokenizer]) -> list[ControlLine]:
    """Every control a campaign or the kill matrix knows, in registry order (the internal ones first)."""
    out = []
    for name in control_names():
        path = _path(name)
        out.append(ControlLine(name=name, path=path, campaign=path in ("cut", "repair"), breaks=control_breaks(name),
                               applies_to=[t.name for t in tokenizers if control_applies(name, t)]))
    return out


def _applies_cell(line: ControlLine, provisioned: Sequence[str]) -> str:
    if not provisioned:
        return "(no tokenizer provisioned)"
    if len(line.applies_to) == len(provisioned):
        return f"all {len(provisioned)} provisioned"
    if not line.applies_to:
        return f"none of the {len(provisioned)} provisioned"
    return ", ".join(line.applies_to)


def render_table(lines: Sequence[ControlLine], provisioned: Sequence[str]) -> str:
    """Aligned columns, one control a line under a header: name, path (harness: "harness, kill matrix only"),
    the tokenizers it applies to among `provisioned` ("all N provisioned" when every one), what it breaks."""
    cells = [HEADER] + [
        (ln.name, ln.path if ln.campaign else f"{ln.path} (kill matrix only)", _applies_cell(ln, provisioned),
         ln.breaks)
        for ln in lines
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(HEADER) - 1)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row[:-1], widths, strict=True)) + "  " + row[-1]
                     for row in cells)


def render_json(lines: Sequence[ControlLine], provisioned: Sequence[str]) -> str:
    """One JSON object: the provisioned tokenizers the applicability was judged on, and every control."""
    return json.dumps({"provisioned": list(provisioned), "controls": [asdict(ln) for ln in lines]}, indent=1)
