"""Load a frozen tokenizer: re-hash its files, build the reference object, and derive what the propositions need.

The loaded configuration is tokenizer.json plus the added tokens declared only in tokenizer_config.json
(`added_tokens_decoder`), which is how Qwen3.5 reaches 33 special-token strings. Tokens declared only in the
config are added to the reference object with their flags, and their assigned IDs must equal the declared ones.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from delta_suite.frozen.cache import PROVENANCE, tokenizers_dir
from delta_suite.frozen.digests import sha256_bytes
from delta_suite.frozen.errors import CorruptTokenizerFile, InstalledFileChanged, NotProvisioned, SuiteError
from delta_suite.frozen.facts_cache import tokenizer_facts
from delta_suite.frozen.registry import CONFIG_FILE, TOKENIZER_FILE, RegistryRow, lookup, rows
from delta_suite.frozen.user_table import USER_FILE, UserEntry, user_entry
from delta_suite.frozen.vocabulary_facts import vocabulary_facts
from tokenizers import AddedToken, Tokenizer

MIN_MARGIN = 8


class ParameterMismatch(SuiteError):
    """A margin or bound computed from the files that differs from the registry's value."""


def normalizer_kind(normalizer: dict | None) -> str:
    """"none" (null), "empty_sequence", "nfc", or a lower-case description of anything else."""
    if normalizer is None:
        return "none"
    kind = str(normalizer.get("type", "unknown"))
    if kind == "Sequence":
        inner = normalizer.get("normalizers") or []
        if not inner:
            return "empty_sequence"
        return "sequence[" + ",".join(normalizer_kind(n) for n in inner) + "]"
    return kind.lower()


@dataclass(frozen=True)
class AdmissionInputs:
    """What the admission decision (`spec.admission.admission_of`) reads from a loaded configuration: the model's
    type and dropout, the normalizer and pre-tokenizer sections of tokenizer.json as they are, and every added
    token of the loaded configuration (tokenizer.json's and the config-only ones) with its flags."""
    model_type: str | None
    dropout: float | None
    normalizer: dict | None
    pre_tokenizer: dict | None
    added_tokens: tuple[dict, ...]
    byte_fallback: bool | None = None
    model: dict = field(default_factory=dict)  # the model's MODEL_KEYS as the file has them
    vocabulary: dict | None = None  # `frozen.vocabulary_facts` of a file without a ByteLevel stage
    sequence: dict = field(default_factory=dict)  # the file's truncation and padding settings, when set

    @classmethod
    def of(cls, config: dict, added: list[dict], vocabulary: dict | None = None) -> AdmissionInputs:
        """The inputs of a parsed tokenizer.json (or of its `file_facts` sections) and the full list of added
        tokens; `vocabulary`: the file's vocabulary facts, when it has them."""
        model = config.get("model") or {}
        return cls(model.get("type"), model.get("dropout"), config.get("normalizer"), config.get("pre_tokenizer"),
                   tuple(dict(t) for t in added), model.get("byte_fallback"),
                   {k: model.get(k) for k in MODEL_KEYS}, vocabulary,
                   {k: config[k] for k in ("truncation", "padding") if config.get(k)})


class DeferredReference:
    """The reference object of a tokenizer, built by `make` on first use and then kept: at most one build per
    holder, under a lock (threads of one process share it). A build that fails raises its error at every use."""

    def __init__(self, make: Callable[[], Tokenizer]) -> None:
        self._make: Callable[[], Tokenizer] | None = make
        self._value: Tokenizer | None = None
        self._lock = threading.Lock()

    @property
    def is_built(self) -> bool:
        return self._value is not None

    def get(self) -> Tokenizer:
        if self._value is None:
            with self._lock:
                if self._value is None:
                    make = self._make
                    assert make is not None
                    self._value = make()
                    self._make = None
        return self._value


