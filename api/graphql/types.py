"""GraphQL node types and the rest of the object types, converted from ``graph.model``
at the edge.

``Node`` types (``Paper``, ``Concept``, ``Dataset``) have global ids and nested fields
resolved through the request's DataLoaders; the flat rows of the graph payloads are in
:mod:`api.graphql.rows`.
"""

# strawberry's field decorators are untyped for mypy; the resolvers themselves are typed.
# mypy: disable-error-code="untyped-decorator"

from __future__ import annotations

from enum import Enum

import strawberry
from strawberry.types import Info

from api.graphql.connection import Connection, connection
from api.graphql.context import Context
from api.graphql.errors import check_range
from api.graphql.loaders import edge_key
from api.graphql.rows import Path, RelTypeEnum, path
from api.ids import offset_of, to_global_id
from graph import model
from graph.model import NodeKind, RelType


@strawberry.enum(description="How `search` matches.")
class SearchMode(Enum):
    KEYWORD = "keyword"
    SEMANTIC = "semantic"
    HYBRID = "hybrid"


# --------------------------------------------------------------------------- nodes


@strawberry.interface(
    description="Anything with a global id: Paper, Concept, Dataset, Work (outside work), "
    "Topic."
)
class Node:
    id: strawberry.ID = strawberry.field(description="Global id (base64 of `Kind:key`).")


def to_node(node: model.GraphNode) -> Paper | Concept | Dataset | Work | Topic:
    """The GraphQL object for a domain node."""
    if isinstance(node, model.Paper):
        return Paper.of(node)
    if isinstance(node, model.Topic):
        return Topic.of(node)
    if isinstance(node, model.Concept):
        return Concept.of(node)
    if isinstance(node, model.Work):
        return Work.of(node)
    return Dataset.of(node)


async def _neighbours(
    info: Info[Context, None], node_id: str, types: tuple[RelType, ...], outgoing: bool | None
) -> list[tuple[model.Edge, model.GraphNode]]:
    """(edge, node at the other end) for ``node_id``'s edges of ``types``, via the loaders."""
    edges, ends = await info.context.loaders.neighbours.load(edge_key(node_id, *types))
    picked = [
        e for e in edges
        if outgoing is None or (e.source == node_id) == outgoing
    ]
    others = (e.target if e.source == node_id else e.source for e in picked)
    return [(e, ends[o]) for e, o in zip(picked, others, strict=True) if o in ends]


@strawberry.type(description="A concept a paper mentions, with the mention's weight.")
class ConceptMention:
    concept: Concept
    weight: float
    evidence: str | None


@strawberry.type(description="A dataset a paper uses or introduces.")
class DatasetMention:
    dataset: Dataset
    relation: RelTypeEnum  # type: ignore[valid-type]
    weight: float
    evidence: str | None


@strawberry.type(
    description="A SIMILAR_TO neighbour: cosine `score`, the `words` overlap, and its `rank` "
    "in the source's list (ranked by CSLS over cosine + 2 x words: a paper close to "
    "everything is discounted)."
)
class SimilarPaper:
    paper: Paper
    score: float
    rank: int | None
    words: float | None = strawberry.field(
        default=None,
        description="Word overlap of the two texts: the cosine of their word 1-2-gram "
        "vectors (plurals folded, saturated counts, each gram weighted by a fixed "
        "general-English rarity; nothing counted from the corpus); null on edges written "
        "before it was stored.",
    )


@strawberry.type(
    description="A SHARES_TERM neighbour: the shared terms, rarest first, and their weights."
)
class SharedTerms:
    paper: Paper
    weight: float = strawberry.field(description="The sum of `termWeights`.")
    terms: list[str]
    term_weights: list[float] = strawberry.field(
        description="Each term's rarity ln(e x 1000 / df), df (the papers holding it) rounded "
        "down to a power of 2^(1/4); independent of the number of papers"
    )


@strawberry.type(description="One readable reason a paper is recommended.")
class Reason:
    kind: str = strawberry.field(
        description="similar | words | concept | dataset | cites | cited_by | coupled | "
        "co_cited | path"
    )
    text: str
    weight: float
    node_id: strawberry.ID | None


@strawberry.type(description="A recommended paper with its score and the reasons for it.")
class RelatedPaper:
    paper: Paper
    score: float
    similarity: float
    reasons: list[Reason]
    path: Path | None = strawberry.field(
        description="seed -> shared concept -> this paper, when they share one"
    )


