"""The measured outcome of the fastokens whitespace replay per release and tokenizer: what the sweep must find again.

Measured 2026-11-30 (subjects/NOTES.md) by replaying `fastokens_repro.whitespace_seam_turns()` through one session
of each release, reference `tokenizers` 0.23.3: "diverges" = at least one turn's IDs differ from the reference,
"matches" = every turn equals it. A release newer than this table has no expectation (reported as such, never
failed or passed on a guess); a release in the table that cannot be installed here is "not installed".
"""

from __future__ import annotations

from delta_suite.subjects.envs import version_key

DIVERGES, MATCHES = "diverges", "matches"
NOT_INSTALLED = "not installed"
NO_EXPECTATION = "no expectation recorded"

KNOWN_RELEASES = ("0.1.1", "0.1.2", "0.2.0", "0.3.0", "0.3.1", "0.3.2", "0.3.3", "0.3.4", "0.3.5")
NEWEST_KNOWN = "0.3.5"  # the newest release when the table was measured
SGLANG_PINNED = "0.1.2"  # the version SGLang v0.5.19 pins
FIRST_FIXED = "0.3.3"  # the first release whose replay matches under qwen3_8b and llama_3_1_8b

_COLUMNS = KNOWN_RELEASES
_MEASURED = {  # one letter per release, in the order of KNOWN_RELEASES: D diverges, M matches
    #                0.1.1 0.1.2 0.2.0 0.3.0 0.3.1 0.3.2 0.3.3 0.3.4 0.3.5
    "qwen3_8b": "D D D D D D M M M",
    "llama_3_1_8b": "D D D D D D M M M",
    "gpt_oss_120b": "D D D M M M M M M",
    "deepseek_v3": "M M M M M M M M M",
}

WHITESPACE_REPLAY: dict[str, dict[str, str]] = {
    tok: dict(zip(_COLUMNS, (DIVERGES if c == "D" else MATCHES for c in row.split()), strict=True))
    for tok, row in _MEASURED.items()
}


def expected_outcome(tokenizer: str, version: str) -> str | None:
    """The recorded outcome of the replay for (tokenizer, version), or None when the table has none."""
    return WHITESPACE_REPLAY.get(tokenizer, {}).get(version)


def verdict(tokenizer: str, version: str, status: str) -> str:
    """How a sweep row compares with the table: "as expected", "unexpected", NO_EXPECTATION or NOT_INSTALLED.

    The proposition for a release in the table: the outcome measured now equals the recorded one.
    """
    if status == NOT_INSTALLED:
        return NOT_INSTALLED
    want = expected_outcome(tokenizer, version)
    if want is None:
        return NO_EXPECTATION
    return "as expected" if status == want else "unexpected"


def versions_to_sweep(listed: list[str]) -> list[str]:
    """Every release of the table plus every release the package index lists (`listed`), newest first."""
    return sorted(set(KNOWN_RELEASES) | set(listed), key=version_key, reverse=True)