@dataclass(frozen=True, eq=False)
class FrozenTokenizer:
    """A loaded tokenizer with the facts every check needs; `.tokenizer` is the reference object.

    Whether the propositions apply to it is decided above this floor, by `spec.admission.admission_of(tok)`,
    from `admission_inputs`. The reference object of a registry row is built on first use (`reference`): every
    fact here comes from the files' bytes, so a process that only admits or lists tokenizers (a test collection)
    never pays the reference library's load. A copy made with `dataclasses.replace` shares the one object."""
    name: str
    reference: DeferredReference = field(repr=False)
    sha256: str
    normalizer: str
    special_strings: tuple[str, ...]
    margin: int
    bound: int
    admission_inputs: AdmissionInputs
    provenance: str = "exact"  # exact | sibling | file | user file
    config_sha256: str | None = None
    chat_template: str | None = None
    config: dict = field(default_factory=dict, repr=False)
    size: int | None = None  # bytes of tokenizer.json
    source_path: str | None = None  # a user file's tokenizer.json (absolute); None for the registry's rows

    @property
    def tokenizer(self) -> Tokenizer:
        """The reference object (`tokenizers.Tokenizer`), built on first use."""
        return self.reference.get()

    @property
    def is_user_file(self) -> bool:
        """Whether this tokenizer was named by a user's path: never one of the eleven."""
        return self.provenance == USER_FILE

    @property
    def is_nfc(self) -> bool:
        """Whether the normalizer is a composing normal form, NFC or NFKC (`normal_form`): the cut and repair
        propositions' normalization condition applies."""
        return self.normalizer in ("nfc", "nfkc")

    @property
    def normal_form(self) -> str:
        """"nfc" or "nfkc" for a normalizing tokenizer (`is_nfc`), else "nfc" (unused there)."""
        return self.normalizer if self.normalizer == "nfkc" else "nfc"

    @property
    def has_config(self) -> bool:
        """Whether tokenizer_config.json was loaded (a row provisioned "no config" has none: no chat template,
        no config-only special tokens; checks that need them record "no config")."""
        return self.config_sha256 is not None


def loaded_pre_tokenizer(tokenizer: Tokenizer) -> dict | None:
    """The pre-tokenizer section of `tokenizer` as the loaded reference object serializes it: the same JSON as
    `json.loads(tokenizer.to_str())["pre_tokenizer"]` (the pre-tokenizer's own pickle state, which the reference
    writes with the same serializer as the whole file), without serializing the whole vocabulary (0.15 to 0.8 s per
    call on the frozen tokenizers against under a millisecond). None when there is no pre-tokenizer."""
    pre_tokenizer = tokenizer.pre_tokenizer
    return None if pre_tokenizer is None else json.loads(pre_tokenizer.__getstate__())


def reference_pre_tokenizer(tok: FrozenTokenizer) -> dict | None:
    """`loaded_pre_tokenizer(tok.tokenizer)` without building the whole reference object: the reference library
    reads the file's pre-tokenizer section into an object of that section alone (with an empty BPE model) and
    serializes it as it would in the whole object, in about a millisecond against up to 0.4 s for the whole
    object. Read from the whole object when it is already built. Equal on every provisioned tokenizer
    (test_loader.py)."""
    if tok.reference.is_built:
        return loaded_pre_tokenizer(tok.tokenizer)
    section = tok.admission_inputs.pre_tokenizer
    if section is None:
        return None
    return loaded_stages(None, section)[1]


def loaded_stages(normalizer: dict | None, pre_tokenizer: dict | None) -> tuple[dict | None, dict | None]:
    """The normalizer and pre-tokenizer sections as the reference library loads and serializes them (defaults
    filled in, legacy keys read: a Metaspace without `prepend_scheme` says which one it is), from an object of
    those sections alone with an empty BPE model. `CorruptTokenizerFile` when the library cannot load them."""
    shell = {"version": "1.0", "model": {"type": "BPE", "vocab": {}, "merges": []}, "normalizer": normalizer,
             "pre_tokenizer": pre_tokenizer}
    try:
        loaded = Tokenizer.from_str(json.dumps(shell))
    except Exception as exc:  # the Rust loader raises a bare Exception on malformed content
        raise CorruptTokenizerFile(f"the normalizer or pre-tokenizer section cannot be loaded: {exc}") from exc
    stage = loaded.normalizer
    return (None if stage is None else json.loads(stage.__getstate__())), loaded_pre_tokenizer(loaded)


