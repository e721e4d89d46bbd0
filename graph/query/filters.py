"""Which papers a list keeps, in which order, and paper counts: the same on every store.

A :class:`PaperFilter` (the API's ``where``) is answered by the store itself (the
Backend primitives ``match_papers`` and ``count_papers``: SQL on the
embedded store, one Cypher query on Neo4j, a walk of the graph in memory), never by
fetching every paper. The rules are here, once:

* ``year_from``/``year_to``: an inclusive range, either end open; a paper without a
  year fails it.
* ``venues``: any of them, exactly as stored; a paper without a venue fails it.
* ``links``: for each linked field (``concepts``: papers that MENTION one of them;
  ``datasets``: papers that USE or INTRODUCE one of them), a paper joined to any of its
  ids; ``topics``: papers IN_TOPIC of one of them, a topic or a subtopic).
  :data:`LINKS` says which edge types each field follows: a new field is one entry there
  and one input field in the API.
* ``kinds``: the node kinds a list keeps, where a list holds several (a neighbourhood,
  co-cited works); the paper fields above admit papers only (an outside work, a concept
  or a dataset has no year, venue or concepts).

Fields hold together (AND); the values of one field are alternatives (OR).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from enum import StrEnum

from graph.errors import InvalidArgumentError
from graph.model import GraphNode, NodeKind, Paper, RelType

#: the most values one field of a filter takes (venues, concept or dataset ids)
MAX_VALUES = 100

#: linked fields: name -> the edge types (from a paper) that join a paper to its ids
LINKS: dict[str, frozenset[RelType]] = {
    "concepts": frozenset({RelType.MENTIONS}),
    "datasets": frozenset({RelType.USES, RelType.INTRODUCES}),
    "topics": frozenset({RelType.IN_TOPIC}),
}


class PaperOrder(StrEnum):
    """What a list of papers can be sorted by (ties by id, ascending, on every store).

    Another order is one member here and its value in each store: :func:`sort_value`,
    ``graph.store.sqlreads._ORDER_SQL`` and ``graph.store.cypher._sort_value``;
    the API's ``PaperSort`` input gets one field."""

    YEAR = "year"
    TITLE = "title"  # the title, or the label of a paper without one
    CITATIONS = "citations"  # corpus papers citing it (CITES in-degree from papers)
    IMPORTANCE = "importance"  # Paper.importance (PageRank at the last topic computation)


@dataclass(frozen=True, slots=True)
class PaperSort:
    """One sort key; papers without its value (a year, an importance) sort last either
    way."""

    by: PaperOrder
    descending: bool = False


class CountBy(StrEnum):
    """What paper counts are grouped by."""

    YEAR = "year"
    VENUE = "venue"
    CONCEPT = "concept"  # papers mentioning each concept
    TOPIC = "topic"  # papers IN_TOPIC of each top-level topic (level 1)


@dataclass(frozen=True, slots=True)
class GroupCount:
    """Papers in one group: ``key`` is the year, the venue, the concept or the topic id."""

    key: int | str
    count: int


def _values(name: str, values: Collection[str]) -> tuple[str, ...]:
    out = tuple(dict.fromkeys(values))
    if len(out) > MAX_VALUES:
        raise InvalidArgumentError(name, f"takes at most {MAX_VALUES} values, got {len(out)}")
    return out


@dataclass(frozen=True, slots=True)
class PaperFilter:
    """A ``where``: see the module docstring. ``venue`` (one) is the older spelling of
    ``venues``; both may be given (then a paper in any of them passes)."""

    year_from: int | None = None
    year_to: int | None = None
    venue: str | None = None
    venues: tuple[str, ...] = ()
    concepts: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()
    kinds: frozenset[NodeKind] | None = None
    topics: tuple[str, ...] = ()
    #: venue and venues together, each once (set in __post_init__)
    venue_set: tuple[str, ...] = field(default=(), init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.year_from is not None and self.year_to is not None and (
            self.year_from > self.year_to
        ):
            raise InvalidArgumentError("year_from", "is after year_to")
        together = ((self.venue,) if self.venue is not None else ()) + tuple(self.venues)
        object.__setattr__(self, "venue_set", _values("venue", together))
        object.__setattr__(self, "concepts", _values("concept", self.concepts))
        object.__setattr__(self, "datasets", _values("dataset", self.datasets))
        object.__setattr__(self, "topics", _values("topic", self.topics))

    @property
    def paper_fields(self) -> bool:
        """True when a paper field (year, venue, a link) is set: only papers pass."""
        return (self.year_from is not None or self.year_to is not None
                or bool(self.venue_set) or any(ids for ids, _ in self.links()))

    @property
    def empty(self) -> bool:
        """True when it keeps everything."""
        return not self.paper_fields and self.kinds is None

    def links(self) -> list[tuple[tuple[str, ...], frozenset[RelType]]]:
        """(ids, edge types from the paper) of each linked field in use (:data:`LINKS`)."""
        fields = (("concepts", self.concepts), ("datasets", self.datasets),
                  ("topics", self.topics))
        return [(ids, LINKS[name]) for name, ids in fields if ids]

    def admits_kind(self, kind: NodeKind) -> bool:
        """Whether ``kind`` may be in the list at all."""
        if self.kinds is not None and kind not in self.kinds:
            return False
        return kind is NodeKind.PAPER or not self.paper_fields

    def admits_fields(self, node: GraphNode | None) -> bool:
        """Whether ``node`` passes the year and venue fields (a store answers the links)."""
        if not isinstance(node, Paper):
            return node is not None and not self.paper_fields
        if self.venue_set and node.venue not in self.venue_set:
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


def sorted_ids(
    ids: Collection[str], sort: PaperSort | None, value: dict[str, float | str | None]
) -> list[str]:
    """``ids`` by ``sort`` (``value``: each id's year, title, citations or importance;
    None last either way), ties by id; by id alone for None. The order every store gives."""
    by_id = sorted(ids)
    if sort is None:
        return by_id
    known = [i for i in by_id if value.get(i) is not None]
    known.sort(key=lambda i: value[i], reverse=sort.descending)  # type: ignore[arg-type,return-value]
    return known + [i for i in by_id if value.get(i) is None]


def sort_value(sort: PaperSort, paper: Paper, citations: int) -> float | str | None:
    """A paper's value for ``sort`` (see :class:`PaperOrder`)."""
    if sort.by is PaperOrder.YEAR:
        return paper.year
    if sort.by is PaperOrder.TITLE:
        return paper.title if paper.title is not None else paper.label
    if sort.by is PaperOrder.IMPORTANCE:
        return paper.importance
    return citations


def ranked_groups(counts: dict[int | str, int], by: CountBy, limit: int) -> list[GroupCount]:
    """Groups in the order every store gives: years ascending; venues, concepts and topics by
    (-count, key); the first ``limit``."""
    if by is CountBy.YEAR:
        return [GroupCount(k, counts[k]) for k in sorted(counts)[:limit]]
    keys = sorted(counts, key=lambda k: (-counts[k], k))
    return [GroupCount(k, counts[k]) for k in keys[:limit]]
