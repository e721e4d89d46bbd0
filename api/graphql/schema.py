"""The GraphQL schema: root queries and mutations, and :func:`build_schema`.

``python -m api.graphql.schema`` prints the SDL; ``schema.graphql`` at the repository
root is that output, and ``tests/api/test_schema_file.py`` fails when they drift.

Resolvers parse their arguments, call one use case (:class:`graph.service.GraphService`,
a store primitive, or :mod:`api.graphql.pages`) in a worker thread and convert the answer.
"""

# strawberry's field decorators are untyped for mypy; the resolvers themselves are typed.
# mypy: disable-error-code="untyped-decorator"

from __future__ import annotations

import logging
import re
from collections.abc import Collection
from typing import TYPE_CHECKING, Annotated, Any

import strawberry
from graphql import GraphQLError
from strawberry.types import ExecutionContext, Info

from api.graphql import citations as c
from api.graphql import registry
from api.graphql import rows as r
from api.graphql import types as t
from api.graphql import where as w
from api.graphql.connection import Connection, connection
from api.graphql.context import Context
from api.graphql.errors import check_range, is_client_error
from api.graphql.extension import citegraph_extension
from api.graphql.fastpath import execution_context_for, flat_plan
from api.graphql.loaders import in_thread
from api.graphql.pages import filtered_papers, text_page
from api.ids import from_global_id, offset_of, raw_id
from graph import model
from graph.errors import InputError, InvalidArgumentError, NotFoundError
from graph.ids import is_empty_id, spellings
from graph.lookup import Resolution, paper_to_remove
from graph.model import NodeKind, RelType
from graph.query.citations import Relation
from graph.query.filters import PaperFilter as Keep
from graph.query.filters import PaperSort
from graph.service import SearchMode
from graph.settings import Settings

if TYPE_CHECKING:
    from graph.build import BuildReport

log = logging.getLogger(__name__)

MAX_ADD = 1000  # most papers one addPapers call takes

Ctx = Info[Context, None]


# --------------------------------------------------------------------------- helpers


#: the ids ingest gives a paper without one (``p-`` and 12 hex digits of its text's hash)
_GENERATED_ID = re.compile(r"p-[0-9a-f]{12}")


async def find(
    info: Ctx, ref: str, kinds: Collection[NodeKind] | None, argument: str
) -> model.GraphNode:
    """A node by global id, raw id, or name/label/alias; NotFoundError naming ``argument``."""
    if is_empty_id(ref):  # the rule ingest uses: an id of zero-width spaces is not empty
        raise InvalidArgumentError(argument, "must not be empty")
    decoded = from_global_id(ref)
    key = decoded[1] if decoded else ref
    node = await info.context.loaders.nodes.load(key)
    if node is not None and kinds is not None and node.kind not in kinds and decoded is None:
        # an id is free text: a paper with id "LLM" must not hide the concept aliased so
        node = None
    if node is not None and decoded is None and node.kind is NodeKind.PAPER and (
        not _GENERATED_ID.fullmatch(ref)
    ):
        # a paper id is free text: "LLM" may also be a concept's alias. Say so (the
        # response said nothing: outside probe, session 11); a generated id is no name
        node = None
    if node is None and decoded is None:
        wanted = list(kinds) if kinds else None
        found = await info.context.on_service(lambda service: service.matches(ref, wanted))
        node = found[0] if found else None
        if len(found) > 1:  # "PaRa": a concept and a paper; say which, offer the others
            info.context.resolutions.append(
                Resolution(argument, ref, found[0], tuple(found[1:]))
            )
    if node is None or (kinds is not None and node.kind not in kinds):
        what = "/".join(k.value.lower() for k in kinds) if kinds else "node"
        raise NotFoundError(f"{argument}: no {what} with id, name or alias {ref!r}")
    return node


async def _citations(
    info: Ctx, relation: Relation, ids: list[strawberry.ID], first: int, keep: Keep,
    sort: PaperSort | None = None,
) -> list[c.CitationLink]:
    """One citation read of the seeds ``ids`` name (each looked up once)."""
    first = check_range("first", first, 1, info.context.settings.max_page_size)
    ids = _ids(info, "ids", ids)
    if not ids:
        raise InvalidArgumentError("ids", "give at least one paper")
    kinds = [NodeKind.PAPER] if relation in (Relation.PRIOR, Relation.COUPLED) else [
        NodeKind.PAPER, NodeKind.WORK]
    seeds = [(await find(info, i, kinds, "ids")).id for i in dict.fromkeys(ids)]
    _, links = await info.context.on_service(
        lambda service: service.citations(relation, seeds, first, keep, sort)
    )
    return [c.citation_link(x, relation) for x in links]


