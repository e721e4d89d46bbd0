"""The ``where``, ``sort`` and aggregate shapes of the list fields (issue 44).

Named and shaped as @neo4j/graphql 7 names them (its current docs): a field's operators
nest under it (``year: {gte: 2019, lte: 2021}``, ``venue: {in: ["ICLR", "NeurIPS"]}``),
sorting is ``sort: [{year: DESC}]`` and a count is ``papersAggregate(where:) { count }``.
The rules of each field: :mod:`graph.query.filters`. Adding a linked field is one input
field here and one entry in ``graph.query.filters.LINKS``.
"""

# strawberry's field decorators are untyped for mypy; the resolvers themselves are typed.
# mypy: disable-error-code="untyped-decorator"

from __future__ import annotations

from collections.abc import Awaitable, Callable
from enum import Enum
from typing import TYPE_CHECKING, TypeVar

import strawberry

from api.graphql import rows as r
from api.graphql import types as t
from api.graphql.errors import check_range
from graph.errors import InvalidArgumentError
from graph.model import Concept, NodeKind, Topic
from graph.query.filters import MAX_VALUES, CountBy, PaperFilter, PaperOrder, PaperSort
from graph.query.papers import MAX_GROUPS

if TYPE_CHECKING:
    from api.graphql.context import Context

_T = TypeVar("_T")


@strawberry.input(description="An Int's operators: equal to, at least, at most (all given hold).")
class IntWhere:
    eq: int | None = None
    gte: int | None = None
    lte: int | None = None


@strawberry.input(description=f"A String equal to `eq` and to one of `in` (at most {MAX_VALUES}): "
                  "each operator given holds.")
class StringWhere:
    eq: str | None = None
    in_: list[str] | None = strawberry.field(default=None, name="in")


@strawberry.input(
    description=f"A node named by `eq` and by one of `in` (at most {MAX_VALUES}; each "
    "operator given holds): an id, raw or global, a name or an alias."
)
class NodeWhere:
    eq: strawberry.ID | None = None
    in_: list[strawberry.ID] | None = strawberry.field(default=None, name="in")


@strawberry.input(description="Node kinds: `eq` and one of `in` (each operator given holds).")
class KindWhere:
    eq: r.NodeKindEnum | None = None  # type: ignore[valid-type]
    in_: list[r.NodeKindEnum] | None = strawberry.field(default=None, name="in")  # type: ignore[valid-type]


@strawberry.input(
    description="Which nodes a list keeps; every field given must hold, a field's `in` "
    "values are alternatives. year, venue, concept and dataset hold for papers only (an "
    "outside work, a concept or a dataset has none): in a neighborhood they drop the papers "
    "and outside works they refuse, elsewhere they keep papers only."
)
class PaperWhere:
    year: IntWhere | None = None
    venue: StringWhere | None = None
    concept: NodeWhere | None = strawberry.field(
        default=None, description="Papers that MENTION one of these concepts.")
    dataset: NodeWhere | None = strawberry.field(
        default=None, description="Papers that USE or INTRODUCE one of these datasets.")
    topic: NodeWhere | None = strawberry.field(
        default=None, description="Papers IN_TOPIC of one of these topics or subtopics "
        "(`topic:3`, `topic:3.1`, a global id or a label).")
    kind: KindWhere | None = strawberry.field(
        default=None, description="Node kinds kept, in lists that hold several.")


@strawberry.enum(description="A sort direction.")
class SortDirection(Enum):
    ASC = "ASC"
    DESC = "DESC"


@strawberry.input(
    name="PaperSort",
    description="One sort key (exactly one field set); ties by id, ascending; papers "
    "without the key's value (a year, an importance) last either way.",
)
class PaperSortInput:
    year: SortDirection | None = None
    title: SortDirection | None = strawberry.field(
        default=None, description="The title (the label of a paper without one), by code point.")
    citations: SortDirection | None = strawberry.field(
        default=None, description="How many corpus papers cite it.")
    importance: SortDirection | None = strawberry.field(
        default=None, description="Paper.importance: PageRank at the last topic computation.")


@strawberry.enum(description="What paper counts are grouped by.")
class CountField(Enum):
    YEAR = "year"
    VENUE = "venue"
    CONCEPT = "concept"
    TOPIC = "topic"


@strawberry.type(description="Papers in one group of `countsBy`.")
class GroupCount:
    key: str = strawberry.field(description="The year, the venue, the concept or topic id.")
    count: int
    year: int | None = None
    concept_id: strawberry.Private[str | None] = None
    topic_id: strawberry.Private[str | None] = None

    @strawberry.field(description="The concept, in a count by CONCEPT.")
    async def concept(self, info: strawberry.Info[Context, None]) -> t.Concept | None:
        # read only when asked for, batched with the request's other node loads
        node = None if self.concept_id is None else await info.context.loaders.nodes.load(
            self.concept_id)
        return t.Concept.of(node) if isinstance(node, Concept) else None

    @strawberry.field(description="The top-level topic, in a count by TOPIC.")
    async def topic(self, info: strawberry.Info[Context, None]) -> t.Topic | None:
        node = None if self.topic_id is None else await info.context.loaders.nodes.load(
            self.topic_id)
        return t.Topic.of(node) if isinstance(node, Topic) else None


def _both(eq: list[_T] | None, in_: list[_T] | None) -> list[_T] | None:
    """What ``eq`` and ``in`` admit together: operators hold together, as in @neo4j/graphql
    (None: no constraint; []: nothing)."""
    if eq is None:
        return in_
    return eq if in_ is None else [v for v in eq if v in set(in_)]


