"""The GraphQL schema: root queries and mutations, and :func:`build_schema`.

``python -m api.schema`` prints the SDL; ``schema.graphql`` at the repository
root is that output, and ``tests/api/test_schema.py`` fails when they drift.
"""

# strawberry's field decorators are untyped for mypy; the resolvers themselves are typed.
# mypy: disable-error-code="untyped-decorator"

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Annotated, Any

import strawberry
from graphql import GraphQLError
from strawberry.extensions import MaxTokensLimiter, ParserCache, ValidationCache
from strawberry.types import ExecutionContext, Info

from api import types as t
from api.arguments import ValidUnicodeArguments
from api.context import Context
from api.errors import check_range, is_client_error, masking_extension
from api.fastpath import execution_context_for, flat_plan
from api.ids import from_global_id, offset_of, raw_id
from api.limits import limit_extensions
from graph import lookup, model
from graph.errors import InputError, InvalidArgumentError, NotFoundError
from graph.model import NodeKind, RelType
from graph.service import SearchMode
from graph.settings import Settings

log = logging.getLogger(__name__)

TEXT_FILTER_CAP = 10_000  # most candidates a free-text filter considers
MAX_ADD = 1000  # most papers one addPapers call takes

Ctx = Info[Context, None]


# --------------------------------------------------------------------------- helpers


async def find(
    info: Ctx, ref: str, kinds: Collection[NodeKind] | None, argument: str
) -> model.GraphNode:
    """A node by global id, raw id, or name/label/alias; NotFoundError naming ``argument``."""
    if not ref.strip():
        raise InvalidArgumentError(argument, "must not be empty")
    decoded = from_global_id(ref)
    key = decoded[1] if decoded else ref
    node = await info.context.loaders.nodes.load(key)
    if node is None and decoded is None:
        wanted = list(kinds) if kinds else None
        node = await info.context.call_fn(
            lambda: lookup.find(info.context.services.store(), ref, wanted)
        )
    if node is None or (kinds is not None and node.kind not in kinds):
        what = "/".join(k.value.lower() for k in kinds) if kinds else "node"
        raise NotFoundError(f"{argument}: no {what} with id, name or alias {ref!r}")
    return node


def _types(rel_types: list[RelType] | None) -> list[RelType] | None:
    return list(rel_types) if rel_types else None


def _page(info: Ctx, first: int, after: str | None) -> tuple[int, int]:
    first = check_range("first", first, 1, info.context.settings.max_page_size)
    return first, offset_of(after)