async def _where(info: Ctx, where: w.PaperWhere | None, **deprecated: Any) -> Keep:
    """The filter ``where`` (and the deprecated yearFrom/yearTo/venue) say; a concept or
    dataset or topic named as every argument names a node (:func:`find`)."""

    async def named(ref: str, kind: NodeKind, argument: str) -> str:
        return (await find(info, ref, [kind], argument)).id

    return await w.paper_filter(named, where, **deprecated)


def _citation_field(relation: Relation) -> Any:
    """A Query field answering one citation read (the four share their arguments)."""

    async def resolve(
        info: Ctx, ids: list[strawberry.ID], first: int = 20,
        where: w.PaperWhere | None = None, sort: list[w.PaperSortInput] | None = None,
        year_from: Annotated[int | None, w.YearFrom] = None,
        year_to: Annotated[int | None, w.YearTo] = None,
        venue: Annotated[str | None, w.Venue] = None,
    ) -> list[c.CitationLink]:
        keep = await _where(info, where, year_from=year_from, year_to=year_to,
                                    venue=venue)
        return await _citations(info, relation, ids, first, keep, w.paper_sort(sort))

    return strawberry.field(resolver=resolve, description=c.DESCRIPTIONS[relation])


def _types(rel_types: list[RelType] | None) -> list[RelType] | None:
    # a set in meaning: 7,000 copies of one type are one type
    return list(dict.fromkeys(rel_types)) if rel_types else None


def _kinds(kinds: list[NodeKind] | None) -> list[NodeKind] | None:
    return list(dict.fromkeys(kinds)) if kinds else None


def _ids(info: Ctx, argument: str, ids: list[strawberry.ID] | None) -> list[strawberry.ID]:
    """A list of node ids, at most ``max_page_size`` of them (as ``nodes(ids:)``)."""
    ids = ids or []
    check_range(argument, len(ids), 0, info.context.settings.max_page_size)
    return ids


def _page(info: Ctx, first: int, after: str | None) -> tuple[int, int]:
    first = check_range("first", first, 1, info.context.settings.max_page_size)
    return first, offset_of(after)


async def _text_page(
    info: Ctx, kind: NodeKind, text: str | None, first: int, after: str | None
) -> tuple[list[model.GraphNode], int, int]:
    first, offset = _page(info, first, after)
    nodes, total = await info.context.on_store(
        lambda store: text_page(store, kind, text, offset, first)
    )
    return nodes, total, offset


# --------------------------------------------------------------------------- inputs


@strawberry.input(description="Paper filters; all given ones must hold.")
class PaperFilter:
    venue: str | None = None
    year: int | None = None
    concept: str | None = strawberry.field(default=None, description="Concept id, name or alias.")
    dataset: str | None = strawberry.field(default=None, description="Dataset id, name or alias.")
    text: str | None = strawberry.field(default=None, description="Keyword match (all words).")


# --------------------------------------------------------------------------- query


