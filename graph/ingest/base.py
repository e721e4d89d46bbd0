"""The Reader protocol and what reading gives back."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from graph.model import Paper

if TYPE_CHECKING:
    from graph.ingest.collect import Collector


@dataclass(frozen=True, slots=True)
class InputProblem:
    """One thing in the input that could not be read, with where it is."""

    path: str
    line: int | None
    reason: str
    kept: bool = False  # the record went in, without the field this drops

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.path}: {self.reason}"
        return f"{self.path}:{self.line}: {self.reason}"


@dataclass
class ReadResult:
    """Papers read, problems met, how many records merged into an earlier one, and how
    many references were dropped as unparseable (each also a problem)."""

    papers: list[Paper] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    duplicates: int = 0
    unparseable_references: int = 0

    @property
    def partial(self) -> bool:
        """True when some input could not be read."""
        return bool(self.problems)


class Reader(Protocol):
    """One input format.

    ``suffixes`` are the lower-case file name endings it takes (".csv"); the registry in
    ``graph/ingest/corpus.py`` dispatches on them. ``read_into`` reads one file and hands
    each record (a mapping of field names to raw values) to ``sink.record(...)``, with the
    line it starts on; everything it cannot read goes to ``sink.problem(path, line,
    reason)``. It never raises for bad data: :func:`graph.ingest.decode.decode_file` gives
    the file's lines (or reports why there are none), and ``sink`` cleans, checks and
    deduplicates the records, as for every other format.
    """

    @property
    def suffixes(self) -> tuple[str, ...]:
        """File name endings, lower-case, with the dot."""
        ...

    def read_into(self, path: Path, sink: Collector) -> None:
        """Read the records of ``path`` into ``sink``."""
        ...
