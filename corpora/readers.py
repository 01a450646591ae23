"""Stream documents from corpus files: JSONL (plain, .gz, .zst) and Parquet, never the whole corpus in memory.

`--corpus PATH|GLOB` names one or more files (a folder means its *.jsonl* and *.parquet files). Each document
comes out as a dict with at least `id` and either `text` or `messages`; a JSONL line without an `id` gets
`<file name>:<line number>`, a Parquet row `<file name>:<row number>`. JSONL lines are split on "\\n" only
(U+2028 and friends are text, not line ends). A line that is not a JSON object, or lacks the text column, is
a clear `UnreadableCorpus` error naming the file and line, never a traceback.

Bad text is a property of one document, not of the corpus: a JSONL line whose bytes are not UTF-8, a text or
chat message holding a lone surrogate (JSON's `\\ud800` escape allows one), a Parquet value that is not UTF-8,
or a null text. Such a document is never yielded. With a `refused` callback it is handed over as a `Refused`
(file, JSONL line or Parquet row, document id, reason) and reading goes on with the next document; without one
it is an `InvalidText` error naming the file, line or row and the id. Invariant: every document the readers
yield is valid Unicode in every field a comparison reads (`text`, `messages`, `variant`), and every document
they do not yield (blank lines aside) is either refused by name or ends the read with an error.

A file that cannot be decompressed (truncated or corrupt gzip/zstd) is an `UnreadableCorpus` (input, exit 2);
a file the machine cannot read (permissions, I/O error) propagates as an OSError naming the path (exit 3).
"""

from __future__ import annotations

import glob
import gzip
import io
import json
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from delta_suite.corpora.remote import expand_url, is_url
from delta_suite.frozen.errors import InvalidText, SuiteError

SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".json.gz", ".json.zst", ".parquet")
PARQUET_BATCH_ROWS = 1024
CHECKED_FIELDS = ("text", "messages", "variant")  # the fields a comparison reads (corpora.compare)


class UnreadableCorpus(SuiteError):
    """A corpus path that matches nothing, or a file whose content is not the format its name says."""


@dataclass(frozen=True)
class Refused:
    """A document not compared because of its text: its file, JSONL line or Parquet row, id, and the reason."""

    file: str
    id: str
    reason: str
    line: int | None = None
    row: int | None = None

    @property
    def where(self) -> str:
        """FILE:LINE for JSONL, "FILE row N" for Parquet."""
        return f"{self.file}:{self.line}" if self.line is not None else f"{self.file} row {self.row}"

    def as_dict(self) -> dict:
        """The ledger form: {file, line | row, id, reason}."""
        at = {"line": self.line} if self.line is not None else {"row": self.row}
        return {"file": self.file, **at, "id": self.id, "reason": self.reason}

    def describe(self) -> str:
        """One line for people: where, id and reason."""
        return f"{self.where}: document {self.id}: {self.reason}"


RefusedSink = Callable[[Refused], None]


def printable(value: object) -> str:
    """`value` as a string that can be written as UTF-8: lone surrogates become `\\udXXX` escapes."""
    text = value if isinstance(value, str) else str(value)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _document_id(value: object) -> object:
    """A document id fit for records and terminals (non-string ids such as numbers are kept as they are)."""
    return printable(value) if isinstance(value, str) else value


def _surrogate_at(text: str) -> int | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def text_problem(value: object, name: str) -> str | None:
    """Why `value` (a string, or lists/dicts of strings such as chat messages) is not valid Unicode, else None."""
    if isinstance(value, str):
        at = _surrogate_at(value)
        if at is None:
            return None
        return f"lone surrogate U+{ord(value[at]):04X} at character {at} of {name}; not valid Unicode"
    if isinstance(value, dict):
        items = value.items()
        return next((p for k, v in items if (p := text_problem(v, f"{name}.{printable(k)}"))), None)
    if isinstance(value, list):
        return next((p for i, v in enumerate(value) if (p := text_problem(v, f"{name}[{i}]"))), None)
    return None


def _refuse(sink: RefusedSink | None, refusal: Refused) -> None:
    if sink is None:
        raise InvalidText(f"{refusal.describe()}; document refused")
    sink(refusal)


