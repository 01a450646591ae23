"""The affine pool of `corpora compare --workers N` (`corpora.affine_pool`).

- `_pick`: a free worker gets the largest pending unit of a tokenizer it holds, else of a tokenizer no other worker
  holds, else the largest pending unit; so two workers over several tokenizers load each tokenizer about once.
- `run_affine` on real shards: every unit's record comes back exactly once and equals the record of the same
  unit run in this process (the pool changes where units run, never what they compare); a unit whose shard
  cannot be read raises the worker's own error here, with its path.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from delta_suite.corpora.affine_pool import _pick, run_affine
from delta_suite.corpora.compare import DEFAULT_OPTIONS, Shard, Unit, run_unit, shards_of_files
from delta_suite.frozen.errors import SuiteError

from properties.conftest import ADMITTED


def _unit(tok: str, chars: int, level: int = 1) -> Unit:
    return Unit(Shard(f"/nowhere/{tok}-{chars}.jsonl", "0" * 64, chars), tok, level)


def test_pick_prefers_held_then_unheld_then_largest() -> None:
    """The three preferences, in order, each taking the largest qualifying unit (pending is largest first)."""
    pending = [_unit("a", 900), _unit("b", 800), _unit("c", 700), _unit("b", 100)]
    assert _pick(list(pending), {"b"}, {"a"}).tokenizer == "b"
    assert _pick(list(pending), {"b"}, {"a"}).shard.characters == 800
    assert _pick(list(pending), set(), {"a", "b"}).tokenizer == "c"
    assert _pick(list(pending), set(), {"a", "b", "c"}).shard.characters == 900
    left = list(pending)
    _pick(left, {"c"}, set())
    assert [u.tokenizer for u in left] == ["a", "b", "b"]


def test_two_workers_load_each_tokenizer_about_once() -> None:
    """Simulated: two workers taking turns over 3 tokenizers x 4 units hold 3 or 4 tokenizers between them (a
    plain queue gives each worker nearly every tokenizer)."""
    pending = sorted((_unit(t, 1000 - 10 * i) for t in "xyz" for i in range(4)), key=lambda u: -u.shard.characters)
    held: list[set[str]] = [set(), set()]
    turn = 0
    while pending:
        unit = _pick(pending, held[turn], held[1 - turn])
        held[turn].add(unit.tokenizer)
        turn = 1 - turn
    assert len(held[0]) + len(held[1]) <= 4


@pytest.mark.skipif(not ADMITTED, reason="no admitted tokenizer provisioned")
def test_records_come_back_once_and_equal_in_process_records(tmp_path: Path) -> None:
    """Six units on two workers: each key once; IDs compared and differences equal to running them here."""
    shards = []
    for i in range(3):
        path = tmp_path / f"{i}.jsonl"
        path.write_text("".join(json.dumps({"id": f"d{i}-{j}", "text": f"Hello {i} world {j}!\n" * (j + 1)}) + "\n"
                                for j in range(5)), encoding="utf-8")
        shards += shards_of_files([path])
    units = [Unit(s, ADMITTED[0], level) for s in shards for level in (1, 2)]
    got = dict(run_affine(units, 2, DEFAULT_OPTIONS))
    assert sorted(got) == sorted(u.key for u in units)
    for u in units:
        here = run_unit(u, DEFAULT_OPTIONS)
        assert (got[u.key]["comparisons"], got[u.key]["differences"]) == (here["comparisons"], here["differences"])
    assert sum(got[u.key]["comparisons"] for u in units) > 0


@pytest.mark.skipif(not ADMITTED, reason="no admitted tokenizer provisioned")
def test_a_worker_error_reaches_the_caller(tmp_path: Path) -> None:
    """A unit whose shard is gone: the worker's own error (the reader's refusal, a SuiteError) is raised here, with
    the path, as it would be in one process."""
    path = tmp_path / "gone.jsonl"
    path.write_text(json.dumps({"id": "x", "text": "hi"}) + "\n", encoding="utf-8")
    units = [Unit(s, ADMITTED[0], 1) for s in shards_of_files([path])]
    path.unlink()
    with pytest.raises(SuiteError) as here:
        run_unit(units[0], DEFAULT_OPTIONS)
    with pytest.raises(SuiteError) as caught:
        list(run_affine(units, 2, DEFAULT_OPTIONS))
    assert type(caught.value) is type(here.value) and "gone.jsonl" in str(caught.value)
