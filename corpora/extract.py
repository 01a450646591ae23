"""Extractors: turn the files of an unpacked package into documents, byte-exact, never normalized.

A document is one page, catalog, conversation, book or source file: `Doc(src, lang, id, text)` or, for chats,
`Doc(src, lang, id, messages=[{"role", "content"}, ...])`. Files are read strictly as UTF-8: a file that is not
valid UTF-8 is logged (`SkippedFile(path, reason)`) and skipped whole, never half-read. Character data is kept
as it is (markup is dropped, entities decoded, nothing normalized: non-NFC text is valuable test material).
Empty documents are dropped here; duplicates are dropped by the build, across sources.
"""

from __future__ import annotations

import bz2
import gettext
import gzip
import json
import re
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import yaml


@dataclass(frozen=True)
class Doc:
    """One document: plain `text`, or a chat as `messages` (role/content dicts, content byte-exact)."""

    src: str
    lang: str
    id: str
    text: str = ""
    messages: tuple = field(default=())

    @property
    def is_chat(self) -> bool:
        return bool(self.messages)

    def characters(self) -> int:
        """Code points of the text, or of all message contents."""
        return sum(len(m["content"]) for m in self.messages) if self.messages else len(self.text)

    def contents(self) -> list[str]:
        """The strings whose characters count (the text, or each message's content)."""
        return [m["content"] for m in self.messages] if self.messages else [self.text]

    def to_json(self) -> dict:
        out = {"src": self.src, "lang": self.lang, "id": self.id}
        if self.messages:
            out["messages"] = [dict(m) for m in self.messages]
        else:
            out["text"] = self.text
        return out


@dataclass(frozen=True)
class SkippedFile:
    """A file that was not read: its path (relative to the cache) and why."""

    path: str
    reason: str


class NotUtf8(Exception):
    """Raised inside an extractor for a file whose bytes are not UTF-8; the file is skipped whole."""


def read_utf8(path: Path) -> str:
    """The file's text, decoded strictly (gzip/bz2 by suffix); `NotUtf8` if any byte sequence is invalid."""
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    elif path.suffix == ".bz2":
        raw = bz2.decompress(raw)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotUtf8(f"not valid UTF-8 at byte {exc.start}: {exc.reason}") from exc


class _TextOfMarkup(HTMLParser):
    """Character data of HTML/XML outside head, nav, aside, script and style, entities decoded."""

    DROP = {"head", "nav", "aside", "script", "style"}
    BLOCK = {"p", "div", "li", "tr", "br", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "section", "page", "td",
             "title", "dd", "dt", "table", "header", "footer", "article", "item", "code", "note"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self.DROP:
            self.skip += 1
        elif tag in self.BLOCK and self.parts and not self.parts[-1].endswith("\n"):
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.DROP and self.skip:
            self.skip -= 1
        elif tag in self.BLOCK and self.parts and not self.parts[-1].endswith("\n"):
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


def markup_text(source: str) -> str:
    """The readable text of an HTML or Mallard page; blank-only lines collapsed, characters untouched."""
    parser = _TextOfMarkup()
    parser.feed(source)
    parser.close()
    lines = "".join(parser.parts).split("\n")
    kept = [line for line in lines if line.strip()]
    return "\n".join(kept) + ("\n" if kept else "")


# Each extractor: (path, relative id, lang, options) -> iterator of (id suffix, text or messages)
Piece = tuple[str, object]


def _plain(path: Path, opts: dict) -> Iterator[Piece]:
    yield "", read_utf8(path)


def _markup(path: Path, opts: dict) -> Iterator[Piece]:
    yield "", markup_text(read_utf8(path))


def _lines(path: Path, opts: dict) -> Iterator[Piece]:
    """A big line-oriented file cut into documents of `lines_per_doc` lines (line endings kept)."""
    n = int(opts.get("lines_per_doc", 1000))
    lines = read_utf8(path).splitlines(keepends=True)
    for i in range(0, len(lines), n):
        yield f"#{i // n}", "".join(lines[i : i + n])


def _sections(path: Path, opts: dict) -> Iterator[Piece]:
    """A file split before each line starting with `marker` (emoji-test groups, NormalizationTest parts)."""
    marker = opts["marker"]
    limit = int(opts.get("max_lines", 2000))
    chunk: list[str] = []
    index = 0
    for line in read_utf8(path).splitlines(keepends=True):
        if (line.startswith(marker) and chunk) or len(chunk) >= limit:
            yield f"#{index}", "".join(chunk)
            index, chunk = index + 1, []
        chunk.append(line)
    if chunk:
        yield f"#{index}", "".join(chunk)


def _normalization_test(path: Path, opts: dict) -> Iterator[Piece]:
    """NormalizationTest.txt: each data line's five columns as strings, tab-separated, per part / 1000 lines."""
    limit = int(opts.get("max_lines", 1000))
    rows: list[str] = []
    index = 0
    for line in read_utf8(path).splitlines():
        if line.startswith("@Part") and rows or len(rows) >= limit:
            yield f"#{index}", "\n".join(rows) + "\n"
            index, rows = index + 1, []
        body = line.split("#", 1)[0].strip()
        if not body or body.startswith("@"):
            continue
        cols = [c for c in body.split(";") if c.strip()]
        rows.append("\t".join("".join(chr(int(h, 16)) for h in c.split()) for c in cols))
    if rows:
        yield f"#{index}", "\n".join(rows) + "\n"


def _mo(path: Path, opts: dict) -> Iterator[Piece]:
    """A gettext catalog: its translated strings, one per line, in message-id order."""
    try:
        with open(path, "rb") as fh:
            catalog = gettext.GNUTranslations(fh)._catalog  # noqa: SLF001 - the parsed catalog is what we want
    except (UnicodeDecodeError, OSError) as exc:
        raise NotUtf8(f"catalog not readable as UTF-8: {exc}") from exc
    values = []
    for key in sorted(catalog, key=lambda k: (str(k), repr(k))):
        if key == "":
            continue
        value = catalog[key]
        if isinstance(value, str) and value:
            values.append(value)
    yield "", "\n".join(values) + ("\n" if values else "")


def _man(path: Path, opts: dict) -> Iterator[Piece]:
    """A man page rendered by groff to UTF-8 plain text (no overstrike, no colour)."""
    source = read_utf8(path)
    out = subprocess.run(
        ["groff", "-mandoc", "-Tutf8", "-P-cbou", "-k"],
        input=source.encode("utf-8"),
        capture_output=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "MANWIDTH": "80"},
    )
    try:
        yield "", out.stdout.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotUtf8(f"groff output not UTF-8: {exc.reason}") from exc


