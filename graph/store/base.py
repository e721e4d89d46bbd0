"""The GraphStore protocol every store implements, and the ordering rules they share.

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
  weight first, then the node id sequence).
* ``k_paths``: simple paths of at most ``max_hops``, sorted by :func:`path_sort_key`
  over (hops, -strength, ids), the first ``k``. Lengths are searched shortest first
  and the search stops after the length at which ``k`` are found; at most 1,000
  candidates are collected (beyond that, which candidates are seen depends on the
  store, so answers may differ on very dense graphs).
* ``keyword_search``: score from :func:`keyword_score`; ties by id.
* ``vector_search``: cosine similarity rounded to 6 places, descending; ties by id;
  a zero or empty vector gives no hits.
* ``apply``: an edge whose ``attrs`` has ``weight`` must carry the same value as
  ``Edge.weight``; embeddings for ids that are not papers in the graph are an error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from graph.errors import InvalidArgumentError
from graph.model import (
    Edge,
    GraphChange,
    GraphData,
    GraphNode,
    GraphPath,
    GraphStats,
    NodeKind,
    RelType,
    SearchHit,
    Subgraph,
)


@runtime_checkable
class GraphStore(Protocol):
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
        """The whole graph in memory (for diffs and exports)."""


# --------------------------------------------------------------------------- shared rules


def path_sort_key(path: GraphPath) -> tuple[int, float, tuple[str, ...], tuple[str, ...]]:
    """Fewest hops, then strongest (highest summed weight), then node ids, then edge types.

    Between two nodes joined by several edges a path uses the strongest one (ties by
    type name), so paths are told apart by their node sequence.
    """
    return (
        path.hops,
        -round(path.strength, 9),
        tuple(n.id for n in path.nodes),
        tuple(e.type.value for e in path.edges),
    )


def best_edge(edges: Iterable[Edge]) -> Edge:
    """The edge a path uses between two nodes: highest weight, then type name."""
    return min(edges, key=lambda e: (-e.weight, e.type.value))


Adjacency = Callable[[str], Iterable[tuple[str, Edge]]]


def best_shortest_path(
    source: str,
    target: str,
    adjacent: Adjacency,
    max_hops: int,
    neighbors: Callable[[str], Iterable[str]] | None = None,
    prefetch: Callable[[list[str]], None] | None = None,
) -> list[tuple[str, Edge | None]] | None:
    """The shortest path under :func:`path_sort_key`, exactly, without enumerating paths.

    Breadth-first layers from ``source`` until ``target``'s layer; a backward sweep keeps
    only the nodes that lie on some shortest path; a forward pass over those keeps, for
    each node, the best (strength, id sequence) prefix. ``adjacent(n)`` yields
    (neighbour, best edge) pairs with the type filter applied; ``neighbors(n)``, if
    given, yields the same neighbours' ids only (cheaper, for the searches);
    ``prefetch(nodes)``, if given, is told every node ``adjacent`` will be asked about,
    before it is (a server store loads them in one query). Returns
    [(node, edge into it)] or None when ``target`` is farther than ``max_hops``.
    """
    if source == target:
        return [(source, None)]

    def ids_of(u: str) -> Iterable[str]:
        return neighbors(u) if neighbors is not None else (v for v, _ in adjacent(u))

    dist = {source: 0}
    frontier = [source]
    found = False
    depth = 0
    while frontier and depth < max_hops and not found:
        depth += 1
        nxt: list[str] = []
        for u in frontier:
            for v in ids_of(u):
                if v not in dist:
                    dist[v] = depth
                    nxt.append(v)
                    found = found or v == target
        frontier = nxt
    if target not in dist:
        return None
    # nodes on some shortest path, by distance from the source
    on_path: list[set[str]] = [set() for _ in range(dist[target] + 1)]
    on_path[-1].add(target)
    for d in range(dist[target], 0, -1):
        for v in on_path[d]:
            on_path[d - 1].update(u for u in ids_of(v) if dist.get(u) == d - 1)
    if prefetch is not None:
        prefetch(sorted(set().union(*on_path[:-1])))
    # best[v] = (-strength, id sequence, path)
    best: dict[str, tuple[float, tuple[str, ...], list[tuple[str, Edge | None]]]] = {
        source: (0.0, (source,), [(source, None)])
    }
    for d in range(1, dist[target] + 1):
        for u in sorted(on_path[d - 1]):
            if u not in best:
                continue
            neg, seq, path = best[u]
            for v, edge in adjacent(u):
                if v not in on_path[d]:
                    continue
                cand = (round(neg - edge.weight, 9), (*seq, v), [*path, (v, edge)])
                if v not in best or cand[:2] < best[v][:2]:
                    best[v] = cand
    return best[target][2]


def hop_distance(
    source: str, target: str, neighbors: Callable[[str], Iterable[str]], max_hops: int
) -> int | None:
    """Fewest hops from ``source`` to ``target`` (at most ``max_hops``), or None.

    Breadth-first from both ends at once, always growing the smaller frontier, so the
    search touches about the square root of what a one-sided search would.
    """
    if source == target:
        return 0
    dist = ({source: 0}, {target: 0})
    frontier = ([source], [target])
    depth = [0, 0]
    while frontier[0] and frontier[1] and depth[0] + depth[1] < max_hops:
        side = 0 if len(frontier[0]) <= len(frontier[1]) else 1
        mine, other = dist[side], dist[1 - side]
        depth[side] += 1
        nxt: list[str] = []
        best: int | None = None
        for u in frontier[side]:
            for v in neighbors(u):
                if v in other:
                    total = depth[side] + other[v]
                    best = total if best is None else min(best, total)
                if v not in mine:
                    mine[v] = depth[side]
                    nxt.append(v)
        if best is not None:
            return best if best <= max_hops else None
        frontier = (nxt, frontier[1]) if side == 0 else (frontier[0], nxt)
    return None


_WORD = re.compile(r"[\w][\w\-]*", re.UNICODE)


#: A keyword query is read up to this many characters: longer text is not a keyword query,
#: and scoring every node against 90 KB of it would take seconds.
MAX_QUERY_CHARS = 500


def query_terms(query: str) -> list[str]:
    """Lower-cased words of a keyword query (its first MAX_QUERY_CHARS characters)."""
    return [w.casefold() for w in _WORD.findall(query[:MAX_QUERY_CHARS])]


@dataclass(frozen=True, slots=True)
class SearchText:
    """A node's text as keyword scoring reads it (case-folded once, reusable)."""

    names: tuple[str, ...]  # label/name, then aliases
    title: str
    body: str
    name_text: str  # names and title joined, for word tests

    @classmethod
    def of(cls, node: GraphNode) -> SearchText:
        names = (node.label.casefold(), *(a.casefold() for a in getattr(node, "aliases", ())))
        title = (getattr(node, "title", None) or "").casefold()
        body = (getattr(node, "abstract", None) or "").casefold()
        return cls(names, title, body, " ".join(names) + " " + title)


