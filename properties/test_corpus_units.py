"""The small built-in corpus compared under every provisioned tokenizer: one pytest item per (shard, tokenizer, level).

The corpus is built once per machine (fetched from the package registries on first use, then reused from
`$DELTA_HOME/corpus/small`; a file lock keeps parallel xdist workers from building twice). Items are ordered
largest first, so `pytest -n 64` hands out the long units before the short ones. Each item runs its unit in
full, asserts zero differences over a non-zero number of comparisons, and records what it compared.
"""

from __future__ import annotations

import json

import pytest

from corpora.build import build_corpus, default_out, load_sources
from corpora.compare import CHUNK_COUNTS, Unit, run_unit, shards_of_manifest
from corpora.compare_cli import select_tokenizers
from frozen.loader import load_tokenizer
from frozen.registry import names
from properties.conftest import PROVISIONED

SOURCES = load_sources()
GROUPS = SOURCES["profiles"]["small"]["groups"]
LEVELS = {1: "encoder", 2: "chunked", 3: "repair"}


def _estimated_characters() -> dict[str, int]:
    """Characters per group from a cached manifest, else the profile's group cap (ordering only)."""
    path = default_out("small") / "manifest.json"
    try:
        return {s["group"]: s["characters"] for s in json.loads(path.read_text())["shards"]}
    except (OSError, ValueError, KeyError):
        return {g: SOURCES["profiles"]["small"]["group_cap"] for g in GROUPS}


def _items() -> list:
    size = _estimated_characters()
    cost = {1: 2, 2: 1 + len(CHUNK_COUNTS), 3: 12}
    items = [(g, t, lv) for g in GROUPS for t in PROVISIONED for lv in LEVELS if lv != 3 or g == "chat"]
    items.sort(key=lambda i: (-size.get(i[0], 0) * cost[i[2]], i))
    return [pytest.param(g, t, lv, id=f"{g}-{t}-L{lv}") for g, t, lv in items]


@pytest.fixture(scope="session")
def small_corpus():
    """The small profile, built or reused (the fetch happens once per machine)."""
    return build_corpus("small")


def test_small_corpus_has_one_shard_per_group(small_corpus) -> None:
    """The small profile has exactly one non-empty shard for every declared script group, and every script the
    brief names occurs in it."""
    groups = [s["group"] for s in small_corpus.manifest["shards"]]
    assert groups == GROUPS
    assert all(s["documents"] > 0 for s in small_corpus.manifest["shards"])
    scripts = small_corpus.manifest["totals"]["scripts"]
    for script in ("Latin", "Cyrillic", "Greek", "Arabic", "Hebrew", "Devanagari", "Thai", "Han", "Kana", "Hangul"):
        assert scripts.get(script, 0) > 1000, script
    assert scripts.get("Inherited", 0) > 0  # combining marks (Arabic harakat among them)


def test_unprovisioned_tokenizers_are_reported(ledger) -> None:
    """`--tokenizer all` lists every registry row either as compared or as not provisioned, never dropped."""
    ready, missing = select_tokenizers("all")
    assert sorted(ready + missing) == sorted(names())
    assert set(ready) == set(PROVISIONED)
    ledger.record("harness", "corpus.tokenizer_selection", comparisons=len(ready) + len(missing),
                  differences=0, unit="tokenizers", details={"not_provisioned": missing})


@pytest.mark.parametrize(("group", "tokenizer", "level"), _items())
def test_corpus_unit(small_corpus, group: str, tokenizer: str, level: int, ledger) -> None:
    """Level 1: the subject's whole encode equals the reference on every document; level 2: every document of
    512-400,000 characters encoded at the planner's cuts (2, 4, 8 chunks) equals its whole reference encode;
    level 3: every turn of every chat replayed through a Session equals the reference encode of the transcript."""
    shards = [s for s in shards_of_manifest(small_corpus.out) if s.name.split("-", 1)[1] == f"{group}.jsonl"]
    assert len(shards) == 1, f"group {group}: expected one shard, found {len(shards)}"
    record = run_unit(Unit(shards[0], tokenizer, level))
    d = record["details"]
    ledger.record(LEVELS[level], record["check"], load_tokenizer(tokenizer), comparisons=record["comparisons"],
                  differences=record["differences"], fast_path=record["fast_path"], fallbacks=record["fallbacks"],
                  unit=record["unit"], details={k: d[k] for k in ("unit", "shard_sha256", "characters",
                                                                  "differing_documents", "fast_path_share",
                                                                  "wall_seconds", "subject_chars_per_second",
                                                                  "reference_chars_per_second")})
    assert record["comparisons"] > 0, f"{group} has nothing to compare at level {level}"
    assert record["differences"] == 0, d["differing_documents"]


