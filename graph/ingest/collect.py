"""Papers collected across files, duplicates merged as they come."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
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


def _merge(first: Paper, later: Paper) -> Paper:
    changes: dict[str, Any] = {}
    if first.title is None and later.title is not None:
        changes["title"] = later.title
        changes["label"] = later.title
    for name in ("venue", "year", "authors", "keywords", "references"):
        if not getattr(first, name) and getattr(later, name):
            changes[name] = getattr(later, name)
    extra = tuple(u for u in later.urls if u not in first.urls)
    if extra:
        changes["urls"] = first.urls + extra
    if _generated(first) and not _generated(later):
        changes["id"] = later.id
    return dataclasses.replace(first, **changes) if changes else first


class Collector:
    """Accumulates papers across files, merging duplicates as they come."""

    def __init__(self, max_file_bytes: int = DEFAULT_MAX_INPUT_FILE_BYTES) -> None:
        self.max_file_bytes = max_file_bytes
        self.result = ReadResult()
        self._by_hash: dict[str, int] = {}
        self._by_id: dict[str, int] = {}

    def problem(self, path: str, line: int | None, reason: str, *, kept: bool = False) -> None:
        """Report ``reason`` at ``path:line``; ``kept``: the record still went in."""
        path = _display(path)
        logger.debug("%s:%s: %s", path, line, reason)
        self.result.problems.append(InputProblem(path, line, reason, kept))

    def add(self, paper: Paper, path: str, line: int | None) -> None:
        papers = self.result.papers
        key = id_key(paper.id)  # café NFC and NFD are one id: the first spelling is kept
        if key in self._by_id:
            earlier = papers[self._by_id[key]]
            if earlier.text_hash != paper.text_hash:
                self.problem(
                    path, line,
                    f"duplicate id {paper.id!r} with different text (first at {earlier.source})",
                )
                return
        index = self._by_hash.get(paper.text_hash)
        if index is None:
            self._by_hash[paper.text_hash] = self._by_id[key] = len(papers)
            papers.append(paper)
            return
        earlier = papers[index]
        if id_key(earlier.id) != key and not _generated(earlier) and not _generated(paper):
            self.problem(
                path, line,
                f"id {paper.id!r} has the same text as {earlier.id!r} "
                f"(first at {earlier.source}); merged into it",
            )
        merged = _merge(earlier, paper)
        if merged.id != earlier.id:
            del self._by_id[id_key(earlier.id)]
            self._by_id[id_key(merged.id)] = index
        papers[index] = merged
        self.result.duplicates += 1

    def record(
        self, record: Record, path: str, line: int | None,
        *, default_venue: str | None = None, where: str = "", notes: Sequence[str] = (),
    ) -> None:
        """Add one record's paper, or report why not (once, however many flaws it has)."""
        notes = list(notes)  # fields a reader already dropped, reported if the record stays
        source = f"{path}:{line}" if line is not None else f"{path}{where}"
        try:
            paper = paper_from_record(
                record, source=source, default_venue=default_venue, notes=notes
            )
        except InputError as exc:
            self.problem(path, line, f"{where.lstrip(': ')}{': ' if where else ''}{exc}")
            return
        for note in notes:
            self.problem(path, line, note, kept=True)
        self.add(paper, path, line)
