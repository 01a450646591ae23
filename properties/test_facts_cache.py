"""The loader's per-digest facts cache (`frozen.facts_cache`): a cached load is the uncached load, field for field,
and an entry is read only under its own file digest, library version and computing code."""

from __future__ import annotations

import json
from pathlib import Path

import delta_suite.frozen.facts_cache as facts_cache
import pytest
from delta_suite.frozen.cache import tokenizers_dir
from delta_suite.frozen.digests import sha256_bytes
from delta_suite.frozen.errors import CorruptTokenizerFile
from delta_suite.frozen.loader import build, file_facts, load_tokenizer
from delta_suite.frozen.registry import TOKENIZER_FILE, lookup

from properties.conftest import PROVISIONED
from properties.synthetic import base_config, write


@pytest.mark.parametrize("name", PROVISIONED or [pytest.param(None, marks=pytest.mark.skip(reason="none provisioned"))])
def test_cached_facts_are_the_computed_facts(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            ledger) -> None:
    """For each provisioned tokenizer.json: the facts the cache writes and then reads back are the facts computed
    from the file (what the loader would read with the cache off), and the loaded tokenizer is built from them."""
    data = (tokenizers_dir() / lookup(name).name / TOKENIZER_FILE).read_bytes()
    digest = sha256_bytes(data)
    computed = file_facts(data, name)
    loaded = load_tokenizer(name).admission_inputs.pre_tokenizer
    monkeypatch.setenv("DELTA_HOME", str(tmp_path))
    writing = facts_cache.tokenizer_facts(data, digest, lambda d: file_facts(d, name))
    reading = facts_cache.tokenizer_facts(data, digest, lambda d: pytest.fail("read back, not computed"))
    entries = list((tmp_path / facts_cache.FOLDER).glob("*.json"))
    same = (computed == writing) + (computed == reading)
    ledger.record("harness", "loader.facts_cache", None, comparisons=2, differences=2 - same, unit="facts",
                  details={"tokenizer": name, "entries": len(entries)}, oracle="self")
    assert len(entries) == 1
    assert computed == writing == reading
    assert loaded == computed["sections"].get("pre_tokenizer")


def test_an_entry_is_read_only_under_its_digest_version_and_code(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted entry with other facts is returned only under its own key: another digest, another `tokenizers`
    version or another computing code each miss it and compute; an entry whose recorded digest is not the file's,
    or that is not JSON, is computed again (and rewritten)."""
    monkeypatch.setenv("DELTA_HOME", str(tmp_path))
    calls: list[bytes] = []

    def compute(data: bytes) -> dict:
        calls.append(data)
        return {"computed": True}

    digest = "ab" * 32
    path = facts_cache.facts_path(digest)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"sha256": digest, "facts": {"planted": True}}))
    assert facts_cache.tokenizer_facts(b"x", digest, compute) == {"planted": True} and not calls
    assert facts_cache.tokenizer_facts(b"x", "cd" * 32, compute) == {"computed": True}
    monkeypatch.setattr(facts_cache.tokenizers, "__version__", "0.0.0-other")
    assert facts_cache.tokenizer_facts(b"x", digest, compute) == {"computed": True}
    monkeypatch.undo()
    monkeypatch.setenv("DELTA_HOME", str(tmp_path))
    monkeypatch.setattr(facts_cache, "code_digest", lambda: "another computation")
    assert facts_cache.tokenizer_facts(b"x", digest, compute) == {"computed": True}
    monkeypatch.undo()
    monkeypatch.setenv("DELTA_HOME", str(tmp_path))
    for damage in ('{"sha256": "' + "ef" * 32 + '", "facts": {"planted": true}}', "not json"):
        path.write_text(damage)
        assert facts_cache.tokenizer_facts(b"x", digest, compute) == {"computed": True}
        assert json.loads(path.read_text())["facts"] == {"computed": True}
    assert len(calls) == 5


def test_a_refused_file_leaves_no_entry_and_a_read_only_cache_still_loads(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A tokenizer.json without a model section is refused as before and nothing is saved; with the cache folder not
    writable the load still succeeds (only the saving is lost) and leaves no temporary file."""
    monkeypatch.setenv("DELTA_HOME", str(tmp_path / "home"))
    with pytest.raises(CorruptTokenizerFile, match="no model section"):
        facts_cache.tokenizer_facts(b'{"normalizer": null}', "00" * 32, lambda d: file_facts(d, "bad.json"))
    assert not (tmp_path / "home" / facts_cache.FOLDER).exists() or not any(
        (tmp_path / "home" / facts_cache.FOLDER).iterdir())
    path, _ = write(tmp_path, base_config())
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "home" / facts_cache.FOLDER).write_text("a file where the folder should be")
    tok = build("synthetic", path.read_bytes(), None, provenance="file")
    assert tok.bound > 0 and tok.margin >= 8