def _quran(path: Path, opts: dict) -> Iterator[Piece]:
    """A quran-json chapter: the Arabic verses, or the translation's verses, one per line."""
    data = json.loads(read_utf8(path))
    key = "translation" if "translation" in (data.get("verses") or [{}])[0] else "text"
    yield "", "\n".join(v[key] for v in data["verses"]) + "\n"


def _torah(path: Path, opts: dict) -> Iterator[Piece]:
    """A Sefaria-style book: chapters of verses, one verse per line, a blank line between chapters."""
    data = json.loads(read_utf8(path))
    chapters = data.get("text") or []
    yield "", "\n\n".join("\n".join(v for v in ch if isinstance(v, str)) for ch in chapters) + "\n"


def _cldr_annotations(path: Path, opts: dict) -> Iterator[Piece]:
    """CLDR annotations: `emoji | keywords | name` per line, in code-point order, `lines_per_doc` a document."""
    data = json.loads(read_utf8(path))
    entries = data["annotations"].get("annotations") or {}
    per_doc = int(opts.get("lines_per_doc", 300))
    lines = []
    for key in sorted(entries):
        value = entries[key]
        lines.append(" | ".join([key, ", ".join(value.get("default", [])), " ".join(value.get("tts", []))]))
    for i in range(0, len(lines), per_doc):
        yield f"#{i // per_doc}", "\n".join(lines[i : i + per_doc]) + "\n"


def _chitchat(path: Path, opts: dict) -> Iterator[Piece]:
    """chitchat-dataset: each conversation as alternating user/assistant turns (a speaker turn's lines joined)."""
    data = json.loads(read_utf8(path))
    for key in sorted(data):
        turns = data[key]["messages"]
        messages = []
        for i, turn in enumerate(turns):
            content = "\n".join(m["text"] for m in turn)
            messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": content})
        yield f"#{key}", tuple(messages)


def _chatterbot(path: Path, opts: dict) -> Iterator[Piece]:
    """chatterbot-corpus YAML: each conversation as alternating user/assistant turns."""
    data = yaml.safe_load(read_utf8(path)) or {}
    for i, conv in enumerate(data.get("conversations") or []):
        turns = [t if isinstance(t, str) else str(t) for t in conv if t is not None]
        if len(turns) < 2:
            continue
        messages = tuple({"role": "user" if j % 2 == 0 else "assistant", "content": t} for j, t in enumerate(turns))
        yield f"#{i}", messages


EXTRACTORS: dict[str, Callable[[Path, dict], Iterator[Piece]]] = {
    "plain": _plain,
    "markup": _markup,
    "lines": _lines,
    "sections": _sections,
    "normalization_test": _normalization_test,
    "mo": _mo,
    "man": _man,
    "quran": _quran,
    "torah": _torah,
    "cldr_annotations": _cldr_annotations,
    "chitchat": _chitchat,
    "chatterbot": _chatterbot,
}


def language_of(rel: str, spec: dict) -> str:
    """The document language: `lang` fixed in the source, or captured from the path by `lang_from`."""
    pattern = spec.get("lang_from")
    if pattern:
        m = re.search(pattern, rel)
        if m and m.group(1):
            return m.group(1)
    return spec.get("lang", "und")


def extract_file(src: str, path: Path, rel: str, spec: dict) -> tuple[list[Doc], SkippedFile | None]:
    """All non-empty documents of one file, or none and the reason when the file cannot be read as UTF-8."""
    extractor = EXTRACTORS[spec["extractor"]]
    lang = language_of(rel, spec)
    docs: list[Doc] = []
    try:
        for suffix, payload in extractor(path, spec.get("options", {})):
            if isinstance(payload, tuple):
                messages = tuple(m for m in payload if m["content"])
                if len(messages) >= 2:
                    docs.append(Doc(src, lang, f"{src}:{rel}{suffix}", messages=messages))
            elif payload and payload.strip():
                docs.append(Doc(src, lang, f"{src}:{rel}{suffix}", text=payload))
    except NotUtf8 as exc:
        return [], SkippedFile(rel, str(exc))
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, yaml.YAMLError) as exc:
        return [], SkippedFile(rel, f"unreadable by extractor {spec['extractor']}: {exc}")
    return docs, None