def related_paper(r: model.RelatedPaper) -> RelatedPaper:
    return RelatedPaper(
        paper=Paper.of(r.paper),
        score=r.score,
        similarity=r.similarity,
        reasons=[
            Reason(kind=x.kind, text=x.text, weight=x.weight,
                   node_id=strawberry.ID(x.node_id) if x.node_id else None)
            for x in r.reasons
        ],
        path=path(r.path) if r.path is not None else None,
    )


def _first(first: int, info: Info[Context, None]) -> int:
    return check_range("first", first, 1, info.context.settings.max_page_size)


@strawberry.type(description="A paper (one abstract).")
class Paper(Node):
    key: strawberry.ID = strawberry.field(description="The raw paper id, e.g. `p-1a2b3c4d5e6f`.")
    label: str
    title: str | None
    abstract: str
    venue: str | None
    year: int | None
    url: str | None
    urls: list[str]
    authors: list[str]
    keywords: list[str]
    doi: str | None = strawberry.field(
        description="The DOI, lower-case and without a URL prefix (`10.1/abc`)."
    )
    importance: float | None = strawberry.field(
        description="PageRank over citations and coupling (or, in a corpus without "
        "references, over SIMILAR_TO), as of the last topic computation; null for a paper "
        "added since."
    )
    _p: strawberry.Private[model.Paper]

    @classmethod
    def of(cls, p: model.Paper) -> Paper:
        return cls(
            id=strawberry.ID(to_global_id(NodeKind.PAPER, p.id)), key=strawberry.ID(p.id),
            label=p.label, title=p.title, abstract=p.abstract, venue=p.venue, year=p.year,
            url=p.urls[0] if p.urls else None, urls=list(p.urls), authors=list(p.authors),
            keywords=list(p.keywords), doi=p.doi, importance=p.importance, _p=p,
        )

    @strawberry.field(description="The topic the paper is in (null: none yet).")
    async def topic(self, info: Info[Context, None]) -> Topic | None:
        return await self._topic(info, 1)

    @strawberry.field(description="The subtopic of its topic the paper is in, if any.")
    async def subtopic(self, info: Info[Context, None]) -> Topic | None:
        return await self._topic(info, 2)

    async def _topic(self, info: Info[Context, None], level: int) -> Topic | None:
        pairs = await _neighbours(info, self._p.id, (RelType.IN_TOPIC,), True)
        found = [n for _, n in pairs if isinstance(n, model.Topic) and n.level == level]
        return Topic.of(found[0]) if found else None

    @strawberry.field(description="Concepts the abstract mentions, strongest first.")
    async def concepts(self, info: Info[Context, None]) -> list[ConceptMention]:
        pairs = await _neighbours(info, self._p.id, (RelType.MENTIONS,), True)
        out = [
            ConceptMention(concept=Concept.of(n), weight=e.weight, evidence=e.attrs.get("evidence"))
            for e, n in pairs if isinstance(n, model.Concept)
        ]
        return sorted(out, key=lambda m: (-m.weight, m.concept.name))

    @strawberry.field(description="Datasets the paper uses or introduces.")
    async def datasets(self, info: Info[Context, None]) -> list[DatasetMention]:
        pairs = await _neighbours(info, self._p.id, (RelType.USES, RelType.INTRODUCES), True)
        return [
            DatasetMention(dataset=Dataset.of(n), relation=e.type, weight=e.weight,
                           evidence=e.attrs.get("evidence"))
            for e, n in pairs if isinstance(n, model.Dataset)
        ]

    @strawberry.field(
        description="Papers with similar abstracts (SIMILAR_TO): this paper's own list in "
        "its stored order (`rank` 1, 2, ...: cosine plus word overlap, hubs discounted), then "
        "the papers that list this one (`rank` null), by score."
    )
    async def similar(
        self, info: Info[Context, None], first: int = 10, min_score: float = 0.0
    ) -> list[SimilarPaper]:
        first = _first(first, info)
        pairs = await _neighbours(info, self._p.id, (RelType.SIMILAR_TO,), None)
        best: dict[str, SimilarPaper] = {}
        for e, n in pairs:
            if not isinstance(n, model.Paper) or e.weight < min_score:
                continue
            raw = e.attrs.get("rank") if e.source == self._p.id else None
            rank = int(raw) if isinstance(raw, int | float) else None
            old = best.get(n.id)
            # its own list's edge wins over the other direction's
            if old is None or (rank is not None and old.rank is None) or (
                (rank is None) == (old.rank is None) and e.weight > old.score
            ):
                words = e.attrs.get("words")
                best[n.id] = SimilarPaper(
                    paper=Paper.of(n), score=e.weight, rank=rank,
                    words=float(words) if isinstance(words, int | float) else None,
                )

        def order(s: SimilarPaper) -> tuple[int, float, float, str]:
            if s.rank is not None:
                return (0, float(s.rank), 0.0, s.paper.key)
            return (1, 0.0, -s.score, s.paper.key)

        return sorted(best.values(), key=order)[:first]

    @strawberry.field(description="Papers sharing rare concepts/datasets (SHARES_TERM).")
    async def shares_terms(self, info: Info[Context, None], first: int = 10) -> list[SharedTerms]:
        first = _first(first, info)
        pairs = await _neighbours(info, self._p.id, (RelType.SHARES_TERM,), None)
        out = [
            SharedTerms(
                paper=Paper.of(n), weight=e.weight, terms=list(e.attrs.get("terms", [])),
                term_weights=[float(w) for w in e.attrs.get("term_weights", [])],
            )
            for e, n in pairs if isinstance(n, model.Paper)
        ]
        return sorted(out, key=lambda s: (-s.weight, s.paper.key))[:first]

    @strawberry.field(description="Papers this paper cites (in the graph; outside works: "
                                  "`citesOutside`).")
    async def cites(self, info: Info[Context, None]) -> list[Paper]:
        pairs = await _neighbours(info, self._p.id, (RelType.CITES,), True)
        return [Paper.of(n) for _, n in pairs if isinstance(n, model.Paper)]

    @strawberry.field(description="Outside works this paper cites (references that name "
                                  "no paper of the graph).")
    async def cites_outside(self, info: Info[Context, None]) -> list[Work]:
        pairs = await _neighbours(info, self._p.id, (RelType.CITES,), True)
        return [Work.of(n) for _, n in pairs if isinstance(n, model.Work)]

    @strawberry.field(description="Papers in the graph that cite this one.")
    async def cited_by(self, info: Info[Context, None]) -> list[Paper]:
        pairs = await _neighbours(info, self._p.id, (RelType.CITES,), False)
        return [Paper.of(n) for _, n in pairs if isinstance(n, model.Paper)]

    @strawberry.field(description="Related papers with reasons (see `Query.related`).")
    async def related(self, info: Info[Context, None], first: int = 5) -> list[RelatedPaper]:
        first = _first(first, info)
        _, found = await info.context.on_service(
            lambda service: service.related(paper=self._p.id, first=first), expensive=True
        )
        return [related_paper(r) for r in found]


