"""The GraphStore protocol, the narrow Backend seam under it, and the ordering contract.

Layers: the public :class:`GraphStore` reads (lookup, neighbourhood, paths, search) are
written once in :mod:`graph.query` (inherited through :class:`graph.query.QueryLayer`)
over the primitives of :class:`Backend`, which is all a store implements besides its
writes and counts. So every store applies the same rules and argument checks.

Ordering contract (so every store gives the same answers on the same graph):

* Graph traversal ignores edge direction (a path or neighborhood may walk an edge
  either way); edges keep their stored direction in results.
* ``find_node``: exact id; then the name itself, then its singular
  (:func:`name_variants`), matched against label/name/title/aliases; ties by lowest id.
* ``neighborhood``: breadth-first from the seeds. Seeds are always kept; nodes of
  kinds outside ``node_kinds`` are neither kept nor walked through. Nodes are ranked by (distance,
  descending sum of weights of the edges that reach them from the previous ring, id);
  the first ``limit`` are kept and ``truncated`` says whether any were dropped.
  Edges returned are all the edges among kept nodes that pass the type filter,
  sorted by (source, target, type).
* ``shortest_path``: fewest hops; ties broken by :func:`path_sort_key` (strongest total
  weight first, then the node id sequence). Between two nodes a path uses
  :func:`best_edge`: highest weight, then type name, then (source, target).
* ``k_paths``: simple paths of at most ``max_hops``, sorted by :func:`path_sort_key`
  over (hops, -strength, ids), the first ``k``. Lengths are searched shortest first
  and the search stops after the length at which ``k`` are found; at most 1,000
  candidates are collected, depth first in node id order (the same search on every
  store, so the same candidates even on very dense graphs).
* ``keyword_search``: BM25 from each store's inverted index (SQLite FTS5 in the embedded
  and memory stores, Lucene's fulltext index in Neo4j) over name (+ aliases), title and
  abstract, weighted :data:`COLUMN_WEIGHTS`, for the words of :func:`query_terms` (letters
  and digits, stop words dropped, OR-joined, stemmed by the index: "networks" finds
  "network", "net" does not); score > 0, descending, ties by id. The embedded and memory
  stores give identical hits and scores. Neo4j's differ (Lucene normalises each field by
  its own length, FTS5 names + titles together and abstracts apart, and their IDF and
  tokenisers differ): agreement with it means the same matching nodes, and a clear
  winner (a first hit scoring >= 1.5 x the second) on one store is the first hit on the
  other; not the same scores, nor the same order of near ties.
* ``vector_search``: cosine similarity rounded to 6 places, descending; ties by id;
  a zero or empty vector, or one of another dimension than the stored ones, gives no hits.
* Counts (``limit``, ``offset``, ``depth``, ``k``) are ints >= 0, ``max_hops`` is
  1..:data:`MAX_HOPS`, and an unknown node kind or relationship type is refused, with an
  :class:`~graph.errors.InvalidArgumentError` naming the argument, on every store.
* ``apply``: an edge whose ``attrs`` has ``weight`` must carry the same value as
  ``Edge.weight``; embeddings for ids that are not papers in the graph are an error.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

import numpy as np

from graph.model import (
    CitationLink,
    Edge,
    GraphChange,
    GraphData,
    GraphNode,
    GraphPath,
    GraphStats,
    NodeKind,
    Overlap,
    Paper,
    RelType,
    SearchHit,
    Subgraph,
)
from graph.query.filters import ANY, CountBy, GroupCount, PaperFilter, PaperSort
from graph.query.rules import (
    MAX_HOPS,
    best_edge,
    check_count,
    check_hops,
    edge_sort_key,
    hit_sort_key,
    kinds_filter,
    name_key,
    name_variants,
    path_sort_key,
    types_filter,
)
from graph.query.text import COLUMN_WEIGHTS, MAX_QUERY_CHARS, query_terms, search_fields
from graph.query.traverse import RingWalk


class PartsWrite(Protocol):
    """One write of :meth:`GraphStore.write_in_parts`."""

    def apply(self, change: GraphChange) -> None:
        """Write one part (checked as :meth:`GraphStore.apply` checks a change); nothing
        is visible to readers before :meth:`commit`."""

    def commit(self) -> None:
        """Make every part applied visible at once; a write of only empty parts
        changes nothing."""


class CollectedParts:
    """A :class:`PartsWrite` that keeps the parts and applies them as one change on
    commit: for a store that writes a change in one transaction anyway (memory, Neo4j)."""

    def __init__(self, apply: Callable[[GraphChange], None]) -> None:
        self._apply = apply
        self._parts: list[GraphChange] = []

    def apply(self, change: GraphChange) -> None:
        self._parts.append(change)

    def commit(self) -> None:
        parts, self._parts = self._parts, []
        change = merged(parts)
        if not change.empty:
            self._apply(change)


def merged(parts: Sequence[GraphChange]) -> GraphChange:
    """One change that does what non-overlapping ``parts`` do (see
    :meth:`GraphStore.write_in_parts`)."""
    if len(parts) == 1:
        return parts[0]
    with_vectors = [p for p in parts if p.embedding_ids]
    if len(with_vectors) > 1:
        raise ValueError("a write in parts carries embeddings in one part at most")
    vectors = with_vectors[0] if with_vectors else GraphChange()
    return GraphChange(
        upsert_nodes=tuple(n for p in parts for n in p.upsert_nodes),
        delete_nodes=tuple(n for p in parts for n in p.delete_nodes),
        upsert_edges=tuple(e for p in parts for e in p.upsert_edges),
        delete_edges=tuple(k for p in parts for k in p.delete_edges),
        embedding_ids=vectors.embedding_ids,
        embeddings=vectors.embeddings,
        embedding_model=next(
            (p.embedding_model for p in reversed(parts) if p.embedding_model), None
        ),
        link_settings=next((p.link_settings for p in reversed(parts) if p.link_settings), None),
    )


class PagedReads(Protocol):
    """The whole graph a page at a time, for exports (:mod:`graph.export`): a caller holds
    one page, never the graph.

    Keyset pages: each call names the last id of the page before, so a page costs an index
    seek and the size of the page, not the pages before it. Ids are ordered by the store's
    own string order (code points in SQLite and Python, UTF-16 units in Neo4j: the order of
    ids with characters beyond U+FFFF differs, the pages hold every node either way). Each
    call is its own read: a write committed between two calls shows in the pages after it.
    """

    def node_page(self, after: str | None, limit: int) -> list[GraphNode]:
        """Up to ``limit`` nodes (``limit`` >= 1) whose id follows ``after`` (every node for
        None), by id; fewer than ``limit`` only when no more follow."""

    def edge_page(self, after: str | None, limit: int) -> list[Edge]:
        """The edges out of the nodes whose id follows ``after`` (every node for None), for
        the first of those nodes in id order, each node's edges whole: at least ``limit``
        edges (``limit`` >= 1) unless fewer remain, none when none remain; by (source,
        target, type). The next page follows the last edge's source."""


