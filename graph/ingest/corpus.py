"""Which files to read, and by which reader; the public read functions."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

from graph.ingest.base import Reader, ReadResult
from graph.ingest.bibtex import BibtexReader
from graph.ingest.collect import Collector
from graph.ingest.jsonl import JsonReader
from graph.ingest.ris import RisReader
from graph.ingest.table import TableReader
from graph.ingest.text import TextReader
from graph.settings import DEFAULT_MAX_INPUT_FILE_BYTES

logger = logging.getLogger(__name__)

# The formats, in the order their suffixes are named in messages. A new format is a
# module with a Reader and one line here.
READERS: tuple[Reader, ...] = (
    TextReader(), JsonReader(), TableReader(), BibtexReader(), RisReader(),
)
_BY_SUFFIX: dict[str, Reader] = {suffix: r for r in READERS for suffix in r.suffixes}
EXTENSIONS: tuple[str, ...] = tuple(_BY_SUFFIX)


def reader_for(path: Path | str) -> Reader | None:
    """The reader for a file name's suffix (any case), or None."""
    return _BY_SUFFIX.get(Path(path).suffix.lower())


def _read_one(path: Path | str, reader: Reader, max_file_bytes: int) -> ReadResult:
    col = Collector(max_file_bytes)
    reader.read_into(Path(path), col)
    return col.result


def read_text(
    path: Path | str, *, max_file_bytes: int = DEFAULT_MAX_INPUT_FILE_BYTES
) -> ReadResult:
    """Read a seed text file: optional header paragraph, then one abstract per paragraph."""
    return _read_one(path, TextReader(), max_file_bytes)


def read_jsonl(
    path: Path | str, *, max_file_bytes: int = DEFAULT_MAX_INPUT_FILE_BYTES
) -> ReadResult:
    """Read JSON Lines (or, for a .json name, a JSON array/object) of paper records."""
    return _read_one(path, JsonReader(), max_file_bytes)


def read_table(
    path: Path | str, *, max_file_bytes: int = DEFAULT_MAX_INPUT_FILE_BYTES
) -> ReadResult:
    """Read a CSV/TSV file with a header row of paper fields."""
    return _read_one(path, TableReader(), max_file_bytes)


def read_bibtex(
    path: Path | str, *, max_file_bytes: int = DEFAULT_MAX_INPUT_FILE_BYTES
) -> ReadResult:
    """Read a BibTeX file: one record per entry; entries without an abstract are problems."""
    return _read_one(path, BibtexReader(), max_file_bytes)


def _walk(root: Path, col: Collector) -> list[Path]:
    """Input files under ``root``; symlinked folders are followed, loops reported once."""
    found: list[Path] = []
    visited: dict[tuple[int, int], Path] = {}

    def report(exc: OSError) -> None:
        col.problem(str(exc.filename or root), None, f"cannot list directory: {exc.strerror}")

    for folder, dirs, files in os.walk(root, onerror=report, followlinks=True):
        here = Path(folder)
        try:
            info = here.stat()
        except OSError as exc:
            report(exc)
            dirs[:] = []
            continue
        key = (info.st_dev, info.st_ino)
        if key in visited:
            dirs[:] = []
            earlier = visited[key]
            if earlier in here.parents:
                col.problem(folder, None, f"directory loop: leads back to {earlier}; not followed")
            continue  # another name for a folder read already: its files are read once
        visited[key] = here
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(
            here / f for f in files
            if not f.startswith(".") and Path(f).suffix.lower() in _BY_SUFFIX
        )
    return sorted(found)


def read_corpus(
    paths: Sequence[Path | str], *, max_file_bytes: int = DEFAULT_MAX_INPUT_FILE_BYTES
) -> ReadResult:
    """Read files and directories (recursively, sorted) into one deduplicated result.

    Only regular files of at most ``max_file_bytes`` are read; FIFOs, devices, sockets,
    dangling symlinks, loops and bigger files are each reported as a problem.
    """
    col = Collector(max_file_bytes)
    seen: set[Path] = set()
    for given in paths:
        root = Path(given)
        try:
            is_dir = root.is_dir()
        except (OSError, ValueError) as exc:
            col.problem(str(root), None, f"cannot read: {exc}")
            continue
        if is_dir:
            files = _walk(root, col)
            if not files:
                col.problem(str(root), None, f"no {', '.join(EXTENSIONS)} files")
        else:
            files = [root]
        for path in files:
            try:
                key = path.resolve()
            except (OSError, RuntimeError):  # a symlink loop; read will report it
                key = path.absolute()
            if key in seen:
                continue
            seen.add(key)
            reader = reader_for(path)
            if reader is None:
                if path.exists() or path.is_symlink():
                    col.problem(
                        str(path), None,
                        f"unknown file type {path.suffix or '(none)'!r} "
                        f"(expected {', '.join(EXTENSIONS)}); skipped",
                    )
                else:
                    col.problem(str(path), None, "no such file or directory")
                continue
            before = col.records
            reader.read_into(path, col)
            logger.info("%s: %d records", path, col.records - before)
    result = col.result
    logger.info(
        "read %d papers (%d duplicates merged, %d problems)",
        len(result.papers), result.duplicates, len(result.problems),
    )
    return result
