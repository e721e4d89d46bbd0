"""RIS (``.ris``, Zotero's, EndNote's and most databases' export) as paper records, with rispy.

The file is split into records here, so that each has its line and a broken one costs
only itself: a record runs from its ``TY  -`` line to its ``ER  -`` line. A record whose
``ER`` is missing ends where the next ``TY`` starts (or at the end of the file); it is
read, and reported (kept) at its ``TY`` line. A tag line before any ``TY`` is reported
and skipped; numbering lines (``1.``, as rispy writes) and blank lines are ignored.
Each record is then parsed by ``rispy.loads`` and mapped:

==========================================  ======================================
RIS tag (rispy name)                        record field
==========================================  ======================================
``ID`` (id)                                 ``id``
``TI`` (title), else ``T1``                 ``title``
``AB`` (abstract), else ``N2``              ``abstract``
``AU``, ``A1``                              ``authors``: "Last, First" as
                                            "First Last"
``PY``, else ``Y1``, else ``DA``            ``year`` (the leading 4 digits of
                                            "2017/06/12/")
``T2``, else ``JO``, ``JF``, ``J2``         ``venue``
``KW``                                      ``keywords``
``DO``                                      ``doi`` (folded, prefix stripped)
``UR``                                      ``urls``
==========================================  ======================================

RIS has no tag for references; a paper read from RIS cites nothing unless another
file gives its references.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import rispy

from graph.ingest.collect import Collector
from graph.ingest.decode import decode_file
from graph.ingest.records import _show

_TAG_RE = re.compile(r"^([A-Z][A-Z0-9])  -(?: (.*))?$")
_NUMBER_RE = re.compile(r"^\s*\d+\.\s*$")
_YEAR_RE = re.compile(r"^\s*(\d{4})(?:[/\-].*)?$")


def person(name: str) -> str:
    """A RIS name ("Last, First[, Suffix]") as "First Last[ Suffix]"."""
    parts = [p.strip() for p in name.split(",")]
    if len(parts) < 2 or not parts[0]:
        return name.strip()
    last, first, *rest = parts
    return " ".join(p for p in (first, last, *rest) if p)


def ris_name(name: str) -> str:
    """A name as "First Last" written as RIS writes it ("Last, First"): :func:`person`
    reads it back."""
    first, _, last = name.strip().rpartition(" ")
    return f"{last}, {first}" if first else last


def _first(entry: dict[str, Any], *names: str) -> Any:
    for name in names:
        value = entry.get(name)
        if value not in (None, "", []):
            return value
    return None


def ris_record(entry: dict[str, Any]) -> dict[str, Any]:
    """The paper record of one rispy entry."""
    record: dict[str, Any] = {}
    for field, names in (
        ("id", ("id",)), ("title", ("title", "primary_title")),
        ("abstract", ("abstract", "notes_abstract")),
        ("venue", ("secondary_title", "journal_name", "alternate_title3", "alternate_title1")),
        ("keywords", ("keywords",)), ("doi", ("doi",)), ("urls", ("urls",)),
    ):
        value = _first(entry, *names)
        if value is not None:
            record[field] = value
    authors = [*entry.get("authors", ()), *entry.get("first_authors", ())]
    if authors:
        record["authors"] = [person(a) for a in authors if isinstance(a, str)]
    year = _first(entry, "year", "publication_year", "date")
    if isinstance(year, str) and (m := _YEAR_RE.match(year)):
        year = m.group(1)
    if year is not None:
        record["year"] = year
    return record


def _spans(lines: list[str]) -> tuple[list[tuple[int, int, bool]], list[tuple[int, str]]]:
    """(first line, last line, closed by ER) of each record, 1-based; and stray lines."""
    spans: list[tuple[int, int, bool]] = []
    stray: list[tuple[int, str]] = []
    start: int | None = None
    for number, text in enumerate(lines, start=1):
        m = _TAG_RE.match(text.rstrip("\r"))
        tag = m.group(1) if m else None
        if tag == "TY":
            if start is not None:
                spans.append((start, number - 1, False))
            start = number
        elif tag == "ER":
            if start is None:
                stray.append((number, "ER line outside a record; ignored"))
            else:
                spans.append((start, number, True))
                start = None
        elif start is None and tag is not None:
            stray.append((number, f"tag {tag} before any TY (start of record); line skipped"))
        elif start is None and text.strip() and not _NUMBER_RE.match(text):
            stray.append((number, f"text outside a record: {_show(text.strip(), 40)}; skipped"))
    if start is not None:
        spans.append((start, len(lines), False))
    return spans, stray


def _read_ris_into(path: Path, col: Collector) -> None:
    decoded = decode_file(path, col)
    if decoded is None:
        return
    name = str(path)
    spans, stray = _spans(decoded.lines)
    stray_at = iter(stray)
    pending = next(stray_at, None)
    for ordinal, (first, last, closed) in enumerate(spans, start=1):
        while pending is not None and pending[0] < first:
            col.problem(name, *pending)
            pending = next(stray_at, None)
        where = f": record {ordinal}"
        if bad := decoded.bad_in(first, last):
            col.problem(name, first, f"record {ordinal}: {bad}")
            continue
        body = decoded.lines[first - 1 : last]
        if not closed:
            body.append("ER  - ")
        try:
            entries = rispy.loads("\n".join(body))
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            col.problem(name, first, f"record {ordinal}: unreadable: {_show(str(exc), 120)}")
            continue
        notes = [] if closed else [
            f"no ER line (end of record): the record ends at line {last}, before "
            + ("the next TY" if last < len(decoded.lines) else "the end of the file")
        ]
        for entry in entries:
            col.record(ris_record(entry), name, first, where=where, notes=notes)
    while pending is not None:
        col.problem(name, *pending)
        pending = next(stray_at, None)
    if not spans:
        col.problem(name, None, "no records (no TY line)")


class RisReader:
    """``.ris``: one record per ``TY`` … ``ER`` block."""

    suffixes: tuple[str, ...] = (".ris",)

    def read_into(self, path: Path, sink: Collector) -> None:
        """Read every record of ``path`` into ``sink``."""
        _read_ris_into(path, sink)