@strawberry.type(description="A concept co-mentioned with another (RELATED_TO).")
class RelatedConcept:
    concept: Concept
    weight: float
    count: int


@strawberry.type(description="A method, task, model family or technique.")
class Concept(Node):
    key: strawberry.ID = strawberry.field(description="The raw id, e.g. `concept:diffusion-model`.")
    name: str
    aliases: list[str]
    kind: str = strawberry.field(description="method | task | model | technique | concept")
    _c: strawberry.Private[model.Concept]

    @classmethod
    def of(cls, c: model.Concept) -> Concept:
        return cls(
            id=strawberry.ID(to_global_id(NodeKind.CONCEPT, c.id)), key=strawberry.ID(c.id),
            name=c.name, aliases=list(c.aliases), kind=c.category, _c=c,
        )

    @strawberry.field(description="How many papers mention it.")
    async def paper_count(self, info: Info[Context, None]) -> int:
        edges = await info.context.loaders.edges.load(edge_key(self._c.id, RelType.MENTIONS))
        return len({e.source for e in edges})

    @strawberry.field(description="Papers mentioning it, by id.")
    async def papers(
        self, info: Info[Context, None], first: int = 10, after: str | None = None
    ) -> Connection[Paper]:
        return await paper_page(info, first, after, neighbor=self._c.id)

    @strawberry.field(description="Concepts most often mentioned together with it.")
    async def related_concepts(
        self, info: Info[Context, None], first: int = 10
    ) -> list[RelatedConcept]:
        first = _first(first, info)
        pairs = await _neighbours(info, self._c.id, (RelType.RELATED_TO,), None)
        out = [
            RelatedConcept(concept=Concept.of(n), weight=e.weight,
                           count=int(e.attrs.get("count", e.weight)))
            for e, n in pairs if isinstance(n, model.Concept)
        ]
        return sorted(out, key=lambda r: (-r.weight, r.concept.name))[:first]