@strawberry.type
class Query:
    @strawberry.field(description="Any node by global id or raw key; unknown: null and an error.")
    async def node(self, info: Ctx, id: strawberry.ID) -> t.Node | None:
        return t.to_node(await find(info, id, None, "id"))

    @strawberry.field(description="Nodes by id, in order; unknown ids give null and an error.")
    async def nodes(self, info: Ctx, ids: list[strawberry.ID]) -> list[t.Node | None]:
        check_range("ids", len(ids), 0, info.context.settings.max_page_size)
        # every spelling of each id (café NFC for a stored NFD café): ASCII ids have one
        forms = [spellings(k) or (k,) for k in (raw_id(i) for i in ids)]
        flat = list(dict.fromkeys(f for fs in forms for f in fs))
        loaded = dict(zip(flat, await info.context.loaders.nodes.load_many(flat), strict=True))
        found = [next((loaded[f] for f in fs if loaded[f] is not None), None) for fs in forms]
        return [
            t.to_node(n) if n is not None else NotFoundError(f"ids: no node with id {i!r}")  # type: ignore[misc]
            for i, n in zip(ids, found, strict=True)
        ]

    @strawberry.field(description="A paper by raw id (`p-…`), global id, or exact title/label.")
    async def paper(self, info: Ctx, id: strawberry.ID) -> t.Paper | None:
        node = await find(info, id, [NodeKind.PAPER], "id")
        assert isinstance(node, model.Paper)
        return t.Paper.of(node)

    @strawberry.field(description="Papers by id (or `sort`), filtered by `where` (or the older "
                      "`filter`); a Relay connection.")
    async def papers(
        self, info: Ctx, filter: PaperFilter | None = None,
        first: int = 10, after: str | None = None, where: w.PaperWhere | None = None,
        sort: list[w.PaperSortInput] | None = None,
    ) -> Connection[t.Paper]:
        f = filter or PaperFilter()
        first, offset = _page(info, first, after)
        if where is not None or sort:
            if filter is not None:
                raise InvalidArgumentError("filter", "give where (and sort) or filter, not both")
            keep = await _where(info, where)
            order = w.paper_sort(sort)
            found, count = await info.context.on_store(
                lambda store: store.papers(keep, order, offset=offset, limit=first))
            return connection([t.Paper.of(p) for p in found], offset, count)
        neighbors: list[str] = []
        if f.concept:
            neighbors.append((await find(info, f.concept, [NodeKind.CONCEPT], "filter.concept")).id)
        if f.dataset:
            neighbors.append((await find(info, f.dataset, [NodeKind.DATASET], "filter.dataset")).id)
        papers, total = await info.context.on_store(
            lambda store: filtered_papers(
                store, neighbors=neighbors, venue=f.venue, year=f.year, text=f.text,
                offset=offset, first=first,
            )
        )
        return connection([t.Paper.of(p) for p in papers], offset, total)

    @strawberry.field(description="How many papers a `where` admits, and their counts by "
                      "year, venue or concept.")
    async def papers_aggregate(
        self, info: Ctx, where: w.PaperWhere | None = None
    ) -> w.PaperAggregate:
        return w.PaperAggregate(keep=await _where(info, where))

    @strawberry.field(description="A concept by name, alias (\"LLM\"), raw or global id.")
    async def concept(self, info: Ctx, name: str) -> t.Concept | None:
        node = await find(info, name, [NodeKind.CONCEPT], "name")
        assert isinstance(node, model.Concept)
        return t.Concept.of(node)

    @strawberry.field(description="Concepts by id, or matching `text` (best first).")
    async def concepts(
        self, info: Ctx, text: str | None = None, first: int = 10, after: str | None = None
    ) -> Connection[t.Concept]:
        nodes, total, offset = await _text_page(info, NodeKind.CONCEPT, text, first, after)
        return connection(
            [t.Concept.of(n) for n in nodes if isinstance(n, model.Concept)], offset, total
        )

    @strawberry.field(description="A dataset by name, alias, raw or global id.")
    async def dataset(self, info: Ctx, name: str) -> t.Dataset | None:
        node = await find(info, name, [NodeKind.DATASET], "name")
        assert isinstance(node, model.Dataset)
        return t.Dataset.of(node)

    @strawberry.field(description="Datasets by id, or matching `text` (best first).")
    async def datasets(
        self, info: Ctx, text: str | None = None, first: int = 10, after: str | None = None
    ) -> Connection[t.Dataset]:
        nodes, total, offset = await _text_page(info, NodeKind.DATASET, text, first, after)
        return connection(
            [t.Dataset.of(n) for n in nodes if isinstance(n, model.Dataset)], offset, total
        )

    @strawberry.field(description="Topics, then subtopics (`level` 2), by id; empty before "
                                  "the first topic computation.")
    async def topics(
        self, info: Ctx, level: int | None = None, first: int = 50, after: str | None = None
    ) -> Connection[t.Topic]:
        first, offset = _page(info, first, after)
        if level is not None:
            check_range("level", level, 1, 2)  # topics, subtopics
        found = await info.context.on_service(lambda service: service.topics())
        picked = [x for x in found if level is None or x.level == level]
        return connection([t.Topic.of(x) for x in picked[offset:offset + first]], offset,
                          len(picked))

    @strawberry.field(description="A topic by raw id (`topic:3`, `3`, `3.1`), global id or "
                                  "label.")
    async def topic(self, info: Ctx, id: strawberry.ID) -> t.Topic | None:
        decoded = from_global_id(id)
        ref = decoded[1] if decoded else id
        found = await info.context.on_service(lambda service: service.topic(ref))
        return t.Topic.of(found)

    @strawberry.field(description="Keyword, semantic (papers only) or hybrid search.")
    async def search(
        self, info: Ctx, query: str, mode: t.SearchMode = t.SearchMode.KEYWORD,
        kinds: list[r.NodeKindEnum] | None = None, first: int = 10,  # type: ignore[valid-type]
        where: w.PaperWhere | None = None,
        year_from: Annotated[int | None, w.YearFrom] = None,
        year_to: Annotated[int | None, w.YearTo] = None,
        venue: Annotated[str | None, w.Venue] = None,
    ) -> list[t.SearchHit]:
        first = check_range("first", first, 1, info.context.settings.max_page_size)
        wanted = _kinds(kinds)
        how = SearchMode[mode.name]
        keep = await _where(info, where, year_from=year_from, year_to=year_to,
                                    venue=venue)
        hits = await info.context.on_service(
            lambda service: service.search(query, how, wanted, first, keep),
            expensive=how is not SearchMode.KEYWORD,  # a query to encode
        )
        return [t.SearchHit(node=t.to_node(h.node), score=h.score, keyword_score=h.keyword_score,
                            similarity=h.similarity) for h in hits]

    @strawberry.field(description="The subgraph within `depth` hops of a node (graph-tool shape).")
    async def neighborhood(
        self, info: Ctx, id: strawberry.ID, depth: int = 1,
        rel_types: list[r.RelTypeEnum] | None = None,  # type: ignore[valid-type]
        node_kinds: list[r.NodeKindEnum] | None = None,  # type: ignore[valid-type]
        limit: int = 100, where: w.PaperWhere | None = None,
    ) -> r.Subgraph | None:
        s = info.context.settings
        check_range("depth", depth, 1, s.max_depth)
        check_range("limit", limit, 1, s.max_neighborhood_nodes)
        start = await find(info, id, None, "id")
        kinds = _kinds(node_kinds)
        keep = await _where(info, where)
        _, sub = await info.context.on_service(
            lambda service: service.neighborhood(
                start.id, depth=depth, rel_types=_types(rel_types), node_kinds=kinds,
                limit=limit, where=keep,
            ),
            expensive=True,
        )
        return r.subgraph(sub)

    @strawberry.field(
        name="shortestPath",
        description="The shortest path (fewest hops, then strongest); null if none in maxHops.",
    )
    async def shortest_path(
        self, info: Ctx, from_: Annotated[strawberry.ID, strawberry.argument(name="from")],
        to: strawberry.ID, rel_types: list[r.RelTypeEnum] | None = None,  # type: ignore[valid-type]
        max_hops: int = 4,
    ) -> r.Path | None:
        check_range("maxHops", max_hops, 1, info.context.settings.max_hops)
        a = await find(info, from_, None, "from")
        b = await find(info, to, None, "to")
        found = await info.context.on_store(
            lambda store: store.shortest_path(a.id, b.id, _types(rel_types), max_hops),
            expensive=True,
        )
        return r.path(found) if found is not None else None

    @strawberry.field(description="Up to `k` simple paths, shortest and strongest first.")
    async def paths(
        self, info: Ctx, from_: Annotated[strawberry.ID, strawberry.argument(name="from")],
        to: strawberry.ID, k: int = 3, rel_types: list[r.RelTypeEnum] | None = None,  # type: ignore[valid-type]
        max_hops: int = 4,
    ) -> list[r.Path]:
        s = info.context.settings
        check_range("k", k, 1, s.max_paths)
        check_range("maxHops", max_hops, 1, s.max_hops)
        a = await find(info, from_, None, "from")
        b = await find(info, to, None, "to")
        found = await info.context.on_store(
            lambda store: store.k_paths(a.id, b.id, k, _types(rel_types), max_hops),
            expensive=True,
        )
        return [r.path(p) for p in found]

    @strawberry.field(
        description="Papers related to a paper (and `positive`, away from `negative`) or a text, "
        "with reasons. Never returns the seed papers."
    )
    async def related(
        self, info: Ctx, paper: strawberry.ID | None = None, text: str | None = None,
        first: int = 10, exclude: list[strawberry.ID] | None = None,
        positive: list[strawberry.ID] | None = None, negative: list[strawberry.ID] | None = None,
        where: w.PaperWhere | None = None,
        year_from: Annotated[int | None, w.YearFrom] = None,
        year_to: Annotated[int | None, w.YearTo] = None,
        venue: Annotated[str | None, w.Venue] = None,
    ) -> list[t.RelatedPaper]:
        first = check_range("first", first, 1, info.context.settings.max_page_size)
        keep = await _where(info, where, year_from=year_from, year_to=year_to,
                                    venue=venue)
        # capped as nodes(ids:) is: each id is a lookup, and a seed's vector and edges
        positive, negative = _ids(info, "positive", positive), _ids(info, "negative", negative)
        exclude = _ids(info, "exclude", exclude)
        papers = [NodeKind.PAPER]
        # a global id, raw id, name or short name, as every argument that names a node;
        # each distinct one looked up once
        seed = (await find(info, paper, papers, "paper")).id if paper else None
        named = {
            (argument, p): (await find(info, p, papers, argument)).id
            for argument, given in (("positive", positive), ("negative", negative))
            for p in dict.fromkeys(given)
        }
        pos = [named["positive", p] for p in positive]
        neg = [named["negative", p] for p in negative]
        excl = [raw_id(x) for x in exclude]
        _, found = await info.context.on_service(
            lambda service: service.related(
                paper=seed, text=text, first=first, exclude=excl, positive=pos, negative=neg,
                keep=keep,
            ),
            expensive=True,
        )
        return [t.related_paper(r) for r in found]

    # the citation reads (descriptions: api.graphql.citations.DESCRIPTIONS)
    prior_works: list[c.CitationLink] = _citation_field(Relation.PRIOR)
    derivative_works: list[c.CitationLink] = _citation_field(Relation.DERIVATIVE)
    coupled: list[c.CitationLink] = _citation_field(Relation.COUPLED)
    cocited: list[c.CitationLink] = _citation_field(Relation.COCITED)

    @strawberry.field(description="The node kinds, with how they are drawn.")
    def node_kinds(self) -> list[registry.NodeKindSpec]:
        return registry.node_kinds()

    @strawberry.field(description="The edge types: endpoints, direction, wording and colour.")
    def edge_types(self) -> list[registry.EdgeTypeSpec]:
        return registry.edge_types()

    @strawberry.field(description="Counts per node and edge kind; the most central concepts.")
    async def stats(self, info: Ctx) -> t.Stats:
        s = await info.context.on_store(lambda store: store.stats())
        # PageRank over the whole graph only when asked for (~1 s on ICLR 2021 uncached)
        central = (await in_thread(_central, info.context)
                   if _selects(info.selected_fields, "centralConcepts") else [])
        return t.Stats(
            nodes=[t.KindCount(kind=k, count=v) for k, v in s.nodes.items()],
            edges=[t.KindCount(kind=k, count=v) for k, v in s.edges.items()],
            total_nodes=sum(s.nodes.values()),
            total_edges=sum(s.edges.values()),
            central_concepts=central,
            incomplete=s.incomplete,
        )


