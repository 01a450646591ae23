"""The registry carries all eleven frozen tokenizers, with unique names, aliases and digests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from delta_suite.frozen.errors import UnknownTokenizer
from delta_suite.frozen.registry import lookup, names, rows

ROSTER = Path(__file__).resolve().parents[2] / "shared" / "tokenizers" / "roster.json"
ALIASES = {
    "qwen3": "qwen3_8b", "llama3.1": "llama_3_1_8b", "gpt-oss": "gpt_oss_120b", "deepseek-v3": "deepseek_v3",
    "deepseek-v4": "deepseek_v4_flash", "qwen3.5": "qwen3_5_08b", "glm5.2": "glm_5_2", "minimax-m3": "minimax_m3",
    "ministral3": "ministral_3_8b", "nemotron3-nano": "nemotron_3_nano_4b", "olmo3": "olmo_3_7b",
}


def test_eleven_rows_with_unique_identities() -> None:
    assert len(rows()) == 11
    assert len(set(names())) == 11
    assert len({r.alias for r in rows()}) == 11
    assert len({r.files["tokenizer.json"].sha256 for r in rows()}) == 11
    for r in rows():
        assert len(r.revision) == 40 and all(c in "0123456789abcdef" for c in r.revision)
        assert set(r.files) == {"tokenizer.json", "tokenizer_config.json"}
        assert r.normalizer in ("nfc", "empty_sequence", "none")
        assert r.margin >= 8 and r.bound > 0


@pytest.mark.parametrize(("alias", "name"), sorted(ALIASES.items()))
def test_lookup_by_alias_and_name(alias: str, name: str) -> None:
    assert lookup(alias).name == name
    assert lookup(name).name == name
    assert lookup(alias.upper()).name == name


def test_unknown_name_is_a_clear_error() -> None:
    with pytest.raises(UnknownTokenizer, match="unknown tokenizer 'qwen9'.*qwen3_8b"):
        lookup("qwen9")


@pytest.mark.skipif(not ROSTER.is_file(), reason="no shared roster on this machine to cross-check against")
def test_registry_matches_the_shared_roster() -> None:
    roster = {r["name"]: r for r in json.loads(ROSTER.read_text())["roster"]}
    assert set(roster) == set(names())
    for row in rows():
        src = roster[row.name]
        assert (row.alias, row.repo_id, row.revision) == (src["alias"], src["repo_id"], src["revision"])
        assert (row.normalizer, row.margin, row.bound) == (src["normalizer"], src["margin"], src["bound"])
        for fname, digest in row.files.items():
            assert (digest.sha256, digest.size) == (src["files"][fname]["sha256"], src["files"][fname]["size"])


def test_sibling_is_registered_only_where_the_mirror_holds_one() -> None:
    with_sibling_tokenizer = [r.name for r in rows() if "tokenizer.json" in r.known_siblings]
    assert with_sibling_tokenizer == ["llama_3_1_8b"]
    llama = lookup("llama3.1")
    assert llama.known_siblings["tokenizer.json"].sha256 != llama.files["tokenizer.json"].sha256