def keyword_score(query: str, node: GraphNode | SearchText) -> float:
    """Score a node for a keyword query, the same way in every store.

    The whole query in the label/name/alias scores 3 (exact equality 5); each query
    word in the label/aliases scores 1, in title/abstract 0.25. Zero means no hit.
    A store that scores many nodes passes their :class:`SearchText`, made once.
    """
    q = query[:MAX_QUERY_CHARS].strip().casefold()
    if not q:
        return 0.0
    text = node if isinstance(node, SearchText) else SearchText.of(node)
    score = 0.0
    if any(n == q for n in text.names):
        score += 5.0
    elif any(q in n for n in text.names) or q in text.title:
        score += 3.0
    terms = query_terms(q)
    for t in terms:
        if t in text.name_text:
            score += 1.0
        elif t in text.body:
            score += 0.25
    if score and terms and not all(t in text.name_text or t in text.body for t in terms):
        # every word must occur somewhere; partial matches rank but only above zero
        score *= 0.5
    return score


def name_variants(name: str) -> list[str]:
    """Case-folded lookup keys for a name: itself, then its singular ("LLMs" -> "llm")."""
    key = " ".join(name.split()).casefold()
    out = [key]
    if len(key) > 3 and key.endswith("s") and not key.endswith("ss"):
        out.append(key[:-1])
    return out


#: the most hops a path query walks, on every store (a bound on the work one query does)
MAX_HOPS = 20


def check_count(argument: str, value: int) -> int:
    """``value`` as a count (an int >= 0); InvalidArgumentError naming ``argument``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgumentError(argument, "must be an integer")
    if value < 0:
        raise InvalidArgumentError(argument, "must be >= 0")
    return value


def check_hops(value: int) -> int:
    """``max_hops`` between 1 and :data:`MAX_HOPS`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgumentError("max_hops", "must be an integer")
    if not 1 <= value <= MAX_HOPS:
        raise InvalidArgumentError("max_hops", f"must be between 1 and {MAX_HOPS}")
    return value


def kinds_filter(kinds: Iterable[NodeKind | str] | None) -> frozenset[NodeKind] | None:
    """Node kinds as a set (None: every kind); InvalidArgumentError for an unknown one."""
    if kinds is None:
        return None
    try:
        return frozenset(NodeKind(k) for k in kinds)
    except ValueError:
        raise InvalidArgumentError(
            "kinds", f"unknown node kind; choose from {', '.join(k.value for k in NodeKind)}"
        ) from None


def types_filter(types: Iterable[RelType | str] | None) -> frozenset[RelType] | None:
    """Relationship types as a set (None: every type); InvalidArgumentError if unknown."""
    if types is None:
        return None
    try:
        return frozenset(RelType(t) for t in types)
    except ValueError:
        raise InvalidArgumentError(
            "rel_types",
            f"unknown relationship type; choose from {', '.join(t.value for t in RelType)}",
        ) from None


def edge_sort_key(edge: Edge) -> tuple[str, str, str]:
    return (edge.source, edge.target, edge.type.value)


def hit_sort_key(hit: SearchHit) -> tuple[float, str]:
    return (-round(hit.score, 9), hit.node.id)


def jsonable_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    """Edge attrs as JSON/Bolt-friendly values (tuples -> lists)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in attrs.items()}