def _selects(selections: Any, name: str) -> bool:
    """Whether ``name`` is selected anywhere in ``selections`` (fragments included)."""
    for sel in selections or ():
        if getattr(sel, "name", None) == name and hasattr(sel, "arguments"):
            return True
        if _selects(getattr(sel, "selections", ()), name):
            return True
    return False


def _central(ctx: Context) -> list[t.CentralConcept]:
    """Concepts by PageRank over the whole (undirected) graph, cached until it changes."""
    services = ctx.services
    cache = services.derived_cache()
    cached = cache.get("central")
    if cached is None:
        # PageRank over the whole graph: an expensive query while it is not cached
        central = services.serving(lambda s: s.central_concepts(), expensive=True)
        cached = [
            t.CentralConcept(concept=t.Concept.of(c.concept), degree=c.degree,
                             pagerank=c.pagerank)
            for c in central
            if isinstance(c.concept, model.Concept)
        ]
        cache["central"] = cached
    return list(cached)


# --------------------------------------------------------------------------- mutations


def _report(rep: BuildReport, problems: list[str]) -> t.ChangeReport:
    return t.ChangeReport(
        added=[strawberry.ID(x) for x in rep.added],
        removed=[strawberry.ID(x) for x in rep.removed],
        updated=rep.updated, duplicates=rep.duplicates, nodes_written=rep.nodes_written,
        edges_written=rep.edges_written, nodes_deleted=rep.nodes_deleted,
        edges_deleted=rep.edges_deleted, references_resolved=rep.references_resolved,
        references_outside=rep.references_outside,
        references_unparseable=rep.references_unparseable,
        problems=problems + [_input_problem(p) for p in rep.problems],
    )