def expand(spec: str | Path) -> list[Path]:
    """The files a `--corpus` argument names, sorted: a file, a folder of corpus files, or a glob (a URL: the same,
    through fsspec, as URL strings; see `corpora.remote`)."""
    if is_url(spec):
        urls = expand_url(str(spec), SUFFIXES)
        if not urls:
            raise UnreadableCorpus(f"--corpus {spec}: no corpus files found at this URL")
        return urls  # type: ignore[return-value]  # URL strings: Path would fold the "//"
    path = Path(spec)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(SUFFIXES))
    elif path.is_file():
        files = [path]
    else:
        files = sorted(Path(p) for p in glob.glob(str(spec), recursive=True) if Path(p).is_file())
    if not files:
        raise UnreadableCorpus(f"--corpus {spec}: no corpus files found (JSONL, .jsonl.gz, .jsonl.zst or Parquet)")
    return files


def _open_binary(path: Path) -> io.BufferedIOBase:
    if path.name.endswith(".gz"):
        return gzip.open(path, "rb")
    if path.name.endswith(".zst"):
        import zstandard  # optional dependency: only .zst shards need it

        return io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(open(path, "rb"), closefd=True))
    return open(path, "rb")


def _lines(stream: io.BufferedIOBase) -> Iterator[bytes]:
    """Lines split on b"\\n" only, streamed in 1 MiB blocks."""
    rest = b""
    while True:
        block = stream.read(1 << 20)
        if not block:
            break
        rest += block
        *whole, rest = rest.split(b"\n")
        yield from whole
    if rest:
        yield rest


def _undecodable_line(path: Path, lineno: int, raw: bytes, exc: UnicodeDecodeError) -> Refused:
    """The refusal of a JSONL line that is not UTF-8; its id read from a lossy decode if the line parses."""
    ident: object = f"{path.name}:{lineno}"
    try:
        obj = json.loads(raw.decode("utf-8", "replace"))
        if isinstance(obj, dict) and obj.get("id") is not None:
            ident = obj["id"]
    except json.JSONDecodeError:
        pass
    reason = f"not UTF-8 (byte 0x{raw[exc.start]:02X} at byte {exc.start} of the line: {exc.reason})"
    return Refused(printable(path), printable(ident), reason, line=lineno)


def _with_path(exc: OSError, path: Path) -> OSError:
    """`exc` itself if it names a file, else the same error naming `path` (so the CLI can say which file)."""
    if exc.filename is not None:
        return exc
    return OSError(exc.errno, exc.strerror or str(exc), str(path))


def read_jsonl(path: Path, column: str = "text", refused: RefusedSink | None = None) -> Iterator[dict]:
    """Documents of a JSONL file (optionally .gz/.zst compressed), one per non-blank line, streamed; a line of bad
    text goes to `refused` (or raises `InvalidText` without it)."""
    try:
        with _open_binary(path) as stream:
            for lineno, raw in enumerate(_lines(stream), start=1):
                if not raw.strip():
                    continue
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    _refuse(refused, _undecodable_line(path, lineno, raw, exc))
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise UnreadableCorpus(f"{path}:{lineno}: not a JSON line ({exc})") from exc
                if not isinstance(obj, dict):
                    raise UnreadableCorpus(f"{path}:{lineno}: not a JSON object")
                ident = _document_id(obj.get("id", f"{path.name}:{lineno}"))
                if obj.get(column, "") is None and "messages" not in obj:
                    _refuse(refused, Refused(printable(path), str(ident), f"null {column!r} (no text)", line=lineno))
                    continue
                if not (isinstance(obj.get(column), str) or "messages" in obj):
                    raise UnreadableCorpus(f"{path}:{lineno}: no string column {column!r} (nor chat 'messages')")
                if column != "text" and column in obj:
                    obj = {**obj, "text": obj[column]}
                problem = next((p for f in CHECKED_FIELDS if f in obj and (p := text_problem(obj[f], f))), None)
                if problem is not None:
                    _refuse(refused, Refused(printable(path), str(ident), problem, line=lineno))
                    continue
                obj["id"] = ident
                yield obj
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise UnreadableCorpus(f"{path}: truncated or corrupt compressed file ({exc})") from exc
    except OSError as exc:
        raise _with_path(exc, path) from exc
    except Exception as exc:  # zstandard raises its own ZstdError for corrupt frames
        if type(exc).__name__ == "ZstdError":
            raise UnreadableCorpus(f"{path}: not a valid zstd stream ({exc})") from exc
        raise