@strawberry.type(description="A named dataset or benchmark.")
class Dataset(Node):
    key: strawberry.ID = strawberry.field(description="The raw id, e.g. `dataset:imagenet`.")
    name: str
    aliases: list[str]
    _d: strawberry.Private[model.Dataset]

    @classmethod
    def of(cls, d: model.Dataset) -> Dataset:
        return cls(
            id=strawberry.ID(to_global_id(NodeKind.DATASET, d.id)), key=strawberry.ID(d.id),
            name=d.name, aliases=list(d.aliases), _d=d,
        )

    @strawberry.field(description="Papers that introduce it.")
    async def introduced_by(self, info: Info[Context, None]) -> list[Paper]:
        pairs = await _neighbours(info, self._d.id, (RelType.INTRODUCES,), False)
        return [Paper.of(n) for _, n in pairs if isinstance(n, model.Paper)]

    @strawberry.field(description="Papers that use it.")
    async def used_by(self, info: Info[Context, None]) -> list[Paper]:
        pairs = await _neighbours(info, self._d.id, (RelType.USES,), False)
        return [Paper.of(n) for _, n in pairs if isinstance(n, model.Paper)]

    @strawberry.field(description="How many papers use or introduce it.")
    async def paper_count(self, info: Info[Context, None]) -> int:
        key = edge_key(self._d.id, RelType.USES, RelType.INTRODUCES)
        edges = await info.context.loaders.edges.load(key)
        return len({e.source for e in edges})


@strawberry.type(description="An outside work: cited by corpus papers, not in the corpus.")
class Work(Node):
    key: strawberry.ID = strawberry.field(description="The raw id, e.g. `work:doi:10.1/x`.")
    name: str = strawberry.field(description="Its title when the reference gave one, else "
                                             "its DOI or arXiv id.")
    reference: str = strawberry.field(description="The reference key it stands for.")
    _w: strawberry.Private[model.Work]

    @classmethod
    def of(cls, w: model.Work) -> Work:
        return cls(
            id=strawberry.ID(to_global_id(NodeKind.WORK, w.id)), key=strawberry.ID(w.id),
            name=w.name, reference=w.ref, _w=w,
        )

    @strawberry.field(description="Corpus papers that cite it.")
    async def cited_by(self, info: Info[Context, None]) -> list[Paper]:
        pairs = await _neighbours(info, self._w.id, (RelType.CITES,), False)
        return [Paper.of(n) for _, n in pairs if isinstance(n, model.Paper)]


@strawberry.type(description="Papers of a topic in one year.")
class YearCount:
    year: int
    count: int


@strawberry.type(
    description="A community of papers (Leiden over similar abstracts, citations and shared "
    "references), labelled by its most distinctive concepts (class-based TF-IDF over "
    "concept mentions); a big topic has subtopics. Recomputed on a build, and on an add or "
    "remove once enough papers changed (docs/format.md)."
)
class Topic(Node):
    key: strawberry.ID = strawberry.field(description="The raw id: `topic:3`, or `topic:3.1` "
                                                      "for a subtopic of `topic:3`.")
    label: str = strawberry.field(description="Its most distinctive concepts' names.")
    level: int = strawberry.field(description="1: a topic, 2: a subtopic.")
    size: int = strawberry.field(description="How many papers it holds.")
    years: list[YearCount] = strawberry.field(description="Its papers per year, ascending.")
    computed_at: str | None = strawberry.field(
        description="The graph version it was computed at.")
    corpus_size: int = strawberry.field(description="Papers in the graph when computed.")
    _t: strawberry.Private[model.Topic]

    @classmethod
    def of(cls, t: model.Topic) -> Topic:
        return cls(
            id=strawberry.ID(to_global_id(NodeKind.TOPIC, t.id)), key=strawberry.ID(t.id),
            label=t.name, level=t.level, size=t.size,
            years=[YearCount(year=y, count=n) for y, n in zip(t.years, t.year_counts,
                                                              strict=True)],
            computed_at=t.version, corpus_size=t.corpus, _t=t,
        )

    async def _nodes(
        self, info: Info[Context, None], ids: tuple[str, ...]
    ) -> list[model.GraphNode]:
        found = await info.context.loaders.nodes.load_many(list(ids))
        return [n for n in found if n is not None]

    @strawberry.field(description="Its most distinctive concepts, best first (at most 10).")
    async def concepts(self, info: Info[Context, None], first: int = 10) -> list[Concept]:
        nodes = await self._nodes(info, self._t.concepts[: _first(first, info)])
        return [Concept.of(n) for n in nodes if isinstance(n, model.Concept)]

    @strawberry.field(description="Its most important papers, best first (at most 10).")
    async def top_papers(self, info: Info[Context, None], first: int = 10) -> list[Paper]:
        nodes = await self._nodes(info, self._t.papers[: _first(first, info)])
        return [Paper.of(n) for n in nodes if isinstance(n, model.Paper)]

    @strawberry.field(description="The datasets its papers use or introduce most.")
    async def datasets(self, info: Info[Context, None]) -> list[Dataset]:
        nodes = await self._nodes(info, self._t.datasets)
        return [Dataset.of(n) for n in nodes if isinstance(n, model.Dataset)]

    @strawberry.field(description="The topic it is a subtopic of (null for a topic).")
    async def parent(self, info: Info[Context, None]) -> Topic | None:
        if self._t.parent is None:
            return None
        got = await info.context.loaders.nodes.load(self._t.parent)
        return Topic.of(got) if isinstance(got, model.Topic) else None

    @strawberry.field(description="Its subtopics, by id.")
    async def subtopics(self, info: Info[Context, None]) -> list[Topic]:
        pairs = await _neighbours(info, self._t.id, (RelType.SUBTOPIC_OF,), False)
        subs = [n for _, n in pairs if isinstance(n, model.Topic)]
        return [Topic.of(n) for n in sorted(subs, key=lambda n: n.id)]

    @strawberry.field(description="Its papers by id; a Relay connection.")
    async def papers(
        self, info: Info[Context, None], first: int = 10, after: str | None = None
    ) -> Connection[Paper]:
        return await paper_page(info, first, after, neighbor=self._t.id)