def _values(argument: str, where: StringWhere | NodeWhere | None) -> list[str] | None:
    if where is None:
        return None
    if where.in_ is not None:
        check_range(f"{argument}.in", len(where.in_), 0, MAX_VALUES)
    return _both(None if where.eq is None else [str(where.eq)],
                 None if where.in_ is None else [str(v) for v in where.in_])


async def _named_all(named: Named, where: NodeWhere | None, kind: NodeKind,
                     argument: str) -> list[str] | None:
    """The ids ``where`` names (each looked up: an id, a global id, a name or an alias)."""
    if where is None:
        return None
    if where.in_ is not None:
        check_range(f"{argument}.in", len(where.in_), 0, MAX_VALUES)
    eq = None if where.eq is None else [await named(str(where.eq), kind, argument)]
    in_ = None if where.in_ is None else [await named(str(v), kind, argument)
                                          for v in where.in_]
    return _both(eq, in_)


def _kinds(where: KindWhere | None) -> frozenset[NodeKind] | None:
    if where is None:
        return None
    kinds = _both(None if where.eq is None else [where.eq],
                  None if where.in_ is None else list(where.in_))
    return None if kinds is None else frozenset(kinds)


def _year(where: IntWhere | None, year_from: int | None,
          year_to: int | None) -> tuple[int | None, int | None]:
    """The range ``where.year`` and the deprecated yearFrom/yearTo say together."""
    w = where or IntWhere()
    lows = [v for v in (year_from, w.gte, w.eq) if v is not None]
    highs = [v for v in (year_to, w.lte, w.eq) if v is not None]
    low, high = (max(lows) if lows else None), (min(highs) if highs else None)
    if low is not None and high is not None and low > high:
        raise InvalidArgumentError("where.year", f"admits no year (at least {low}, at most {high})")
    return low, high


#: looks up the node an argument names: (ref, kind, argument name) -> its id
Named = Callable[[str, NodeKind, str], Awaitable[str]]


async def paper_filter(
    named: Named, where: PaperWhere | None, *, year_from: int | None = None,
    year_to: int | None = None, venue: str | None = None,
) -> PaperFilter:
    """The domain filter of ``where`` (and the deprecated yearFrom/yearTo/venue arguments,
    which mean ``where: {year: {gte, lte}, venue: {eq}}``); concepts, datasets and topics
    named by id, name or alias are looked up by ``named`` (unknown: an error naming
    ``where.concept``)."""
    w = where or PaperWhere()
    low, high = _year(w.year, year_from, year_to)
    venues = _both(None if venue is None else [venue], _values("where.venue", w.venue))
    concepts = await _named_all(named, w.concept, NodeKind.CONCEPT, "where.concept")
    datasets = await _named_all(named, w.dataset, NodeKind.DATASET, "where.dataset")
    topics = await _named_all(named, w.topic, NodeKind.TOPIC, "where.topic")
    kinds = _kinds(w.kind)
    if [] in (venues, concepts, datasets, topics):
        kinds = frozenset()  # admits nothing (an `in: []`, or eq outside in), as Cypher's IN []
    return PaperFilter(low, high, None, tuple(venues or ()), tuple(concepts or ()),
                       tuple(datasets or ()), kinds, tuple(topics or ()))


def paper_sort(sort: list[PaperSortInput] | None) -> PaperSort | None:
    """The one sort key of ``sort`` (None: by relevance, or id for papers)."""
    if not sort:
        return None
    if len(sort) > 1:
        raise InvalidArgumentError("sort", "takes one key (ties are broken by id)")
    keys = [(PaperOrder(name), d) for name, d in vars(sort[0]).items() if d is not None]
    if len(keys) != 1:
        raise InvalidArgumentError("sort", "set exactly one of year, title, citations, "
                                   "importance")
    by, direction = keys[0]
    return PaperSort(by, direction is SortDirection.DESC)


@strawberry.type(description="Paper counts under a `where`, as @neo4j/graphql's aggregates.")
class PaperAggregate:
    keep: strawberry.Private[PaperFilter]

    @strawberry.field(description="Papers the `where` admits.")
    async def count(self, info: strawberry.Info[Context, None]) -> int:
        # a field of its own: read beside the countsBy asked with it, not before them
        keep = self.keep
        return int((await info.context.on_store(lambda store: store.papers(keep, limit=0)))[1])

    @strawberry.field(description="Paper counts by year (ascending), venue, concept or "
                      "top-level topic (most papers first, ties by key); the first `first` "
                      "groups.")
    async def counts_by(
        self, info: strawberry.Info[Context, None], field: CountField, first: int = 20,
    ) -> list[GroupCount]:
        check_range("first", first, 1, MAX_GROUPS)
        keep = self.keep
        by = CountBy(field.value)
        groups = await info.context.on_store(lambda store: store.paper_counts(by, keep, first))
        return [
            GroupCount(
                key=str(g.key), count=g.count,
                year=g.key if by is CountBy.YEAR and isinstance(g.key, int) else None,
                concept_id=str(g.key) if by is CountBy.CONCEPT else None,
                topic_id=str(g.key) if by is CountBy.TOPIC else None,
            )
            for g in groups
        ]


#: the deprecated range and venue arguments of the lists, kept so that no client breaks
_OLD = "Use where: {year: {gte, lte}, venue: {eq}}."
YearFrom = strawberry.argument(deprecation_reason=_OLD)
YearTo = strawberry.argument(deprecation_reason=_OLD)
Venue = strawberry.argument(deprecation_reason=_OLD)
