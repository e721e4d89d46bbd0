"""``.csv`` / ``.tsv``: a header row of field names, then one record per row."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from graph.ingest.collect import Collector
from graph.ingest.decode import decode_file
from graph.ingest.records import _canonical_key


def _csv_limit() -> None:
    limit = sys.maxsize
    while True:
        try:
            csv.field_size_limit(limit)
            return
        except OverflowError:
            limit //= 2


def _open_quote(line: str, delimiter: str) -> bool:
    """Whether ``line`` leaves a CSV quote open (an odd number of quote characters)."""
    return delimiter != "\t" and line.count('"') % 2 == 1


def _explained(exc: csv.Error, delimiter: str) -> str:
    """csv's message, with what it means where it is terse."""
    if "expected after" in str(exc):
        return (f"text follows a quoted cell before the next {delimiter!r} (a quote inside "
                f'a quoted cell is written twice: ""); csv: {exc}')
    return str(exc)


def _read_table_into(path: Path, col: Collector) -> None:
    decoded = decode_file(path, col)
    if decoded is None:
        return
    _csv_limit()
    name = str(path)
    head = next((line for line in decoded.lines if line.strip()), "")
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    if delimiter not in head:
        # Not csv.Sniffer: its quote-guessing regex is quadratic in the line it samples
        # (a 60 kB header of ';"x' takes 16 s, and a header may be as long as the file).
        delimiter = next((d for d in ("\t", ",", ";", "|") if d in head), delimiter)
    columns: list[str] | None = None
    count = 0
    start = 0  # index into decoded.lines where the current reader began
    while start < len(decoded.lines):
        # csv's line_num counts the items it is fed; feeding it our own lines keeps it in
        # step with the file's real line numbers (a lone CR inside a cell is not a line).
        lines = (line + "\n" for line in decoded.lines[start:])
        # strict: a quote that closes a cell and is followed by more text, or that opens
        # one never closed, is an error. Lenient csv read a stray quote as the start of a
        # cell that ran into the next rows: a 3-cell row made of two records, the second
        # lost without a word (outside probe, session 11)
        reader = (
            csv.reader(lines, delimiter=delimiter, quoting=csv.QUOTE_NONE)
            if delimiter == "\t"
            else csv.reader(lines, delimiter=delimiter, strict=True)
        )
        restart: int | None = None
        consumed = start
        while True:
            first = consumed + 1
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                reached = start + reader.line_num
                if reached > first and _open_quote(decoded.lines[first - 1], delimiter):
                    # the row's quote ran into the lines after it: report the row, and
                    # read those lines as rows again
                    col.problem(name, first, "a quote opened on this line is not closed "
                                f"where its row ends ({exc})")
                    restart = first
                    break
                col.problem(name, first, f"unreadable row: {_explained(exc, delimiter)}")
                if reached <= consumed:  # no progress: give up on the rest
                    return
                consumed = reached
                continue
            consumed = start + reader.line_num
            if (
                consumed == len(decoded.lines)
                and consumed > first
                and _open_quote(decoded.lines[first - 1], delimiter)
            ):
                # a quote opened on this line never closes: csv read the rest of the file
                # as one cell. Report it and read the following lines as rows again.
                col.problem(name, first, "a quote opened on this line is never closed")
                restart = first
                break
            if not any(cell.strip() for cell in row):
                continue
            if bad := decoded.bad_in(first, consumed):
                col.problem(name, first, bad)
                if columns is None:
                    return
                continue
            if columns is None:
                if "abstract" not in {_canonical_key(c) for c in row}:
                    col.problem(name, first, f"no abstract column (columns: {', '.join(row)})")
                    return
                columns = row
                continue
            count += 1
            if len(row) != len(columns):
                col.problem(name, first, f"expected {len(columns)} columns, got {len(row)}")
                continue
            # pairs, not a dict: a column named twice ("id", "ID", "paper_id") keeps both
            # cells, and two different values reject the row (graph.ingest.records)
            col.record(list(zip(columns, row, strict=True)), name, first)
        if restart is None:
            break
        start = restart
    if count == 0:
        col.problem(name, None, "no records")


class TableReader:
    """``.csv`` / ``.tsv``: a header row of field names, then one record a row."""

    suffixes: tuple[str, ...] = (".csv", ".tsv")

    def read_into(self, path: Path, sink: Collector) -> None:
        """Read every record of ``path`` into ``sink``."""
        _read_table_into(path, sink)
