"""Stream documents from corpus files: JSONL (plain, .gz, .zst) and Parquet, never the whole corpus in memory.

`--corpus PATH|GLOB` names one or more files (a folder means its *.jsonl* and *.parquet files). Each document
comes out as a dict with at least `id` and either `text` or `messages`; a JSONL line without an `id` gets
`<file name>:<line number>`, a Parquet row `<file name>:<row number>`. JSONL lines are split on "\\n" only
(U+2028 and friends are text, not line ends). A line that is not a JSON object, or lacks the text column, is
a clear `UnreadableCorpus` error naming the file and line, never a traceback.
"""

from __future__ import annotations

import glob
import gzip
import io
import json
from collections.abc import Iterator
from pathlib import Path

from frozen.errors import SuiteError

SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".json.gz", ".json.zst", ".parquet")
PARQUET_BATCH_ROWS = 1024


class UnreadableCorpus(SuiteError):
    """A corpus path that matches nothing, or a file whose content is not the format its name says."""


def expand(spec: str | Path) -> list[Path]:
    """The files a `--corpus` argument names, sorted: a file, a folder of corpus files, or a glob."""
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


def read_jsonl(path: Path, column: str = "text") -> Iterator[dict]:
    """Documents of a JSONL file (optionally .gz/.zst compressed), one per non-blank line, streamed."""
    try:
        with _open_binary(path) as stream:
            for lineno, raw in enumerate(_lines(stream), start=1):
                if not raw.strip():
                    continue
                try:
                    obj = json.loads(raw.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                    raise UnreadableCorpus(f"{path}:{lineno}: not a JSON line ({exc})") from exc
                if not isinstance(obj, dict) or not (isinstance(obj.get(column), str) or "messages" in obj):
                    raise UnreadableCorpus(f"{path}:{lineno}: no string column {column!r} (nor chat 'messages')")
                if column != "text" and column in obj:
                    obj = {**obj, "text": obj[column]}
                obj.setdefault("id", f"{path.name}:{lineno}")
                yield obj
    except (OSError, EOFError) as exc:
        raise UnreadableCorpus(f"{path}: cannot be read ({exc})") from exc
    except Exception as exc:  # zstandard raises its own ZstdError for corrupt frames
        if type(exc).__name__ == "ZstdError":
            raise UnreadableCorpus(f"{path}: not a valid zstd stream ({exc})") from exc
        raise


def read_parquet(path: Path, column: str = "text") -> Iterator[dict]:
    """Documents of a Parquet file: the string column `column` (and `id` if present), read in row batches."""
    import pyarrow.parquet as pq  # heavy optional: only Parquet shards need it

    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises ArrowInvalid / OSError on files that are not Parquet
        raise UnreadableCorpus(f"{path}: not a Parquet file ({exc})") from exc
    names = pf.schema_arrow.names
    if column not in names:
        raise UnreadableCorpus(f"{path}: no column {column!r}; columns are {', '.join(names)} (use --column)")
    columns = [column] + (["id"] if "id" in names and column != "id" else [])
    row = 0
    for batch in pf.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=columns):
        texts = batch.column(column).to_pylist()
        ids = batch.column("id").to_pylist() if "id" in columns else [None] * len(texts)
        for text, ident in zip(texts, ids, strict=True):
            row += 1
            if text is None:
                continue
            if not isinstance(text, str):
                raise UnreadableCorpus(f"{path}: column {column!r} is not a string column")
            yield {"id": str(ident) if ident is not None else f"{path.name}:{row}", "text": text}


def read_documents(spec: str | Path, column: str = "text") -> Iterator[dict]:
    """Every document named by a `--corpus` argument, file by file, streamed."""
    for path in expand(spec):
        if path.name.endswith(".parquet"):
            yield from read_parquet(path, column)
        else:
            yield from read_jsonl(path, column)