async def paper_page(
    info: Info[Context, None],
    first: int,
    after: str | None,
    *,
    neighbor: str | None = None,
    venue: str | None = None,
    year: int | None = None,
) -> Connection[Paper]:
    """One page of papers (by id) straight from the store's own paging."""
    first = _first(first, info)
    offset = offset_of(after)
    nodes, total = await info.context.on_store(
        lambda store: store.list_nodes(
            NodeKind.PAPER, offset=offset, limit=first, venue=venue, year=year, neighbor=neighbor
        )
    )
    return connection([Paper.of(n) for n in nodes if isinstance(n, model.Paper)], offset, total)


# --------------------------------------------------------------------------- search, stats


@strawberry.type(description="A search result.")
class SearchHit:
    node: Node
    score: float = strawberry.field(
        description="KEYWORD: keyword score; SEMANTIC: cosine; HYBRID: cosine + 0.5 x keyword "
        "score / the best keyword score"
    )
    keyword_score: float | None
    similarity: float | None


@strawberry.type
class KindCount:
    kind: str
    count: int


@strawberry.type(description="A concept with its degree and PageRank in the whole graph.")
class CentralConcept:
    concept: Concept
    degree: int
    pagerank: float


@strawberry.type(description="Counts per node and edge kind, and the most central concepts.")
class Stats:
    nodes: list[KindCount]
    edges: list[KindCount]
    total_nodes: int
    total_edges: int
    central_concepts: list[CentralConcept]
    incomplete: bool = strawberry.field(description=(
        "True while the graph holds part of a write that commits batch by batch (Neo4j): "
        "one under way, or one cut off; the next write, or the same command again, "
        "completes it."
    ))


# --------------------------------------------------------------------------- mutations


@strawberry.input(description="One paper to add; only `abstract` is required.")
class PaperInput:
    abstract: str
    id: str | None = None
    title: str | None = None
    venue: str | None = None
    year: int | None = None
    url: str | None = None
    authors: list[str] | None = None
    keywords: list[str] | None = None
    references: list[str] | None = strawberry.field(
        default=None, description="Papers it cites: ids, titles, DOIs (`10.1/x`, "
        "`https://doi.org/10.1/x`) or arXiv ids (`arXiv:1706.03762`).",
    )
    doi: str | None = strawberry.field(
        default=None, description="Its DOI: a paper with the DOI of another in one write "
        "merges into it.",
    )


@strawberry.type(description="What a write changed.")
class ChangeReport:
    added: list[strawberry.ID]
    removed: list[strawberry.ID]
    updated: int
    duplicates: int
    nodes_written: int
    edges_written: int
    nodes_deleted: int
    edges_deleted: int
    references_resolved: int = strawberry.field(
        default=0, description="References of the papers written that name a paper of the graph."
    )
    references_outside: int = strawberry.field(
        default=0, description="Well-formed references naming no paper of the graph (kept)."
    )
    references_unparseable: int = strawberry.field(
        default=0, description="References dropped: not a DOI, arXiv id, id or title."
    )
    problems: list[str]
