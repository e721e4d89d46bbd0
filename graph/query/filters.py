"""Which papers a list keeps: a year range and a venue, the same on every store.

Applied by the query layer to the nodes a store returns, before a list is cut, so every
store keeps the same papers (graph.query.citations, graph.related).
"""

from __future__ import annotations

from dataclasses import dataclass

from graph.errors import InvalidArgumentError
from graph.model import GraphNode, Paper


@dataclass(frozen=True, slots=True)
class PaperFilter:
    """A year range (inclusive; either end open) and a venue (exact, as stored). A paper
    without a year fails a year bound, one without a venue a venue; an outside work or
    a concept fails any bound (it has neither)."""

    year_from: int | None = None
    year_to: int | None = None
    venue: str | None = None

    def __post_init__(self) -> None:
        if self.year_from is not None and self.year_to is not None and (
            self.year_from > self.year_to
        ):
            raise InvalidArgumentError("year_from", "is after year_to")

    @property
    def empty(self) -> bool:
        """True when it keeps everything."""
        return self.year_from is None and self.year_to is None and self.venue is None

    def admits(self, node: GraphNode | None) -> bool:
        """Whether ``node`` is kept."""
        if self.empty:
            return node is not None
        if not isinstance(node, Paper):
            return False
        if self.venue is not None and node.venue != self.venue:
            return False
        if self.year_from is None and self.year_to is None:
            return True
        if node.year is None:
            return False
        return (self.year_from is None or node.year >= self.year_from) and (
            self.year_to is None or node.year <= self.year_to
        )


#: keeps everything
ANY = PaperFilter()
