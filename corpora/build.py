"""Build the built-in corpus: fetch the committed sources, extract documents, cap, group, and write shards.

The same source list, fetched files and profile always give byte-identical shards and manifest: sources are
processed in id order, files in path order, documents in (lang, id) order; duplicates (same text or same
messages, anywhere in the corpus) keep their first occurrence; caps take documents in that order while they fit.
Each document lands in a group (its source's, or its dominant script's); a profile may cap each group, taking
documents round-robin over (source, language) so a small group still mixes its sources. Groups are written in
the profile's order as JSONL shards of at most `shard_bytes` (about 16 MiB), one `{"src","lang","id","text"}`
or `{"src","lang","id","messages"}` per line, named `NNNN-<group>.jsonl`, plus `manifest.json` with each
shard's sha256, documents, characters and per-script counts. Nothing in the manifest depends on the machine
or the time, so two builds can be compared by their manifests.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import shutil
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from delta_suite.corpora.extract import Doc, SkippedFile, extract_file
from delta_suite.corpora.fetch import Fetched, _locked, fetch_source
from delta_suite.corpora.scripts import dominant_group, script_counts
from delta_suite.frozen.cache import cache_root, ensure_writable
from delta_suite.frozen.digests import sha256_bytes, sha256_file
from delta_suite.frozen.errors import SuiteError

SOURCES_FILE = Path(__file__).with_name("sources.json")
MANIFEST = "manifest.json"
BUILDER = "delta-suite.corpus-build.v1"


def builder_digest() -> str:
    """SHA-256 of the build code (build, extract, scripts): a changed extractor rebuilds a cached corpus."""
    h = hashlib.sha256()
    for name in ("build.py", "extract.py", "scripts.py"):
        h.update(Path(__file__).with_name(name).read_bytes())
    return f"{BUILDER}+{h.hexdigest()[:16]}"
PROFILES = ("small", "full")


class BadSourceList(SuiteError):
    """A source list that is not valid JSON or lacks a required field."""


@dataclass
class BuildResult:
    """Where the corpus is, its manifest, and whether it was reused from an earlier build."""

    out: Path
    manifest: dict
    reused: bool = False
    skipped: list[dict] = field(default_factory=list)

    def shard_paths(self) -> list[Path]:
        return [self.out / s["name"] for s in self.manifest["shards"]]


def load_sources(path: Path | None = None) -> dict:
    """The source list, checked for the fields every source needs."""
    path = path or SOURCES_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadSourceList(f"source list {path} is not readable JSON: {exc}") from exc
    for spec in data.get("sources", []):
        missing = [k for k in ("id", "registry", "package", "extractor", "files", "group", "caps") if k not in spec]
        if missing:
            raise BadSourceList(f"source {spec.get('id', '?')} in {path} lacks {', '.join(missing)}")
    return data


def sources_digest(path: Path | None = None) -> str:
    """SHA-256 of the source list's bytes (recorded in the manifest; a changed list rebuilds)."""
    return sha256_file(path or SOURCES_FILE)


def default_out(profile: str) -> Path:
    return cache_root() / "corpus" / profile


def _matches(rel: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(rel, p) for p in patterns)


def source_files(root: Path, spec: dict) -> list[tuple[Path, str]]:
    """The source's files (regular files, not symlinks) matching `files` and not `exclude`, in path order."""
    found: dict[str, Path] = {}
    for pattern in spec["files"]:
        for path in root.glob(pattern):
            if path.is_file() and not path.is_symlink():
                found[path.relative_to(root).as_posix()] = path
    excluded = spec.get("exclude", [])
    chosen = sorted((rel, p) for rel, p in found.items() if not _matches(rel, excluded))
    limit = spec.get("options", {}).get("max_files")
    if limit:
        chosen = chosen[: int(limit)]
    return [(p, rel) for rel, p in chosen]


def extract_source(spec: dict, fetched: Fetched) -> tuple[list[Doc], list[SkippedFile]]:
    """Every document of one source in (lang, id) order, and the files that were skipped (with why)."""
    files = source_files(Path(fetched.root), spec)
    with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        results = list(pool.map(lambda pr: extract_file(spec["id"], pr[0], pr[1], spec), files))
    docs = [d for ds, _ in results for d in ds]
    skipped = [s for _, s in results if s is not None]
    for s in skipped:
        print(f"skipped {spec['id']}:{s.path}: {s.reason}", file=sys.stderr)
    return sorted(docs, key=lambda d: (d.lang, d.id)), skipped