def _input_problem(problem: object) -> str:
    """A write's problem, worded like the input checks' (``input[i]: ...``): a record's
    source is ``api:addPapers[i]``, and one answer used both prefixes (outside probe)."""
    text = str(problem)
    head = "api:addPapers["
    return "input[" + text[len(head):] if text.startswith(head) else text


@strawberry.type
class Mutation:
    @strawberry.mutation(
        description="Add papers incrementally (needs the X-API-Key header). Bad records are "
        "listed in `problems`; the good ones still go in."
    )
    async def add_papers(self, info: Ctx, input: list[t.PaperInput]) -> t.ChangeReport:
        from graph.ingest import paper_from_record

        info.context.require_api_key()
        check_range("input", len(input), 1, MAX_ADD)
        papers: list[model.Paper] = []
        problems: list[str] = []
        unparsed: list[str] = []  # references that are not one (each also in problems)
        for i, item in enumerate(input):
            record = {k: v for k, v in vars(item).items() if v is not None}
            notes: list[str] = []  # fields dropped for a bad value: the paper still goes in
            try:
                papers.append(paper_from_record(record, source=f"api:addPapers[{i}]", notes=notes,
                                                unparsed=unparsed))
            except InputError as exc:
                problems.append(f"input[{i}]: {exc}")
            problems.extend(f"input[{i}]: {note}" for note in notes)
        if not papers:
            return t.ChangeReport(added=[], removed=[], updated=0, duplicates=0, nodes_written=0,
                                  edges_written=0, nodes_deleted=0, edges_deleted=0,
                                  problems=problems)
        report = await info.context.write(papers=papers)
        report.references_unparseable += len(unparsed)
        return _report(report, problems)

    @strawberry.mutation(
        description="Remove a paper with its edges (and concepts no other paper mentions). "
        "Needs the X-API-Key header."
    )
    async def remove_paper(self, info: Ctx, id: strawberry.ID) -> t.ChangeReport:
        info.context.require_api_key()
        node = await find(info, id, [NodeKind.PAPER], "id")
        if node.id != raw_id(id):  # named, not by id: a name two papers share is refused
            await info.context.on_service(
                lambda service: paper_to_remove(service.store, str(id), "id")
            )
        report = await info.context.write(remove=[node.id])
        return _report(report, [])