def _parse_json(data: bytes, what: str) -> dict:
    try:
        parsed = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorruptTokenizerFile(f"{what} is not valid JSON ({exc}); the file is corrupt or truncated") from exc
    except RecursionError as exc:
        raise CorruptTokenizerFile(f"{what} nests its JSON values too deeply to be read") from exc
    if not isinstance(parsed, dict):
        raise CorruptTokenizerFile(f"{what} is JSON but not an object")
    return parsed


def byte_decoder() -> dict[str, int]:
    """The inverse of byte-level BPE's byte-to-character alphabet."""
    printable = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars, strict=True)}


@lru_cache(maxsize=1)
def _byte_level_codec() -> tuple[dict[int, str], re.Pattern[str]]:
    """`str.translate` table from each byte-alphabet character to the byte it stands for (as a Latin-1 character),
    and a pattern that finds any character outside the alphabet."""
    decoder = byte_decoder()
    foreign = re.compile("[^" + re.escape("".join(decoder)) + "]")
    return str.maketrans({ch: chr(b) for ch, b in decoder.items()}), foreign


def byte_level_bytes(token: str) -> bytes | None:
    """The bytes a byte-level vocabulary entry stands for (each character through `byte_decoder`), or None if one
    of its characters lies outside the byte alphabet."""
    table, foreign = _byte_level_codec()
    return None if foreign.search(token) else token.translate(table).encode("latin-1")


def token_byte_length(token: str, byte_decoder: dict[str, int]) -> int:
    """Bytes one vocabulary entry decodes to: its length in the byte alphabet, else its UTF-8 length."""
    if all(ch in byte_decoder for ch in token):
        return len(token)
    return len(token.encode("utf-8"))


def compute_bound(config: dict, added: list[dict]) -> int:
    """The longest text one token decodes to, in bytes (an upper bound on the characters its span covers).

    A vocabulary entry of k characters decodes to k to 4k bytes (k in the byte alphabet, else its UTF-8 length),
    so the entries are read longest first and the scan stops once 4k cannot beat the longest found: the same
    maximum as reading them all, in a fraction of the time (a vocabulary has about a million entries)."""
    decoder = byte_decoder()
    vocab = config.get("model", {}).get("vocab", {})
    if isinstance(vocab, list):  # Unigram: [piece, score] pairs
        vocab = [entry[0] for entry in vocab if isinstance(entry, list) and entry and isinstance(entry[0], str)]
    longest = 0
    for token in sorted(vocab, key=len, reverse=True):
        if 4 * len(token) <= longest:
            break
        longest = max(longest, token_byte_length(token, decoder))
    return max([longest] + [len(t["content"].encode("utf-8")) for t in added])


SECTIONS = ("normalizer", "pre_tokenizer", "added_tokens", "truncation", "padding")  # what the loader reads of
# tokenizer.json beside the model
MODEL_KEYS = ("type", "dropout", "byte_fallback", "unk_token", "fuse_unk", "ignore_merges",
              "continuing_subword_prefix", "end_of_word_suffix")


def has_byte_level_stage(config: dict) -> bool:
    """Whether the normalizer or the pre-tokenizer section names a ByteLevel stage anywhere (at any depth)."""
    return '"ByteLevel"' in json.dumps([config.get("normalizer"), config.get("pre_tokenizer")])