@runtime_checkable
class GraphStore(PagedReads, Protocol):
    """Storage and traversal of the citegraph graph.

    Implementations: :class:`graph.store.embedded.EmbeddedStore` (a SQLite database,
    the default), :class:`graph.store.memory.NetworkxStore` (memory only, the engine
    the embedded store reads through) and :class:`graph.store.neo4j.Neo4jStore`
    (Bolt). One contract suite in ``tests/contract`` runs against all of them.
    """

    # ---- lifecycle
    def ping(self) -> None:
        """Raise :class:`~graph.errors.StoreUnavailableError` if the store cannot be reached."""

    def close(self) -> None:
        """Release connections / flush. Safe to call twice."""

    def version(self) -> str | None:
        """A token that changes whenever the graph changes, from any process.

        Keys caches of derived results (PageRank); None when the store cannot tell
        cheaply (then only this process's own writes invalidate them).
        """

    # ---- writes
    def writer(
        self, on_wait: Callable[[str], None] | None = None
    ) -> AbstractContextManager[None]:
        """Hold the store's write lock, then bring reads up to date with the store.

        Writers serialise on it from reading the graph to applying the change they
        computed from it, so no two writers compute from the same old graph (a lost
        update). The embedded store locks its data folder across processes; a server
        store serialises its transactions itself. ``on_wait`` is told, once, when the
        lock is held by someone else.
        """

    def apply(self, change: GraphChange) -> None:
        """Apply a diff atomically: after an error nothing of it is visible.

        The one exception: a server store may split a very large change into batches
        that commit one by one (Neo4j above ``max_tx_rows``); each batch is idempotent, a
        failure says how many committed, and applying the same change again completes it.

        Order: delete edges, delete nodes (with their edges), upsert nodes, upsert
        edges, set embeddings. Upserts replace the whole property set of a node/edge.
        """

    def write_in_parts(self) -> AbstractContextManager[PartsWrite]:
        """One write made of several changes, applied as :meth:`apply` applies one: all of
        them or none (a server store's batches excepted, as there).

        The writer computes each part after writing the one before, so it never holds
        them all at once (a build of 100k papers: 4.4M edges). Inside the block:
        ``w.apply(change)`` per part, in order, then ``w.commit()``; leaving the block
        without ``commit`` (an error, an interrupt) writes nothing. A part may name the
        nodes of an earlier one. The parts must not overlap: no edge or node upserted by
        one and deleted or upserted by another, and one part at most with embeddings.
        The write lock of :meth:`writer` is the caller's to hold.
        """

    def clear(self) -> None:
        """Delete everything."""

    # ---- reads
    def get_nodes(self, ids: Sequence[str]) -> dict[str, GraphNode]:
        """Nodes by id; unknown ids are simply absent."""

    def find_node(self, name: str, kinds: Collection[NodeKind] | None = None) -> GraphNode | None:
        """Exact lookup by id, then a name/label/title/alias match on :func:`name_variants`.

        Several matches: the lowest id wins.
        """

    def list_nodes(
        self,
        kind: NodeKind,
        *,
        offset: int = 0,
        limit: int = 50,
        venue: str | None = None,
        year: int | None = None,
        neighbor: str | None = None,
    ) -> tuple[list[GraphNode], int]:
        """A page of nodes of one kind ordered by id, and the total count.

        ``neighbor``: only nodes joined to that node id by any edge (e.g. papers
        mentioning a concept).
        """

    def edges_of(
        self,
        ids: Sequence[str],
        types: Collection[RelType] | None = None,
    ) -> list[Edge]:
        """Every edge touching any of ``ids`` (either direction), by (source, target, type)."""

    def edges_and_ends(
        self, ids: Sequence[str], types: Collection[RelType] | None = None
    ) -> tuple[list[Edge], dict[str, GraphNode]]:
        """:meth:`edges_of`, and the nodes at both ends of those edges by id (a node with
        its neighbours: one round trip on a server store)."""

    def coupled(
        self, ids: Sequence[str], limit: int = 20, keep: PaperFilter = ANY,
        sort: PaperSort | None = None,
    ) -> list[CitationLink]:
        """Papers bibliographically coupled to ``ids``: they cite the same works, outside
        ones included (graph.query.citations: Salton's cosine, the shared works); only
        those ``keep`` admits (a year range, a venue)."""

    def cocited(
        self, ids: Sequence[str], limit: int = 20, papers_only: bool = True,
        keep: PaperFilter = ANY, sort: PaperSort | None = None,
    ) -> list[CitationLink]:
        """Papers (``papers_only``: else outside works too) cited together with ``ids``."""

    def prior_works(
        self, ids: Sequence[str], limit: int = 20, keep: PaperFilter = ANY,
        sort: PaperSort | None = None,
    ) -> list[CitationLink]:
        """The works ``ids`` cite most, outside works included."""

    def derivative_works(
        self, ids: Sequence[str], limit: int = 20, keep: PaperFilter = ANY,
        sort: PaperSort | None = None,
    ) -> list[CitationLink]:
        """The corpus papers that cite ``ids`` most."""

    def papers(
        self, where: PaperFilter = ANY, sort: PaperSort | None = None, *, offset: int = 0,
        limit: int = 50,
    ) -> tuple[list[Paper], int]:
        """A page of the papers ``where`` admits, by ``sort`` then id, and how many match
        (graph.query.filters)."""

    def paper_counts(
        self, by: CountBy, where: PaperFilter = ANY, limit: int = 20
    ) -> list[GroupCount]:
        """Paper counts by year, venue or concept under ``where``."""

    def kept(self, where: PaperFilter, nodes: Sequence[GraphNode]) -> list[GraphNode]:
        """Those of ``nodes`` that ``where`` keeps, in order (the store checks the papers)."""

    def neighborhood(
        self,
        ids: Sequence[str],
        depth: int = 1,
        rel_types: Collection[RelType] | None = None,
        node_kinds: Collection[NodeKind] | None = None,
        limit: int = 200,
    ) -> Subgraph:
        """Nodes within ``depth`` hops of ``ids`` (see the module's ordering contract)."""

    def shortest_path(
        self,
        source: str,
        target: str,
        rel_types: Collection[RelType] | None = None,
        max_hops: int = 6,
    ) -> GraphPath | None:
        """The shortest path, or None if none within ``max_hops``."""

    def k_paths(
        self,
        source: str,
        target: str,
        k: int = 3,
        rel_types: Collection[RelType] | None = None,
        max_hops: int = 4,
    ) -> list[GraphPath]:
        """Up to ``k`` simple paths, ordered by :func:`path_sort_key`."""

    def keyword_search(
        self, query: str, kinds: Collection[NodeKind] | None = None, limit: int = 10
    ) -> list[SearchHit]:
        """Keyword hits over labels, names, aliases, titles and abstracts."""

    def vector_search(
        self, vector: Sequence[float], limit: int = 10, exclude: Collection[str] = ()
    ) -> list[SearchHit]:
        """Papers by cosine similarity of their embedding to ``vector``."""

    def embeddings(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """Stored embeddings by paper id (papers without one are absent)."""

    def embedding_model(self) -> str | None:
        """Name of the model the stored embeddings came from."""

    def stats(self) -> GraphStats:
        """Node counts by kind and edge counts by type (every kind/type present, zeros too)."""

    def snapshot(self) -> GraphData:
        """The whole graph in memory (for diffs; an export of the whole graph reads it in
        pages instead: :class:`PagedReads`)."""


# --------------------------------------------------------------------------- the backend seam


class Backend(Protocol):
    """The primitives a store implements; :mod:`graph.query` answers every read from them.

    Batch-oriented: each call takes a whole ring of node ids, so a server store answers
    one round trip per ring. Arguments arrive checked (types and kinds as sets, None for
    all); ordering, limits and ties are the query layer's job, not the backend's.
    """

    #: True when each call costs a round trip (a server): the query layer then loads the
    #: region a path search may visit at once, instead of node by node.
    batch_reads: bool

    def reading(self) -> AbstractContextManager[object]:
        """Held around one query: the primitives see one state of the graph."""

    def get_nodes(self, ids: Sequence[str]) -> dict[str, GraphNode]:
        """Nodes by id; unknown ids are simply absent."""

    def nodes_named(self, keys: Sequence[str]) -> list[GraphNode]:
        """Nodes whose label/name, title or an alias folds (:func:`name_key`) to one of
        ``keys`` (a superset is fine: the query layer checks again)."""

    def odd_paper_ids(self) -> dict[str, str]:
        """:func:`graph.ids.odd_spellings` of the stored papers' ids: key -> id for the ids
        that are not their own key (a Kelvin sign, NFD, untrimmed; most graphs: none).
        Asked only when a lookup found nothing by id or name."""

    def page(
        self,
        kind: NodeKind,
        *,
        offset: int,
        limit: int,
        venue: str | None,
        year: int | None,
        neighbor: str | None,
    ) -> tuple[list[GraphNode], int]:
        """A page of one kind by id, and the total (``neighbor``: joined to that id)."""

    def incident_edges(self, ids: Sequence[str], types: frozenset[RelType] | None) -> list[Edge]:
        """Edges touching any of ``ids``, either way (duplicates allowed)."""

    def edges_among(self, ids: Sequence[str], types: frozenset[RelType] | None) -> list[Edge]:
        """Edges with both ends in ``ids``, each once."""

    def incident_with_ends(
        self, ids: Sequence[str], types: frozenset[RelType] | None
    ) -> tuple[list[Edge], dict[str, GraphNode]]:
        """:meth:`incident_edges`, and the nodes at both ends of those edges by id."""

    def ring_neighbors(
        self, ids: Collection[str], types: frozenset[RelType] | None
    ) -> dict[str, Collection[str]]:
        """For each of ``ids``: the ids joined to it by an edge of ``types`` (repeats
        allowed; an unknown id may be absent)."""

    def ring_weights(
        self,
        ids: Collection[str],
        types: frozenset[RelType] | None,
        kinds: frozenset[NodeKind] | None,
        exclude: Collection[str],
    ) -> dict[str, float]:
        """For each node of ``kinds`` not in ``exclude`` next to the ring ``ids``: the sum
        of the weights of the edges of ``types`` that join it to the ring."""

    def ring_top(
        self,
        ids: Sequence[str],
        types: frozenset[RelType] | None,
        kinds: frozenset[NodeKind] | None,
        exclude: Collection[str],
        room: int,
    ) -> tuple[list[str], int] | None:
        """The first ``room`` (>= 0) of :meth:`ring_weights`' nodes by (-round(summed
        weight, 9), id), and how many nodes that ring reaches; or None, and the query
        layer ranks :meth:`ring_weights` itself.

        A server store answers it in one round trip that sends back only the nodes that
        may rank (a depth-2 ring reaches thousands); the in-memory engine sums big rings
        in numpy. The answer must be the ranking of ``ring_weights`` exactly
        (:func:`graph.query.traverse.rank_reach`); sums that differ only past the ninth
        decimal (another order of additions) rank the same."""

    def nodes_and_edges(
        self, ids: Sequence[str], types: frozenset[RelType] | None
    ) -> tuple[dict[str, GraphNode], list[Edge]]:
        """:meth:`get_nodes` of ``ids`` and :meth:`edges_among` them, in one call (the
        last step of a neighbourhood: one round trip on a server store)."""

    def walk(
        self,
        ids: Sequence[str],
        depth: int,
        types: frozenset[RelType] | None,
        kinds: frozenset[NodeKind] | None,
        limit: int,
    ) -> RingWalk | None:
        """A whole neighbourhood's material in one call, or None (then the query layer
        asks ring by ring).

        :class:`~graph.query.traverse.RingWalk`: which of ``ids`` exist; for the first
        rings (up to ``depth``; a store may stop earlier, the query layer goes on with
        :meth:`ring_top`), each ring's candidates computed as if the rings before it
        were kept whole (ring 1 from every existing seed, ring 2 from every node of ring
        1, each excluding the nodes of the rings before), each a superset of what
        :meth:`ring_top` would rank first in ``limit`` less the nodes before it, with how
        many nodes it reached; the nodes of the seeds and candidates, and the edges
        among them. The query layer ranks and cuts (:func:`~graph.query.traverse.
        rank_reach`), so the answer is the ring by ring walk's exactly. A server store
        answers a neighbourhood in one round trip with it."""

    def citation_overlap(self, ids: Sequence[str], coupling: bool) -> list[Overlap]:
        """Each of ``ids`` with every other node it is joined to through CITES, computed
        where the graph is (nothing of it is stored), by (seed, partner).

        ``coupling``: bibliographic coupling, the papers that cite a work (a paper or an
        outside work) a seed cites, with those works; else co-citation, the nodes (papers
        or outside works) cited by a paper that cites a seed, with those papers. Each
        :class:`~graph.model.Overlap` has both ends' CITES degree in that direction (how
        many works each cites; how many papers cite each). Unknown ids give nothing."""

    def match_papers(
        self, where: PaperFilter, sort: PaperSort | None, offset: int, limit: int | None,
        within: Sequence[str] | None = None,
    ) -> tuple[list[str], int]:
        """The ids of the papers ``where`` admits (its ``kinds`` aside: papers are asked
        for; ``within``: only those of these ids), sorted by ``sort`` with ties by id (by
        id alone for None; a missing year last either way), from ``offset``, at most
        ``limit`` (None: all); and how many match. Computed by the store (SQL, one Cypher
        query), never by fetching every paper. Strings compare by code point (the contract
        suite checks it on titles and ids beyond U+FFFF, Neo4j included)."""

    def count_papers(self, where: PaperFilter, by: CountBy, limit: int) -> list[GroupCount]:
        """The papers ``where`` admits, counted by year, venue or mentioned concept (a paper
        without a year or venue is in no group), in the order of
        :func:`graph.query.filters.ranked_groups`, the first ``limit`` groups."""

    def keyword_candidates(
        self, terms: Sequence[str], kinds: frozenset[NodeKind] | None, limit: int
    ) -> list[tuple[str, float]]:
        """(node id, BM25 score > 0) of the best ``limit`` nodes of ``kinds`` holding any of
        ``terms`` (from :func:`query_terms`), best first, ties by id; from an index, never
        a scan. Ids the other primitives do not know yet are dropped by the caller."""

    def vector_candidates(
        self, unit: np.ndarray[Any, Any], limit: int, exclude: frozenset[str]
    ) -> list[tuple[str, float]]:
        """(paper id, rounded cosine to ``unit``) for at least the best ``limit`` papers
        not in ``exclude``, every paper tied with the last of them included; an
        embedding of another dimension never matches."""


# The rules live in graph.query; these names stay importable from here.
__all__ = [
    "COLUMN_WEIGHTS",
    "MAX_HOPS",
    "MAX_QUERY_CHARS",
    "Backend",
    "CollectedParts",
    "GraphStore",
    "PagedReads",
    "PartsWrite",
    "best_edge",
    "check_count",
    "check_hops",
    "edge_sort_key",
    "hit_sort_key",
    "jsonable_attrs",
    "kinds_filter",
    "merged",
    "name_key",
    "name_variants",
    "path_sort_key",
    "query_terms",
    "search_fields",
    "types_filter",
]


def jsonable_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    """Edge attrs as JSON/Bolt-friendly values (tuples -> lists)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in attrs.items()}