# --------------------------------------------------------------------------- schema


class CitegraphSchema(strawberry.Schema):
    """Logs tracebacks only for unexpected errors; client errors go to the debug log."""

    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        unexpected = [e for e in errors if not is_client_error(e)]
        for e in errors:
            if is_client_error(e):
                log.debug("client error: %s", e.message)
        if unexpected:
            super().process_errors(unexpected, execution_context)


def build_schema(settings: Settings | None = None) -> strawberry.Schema:
    """The schema with citegraph's limits (from ``settings``) as extensions."""
    s = settings or Settings.model_validate({})
    context_class = execution_context_for({})
    schema = CitegraphSchema(
        query=Query,
        mutation=Mutation,
        types=[t.Paper, t.Concept, t.Dataset, t.Work, t.Topic],
        # one extension for every check: strawberry wraps each extension's hooks per request
        extensions=[citegraph_extension(s)],
        execution_context_class=context_class,
    )
    converter = schema.config.name_converter
    plan = {}
    for cls in r.FLAT_ROWS:
        definition = getattr(cls, "__strawberry_definition__")  # noqa: B009 (set by strawberry)
        plan[converter.from_object(definition)] = {
            converter.get_graphql_name(f): (
                f.base_resolver.wrapped_func if f.base_resolver is not None else f.python_name
            )
            for f in definition.fields
        }
    context_class.flat_plan = flat_plan(schema._schema, plan)
    return schema


def sdl() -> str:
    """The schema's SDL, as committed in ``schema.graphql``."""
    return build_schema().as_str() + "\n"


if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.stdout.write(sdl())