def file_facts(data: bytes, what: str) -> dict:
    """What the loader reads from the bytes of a tokenizer.json (kept per digest by `frozen.facts_cache`): its
    normalizer, pre-tokenizer and added-token sections as they are, the model's `MODEL_KEYS`, the longest
    vocabulary entry in bytes (`compute_bound` without the added tokens), and, for a BPE file without a ByteLevel
    stage, its `frozen.vocabulary_facts` (None otherwise).
    `CorruptTokenizerFile` for bytes that are not a JSON object with a model section."""
    config = _parse_json(data, what)
    if "model" not in config:
        raise CorruptTokenizerFile(f"{what} has no model section; not a tokenizer configuration")
    model = config.get("model") or {}
    sections = {k: config[k] for k in SECTIONS if k in config}
    sections["model"] = {k: model.get(k) for k in MODEL_KEYS}
    if isinstance(model, dict) and "type" not in model:
        sections["model"]["type"] = _untagged_model_type(data)
    whole_word = model.get("type") == "BPE" and not has_byte_level_stage(config)
    return {"sections": sections, "vocab_longest_bytes": compute_bound({"model": model}, []),
            "vocabulary": vocabulary_facts(model) if whole_word else None}


def _untagged_model_type(data: bytes) -> str | None:
    """The model type the reference reads from a model section without a "type" key (older files, e.g.
    bert-base-uncased's: the library tries each model's fields in turn), or None when it cannot load the file."""
    try:
        return type(Tokenizer.from_str(data.decode("utf-8")).model).__name__
    except Exception:  # the Rust loader raises a bare Exception; the build reports the file as corrupt later
        return None


def compute_margin(special_strings: tuple[str, ...]) -> int:
    """The longest special-token string in code points, but at least 8."""
    return max([MIN_MARGIN] + [len(s) for s in special_strings])


def config_only_tokens(config: dict, tok_config: dict | None) -> list[dict]:
    """Added tokens declared in tokenizer_config.json's added_tokens_decoder that tokenizer.json lacks, by ID order."""
    if not tok_config:
        return []
    have = {t["content"] for t in config.get("added_tokens", [])}
    extra = []
    for key, spec in sorted((tok_config.get("added_tokens_decoder") or {}).items(), key=lambda kv: int(kv[0])):
        if spec.get("content") not in have and spec.get("content") != "":  # empty: ignored (`matched_added_tokens`)
            extra.append({"id": int(key), **spec})
    return extra


def matched_added_tokens(added: list[dict]) -> list[dict]:
    """The added tokens the reference can match: every one but those with empty content, which the reference
    ignores when it loads them (added_vocabulary.rs `add_tokens`: no ID, never matched, so the file encodes as the
    file without them). Invariant: no special string, margin, bound, guard or admission input counts an empty
    one."""
    return [t for t in added if t.get("content") != ""]


def _facts(name: str, tokenizer_bytes: bytes, digest: str) -> dict:
    """`file_facts` of the bytes (kept per digest); a file whose sections have the wrong JSON types for them is
    `CorruptTokenizerFile` naming what could not be read, never a Python error."""
    what = f"{name}/{TOKENIZER_FILE}"
    try:
        return tokenizer_facts(tokenizer_bytes, digest, lambda data: file_facts(data, what))
    except (AttributeError, TypeError, KeyError, IndexError, ValueError, RecursionError) as exc:
        raise CorruptTokenizerFile(f"{what} is not a tokenizer configuration: a section has the wrong shape "
                                   f"({type(exc).__name__}: {exc})") from exc


