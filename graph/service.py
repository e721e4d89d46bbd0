"""The use cases the CLI and the API both call, written once.

A :class:`GraphService` wraps one store (and, when a use case needs it, the embedding
model) and answers in domain types: find a node the way a person names it, search in
keyword / semantic / hybrid mode, related papers for a paper or a free text, the
parts of an export, central concepts, and the writes (build, add, remove). The CLI
and the GraphQL resolvers only parse their input, call one of these and format the
answer, so the two cannot drift apart.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from graph import deadline, lookup
from graph.errors import InvalidArgumentError, NotFoundError
from graph.ids import is_empty_id, spellings, strip_id
from graph.lexical import SAVED_BYTES_PER_PAPER, LexicalIndex
from graph.model import (
    CitationLink,
    Edge,
    GraphNode,
    GraphPath,
    NodeKind,
    Paper,
    RelatedPaper,
    RelType,
    SearchHit,
    Subgraph,
    Topic,
)
from graph.query.citations import Relation
from graph.query.filters import ANY, CountBy, GroupCount, PaperFilter, PaperSort
from graph.settings import Settings
from graph.store.base import GraphStore

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from graph.build import BuildReport, Pipeline, Progress
    from graph.embed import SentenceTransformerEmbedder
    from graph.related import TermCounts
    from graph.topics import TopicsUpdate

#: a filtered search looks this many times further for papers its filter admits, and
#: again as far each time too few pass, until the hits run out (graph.query.filters)
FILTER_POOL = 10
#: HYBRID search: weight of the keyword score (over the best one) next to the cosine;
#: 0.2-1.0 all passed the "never worse than its better half" check, 0.5 on either half
KEYWORD_WEIGHT = 0.5
#: HYBRID search: the best keyword hits that are papers with a title get its cosine too
TITLE_HITS = 5
#: a longer query names no node (ids, names and titles are shorter): no lookup for it
MAX_NAME_CHARS = 300
NAMED_POOL = 10
CENTRAL_TOP = 10


log = logging.getLogger(__name__)
#: the word index a one-command service keeps between commands, under the data dir's cache
LEXICAL_FILE = "lexical.npz"

class SearchMode(StrEnum):
    KEYWORD = "KEYWORD"
    SEMANTIC = "SEMANTIC"
    HYBRID = "HYBRID"


@dataclass(frozen=True, slots=True)
class ScoredNode:
    """A search result: the score of its mode, and the score of each channel it came from."""

    node: GraphNode
    score: float
    keyword_score: float | None
    similarity: float | None


@dataclass(frozen=True, slots=True)
class CentralConcept:
    concept: GraphNode
    degree: int
    pagerank: float


class Embedding:
    """The embedding model, created once and shared (its weights load on first use)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._embedder: SentenceTransformerEmbedder | None = None
        self._lock = threading.Lock()

    def embedder(self) -> SentenceTransformerEmbedder:
        with self._lock:
            if self._embedder is None:
                from graph.embed import SentenceTransformerEmbedder

                s = self._settings
                self._embedder = SentenceTransformerEmbedder(
                    s.model, dtype=s.embed_dtype, batch_size=s.embed_batch_size,
                    long_text=s.long_text,
                )
            return self._embedder

    def close(self) -> None:
        """Stop a model still loading in a second process for nothing (load_elsewhere)."""
        with self._lock:
            if self._embedder is not None:
                self._embedder.stop_elsewhere()

    def vector(self, text: str) -> list[float]:
        """One query text as a unit vector."""
        deadline.check()
        return [float(x) for x in self.embedder().encode_queries([text])[0]]

    def encode_queries(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Query texts as unit vectors (the fast path once a server enabled it)."""
        deadline.check()
        return self.embedder().encode_queries(texts)


class GraphService:
    """The use cases over one store. Cheap to make; the state it uses is passed in.

    ``lexical`` is the word-overlap index of related papers; a long-lived caller (the
    API) passes one that lives as long as the store, so it is read once and then kept
    current; without one, the first related() call reads every paper.
    """

    def __init__(
        self,
        settings: Settings,
        store: GraphStore,
        embedding: Embedding,
        lexical: LexicalIndex | None = None,
        short_names: lookup.ShortNames | None = None,
        term_counts: TermCounts | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.embedding = embedding
        self.lexical = lexical if lexical is not None else LexicalIndex()
        self.short_names = short_names
        self.term_counts = term_counts
        # an index made here lives one command: it starts from, and updates, a saved copy
        self._lexical_file = None if lexical is not None else settings.cache_dir / LEXICAL_FILE
        self._lexical_restored = False
        #: names this service resolved that also named other nodes (for the caller to say)
        self.resolutions: list[lookup.Resolution] = []

    # ------------------------------------------------------------------ names
    def find(self, ref: str, kinds: Collection[NodeKind] | None = None) -> GraphNode | None:
        """A node by id, name, label, title or alias; a paper also by its short name."""
        return lookup.find(self.store, ref, kinds, self.short_names)

    def matches(
        self, ref: str, kinds: Collection[NodeKind] | None = None
    ) -> list[GraphNode]:
        """Every node ``ref`` names, the one :meth:`find` picks first."""
        return lookup.matches(self.store, ref, kinds, self.short_names)

    def node(
        self, ref: str, kinds: Collection[NodeKind] | None = None, argument: str = "id"
    ) -> GraphNode:
        """:meth:`find`, or NotFoundError naming ``argument``.

        When ``ref`` also names other nodes (a concept and a paper of the same short name),
        the first is used and :attr:`resolutions` records the others.
        """
        # the one rule ingest uses (graph.ids): an id of zero-width spaces that an older
        # graph holds is not "empty", it is found
        if is_empty_id(ref):
            raise InvalidArgumentError(argument, "must not be empty")
        found = lookup.matches(self.store, ref, kinds, self.short_names)
        if not found:
            what = "/".join(k.value.lower() for k in kinds) if kinds else "node"
            raise NotFoundError(f"{argument}: no {what} with id, name or alias {ref!r}")
        if len(found) > 1:
            self.resolutions.append(lookup.Resolution(argument, ref, found[0], tuple(found[1:])))
        return found[0]

    # ------------------------------------------------------------------ graph queries
    def neighborhood(
        self,
        ref: str,
        depth: int = 1,
        rel_types: Collection[RelType] | None = None,
        node_kinds: Collection[NodeKind] | None = None,
        limit: int = 100,
        where: PaperFilter = ANY,
    ) -> tuple[GraphNode, Subgraph]:
        """Nodes within ``depth`` hops of the node ``ref`` names. ``where``: its ``kinds``
        narrow ``node_kinds`` (the walk neither keeps nor crosses other kinds); its paper
        fields then drop the papers and outside works they refuse (checked by the store),
        with their edges; concepts and datasets stay, and so does the start."""
        start = self.node(ref)
        if where.kinds is not None:
            node_kinds = [k for k in (node_kinds or list(NodeKind)) if k in where.kinds]
            if not node_kinds:
                raise InvalidArgumentError("where.kind", "leaves none of nodeKinds")
        sub = self.store.neighborhood(
            [start.id], depth=depth, rel_types=rel_types, node_kinds=node_kinds, limit=limit
        )
        if not where.paper_fields:
            return start, sub
        citable = [n for n in sub.nodes
                   if n.kind in (NodeKind.PAPER, NodeKind.WORK) and n.id != start.id]
        ok = {n.id for n in self.store.kept(where, citable)}
        gone = {n.id for n in citable} - ok
        return start, Subgraph(
            nodes=tuple(n for n in sub.nodes if n.id not in gone),
            edges=tuple(e for e in sub.edges if e.source not in gone and e.target not in gone),
            truncated=sub.truncated,
        )

    # ------------------------------------------------------------------ lists and counts
    def papers(
        self, where: PaperFilter = ANY, sort: PaperSort | None = None, offset: int = 0,
        limit: int = 20,
    ) -> tuple[list[Paper], int]:
        """A page of the papers ``where`` admits by ``sort`` (then id), and how many match."""
        return self.store.papers(where, sort, offset=offset, limit=limit)

    def counts(self, by: CountBy, where: PaperFilter = ANY, first: int = 20) -> list[GroupCount]:
        """Paper counts by year, venue, concept or top-level topic under ``where``."""
        return self.store.paper_counts(by, where, first)

    def paper_filter(
        self, *, year_from: int | None = None, year_to: int | None = None,
        venues: Sequence[str] = (), concepts: Sequence[str] = (), datasets: Sequence[str] = (),
        kinds: Collection[NodeKind] | None = None, topics: Sequence[str] = (),
        argument: str = "where.",
    ) -> PaperFilter:
        """A :class:`PaperFilter` whose concepts, datasets and topics are named by id, name
        or alias (each looked up; an unknown one is a NotFoundError naming ``argument`` +
        concept)."""
        unchecked = PaperFilter(year_from, year_to, None, tuple(venues), tuple(concepts),
                                tuple(datasets), frozenset(kinds) if kinds is not None else None,
                                tuple(topics))

        def ids(refs: tuple[str, ...], kind: NodeKind, name: str) -> tuple[str, ...]:
            return tuple(self.node(r, [kind], f"{argument}{name}").id for r in refs)

        return PaperFilter(
            year_from, year_to, None, unchecked.venue_set,
            ids(unchecked.concepts, NodeKind.CONCEPT, "concept"),
            ids(unchecked.datasets, NodeKind.DATASET, "dataset"),
            unchecked.kinds,
            ids(unchecked.topics, NodeKind.TOPIC, "topic"),
        )

    def paths(
        self,
        source: str,
        target: str,
        k: int = 1,
        rel_types: Collection[RelType] | None = None,
        max_hops: int = 4,
    ) -> list[GraphPath]:
        """The shortest path (k = 1) or up to ``k`` simple paths, shortest and strongest first."""
        a, b = self.node(source, argument="from"), self.node(target, argument="to")
        if k == 1:
            found = self.store.shortest_path(a.id, b.id, rel_types, max_hops)
            return [found] if found is not None else []
        return self.store.k_paths(a.id, b.id, k, rel_types, max_hops)

    # ------------------------------------------------------------------ search
    def search(
        self,
        query: str,
        mode: SearchMode = SearchMode.KEYWORD,
        kinds: Collection[NodeKind] | None = None,
        first: int = 10,
        keep: PaperFilter = ANY,
    ) -> list[ScoredNode]:
        """Keyword, semantic (papers only) or hybrid (cosine + scaled keyword score) search;
        ``keep`` (a ``where``): papers only, ranked within the papers it admits: each
        ranking is read FILTER_POOL times further, and further again while fewer than
        ``first`` pass and more hits remain, so a narrow filter still fills the list when
        enough papers match (the store checks each pool: graph.query.filters)."""
        if _blank(query):
            raise InvalidArgumentError("query", "must not be empty")
        wanted = list(kinds) if kinds else None
        if keep.kinds is not None:
            wanted = [k for k in (wanted or list(NodeKind)) if k in keep.kinds]
            if not wanted:
                return []
        papers_ok = wanted is None or NodeKind.PAPER in wanted
        if mode is SearchMode.SEMANTIC and not papers_ok:
            raise InvalidArgumentError("kinds", "SEMANTIC search finds papers only")
        # KEYWORD: a few more than asked, so a hit named exactly as the query is seen
        pool = max(NAMED_POOL, first) if mode is not SearchMode.HYBRID else max(50, first)
        if keep.paper_fields:
            if not papers_ok:
                raise InvalidArgumentError("kinds", "a paper filter (where) finds papers only")
            wanted, pool = [NodeKind.PAPER], pool * FILTER_POOL
        keyword: list[SearchHit] = []
        semantic: list[SearchHit] = []
        if mode is not SearchMode.SEMANTIC:
            keyword = self._kept_hits(
                lambda n: self.store.keyword_search(query, wanted, n), keep, pool, first)
        deadline.check()
        if mode is not SearchMode.KEYWORD and papers_ok:
            vector = self.embedding.vector(query)
            semantic = self._kept_hits(
                lambda n: self.store.vector_search(vector, n), keep, pool, first)
        if mode is SearchMode.SEMANTIC:
            return [ScoredNode(h.node, h.score, None, h.score) for h in semantic[:first]]
        if mode is SearchMode.KEYWORD:
            found = [ScoredNode(h.node, h.score, h.score, None) for h in keyword]
        else:
            found = self._hybrid(query, keyword, semantic, first)
            if keyword and semantic and keyword[0].node.id == semantic[0].node.id:
                # both halves put this node first: a fusion that does not would be worse
                # than either ("a concept named like the shortened title", issue 13)
                found = _named_first(found, keyword[0].node, first,
                                     {h.node.id: h.score for h in keyword})
        named = self._named(query, wanted, [*(f.node for f in found), *(h.node for h in keyword)])
        if named is not None and not keep.empty and not self.store.kept(keep, [named]):
            named = None
        return _named_first(found, named, first, {h.node.id: h.score for h in keyword})

    def _kept_hits(
        self, fetch: Callable[[int], list[SearchHit]], keep: PaperFilter, pool: int,
        first: int,
    ) -> list[SearchHit]:
        """The hits of ``fetch(pool)`` that ``keep`` admits; the pool grows FILTER_POOL
        times while fewer than ``first`` pass and the ranking has more."""
        while True:
            hits = fetch(pool)
            if keep.empty:
                return hits
            ok = {n.id for n in self.store.kept(keep, [h.node for h in hits])}
            found = [h for h in hits if h.node.id in ok]
            if len(found) >= first or len(hits) < pool:
                return found
            deadline.check()
            pool *= FILTER_POOL

    def _named(
        self, query: str, kinds: Collection[NodeKind] | None, hits: Sequence[GraphNode]
    ) -> GraphNode | None:
        """The node ``query`` names: a hit titled or labelled exactly so (case and spaces
        aside), else the node :meth:`GraphStore.find_node` gives (id, name, alias, or a
        plural/singular variant of one)."""
        if len(query) > MAX_NAME_CHARS:
            return None
        said = _spaced(query)
        for node in hits:  # as written beats a variant: a paper's title over a concept's plural
            if said in (_spaced(getattr(node, "title", None) or ""), _spaced(node.label)):
                return node
        return self.store.find_node(" ".join(query.split()), kinds)

    def _hybrid(
        self,
        query: str,
        keyword: Sequence[SearchHit],
        semantic: Sequence[SearchHit],
        first: int,
    ) -> list[ScoredNode]:
        """Cosine to the query plus KEYWORD_WEIGHT x the keyword score over the best one.

        Every node from either list gets both channels: papers the keyword search alone
        found get their exact cosine from the stored vectors, concepts and datasets the
        cosine of their name's embedding, nodes the keyword search missed 0 for it; a
        paper whose title is the query gets 1.0, what its title's embedding would give. A
        sum of scores keeps how far ahead a winner is, which reciprocal ranks throw away:
        measured in ``bench/ranking.py``, this is never worse than the better of KEYWORD
        and SEMANTIC on the title and keyword tasks, where RRF was (docs/benchmarks.md).
        """
        vector = self.embedding.vector(query)
        cos = {h.node.id: h.score for h in semantic}
        nodes = {h.node.id: h.node for h in [*semantic, *keyword]}
        missing_papers = [h.node.id for h in keyword
                          if h.node.id not in cos and h.node.kind is NodeKind.PAPER]
        for pid, vec in self.store.embeddings(missing_papers).items():
            cos[pid] = _cosine(vector, vec)
        deadline.check()
        named = [h.node for h in keyword if h.node.id not in cos and h.node.id not in
                 missing_papers]
        # a paper's name is its title: the best keyword hits with one also get the cosine
        # of their title (a near-exact title finds its paper, as a concept's name does)
        titled = [h.node for h in keyword if isinstance(h.node, Paper) and h.node.title][
            :TITLE_HITS]
        texts = [n.label for n in named] + [n.title or "" for n in titled]
        if texts:
            vecs = self.embedding.encode_queries(texts)
            for node, vec in zip([*named, *titled], vecs, strict=True):
                c = _cosine(vector, [float(x) for x in vec])
                cos[node.id] = max(c, cos.get(node.id, c))
        # a concept's cosine is its name's: ~1.0 for a query that repeats the name. A paper's
        # name is its title; the title's own embedding would give exactly 1.0 when the
        # query is the title (the model is uncased), so say so without encoding it
        said = _spaced(query)
        for nid, node in nodes.items():
            title = getattr(node, "title", None)
            if title and _spaced(title) == said:
                cos[nid] = 1.0
        best = max((h.score for h in keyword), default=0.0)
        kw = {h.node.id: h.score for h in keyword}
        scored = {
            nid: cos.get(nid, 0.0) + (KEYWORD_WEIGHT * kw[nid] / best if nid in kw and best
                                      else 0.0)
            for nid in nodes
        }
        order = sorted(scored, key=lambda i: (-round(scored[i], 9), i))[:first]
        return [
            ScoredNode(nodes[i], round(scored[i], 6), kw.get(i), cos.get(i) if i in cos
                       else None)
            for i in order
        ]

    # ------------------------------------------------------------------ related
    def related(
        self,
        paper: str | None = None,
        text: str | None = None,
        first: int = 10,
        exclude: Sequence[str] = (),
        positive: Sequence[str] = (),
        negative: Sequence[str] = (),
        keep: PaperFilter = ANY,
    ) -> tuple[Paper | None, list[RelatedPaper]]:
        """Papers related to a paper (+ positive, - negative) or a text, with reasons;
        only those ``keep`` admits (a year range, a venue)."""
        from graph.related import related

        if not paper and not text and not positive:
            raise InvalidArgumentError("paper", "give a paper, positive papers or a text")
        papers = [NodeKind.PAPER]
        seed = self.node(paper, papers, "paper") if paper else None
        pos = [self.node(p, papers, "positive").id for p in positive]
        neg = [self.node(p, papers, "negative").id for p in negative]
        vector = None
        terms: list[str] = []
        if text is not None:
            if _blank(text):
                raise InvalidArgumentError("text", "must not be empty")
            vector = self.embedding.vector(text)
            terms = self.text_terms(text)
        if self._lexical_file is not None and not self._lexical_restored:
            n_papers = self.store.stats().nodes.get(NodeKind.PAPER.value, 0)
            self._lexical_restored = self.lexical.restore(
                self._lexical_file, max_bytes=(n_papers + 16) * SAVED_BYTES_PER_PAPER
            )
        found = related(
            self.store, paper=seed.id if seed else None, vector=vector, text=text,
            # every spelling of an excluded id (graph.ids): café NFD excludes the paper café
            text_terms=terms, first=first, positive=pos, negative=neg,
            exclude=[f for x in exclude for f in spellings(x)],
            lexical=self.lexical, term_counts=self.term_counts, keep=keep,
        )
        if self._lexical_file is not None and self.lexical.dirty:
            try:
                self.lexical.save(self._lexical_file)
            except OSError as exc:  # a read-only data dir: the next command reads again
                log.info("word index not saved to %s: %s", self._lexical_file, exc)
        return (seed if isinstance(seed, Paper) else None), found

    def citations(
        self, relation: Relation, refs: Sequence[str], limit: int = 20,
        keep: PaperFilter = ANY, sort: PaperSort | None = None,
    ) -> tuple[list[GraphNode], list[CitationLink]]:
        """The seeds ``refs`` name (papers; for derivative and co-cited works, outside works
        too) and their prior or derivative works, coupled or co-cited papers (those
        ``keep`` admits; ``sort``: the first ``limit`` of those papers in that order)."""
        if not refs:
            raise InvalidArgumentError("ids", "give at least one paper")
        kinds = [NodeKind.PAPER] if relation in (Relation.PRIOR, Relation.COUPLED) else [
            NodeKind.PAPER, NodeKind.WORK]
        seeds = [self.node(r, kinds, "ids") for r in refs]
        ids = [s.id for s in seeds]
        store = self.store
        if relation is Relation.PRIOR:
            return seeds, store.prior_works(ids, limit=limit, keep=keep, sort=sort)
        if relation is Relation.DERIVATIVE:
            return seeds, store.derivative_works(ids, limit=limit, keep=keep, sort=sort)
        if relation is Relation.COUPLED:
            return seeds, store.coupled(ids, limit=limit, keep=keep, sort=sort)
        return seeds, store.cocited(ids, limit=limit, keep=keep, sort=sort)

    def text_terms(self, text: str) -> list[str]:
        """Concept/dataset ids of the graph that a free text mentions."""
        from graph.extract import extract

        ex = extract(text)
        ids: list[str] = []
        surfaces = [c.surface for c in ex.concepts] + [d.name for d in ex.datasets]
        for surface in surfaces:
            node = self.store.find_node(surface, [NodeKind.CONCEPT, NodeKind.DATASET])
            if node is not None and node.id not in ids:
                ids.append(node.id)
        return ids

    # ------------------------------------------------------------------ whole graph
    def central_concepts(self, top: int = CENTRAL_TOP) -> list[CentralConcept]:
        """Concepts by PageRank over the whole graph taken as undirected."""
        import networkx as nx

        data = self.store.snapshot()
        deadline.check()
        g = nx.Graph()
        g.add_nodes_from(data.nodes)
        g.add_edges_from((e.source, e.target) for e in data.edges.values())
        rank = nx.pagerank(g) if g.number_of_nodes() else {}
        concepts = [n for n in data.nodes.values() if n.kind is NodeKind.CONCEPT]
        concepts.sort(key=lambda c: (-round(rank.get(c.id, 0.0), 12), c.id))
        return [
            CentralConcept(c, int(g.degree(c.id)), round(float(rank.get(c.id, 0.0)), 6))
            for c in concepts[:top]
        ]

    def export_parts(
        self,
        around: str | None = None,
        depth: int = 2,
        path: Sequence[str] | None = None,
        ids: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> tuple[list[GraphNode], list[Edge]]:
        """Nodes and edges for an export: everything, a neighborhood, a path or a node set.

        ``around`` and the ends of ``path`` are found the way every other query finds
        names (:meth:`find`), so ``around=SDE`` exports what ``neighborhood(id: "SDE")``
        shows.

        ``ids`` and ``path`` given as several values take each value as one id, whatever
        it holds (the form for an id with a comma). One value is the older comma list:
        split on commas, unless a part names no node and the whole value is an id.
        """
        s = self.settings
        if sum(x is not None for x in (around, path, ids)) > 1:
            raise InvalidArgumentError("around", "give one of around, path or ids")
        cap = s.max_neighborhood_nodes
        if limit is not None and not 1 <= limit <= cap:
            raise InvalidArgumentError("limit", f"must be between 1 and {cap}")
        if ids is not None:
            keep = self._ids_named(_one_or_split(ids), cap)
            edges = [
                e for e in self.store.edges_of(sorted(keep))
                if e.source in keep and e.target in keep
            ]
            return [keep[i] for i in sorted(keep)], edges
        if around is not None:
            if not 1 <= depth <= s.max_depth:
                raise InvalidArgumentError("depth", f"must be between 1 and {s.max_depth}")
            start = self.node(around, argument="around")
            sub = self.store.neighborhood([start.id], depth=depth, limit=limit or cap)
            return list(sub.nodes), list(sub.edges)
        if path is not None:
            ends = [strip_id(p) for p in _one_or_split(path)[0] if not is_empty_id(p)]
            if len(ends) != 2:
                raise InvalidArgumentError(
                    "path", "give two node ids: path=A,B, or path=A&path=B when an id "
                    "holds a comma"
                )
            a, b = self.node(ends[0], argument="path"), self.node(ends[1], argument="path")
            route = self.store.shortest_path(a.id, b.id, None, s.max_hops)
            if route is None:
                raise NotFoundError(f"path: no path within {s.max_hops} hops")
            return list(route.nodes), list(route.edges)
        data = self.store.snapshot()
        return list(data.nodes.values()), list(data.edges.values())

    def _ids_named(
        self, choices: tuple[list[str], str | None], cap: int
    ) -> dict[str, GraphNode]:
        """The nodes an ``ids`` argument names by id (any spelling), by node id.

        ``choices``: the ids, and the whole value to try as one id when they came from
        splitting it on commas and one of them names nothing.
        """
        listed, whole = choices
        wanted = list(dict.fromkeys(strip_id(i) for i in listed if not is_empty_id(i)))
        if not 1 <= len(wanted) <= cap:
            raise InvalidArgumentError("ids", f"give between 1 and {cap} node ids")
        forms = {i: spellings(i) for i in wanted}
        if whole is not None:
            forms[whole] = spellings(whole)
        found = self.store.get_nodes(sorted({f for fs in forms.values() for f in fs}))

        def named(i: str) -> GraphNode | None:
            return next((found[f] for f in forms[i] if f in found), None)

        out: dict[str, GraphNode] = {}
        for i in wanted:
            node = named(i)
            if node is None:
                if whole is not None and (one := named(whole)) is not None:
                    return {one.id: one}  # "a,b" is one paper's id, not two ids
                raise NotFoundError(f"ids: no node with id {i!r}")
            out[node.id] = node
        return out

    # ------------------------------------------------------------------ writes
    def pipeline(self, progress: Progress | None = None, *, incremental: bool = True) -> Pipeline:
        """A build pipeline with this service's model (the caller closes it).

        ``incremental``: the pipeline will serve more than one write (see Pipeline).
        """
        from graph.build import Pipeline

        return Pipeline(
            self.settings, embedder=self.embedding.embedder(), progress=progress,
            incremental=incremental,
        )

    def write(
        self,
        *,
        paths: Sequence[Path | str] = (),
        papers: Sequence[Paper] = (),
        remove: Sequence[str] = (),
        replace: bool = False,
        progress: Progress | None = None,
        pipeline: Pipeline | None = None,
    ) -> BuildReport:
        """Build (``replace``), add or remove papers; only what changed is written. Then
        the topic step: a build recomputes topics, an add or remove follows the rule of
        :mod:`graph.topics.update`."""
        from graph.topics import after_write, recompute

        own = pipeline is None
        pipe = pipeline or self.pipeline(progress, incremental=False)
        try:
            report = pipe.run(
                self.store, add_paths=paths, add_papers=papers, remove=remove, replace=replace
            )
            before = self.store.version()
            done: TopicsUpdate | None
            if replace:
                done = recompute(self.store, self.settings)
            else:
                changed = len(report.added) + report.updated + len(report.removed)
                done = after_write(self.store, self.settings, report.added, changed)
            if done is not None:
                report.topics = dataclasses.asdict(done)
                report.stats = self.store.stats()
                pipe.topics_written(before, self.store.version())
            return report
        finally:
            if own:
                pipe.close()

    # ------------------------------------------------------------------ topics
    def topics(self) -> list[Topic]:
        """Every topic and subtopic (topics first, then by id); no topics: empty."""
        from graph.topics import stored_topics

        found = stored_topics(self.store)
        return sorted(found, key=lambda t: (t.level, _topic_order(t.id)))

    def topic(self, ref: str) -> Topic:
        """One topic by id (``topic:3``, ``3``, ``3.1``) or label."""
        key = ref.strip()
        tid = key if key.startswith("topic:") else f"topic:{key}"
        got = self.store.get_nodes([tid]).get(tid)
        if not isinstance(got, Topic):
            got = self.find(key, [NodeKind.TOPIC])
        if not isinstance(got, Topic):
            raise NotFoundError(f"no topic {ref!r} (see `citegraph topics`)")
        return got

    def topic_of(self, paper_ids: Sequence[str]) -> dict[str, list[Topic]]:
        """Each paper's topic and subtopic (topic first); a paper in none is left out."""
        edges, ends = self.store.edges_and_ends(list(paper_ids), [RelType.IN_TOPIC])
        out: dict[str, list[Topic]] = {}
        for e in edges:
            t = ends.get(e.target)
            if isinstance(t, Topic) and e.source in paper_ids:
                out.setdefault(e.source, []).append(t)
        return {p: sorted(ts, key=lambda t: t.level) for p, ts in out.items()}

    def recompute_topics(self) -> TopicsUpdate:
        """Compute topics afresh (``citegraph topics --recompute``)."""
        from graph.topics import recompute

        return recompute(self.store, self.settings)


def _topic_order(tid: str) -> tuple[int, ...]:
    """``topic:2.10`` after ``topic:2.9``: the numbers of an id, as numbers."""
    body = tid.removeprefix("topic:")
    return tuple(int(x) if x.isdigit() else 0 for x in body.split("."))


def _one_or_split(values: Sequence[str]) -> tuple[list[str], str | None]:
    """Several values: each is one id. One value: its comma parts, and the value whole
    (to try as one id) when it held a comma."""
    if isinstance(values, str):  # a caller of the older signature: one comma list
        values = [values]
    if len(values) != 1 or "," not in values[0]:
        return list(values), None
    return values[0].split(","), strip_id(values[0])


def _blank(text: str) -> bool:
    """Nothing to read: white space, NULs and other control characters only."""
    return not any(c.isprintable() and not c.isspace() for c in text)


def _named_first(
    found: Sequence[ScoredNode],
    named: GraphNode | None,
    first: int,
    keyword: Mapping[str, float],
) -> list[ScoredNode]:
    """``found`` with the node the query names exactly in front (scored as the best).

    BM25 ranks a paper that repeats a concept's name several times above the concept
    itself; a reader who types a name wants the node of that name first.
    """
    if named is None:
        return list(found[:first])
    own = next((f for f in found if f.node.id == named.id), None)
    best = max((f.score for f in found), default=0.0)
    head = ScoredNode(
        named,
        max(best, own.score if own else 0.0),
        own.keyword_score if own else keyword.get(named.id),
        own.similarity if own else None,
    )
    return [head, *(f for f in found if f.node.id != named.id)][:first]


def _spaced(text: str) -> str:
    """``text`` as the uncased model reads it: case and runs of white space ignored."""
    return " ".join(text.casefold().split())


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine of two vectors, rounded to 6 places as every store rounds similarities."""
    import numpy as np

    va, vb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norm = float(np.linalg.norm(va) * np.linalg.norm(vb))
    return round(float(va @ vb) / norm, 6) if norm else 0.0