def doc_key(doc: Doc) -> str:
    """What makes two documents duplicates: the same text, or the same messages."""
    payload = json.dumps([list(m.items()) for m in doc.messages], ensure_ascii=False) if doc.messages else doc.text
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def take_within(docs: Iterable[Doc], cap: int | None) -> list[Doc]:
    """Documents in order while they fit under `cap` characters (a document that does not fit is passed over)."""
    if cap is None:
        return list(docs)
    out, total = [], 0
    for d in docs:
        n = d.characters()
        if total + n <= cap:
            out.append(d)
            total += n
    return out


def apply_source_caps(docs: list[Doc], caps: dict) -> list[Doc]:
    """Documents over the `doc` cap passed over; the per-language cap within each language, then the
    per-source cap, both in document order."""
    doc_cap = caps.get("doc")
    if doc_cap is not None:
        docs = [d for d in docs if d.characters() <= doc_cap]
    lang_cap = caps.get("lang")
    if lang_cap is not None:
        by_lang: dict[str, list[Doc]] = defaultdict(list)
        for d in docs:
            by_lang[d.lang].append(d)
        kept = {id(d) for lang in by_lang for d in take_within(by_lang[lang], lang_cap)}
        docs = [d for d in docs if id(d) in kept]
    return take_within(docs, caps.get("source"))


def _interleave(queues: list[list[Doc]]) -> list[Doc]:
    """One from each queue in turn until all are empty."""
    out: list[Doc] = []
    depth = max((len(q) for q in queues), default=0)
    for i in range(depth):
        out.extend(q[i] for q in queues if i < len(q))
    return out


def round_robin_cap(docs: list[Doc], cap: int | None) -> list[Doc]:
    """Documents taken one per source in turn (each source cycling through its languages), while they fit
    under `cap` characters, so a capped group still mixes its sources and languages."""
    if cap is None:
        return docs
    buckets: dict[str, dict[str, list[Doc]]] = defaultdict(lambda: defaultdict(list))
    for d in docs:
        buckets[d.src][d.lang].append(d)
    per_source = [_interleave([buckets[src][lang] for lang in sorted(buckets[src])]) for src in sorted(buckets)]
    return take_within(_interleave(per_source), cap)


def shard_documents(
    group_docs: dict[str, list[Doc]], order: list[str], shard_bytes: int
) -> list[tuple[str, bytes, list[Doc]]]:
    """(name, bytes, docs) of each shard: groups in `order`, each split before it would exceed `shard_bytes`."""
    shards: list[tuple[str, bytes, list[Doc]]] = []
    for group in order:
        docs = sorted(group_docs.get(group, []), key=lambda d: (d.src, d.lang, d.id))
        lines: list[bytes] = []
        members: list[Doc] = []
        size = 0
        for d in docs:
            line = (json.dumps(d.to_json(), ensure_ascii=False) + "\n").encode("utf-8")
            if lines and size + len(line) > shard_bytes:
                shards.append((f"{len(shards):04d}-{group}.jsonl", b"".join(lines), members))
                lines, members, size = [], [], 0
            lines.append(line)
            members.append(d)
            size += len(line)
        if lines:
            shards.append((f"{len(shards):04d}-{group}.jsonl", b"".join(lines), members))
    return shards


def shard_entry(name: str, data: bytes, docs: list[Doc]) -> dict:
    """A manifest row: the shard's digest, size, documents, characters, chats and per-script counts."""
    return {
        "name": name,
        "group": name.split("-", 1)[1].removesuffix(".jsonl"),
        "sha256": sha256_bytes(data),
        "bytes": len(data),
        "documents": len(docs),
        "chats": sum(1 for d in docs if d.is_chat),
        "characters": sum(d.characters() for d in docs),
        "scripts": script_counts(t for d in docs for t in d.contents()),
    }


def _reusable(out: Path, profile: str, digest: str) -> dict | None:
    """The existing manifest if it was built from this source list and profile and every shard is intact."""
    path = out / MANIFEST
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    if (manifest.get("builder"), manifest.get("profile"), manifest.get("sources_sha256")) != (
        builder_digest(), profile, digest
    ):
        return None
    for shard in manifest["shards"]:
        p = out / shard["name"]
        if not p.is_file() or p.stat().st_size != shard["bytes"]:
            return None
    return manifest