def build(
    name: str,
    tokenizer_bytes: bytes,
    config_bytes: bytes | None,
    *,
    provenance: str,
    row: RegistryRow | None = None,
    defer: bool = False,
) -> FrozenTokenizer:
    """Build a FrozenTokenizer from file contents; cross-check margin and bound against `row` when given.

    With `defer`, the reference object is built on first use of `.tokenizer` (its errors then raise there); only
    files whose digests the registry lists may be deferred, since their build is the one the gate has tested."""
    digest = sha256_bytes(tokenizer_bytes)
    facts = _facts(name, tokenizer_bytes, digest)
    config = facts["sections"]
    tok_config = _parse_json(config_bytes, f"{name}/{CONFIG_FILE}") if config_bytes is not None else None
    extra = config_only_tokens(config, tok_config)
    reference = DeferredReference(lambda: reference_object(name, tokenizer_bytes, extra))
    if not defer:
        reference.get()
    added = matched_added_tokens(list(config.get("added_tokens", [])) + extra)
    specials = tuple(sorted({t["content"] for t in added}, key=lambda s: (-len(s), s)))
    margin = compute_margin(specials)
    bound = max([facts["vocab_longest_bytes"]] + [len(t["content"].encode("utf-8")) for t in added])
    if row is not None and (margin, bound) != (row.margin, row.bound):
        raise ParameterMismatch(
            f"{name}: computed margin {margin} and bound {bound}, registry says {row.margin} and {row.bound}"
        )
    return FrozenTokenizer(
        name=name,
        reference=reference,
        sha256=digest,
        normalizer=normalizer_kind(config.get("normalizer")),
        special_strings=specials,
        margin=margin,
        bound=bound,
        admission_inputs=AdmissionInputs.of(config, added, facts.get("vocabulary")),
        provenance=provenance,
        config_sha256=sha256_bytes(config_bytes) if config_bytes is not None else None,
        chat_template=_chat_template(tok_config),
        config=tok_config or {},
        size=len(tokenizer_bytes),
    )


def reference_object(name: str, tokenizer_bytes: bytes, extra: list[dict]) -> Tokenizer:
    """The reference library's object for a tokenizer.json, with the config-only tokens `extra` added with their
    flags; each must load at its declared ID (`CorruptTokenizerFile` otherwise, and for content the library
    cannot load). Its truncation and padding are off: they act on the assembled sequence, with the post-processor,
    and `spec.reference` applies the file's own settings (`AdmissionInputs.sequence`) once."""
    try:
        tokenizer = Tokenizer.from_str(tokenizer_bytes.decode("utf-8"))
    except Exception as exc:  # the Rust loader raises a bare Exception on malformed content
        raise CorruptTokenizerFile(f"{name}/{TOKENIZER_FILE} cannot be loaded by tokenizers: {exc}") from exc
    tokenizer.no_truncation()  # both act on the assembled sequence: `spec.reference.post_process` applies them once
    tokenizer.no_padding()
    for spec in extra:
        flags = {k: bool(spec.get(k, False)) for k in ("single_word", "lstrip", "rstrip", "normalized", "special")}
        tokenizer.add_tokens([AddedToken(spec["content"], **flags)])
        got = tokenizer.token_to_id(spec["content"])
        if got != spec["id"]:
            raise CorruptTokenizerFile(
                f"{name}: config-only token {spec['content']!r} declared as ID {spec['id']} but loads as {got}"
            )
    return tokenizer


def _chat_template(tok_config: dict | None) -> str | None:
    """The config's chat template when it is one string (list-valued templates are not used by the suite)."""
    template = (tok_config or {}).get("chat_template")
    return template if isinstance(template, str) else None


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise NotProvisioned(f"cannot read {path} ({exc.strerror or exc})") from exc