@dataclass(frozen=True)
class _NotUtf8:
    """A Parquet string value whose bytes are not UTF-8."""

    data: bytes
    error: UnicodeDecodeError


def _parquet_strings(column) -> list:
    """A string column's values: str, None, or `_NotUtf8` for a value that is not UTF-8 (decoded row by row only
    when the fast whole-batch decode fails)."""
    import pyarrow as pa  # heavy optional: only Parquet shards need it

    try:
        return column.to_pylist()
    except UnicodeDecodeError:
        pass
    raw = pa.large_binary() if pa.types.is_large_string(column.type) else pa.binary()
    out: list = []
    for value in column.view(raw).to_pylist():
        try:
            out.append(None if value is None else value.decode("utf-8"))
        except UnicodeDecodeError as exc:
            out.append(_NotUtf8(value, exc))
    return out


def _parquet_failure(path: Path, exc: Exception) -> Exception:
    """An OSError carrying an errno is the machine's (exit 3, path named); any other pyarrow complaint is the
    file's content (UnreadableCorpus, exit 2)."""
    if isinstance(exc, OSError) and exc.errno is not None:
        return _with_path(exc, path)
    return UnreadableCorpus(f"{path}: not a readable Parquet file ({exc})")


def _parquet_batches(path: Path, column: str) -> Iterator[tuple[list, list]]:
    """(texts, ids) per row batch of a Parquet file; ids are None where the file has no `id` column."""
    import pyarrow.parquet as pq  # heavy optional: only Parquet shards need it

    try:
        pf = pq.ParquetFile(path)
        names = pf.schema_arrow.names
        if column not in names:
            raise UnreadableCorpus(f"{path}: no column {column!r}; columns are {', '.join(names)} (use --column)")
        columns = [column] + (["id"] if "id" in names and column != "id" else [])
        for batch in pf.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=columns):
            texts = _parquet_strings(batch.column(column))
            ids = _parquet_strings(batch.column("id")) if "id" in columns else [None] * len(texts)
            yield texts, ids
    except SuiteError:
        raise
    except Exception as exc:  # pyarrow: ArrowInvalid, or OSError for unreadable files and corrupt pages
        raise _parquet_failure(path, exc) from exc


def read_parquet(path: Path, column: str = "text", refused: RefusedSink | None = None) -> Iterator[dict]:
    """Documents of a Parquet file: the string column `column` (and `id` if present), read in row batches; a row
    whose value is null or not UTF-8 goes to `refused` (or raises `InvalidText` without it)."""
    row = 0
    for texts, ids in _parquet_batches(path, column):
        for text, ident in zip(texts, ids, strict=True):
            row += 1
            if isinstance(ident, _NotUtf8):
                ident = ident.data.decode("utf-8", "replace")
            doc_id = printable(ident) if ident is not None else f"{path.name}:{row}"
            if text is None:
                _refuse(refused, Refused(printable(path), doc_id, f"null {column!r} (no text)", row=row))
                continue
            if isinstance(text, _NotUtf8):
                err, bad = text.error, text.data[text.error.start]
                reason = f"not UTF-8 (byte 0x{bad:02X} at byte {err.start} of {column!r}: {err.reason})"
                _refuse(refused, Refused(printable(path), doc_id, reason, row=row))
                continue
            if not isinstance(text, str):
                raise UnreadableCorpus(f"{path}: column {column!r} is not a string column")
            yield {"id": doc_id, "text": text}


def read_documents(spec: str | Path, column: str = "text", refused: RefusedSink | None = None) -> Iterator[dict]:
    """Every document named by a `--corpus` argument, file by file, streamed; bad text goes to `refused`."""
    for path in expand(spec):
        if path.name.endswith(".parquet"):
            yield from read_parquet(path, column, refused)
        else:
            yield from read_jsonl(path, column, refused)
