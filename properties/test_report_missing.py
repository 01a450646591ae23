"""The report's "what this report does not cover": which registry rows are not provisioned, and why.

Eight of the eleven rows have a public source (a package that ships the files, or a rebuild recipe); the other
three (qwen3.5, glm5.2, minimax-m3) only the model hub has, and the report says so. A row with a public source that
is not provisioned is listed apart: there pulling it is the remedy.
"""

from __future__ import annotations

from dataclasses import replace

from delta_suite.frozen.provision import missing_reason
from delta_suite.frozen.registry import rows
from delta_suite.reports.glance import missing
from delta_suite.reports.table3 import build_table3

HUB_ONLY = {"qwen3_5_08b", "glm_5_2", "minimax_m3"}


def _provisioned(names) -> list[dict]:
    return [{"name": n, "status": "provisioned (exact)", "sha256": "f" * 64} for n in names]


def test_eight_rows_have_a_public_source_and_three_are_hub_only() -> None:
    assert {r.name for r in rows() if r.hub_only} == HUB_ONLY
    assert sum(not r.hub_only for r in rows()) == 8
    for r in rows():
        assert ("only the model hub has it" in missing_reason(r)) == (r.name in HUB_ONLY)
    nemotron = next(r for r in rows() if r.name == "nemotron_3_nano_4b")
    assert not nemotron.hub_only and replace(nemotron, recipe=None).hub_only


def test_missing_names_the_hub_only_rows_as_such() -> None:
    """With the eight public rows provisioned, the one "not provisioned" line names the three hub-only rows and
    says only the hub has them; an unprovisioned public row (nemotron here) is listed on a line of its own."""
    public = [r.name for r in rows() if r.name not in HUB_ONLY]
    lines = [m for m in missing(build_table3([], provisioning=_provisioned(public))) if "not provisioned" in m]
    assert lines == ["not provisioned (not checked at all), hub only: no package ships them and no recipe rebuilds "
                     "them, only the model hub has them: glm5.2, minimax-m3, qwen3.5"]
    seven = [n for n in public if n != "nemotron_3_nano_4b"]
    lines = [m for m in missing(build_table3([], provisioning=_provisioned(seven))) if "not provisioned" in m]
    assert len(lines) == 2 and lines[0].endswith("glm5.2, minimax-m3, qwen3.5")
    assert lines[1] == "not provisioned (not checked at all): nemotron3-nano"