def load_from_cache(row: RegistryRow, root: Path | None = None) -> FrozenTokenizer:
    """Load a provisioned row, re-hashing every file against the registry (exact or registered sibling); a file
    whose digest is neither is refused with `InstalledFileChanged`, whose message names the remedy (re-install).
    The reference object is built on first use: every file's digest is one the registry lists."""
    folder = (root or tokenizers_dir()) / row.name
    if not (folder / TOKENIZER_FILE).is_file():
        raise NotProvisioned(f"{row.name} is not provisioned; run: corpora tokenizers pull {row.alias}")
    contents: dict[str, bytes | None] = {}
    kinds = {}
    without = provisioned_without(row, folder)
    for fname, frozen in row.files.items():
        path = folder / fname
        if fname in without and not path.is_file():
            continue  # provisioned "no config": the special-token strings come from tokenizer.json alone
        if not path.is_file():
            raise NotProvisioned(
                f"{row.name}: {fname} missing from {folder}; run: corpora tokenizers pull {row.alias} --force"
            )
        data = _read(path)
        digest = sha256_bytes(data)
        kind = row.classify(fname, digest)
        if kind == "unknown":
            raise InstalledFileChanged(str(path), frozen.sha256, digest, row.alias)
        contents[fname], kinds[fname] = data, kind
    provenance = "sibling" if kinds[TOKENIZER_FILE] == "sibling" else "exact"
    return build(row.name, contents[TOKENIZER_FILE] or b"", contents.get(CONFIG_FILE), provenance=provenance, row=row,
                 defer=True)


def provisioned_without(row: RegistryRow, folder: Path) -> frozenset[str]:
    """The optional files (the config) that the row's provenance record says were provisioned without."""
    try:
        recorded = json.loads((folder / PROVENANCE).read_text(encoding="utf-8")).get("files", {})
    except (OSError, ValueError, AttributeError):
        return frozenset()
    return frozenset(f for f in row.optional_files if f not in recorded)


@lru_cache(maxsize=16)
def _cached(name: str, root: str) -> FrozenTokenizer:
    return load_from_cache(lookup(name), Path(root))


def load_tokenizer(name_or_alias: str, *, root: Path | None = None, fresh: bool = False) -> FrozenTokenizer:
    """The frozen tokenizer for a registry name or alias (re-hashed on first load in this process), or for the name
    of a user tokenizer named in this run (`frozen.user_table`; its file's digest re-checked)."""
    entry = user_entry(name_or_alias)
    if entry is not None:
        return load_user_entry(entry) if fresh else _cached_user(entry)
    row = lookup(name_or_alias)
    folder = str(root or tokenizers_dir())
    if fresh:
        return load_from_cache(row, Path(folder))
    return _cached(row.name, folder)


def load_tokenizer_file(path: Path, config_path: Path | None = None, *, name: str | None = None) -> FrozenTokenizer:
    """Load a tokenizer.json that is not in the registry (synthetic test files); provenance "file"."""
    return build(
        name or path.stem,
        _read(path),
        _read(config_path) if config_path is not None else None,
        provenance="file",
    )


class UserFileChanged(SuiteError):
    """A user's tokenizer file whose bytes changed after the run named it: a different tokenizer, refused."""


def load_user_entry(entry: UserEntry) -> FrozenTokenizer:
    """Load a user tokenizer from its table entry, provenance "user file"; its tokenizer.json (and config) must
    still have the digests recorded when the run named it (`UserFileChanged` otherwise)."""
    data = _read(Path(entry.path))
    digest = sha256_bytes(data)
    if digest != entry.sha256:
        raise UserFileChanged(f"user tokenizer {entry.name}: {entry.path} changed since this run named it (sha256 "
                              f"{entry.sha256[:16]}…, now {digest[:16]}…); a changed file is a different "
                              "tokenizer: start a new run on it")
    config = _read(Path(entry.config_path)) if entry.config_path else None
    if config is not None and sha256_bytes(config) != entry.config_sha256:
        raise UserFileChanged(f"user tokenizer {entry.name}: {entry.config_path} changed since this run named it")
    tok = build(entry.name, data, config, provenance=USER_FILE)
    return replace(tok, source_path=entry.path)


@lru_cache(maxsize=16)
def _cached_user(entry: UserEntry) -> FrozenTokenizer:
    return load_user_entry(entry)


def provisioned_names() -> list[str]:
    """Registry names whose files are provisioned, each loaded (and so cached) in this process; missing ones are
    left out (the registry's own checks report them)."""
    out = []
    for row in rows():
        try:
            load_tokenizer(row.name)
        except NotProvisioned:
            continue
        out.append(row.name)
    return out