async def _text_page(
    info: Ctx, kind: NodeKind, text: str | None, first: int, after: str | None
) -> tuple[list[model.GraphNode], int, int]:
    first, offset = _page(info, first, after)
    if not text:
        nodes, total = await info.context.call("list_nodes", kind, offset=offset, limit=first)
        return nodes, total, offset
    hits = await info.context.call("keyword_search", text, [kind], TEXT_FILTER_CAP)
    return [h.node for h in hits[offset : offset + first]], len(hits), offset


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
        found = await info.context.loaders.nodes.load_many([raw_id(i) for i in ids])
        return [
            t.to_node(n) if n is not None else NotFoundError(f"ids: no node with id {i!r}")  # type: ignore[misc]
            for i, n in zip(ids, found, strict=True)
        ]

    @strawberry.field(description="A paper by raw id (`p-…`), global id, or exact title/label.")
    async def paper(self, info: Ctx, id: strawberry.ID) -> t.Paper | None:
        node = await find(info, id, [NodeKind.PAPER], "id")
        assert isinstance(node, model.Paper)
        return t.Paper.of(node)

    @strawberry.field(description="Papers by id, filtered; a Relay connection.")
    async def papers(
        self, info: Ctx, filter: PaperFilter | None = None,
        first: int = 10, after: str | None = None,
    ) -> t.Connection[t.Paper]:
        f = filter or PaperFilter()
        first, offset = _page(info, first, after)
        neighbors: list[str | None] = []
        if f.concept:
            neighbors.append((await find(info, f.concept, [NodeKind.CONCEPT], "filter.concept")).id)
        if f.dataset:
            neighbors.append((await find(info, f.dataset, [NodeKind.DATASET], "filter.dataset")).id)
        if len(neighbors) <= 1 and not f.text:
            return await t.paper_page(
                info, first, after, neighbor=neighbors[0] if neighbors else None,
                venue=f.venue, year=f.year,
            )
        pools = [
            (await info.context.call(
                "list_nodes", NodeKind.PAPER, offset=0, limit=TEXT_FILTER_CAP,
                venue=f.venue, year=f.year, neighbor=nb,
            ))[0]
            for nb in neighbors or [None]
        ]
        keep = set.intersection(*({n.id for n in pool} for pool in pools))
        papers = [n for n in pools[0] if n.id in keep]
        if f.text:
            from graph.store.base import keyword_score

            papers = [p for p in papers if keyword_score(f.text, p) > 0]
        page = papers[offset : offset + first]
        return t.connection([t.Paper.of(p) for p in page if isinstance(p, model.Paper)],
                            offset, len(papers))

    @strawberry.field(description="A concept by name, alias (\"LLM\"), raw or global id.")
    async def concept(self, info: Ctx, name: str) -> t.Concept | None:
        node = await find(info, name, [NodeKind.CONCEPT], "name")
        assert isinstance(node, model.Concept)
        return t.Concept.of(node)

    @strawberry.field(description="Concepts by id, or matching `text` (best first).")
    async def concepts(
        self, info: Ctx, text: str | None = None, first: int = 10, after: str | None = None
    ) -> t.Connection[t.Concept]:
        nodes, total, offset = await _text_page(info, NodeKind.CONCEPT, text, first, after)
        return t.connection(
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
    ) -> t.Connection[t.Dataset]:
        nodes, total, offset = await _text_page(info, NodeKind.DATASET, text, first, after)
        return t.connection(
            [t.Dataset.of(n) for n in nodes if isinstance(n, model.Dataset)], offset, total
        )

    @strawberry.field(description="Keyword, semantic (papers only) or hybrid search.")
    async def search(
        self, info: Ctx, query: str, mode: t.SearchMode = t.SearchMode.KEYWORD,
        kinds: list[t.NodeKindEnum] | None = None, first: int = 10,  # type: ignore[valid-type]
    ) -> list[t.SearchHit]:
        first = check_range("first", first, 1, info.context.settings.max_page_size)
        wanted = list(kinds) if kinds else None
        hits = await info.context.call_fn(
            lambda: info.context.services.service().search(
                query, SearchMode[mode.name], wanted, first
            )
        )
        return [t.SearchHit(node=t.to_node(h.node), score=h.score, keyword_score=h.keyword_score,
                            similarity=h.similarity) for h in hits]

    @strawberry.field(description="The subgraph within `depth` hops of a node (graph-tool shape).")
    async def neighborhood(
        self, info: Ctx, id: strawberry.ID, depth: int = 1,
        rel_types: list[t.RelTypeEnum] | None = None,  # type: ignore[valid-type]
        node_kinds: list[t.NodeKindEnum] | None = None,  # type: ignore[valid-type]
        limit: int = 100,
    ) -> t.Subgraph | None:
        s = info.context.settings
        check_range("depth", depth, 1, s.max_depth)
        check_range("limit", limit, 1, s.max_neighborhood_nodes)
        start = await find(info, id, None, "id")
        sub = await info.context.call(
            "neighborhood", [start.id], depth=depth, rel_types=_types(rel_types),
            node_kinds=list(node_kinds) if node_kinds else None, limit=limit,
        )
        return t.subgraph(sub)

    @strawberry.field(
        name="shortestPath",
        description="The shortest path (fewest hops, then strongest); null if none in maxHops.",
    )
    async def shortest_path(
        self, info: Ctx, from_: Annotated[strawberry.ID, strawberry.argument(name="from")],
        to: strawberry.ID, rel_types: list[t.RelTypeEnum] | None = None,  # type: ignore[valid-type]
        max_hops: int = 4,
    ) -> t.Path | None:
        check_range("maxHops", max_hops, 1, info.context.settings.max_hops)
        a = await find(info, from_, None, "from")
        b = await find(info, to, None, "to")
        found = await info.context.call("shortest_path", a.id, b.id, _types(rel_types), max_hops)
        return t.path(found) if found is not None else None

    @strawberry.field(description="Up to `k` simple paths, shortest and strongest first.")
    async def paths(
        self, info: Ctx, from_: Annotated[strawberry.ID, strawberry.argument(name="from")],
        to: strawberry.ID, k: int = 3, rel_types: list[t.RelTypeEnum] | None = None,  # type: ignore[valid-type]
        max_hops: int = 4,
    ) -> list[t.Path]:
        s = info.context.settings
        check_range("k", k, 1, s.max_paths)
        check_range("maxHops", max_hops, 1, s.max_hops)
        a = await find(info, from_, None, "from")
        b = await find(info, to, None, "to")
        found = await info.context.call("k_paths", a.id, b.id, k, _types(rel_types), max_hops)
        return [t.path(p) for p in found]

    @strawberry.field(
        description="Papers related to a paper (and `positive`, away from `negative`) or a text, "
        "with reasons. Never returns the seed papers."
    )
    async def related(
        self, info: Ctx, paper: strawberry.ID | None = None, text: str | None = None,
        first: int = 10, exclude: list[strawberry.ID] | None = None,
        positive: list[strawberry.ID] | None = None, negative: list[strawberry.ID] | None = None,
    ) -> list[t.RelatedPaper]:
        first = check_range("first", first, 1, info.context.settings.max_page_size)
        papers = [NodeKind.PAPER]
        # a global id, raw id, name or short name, as every argument that names a node
        seed = (await find(info, paper, papers, "paper")).id if paper else None
        pos = [(await find(info, p, papers, "positive")).id for p in positive or []]
        neg = [(await find(info, p, papers, "negative")).id for p in negative or []]
        excl = [raw_id(x) for x in exclude or []]
        _, found = await info.context.call_fn(
            lambda: info.context.services.service().related(
                paper=seed, text=text, first=first, exclude=excl, positive=pos, negative=neg
            )
        )
        return [t.related_paper(r) for r in found]

    @strawberry.field(description="Counts per node and edge kind; the most central concepts.")
    async def stats(self, info: Ctx) -> t.Stats:
        s = await info.context.call("stats")
        # PageRank over the whole graph only when asked for (~1 s on ICLR 2021 uncached)
        central = (await info.context.call_fn(_central, info.context)
                   if _selects(info.selected_fields, "centralConcepts") else [])
        return t.Stats(
            nodes=[t.KindCount(kind=k, count=v) for k, v in s.nodes.items()],
            edges=[t.KindCount(kind=k, count=v) for k, v in s.edges.items()],
            total_nodes=sum(s.nodes.values()),
            total_edges=sum(s.edges.values()),
            central_concepts=central,
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
        cached = [
            t.CentralConcept(concept=t.Concept.of(c.concept), degree=c.degree,
                             pagerank=c.pagerank)
            for c in services.service().central_concepts()
            if isinstance(c.concept, model.Concept)
        ]
        cache["central"] = cached
    return list(cached)


# --------------------------------------------------------------------------- mutations


def _report(r: Any, problems: list[str]) -> t.ChangeReport:
    return t.ChangeReport(
        added=[strawberry.ID(x) for x in r.added], removed=[strawberry.ID(x) for x in r.removed],
        updated=r.updated, duplicates=r.duplicates, nodes_written=r.nodes_written,
        edges_written=r.edges_written, nodes_deleted=r.nodes_deleted,
        edges_deleted=r.edges_deleted, problems=problems + [str(p) for p in r.problems],
    )


def _write(ctx: Context, **kwargs: Any) -> Any:
    services = ctx.services
    with services.write_lock:
        try:
            return services.pipeline().run(services.store(), **kwargs)
        finally:
            services.wrote()


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
        for i, item in enumerate(input):
            record = {k: v for k, v in vars(item).items() if v is not None}
            try:
                papers.append(paper_from_record(record, source=f"api:addPapers[{i}]"))
            except InputError as exc:
                problems.append(f"input[{i}]: {exc}")
        if not papers:
            return t.ChangeReport(added=[], removed=[], updated=0, duplicates=0, nodes_written=0,
                                  edges_written=0, nodes_deleted=0, edges_deleted=0,
                                  problems=problems)
        report = await info.context.call_fn(_write, info.context, add_papers=papers)
        return _report(report, problems)

    @strawberry.mutation(
        description="Remove a paper with its edges (and concepts no other paper mentions). "
        "Needs the X-API-Key header."
    )
    async def remove_paper(self, info: Ctx, id: strawberry.ID) -> t.ChangeReport:
        info.context.require_api_key()
        node = await find(info, id, [NodeKind.PAPER], "id")
        report = await info.context.call_fn(_write, info.context, remove=[node.id])
        return _report(report, [])


# --------------------------------------------------------------------------- schema


FLAT_ROWS = (t.GraphNode, t.GraphEdge, t.PathHop)


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
        types=[t.Paper, t.Concept, t.Dataset],
        extensions=[
            # linear-time depth, alias and cost limits (strawberry's walk every path)
            *limit_extensions(s.max_query_depth, s.max_aliases, s.max_query_cost, {
                "first": s.max_page_size, "ids": s.max_page_size,
                "limit": s.max_neighborhood_nodes, "k": s.max_paths,
            }),
            lambda: MaxTokensLimiter(max_token_count=s.max_tokens),
            ValidUnicodeArguments,
            masking_extension,
            lambda: ParserCache(maxsize=256),
            lambda: ValidationCache(maxsize=256),
        ],
        execution_context_class=context_class,
    )
    converter = schema.config.name_converter
    plan = {}
    for cls in FLAT_ROWS:
        definition = getattr(cls, "__strawberry_definition__")  # noqa: B009 (set by strawberry)
        plan[converter.from_object(definition)] = {
            converter.get_graphql_name(f): f.python_name for f in definition.fields
        }
    context_class.flat_plan = flat_plan(schema._schema, plan)
    return schema


def sdl() -> str:
    """The schema's SDL, as committed in ``schema.graphql``."""
    return build_schema().as_str() + "\n"


if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.stdout.write(sdl())
