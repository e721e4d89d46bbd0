"""Papers collected across files, duplicates merged as they come."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Sequence
from typing import Any

from graph.errors import InputError
from graph.ids import id_key
from graph.ingest.base import InputProblem, ReadResult
from graph.ingest.records import Record, _display, paper_from_record
from graph.model import Paper
from graph.settings import DEFAULT_MAX_INPUT_FILE_BYTES

logger = logging.getLogger(__name__)


def _generated(paper: Paper) -> bool:
    return paper.id == f"p-{paper.text_hash[:12]}"


def _cut(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _merge(first: Paper, later: Paper) -> Paper:
    changes: dict[str, Any] = {}
    if first.title is None and later.title is not None:
        changes["title"] = later.title
        changes["label"] = later.title
    for name in ("venue", "year", "authors", "keywords", "references", "doi"):
        if not getattr(first, name) and getattr(later, name):
            changes[name] = getattr(later, name)
    extra = tuple(u for u in later.urls if u not in first.urls)
    if extra:
        changes["urls"] = first.urls + extra
    if _generated(first) and not _generated(later):
        changes["id"] = later.id
    return dataclasses.replace(first, **changes) if changes else first


def record_order(paper: Paper) -> tuple[Any, ...]:
    """Where ``paper`` goes when records meet (two of one text, of one id): a given id
    before a generated one, then by id (its NFC spelling before others), then by what it
    holds. Never by where it was read: the same records give the same papers in any
    order (issue 39, finding 12)."""
    key = id_key(paper.id)
    return (
        _generated(paper), key, paper.id != key, paper.id, paper.text_hash, paper.abstract,
        paper.title or "", paper.venue or "", paper.year or 0, paper.authors, paper.keywords,
        paper.urls, paper.references, paper.doi or "",
    )


def _groups(read: Sequence[tuple[Paper, str, int | None]], among: Iterable[int]) -> dict[int, int]:
    """Record -> its group (the least record of it): records of one text or one DOI,
    transitively (union-find)."""
    parent: dict[int, int] = {}

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str, int] = {}
    for i in among:
        parent[i] = i
        paper = read[i][0]
        for key in (f"t:{paper.text_hash}", *([f"d:{paper.doi}"] if paper.doi else [])):
            j = first.setdefault(key, i)
            a, b = root(i), root(j)
            if a != b:
                parent[max(a, b)] = min(a, b)
    return {i: root(i) for i in parent}


class Collector:
    """Accumulates the papers of every record read, then merges duplicates.

    Records are kept as read; :attr:`result` merges them, the same way whatever order
    they came in (a reader's order, the order files are named, a shuffled file):

    * an id given to records of different texts: none of them is kept (which one was
      meant is not for the reader to guess), each reported with where the others are;
    * records of one text merge into one paper: the one first in :func:`record_order`
      (a given id before a generated one, then by id) wins, the others fill the fields
      it lacks, in that order; a different given id merged away is reported.

    A DOI identifies a paper as a text does: records are grouped by *either* match,
    transitively (a record with the text of A and the DOI of B joins A and B into one
    paper), then merged as above. So the same paper from a BibTeX file and a RIS export
    whose abstracts differ in a word is one paper when they give one DOI (folded and
    stripped of its URL prefix, graph.refs.normalize_doi). An id is still checked against
    the groups: records of one id in different groups (different texts, no DOI joining
    them) are none of them kept. Two DOIs in one group (one text under two DOIs) keep the
    winner's, and each other DOI is reported.
    """

    def __init__(self, max_file_bytes: int = DEFAULT_MAX_INPUT_FILE_BYTES) -> None:
        self.max_file_bytes = max_file_bytes
        self._read: list[tuple[Paper, str, int | None]] = []
        self._unparsed = 0  # references dropped as unparseable, all records
        # (position: the record it comes before or with, 0 = the reader's / 1 = merging's,
        # problem): problems come out in reading order
        self._problems: list[tuple[int, int, InputProblem]] = []
        self._result: ReadResult | None = None

    @property
    def records(self) -> int:
        """How many records were read into papers so far (before duplicates merge)."""
        return len(self._read)

    @property
    def result(self) -> ReadResult:
        """The papers read, duplicates merged, and every problem, in reading order."""
        if self._result is None:
            self._result = self._merged()
        return self._result

    def problem(self, path: str, line: int | None, reason: str, *, kept: bool = False) -> None:
        """Report ``reason`` at ``path:line``; ``kept``: the record still went in."""
        path = _display(path)
        logger.debug("%s:%s: %s", path, line, reason)
        self._problems.append((len(self._read), 0, InputProblem(path, line, reason, kept)))
        self._result = None

    def add(self, paper: Paper, path: str, line: int | None) -> None:
        """Keep ``paper`` (read at ``path:line``) for :attr:`result`."""
        self._read.append((paper, _display(path), line))
        self._result = None

    def _merged(self) -> ReadResult:
        read = self._read
        problems = list(self._problems)

        def said(i: int, reason: str) -> None:
            _, path, line = read[i]
            problems.append((i, 1, InputProblem(path, line, reason)))

        by_id: dict[str, list[int]] = {}
        for i, (paper, _, _) in enumerate(read):
            by_id.setdefault(id_key(paper.id), []).append(i)
        group = _groups(read, range(len(read)))
        kept: list[int] = []
        for members in by_id.values():
            if len({group[i] for i in members}) > 1:
                for i in members:
                    others = ", ".join(read[j][0].source or "?" for j in members if j != i)
                    said(i, f"duplicate id {read[i][0].id!r} with different text (also at "
                            f"{_cut(others)}); none of them kept")
            else:
                kept.extend(members)
        # again without the records refused: one of them may have joined two groups
        group = _groups(read, sorted(kept))
        by_text: dict[int, list[int]] = {}  # group -> its records, in order of first reading
        for i in sorted(kept):
            by_text.setdefault(group[i], []).append(i)
        result = ReadResult(unparseable_references=self._unparsed)
        for members in sorted(by_text.values(), key=min):
            ordered = sorted(members, key=lambda i: (record_order(read[i][0]), i))
            merged = read[ordered[0]][0]
            for i in ordered[1:]:
                paper = read[i][0]
                same = "text" if paper.text_hash == merged.text_hash else "DOI"
                if id_key(paper.id) != id_key(merged.id) and not _generated(paper):
                    said(i, f"id {paper.id!r} has the same {same} as {merged.id!r} "
                            f"(at {merged.source}); merged into it")
                if paper.doi and merged.doi and paper.doi != merged.doi:
                    said(i, f"doi {paper.doi!r} differs from {merged.doi!r} of the same "
                            f"paper {merged.id!r} (at {merged.source}); that one kept")
                merged = _merge(merged, paper)
                result.duplicates += 1
            result.papers.append(merged)
        result.problems = [p for _, _, p in sorted(problems, key=lambda t: (t[0], t[1]))]
        return result
    def record(
        self, record: Record, path: str, line: int | None,
        *, default_venue: str | None = None, where: str = "", notes: Sequence[str] = (),
    ) -> None:
        """Add one record's paper, or report why not (once, however many flaws it has)."""
        notes = list(notes)  # fields a reader already dropped, reported if the record stays
        source = f"{path}:{line}" if line is not None else f"{path}{where}"
        unparsed: list[str] = []
        try:
            paper = paper_from_record(
                record, source=source, default_venue=default_venue, notes=notes,
                unparsed=unparsed,
            )
        except InputError as exc:
            self.problem(path, line, f"{where.lstrip(': ')}{': ' if where else ''}{exc}")
            return
        at = f"{where.lstrip(': ')}: " if where and line is None else ""  # "papers[3]: "
        for note in notes:
            self.problem(path, line, f"{at}{note}", kept=True)
        self._unparsed += len(unparsed)
        self.add(paper, path, line)