def build_corpus(
    profile: str = "small",
    out: Path | None = None,
    *,
    sources_path: Path | None = None,
    refresh: bool = False,
    verify: bool = False,
) -> BuildResult:
    """Build (or reuse) the corpus of `profile` in `out`; returns the manifest and where the shards are."""
    sources_path = sources_path or SOURCES_FILE
    data = load_sources(sources_path)
    profiles = data.get("profiles", {})
    if profile not in profiles:
        raise BadSourceList(f"unknown profile {profile!r}; the source list has {', '.join(sorted(profiles))}")
    settings = profiles[profile]
    out = ensure_writable(Path(out) if out else default_out(profile))
    digest = sources_digest(sources_path)
    with _locked(out.parent / f".{out.name}.build.lock"):
        existing = None if refresh else _reusable(out, profile, digest)
        if existing is not None and (not verify or all(
            sha256_file(out / s["name"]) == s["sha256"] for s in existing["shards"])):
            return BuildResult(out, existing, reused=True, skipped=existing.get("skipped_files", []))
        manifest = _build(data, profile, settings, digest, sources_path.parent, refresh)
        shards = manifest.pop("_shards")
        with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.name}.") as tmp:
            staging = Path(tmp) / "corpus"
            staging.mkdir()
            for name, blob, _ in shards:
                (staging / name).write_bytes(blob)
            (staging / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            old = Path(tmp) / "old"
            out.rename(old)
            staging.rename(out)
        return BuildResult(out, manifest, reused=False, skipped=manifest["skipped_files"])


FETCH_THREADS = 8  # fetches wait on the registries' clients (apt-get, pip, npm), not on this machine's cores


def fetch_all(specs: list[dict], base: Path, refresh: bool) -> list[Fetched]:
    """`fetch_source` of every spec, several at a time (each source has its own cache folder and lock), in the
    specs' order; the first failing spec in that order raises, as fetching them one by one would."""
    with ThreadPoolExecutor(max_workers=FETCH_THREADS) as pool:
        futures = [pool.submit(fetch_source, spec, base=base, refresh=refresh) for spec in specs]
        return [f.result() for f in futures]


def _build(data: dict, profile: str, settings: dict, digest: str, base: Path, refresh: bool) -> dict:
    specs = sorted((s for s in data["sources"] if profile in s["caps"]), key=lambda s: s["id"])
    fetched: list[Fetched] = []
    skipped: list[dict] = []
    seen: set[str] = set()
    grouped: dict[str, list[Doc]] = defaultdict(list)
    for spec, got in zip(specs, fetch_all(specs, base, refresh), strict=True):
        fetched.append(got)
        docs, skips = extract_source(spec, got)
        skipped.extend({"source": spec["id"], "path": s.path, "reason": s.reason} for s in skips)
        unique = []
        for d in docs:
            key = doc_key(d)
            if key not in seen:
                seen.add(key)
                unique.append(d)
        for d in apply_source_caps(unique, spec["caps"][profile]):
            group = spec["group"]
            if group == "by-script":
                group = dominant_group(script_counts(d.contents()))
            grouped[group].append(d)
    order = settings.get("groups") or sorted(grouped)
    unknown = sorted(set(grouped) - set(order))
    order = list(order) + unknown
    cap = settings.get("group_cap")
    capped = {g: round_robin_cap(sorted(grouped[g], key=lambda d: (d.src, d.lang, d.id)), cap) for g in order}
    shards = shard_documents(capped, order, int(settings.get("shard_bytes", 16 << 20)))
    entries = [shard_entry(n, b, ds) for n, b, ds in shards]
    totals_scripts: dict[str, int] = defaultdict(int)
    for e in entries:
        for k, v in e["scripts"].items():
            totals_scripts[k] += v
    return {
        "schema": "delta-suite.corpus-manifest.v1",
        "builder": builder_digest(),
        "profile": profile,
        "sources_sha256": digest,
        "fetched": [f.record() for f in fetched],
        "drift": [f.drift for f in fetched if f.drift],
        "skipped_files": skipped,
        "groups_declared": list(settings.get("groups") or []),
        "groups_missing": [g for g in (settings.get("groups") or []) if not capped.get(g)],
        "shards": entries,
        "totals": {
            "shards": len(entries),
            "documents": sum(e["documents"] for e in entries),
            "chats": sum(e["chats"] for e in entries),
            "characters": sum(e["characters"] for e in entries),
            "bytes": sum(e["bytes"] for e in entries),
            "scripts": dict(sorted(totals_scripts.items())),
        },
        "_shards": shards,
    }


def remove_stale(out: Path) -> None:
    """Delete a built corpus folder (used by `corpora build --clean`)."""
    if out.exists():
        shutil.rmtree(out)
