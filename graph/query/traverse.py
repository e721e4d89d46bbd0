"""Neighbourhoods and paths, written once over the batch primitives of a Backend.

Every walk asks the backend for a whole ring of nodes at a time (neighbour ids, summed
weights, incident edges), so a server store answers in one round trip per ring and the
in-memory engine walks its adjacency dicts without building objects per visit.
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from graph import deadline
from graph.model import Edge, GraphNode, GraphPath, NodeKind, RelType, Subgraph
from graph.query.rules import (
    MAX_PATH_CANDIDATES,
    best_edge,
    check_count,
    check_hops,
    edge_sort_key,
    kinds_filter,
    types_filter,
)

if TYPE_CHECKING:
    from graph.store.base import Backend

log = logging.getLogger(__name__)

Types = frozenset[RelType] | None
#: steps of a depth-first path search between two checks of the deadline
DEADLINE_EVERY = 4096
#: [(neighbour, the best edge to it)] sorted by neighbour id
Adjacent = list[tuple[str, Edge]]


def edges_of(b: Backend, ids: Sequence[str], types: Collection[RelType] | None) -> list[Edge]:
    """Every edge touching any of ``ids`` (either direction), by (source, target, type)."""
    allowed = types_filter(types)
    with b.reading():
        found = {
            (e.source, e.target, e.type): e
            for e in b.incident_edges(list(dict.fromkeys(ids)), allowed)
        }
    # the keys are edge_sort_key's own tuples, and unique: sorting them needs no key calls
    return [found[k] for k in sorted(found)]


def edges_and_ends(
    b: Backend, ids: Sequence[str], types: Collection[RelType] | None
) -> tuple[list[Edge], dict[str, GraphNode]]:
    """:func:`edges_of`, and the nodes at the ends of those edges, by id."""
    allowed = types_filter(types)
    with b.reading():
        edges, ends = b.incident_with_ends(list(dict.fromkeys(ids)), allowed)
    found = {(e.source, e.target, e.type): e for e in edges}
    return [found[k] for k in sorted(found)], ends


class RingWalk(NamedTuple):
    """The first rings of a neighbourhood from one call (:meth:`Backend.walk`).

    ``rings[i]``: the candidates of ring ``i + 1`` (id -> summed weight from ring ``i``:
    at least every node that may rank in the room left, all of them when the ring fits)
    and how many nodes that ring reached, each ring computed as if every ring before it
    was kept whole (the only case in which the query layer walks on). ``nodes``: the
    seeds and every candidate; ``edges``: the edges among them (of the types asked for).
    """

    present: list[str]
    rings: list[tuple[dict[str, float], int]]
    nodes: dict[str, GraphNode]
    edges: list[Edge]


def neighborhood(
    b: Backend,
    ids: Sequence[str],
    depth: int,
    rel_types: Collection[RelType] | None,
    node_kinds: Collection[NodeKind] | None,
    limit: int,
) -> Subgraph:
    """Breadth-first rings ranked by (distance, -weight from the previous ring, id)."""
    check_count("depth", depth)
    check_count("limit", limit)
    allowed = types_filter(rel_types)
    kinds = kinds_filter(node_kinds)
    seeds = list(dict.fromkeys(ids))
    with b.reading():
        walk = b.walk(seeds, depth, allowed, kinds, limit) if depth else None
        present = sorted(walk.present if walk is not None else b.get_nodes(seeds))
        kept = present[:limit]
        truncated = len(present) > len(kept)
        seen = set(kept)
        ring = list(kept)
        for step in range(depth):
            if truncated or not ring:
                break  # later rings rank below everything kept so far
            deadline.check()
            room = limit - len(kept)
            if walk is not None and step < len(walk.rings):
                candidates, reached = walk.rings[step]
                ranked = rank_reach(candidates, room)
            else:
                ranked, reached = ring_top(b, ring, allowed, kinds, seen, room)
            truncated = reached > room
            kept.extend(ranked)
            seen.update(ranked)
            ring = ranked
        if walk is not None and all(n in walk.nodes for n in kept):
            # the edges among the walk's nodes, kept to those among the kept ones
            inside = set(kept)
            nodes = walk.nodes
            edges = [e for e in walk.edges if e.source in inside and e.target in inside]
        else:
            nodes, edges = b.nodes_and_edges(kept, allowed)
    return Subgraph(
        nodes=tuple(nodes[n] for n in kept),
        edges=tuple(sorted(edges, key=edge_sort_key)),
        truncated=truncated,
    )


def ring_top(
    b: Backend,
    ring: Sequence[str],
    allowed: frozenset[RelType] | None,
    kinds: frozenset[NodeKind] | None,
    exclude: Collection[str],
    room: int,
) -> tuple[list[str], int]:
    """The first ``room`` nodes next to ``ring`` (not in ``exclude``) by (-round(summed
    weight, 9), id), and how many it reached.

    From :meth:`Backend.ring_top` (a server store ranks in the database; the in-memory
    engine sums big rings in numpy), or, where it answers None, from
    :meth:`Backend.ring_weights`.
    """
    got = b.ring_top(ring, allowed, kinds, exclude, room)
    if got is not None:
        return got
    reach = b.ring_weights(ring, allowed, kinds, exclude)
    return rank_reach(reach, room), len(reach)


def rank_reach(reach: dict[str, float], room: int) -> list[str]:
    """The first ``room`` ids of ``reach`` (id -> summed weight) by (-round(weight, 9), id)."""

    def rank(v: str) -> tuple[float, str]:
        return (-round(reach[v], 9), v)

    if len(reach) > room:
        # a total order (ids are unique): the first `room` without sorting the ring
        return heapq.nsmallest(room, _near_top(reach, room), key=rank)
    return sorted(reach, key=rank)


def _near_top(reach: dict[str, float], room: int) -> list[str]:
    """The ids whose weight may rank in the first ``room`` under ``round(weight, 9)``.

    round() never reorders two weights, only makes them equal, and moves none by more
    than 1e-9: everything ranked first under it weighs at least the ``room``-th largest
    weight less 1e-9. Keeping those first (a partition in numpy, no Python call per
    node) spares the exact ranking the other ~95% of a depth-2 ring.
    """
    if room <= 0:
        return []
    if len(reach) <= 4 * room:
        return list(reach)
    weights = np.fromiter(reach.values(), dtype=np.float64, count=len(reach))
    if not np.isfinite(weights).all():
        return list(reach)
    cut = float(np.partition(weights, len(weights) - room)[len(weights) - room]) - 1e-8
    ids = list(reach)
    return [ids[i] for i in np.flatnonzero(weights >= cut).tolist()]


def adjacency(
    edges: Iterable[Edge], ids: Collection[str], keep: Collection[str] | None = None
) -> dict[str, Adjacent]:
    """(neighbour, best edge) lists, sorted by neighbour, for each of ``ids``.

    ``keep``: only neighbours in it. An edge listed twice (once from each end) changes
    nothing: the best of equal copies is the same edge.
    """
    by_nb: dict[str, dict[str, list[Edge]]] = {i: {} for i in ids}
    for e in edges:
        s, t = e.source, e.target
        if s in by_nb and (keep is None or t in keep):
            by_nb[s].setdefault(t, []).append(e)
        if t in by_nb and (keep is None or s in keep):
            by_nb[t].setdefault(s, []).append(e)
    return {
        u: [(v, es[0] if len(es) == 1 else best_edge(es)) for v, es in sorted(nbs.items())]
        for u, nbs in by_nb.items()
    }


class _Adjacency:
    """Adjacency lists loaded on demand, many nodes per backend call.

    ``keep``: only neighbours in it (a collection the caller may not change while this
    lives), so a path search builds no lists of nodes it would skip anyway.
    """

    def __init__(self, b: Backend, allowed: Types, keep: Collection[str] | None = None) -> None:
        self._b = b
        self._allowed = allowed
        self._keep = keep
        self._cache: dict[str, Adjacent] = {}
        # an in-memory backend keeps every node's whole list, sorted, until the graph
        # changes (NetworkxStore.adjacent): filtering it costs less than building it
        self._kept = getattr(b, "adjacent", None) if allowed is None else None

    def load(self, ids: Iterable[str]) -> None:
        todo = [i for i in dict.fromkeys(ids) if i not in self._cache]
        if not todo:
            return
        deadline.check()  # a round trip on a server store: the unit of a path search
        if self._kept is not None:
            whole: dict[str, Adjacent] = self._kept(todo)
            keep = self._keep
            # the same lists as adjacency(..., keep): keep tests the neighbour alone, so
            # dropping pairs after the grouping leaves the same pairs, in the same order
            self._cache.update(
                whole if keep is None
                else {u: [p for p in whole[u] if p[0] in keep] for u in todo}
            )
            return
        self._cache.update(adjacency(self._b.incident_edges(todo, self._allowed), todo, self._keep))

    def __call__(self, u: str) -> Adjacent:
        if u not in self._cache:
            self.load([u])
        return self._cache[u]


class _Neighbours:
    """Neighbour ids per node, fetched a whole ring at a time and kept for the query
    (a path search walks from both ends and back again over the same nodes)."""

    def __init__(self, b: Backend, allowed: Types) -> None:
        self._b = b
        self._allowed = allowed
        self._cache: dict[str, Collection[str]] = {}
        self.cheap = not b.batch_reads  # in memory: a list costs next to nothing to fetch

    def of(self, ids: Collection[str]) -> dict[str, Collection[str]]:
        todo = [i for i in ids if i not in self._cache]
        if todo:
            deadline.check()
            got = self._b.ring_neighbors(todo, self._allowed)
            for i in todo:
                self._cache[i] = got.get(i, ())
        return {i: self._cache[i] for i in ids}

    def __call__(self, ids: Collection[str]) -> set[str]:
        """Every neighbour of the ring ``ids``."""
        out: set[str] = set()
        for nbs in self.of(ids).values():
            out.update(nbs)
        return out


def best_shortest_path(
    source: str, target: str, ring: _Neighbours, b: Backend, allowed: Types, max_hops: int
) -> list[tuple[str, Edge | None]] | None:
    """The shortest path under :func:`~graph.query.rules.path_sort_key`, exactly.

    Breadth-first from both ends until the searches meet (:func:`_meet`, one ring call per
    layer; on ICLR 2021 a one-sided search to depth 3 reaches most of the graph); the
    nodes that lie on some shortest path are then those a sweep out from the meeting layer
    finds at the right distance from each end. Their edges are loaded at once, and a
    forward pass keeps, for each node, the best (strength, id sequence) prefix. Returns
    [(node, edge into it)], or None when ``target`` is farther than ``max_hops``.
    """
    if source == target:
        return [(source, None)]
    met = _meet(source, target, ring, max_hops)
    if met is None:
        return None
    end, (_, dt), (from_source, from_target) = met
    # level m of every shortest path: distance m from the source, end - m from the target;
    # both distances are known there (m <= the source side's depth, end - m <= the target's)
    m = min(len(from_source) - 1, end)
    on_path: list[set[str]] = [set() for _ in range(end + 1)]
    on_path[m] = {v for v in from_source[m] if dt.get(v) == end - m}
    # the level next to a known one: the nodes at the right distance that touch it. Those
    # nodes' lists were fetched when the search grew past them, so this costs no more than
    # the search did; the known level's own ring would expand a hub concept on the path
    # whole (half the papers of a big corpus)
    for d in range(m, 0, -1):
        on_path[d - 1] = _touching(ring, from_source[d - 1], on_path[d])
    for d in range(m, end):
        on_path[d + 1] = _touching(ring, from_target[end - d - 1], on_path[d])
    # only edges between nodes on a shortest path count below
    adjacent = _Adjacency(b, allowed, keep=set().union(*on_path))
    adjacent.load(sorted(set().union(*on_path[:-1])))
    # best[v] = (-strength, id sequence, path)
    best: dict[str, tuple[float, tuple[str, ...], list[tuple[str, Edge | None]]]] = {
        source: (0.0, (source,), [(source, None)])
    }
    for d in range(1, end + 1):
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


def _touching(ring: _Neighbours, candidates: Collection[str], level: set[str]) -> set[str]:
    """Those of ``candidates`` with a neighbour in ``level``."""
    return {u for u, nbs in ring.of(candidates).items() if not level.isdisjoint(nbs)}


class _Met(NamedTuple):
    """Where two breadth-first searches met: hops, and for (source, target) each side's
    distances and its layers (the nodes at distance 0, 1, ..., its depth)."""

    hops: int
    dist: tuple[dict[str, int], dict[str, int]]
    layers: tuple[list[list[str]], list[list[str]]]


#: frontiers up to this size are weighed by their edges, not their nodes (in memory)
WEIGH_FRONTIERS_UP_TO = 64


def _smaller(ring: _Neighbours, a: list[str], b: list[str]) -> int:
    """0 to grow the frontier ``a``, 1 for ``b``: the cheaper to expand.

    By node count; in memory, where a node's list costs next to nothing to fetch, small
    frontiers by the lengths of their lists: two papers' first rings are ~30 nodes each,
    and one with a hub concept in it costs thousands of times the other to expand.
    """
    if ring.cheap and len(a) <= WEIGH_FRONTIERS_UP_TO and len(b) <= WEIGH_FRONTIERS_UP_TO:
        cost = [sum(map(len, ring.of(side).values())) for side in (a, b)]
        return 0 if cost[0] <= cost[1] else 1
    return 0 if len(a) <= len(b) else 1


def _meet(source: str, target: str, ring: _Neighbours, max_hops: int) -> _Met | None:
    """The fewest hops from ``source`` to ``target``, if at most ``max_hops``.

    Breadth-first from both ends at once, always growing the smaller frontier, so the
    search touches about the square root of what a one-sided search would. Each side's
    distances are complete up to its depth.
    """
    dist = ({source: 0}, {target: 0})
    layers: tuple[list[list[str]], list[list[str]]] = ([[source]], [[target]])
    while layers[0][-1] and layers[1][-1] and len(layers[0]) + len(layers[1]) - 2 < max_hops:
        side = _smaller(ring, layers[0][-1], layers[1][-1])
        mine, other = dist[side], dist[1 - side]
        depth = len(layers[side])
        nxt: list[str] = []
        best: int | None = None
        for v in ring(layers[side][-1]):
            if v in other:
                total = depth + other[v]
                best = total if best is None else min(best, total)
            if v not in mine:
                mine[v] = depth
                nxt.append(v)
        layers[side].append(nxt)
        if best is not None:
            return _Met(best, dist, layers) if best <= max_hops else None
    return None


def hop_distance(source: str, target: str, ring: _Neighbours, max_hops: int) -> int | None:
    """Fewest hops from ``source`` to ``target`` (at most ``max_hops``), or None."""
    if source == target:
        return 0
    met = _meet(source, target, ring, max_hops)
    return None if met is None else met.hops


class _Layers:
    """Breadth-first distances from one node, grown a ring at a time when asked."""

    def __init__(self, start: str, ring: _Neighbours) -> None:
        self.dist = {start: 0}
        self._frontier = [start]
        self._ring = ring
        self._reached = 0

    def extend(self, depth: int) -> None:
        while self._reached < depth and self._frontier:
            self._reached += 1
            self._frontier = [v for v in self._ring(self._frontier) if v not in self.dist]
            for v in self._frontier:
                self.dist[v] = self._reached

    def within_next(self, depth: int) -> Callable[[str], bool]:
        """After ``extend(depth)``: whether a node is within ``depth + 1`` hops, asked of
        each node alone (its own list against the last layer) instead of growing a layer
        that, through a hub concept, holds half the graph."""
        dist = self.dist
        last = set(self._frontier) if self._reached == depth else set()
        ring = self._ring

        def within(v: str) -> bool:
            d = dist.get(v)
            if d is not None:
                return d <= depth + 1
            return bool(last) and not last.isdisjoint(ring.of([v])[v])

        return within


def shortest_path(
    b: Backend, source: str, target: str, rel_types: Collection[RelType] | None, max_hops: int
) -> GraphPath | None:
    """Fewest hops; among those, the first by path_sort_key."""
    check_hops(max_hops)
    allowed = types_filter(rel_types)
    with b.reading():
        if len(b.get_nodes([source, target])) < len({source, target}):
            return None
        steps = best_shortest_path(source, target, _Neighbours(b, allowed), b, allowed, max_hops)
        if steps is None:
            return None
        nodes = b.get_nodes([n for n, _ in steps])
    return GraphPath(
        nodes=tuple(nodes[n] for n, _ in steps),
        edges=tuple(e for _, e in steps if e is not None),
    )


def k_paths(
    b: Backend,
    source: str,
    target: str,
    k: int,
    rel_types: Collection[RelType] | None,
    max_hops: int,
) -> list[GraphPath]:
    """Up to ``k`` simple paths of at most ``max_hops``, by path_sort_key."""
    check_hops(max_hops)
    check_count("k", k)
    allowed = types_filter(rel_types)
    with b.reading():
        if source == target or k == 0 or len(b.get_nodes([source, target])) < 2:
            return []
        ring = _Neighbours(b, allowed)
        shortest = hop_distance(source, target, ring, max_hops)
        if shortest is None:
            return []
        # hops to the target, to prune the search: a path of `length` hops only ever
        # asks about nodes within length - 1 of it, so the BFS goes no deeper than that
        to_target = _Layers(target, ring)
        from_source = _Layers(source, ring) if b.batch_reads else None
        # the last hop only asks whether a node touches the target, and the target's own
        # (neighbour, best edge) list answers that for all of them: the nodes next to the
        # target (hub concepts among them) need no list of their own. Unfiltered, so the
        # source is in it for a one-hop path; the best edge of a pair is the same from
        # either end.
        whole = _Adjacency(b, allowed)
        into_target = dict(whole(target))
        found: list[tuple[tuple[float, tuple[str, ...], tuple[str, ...]], list[Edge]]] = []
        # Every path of h hops ranks before any of h+1, so lengths go in order and
        # the search stops once k are in hand (or at the candidate cap).
        for length in range(shortest, max_hops + 1):
            # only the first hop (out of the source) needs to know what lies length - 1
            # from the target; in memory that is asked of the source's neighbours alone
            lazy = from_source is None and length >= 2
            to_target.extend(length - 2 if lazy else length - 1)
            dt = to_target.dist
            first_hop = to_target.within_next(length - 2) if lazy else None
            # the search below skips every neighbour farther than length - 1 from the
            # target, i.e. every one not in dt: lists of only those in dt (a hub concept
            # has hundreds of papers, few of them near the target); fresh for each length,
            # as dt grows with it
            adjacent = _Adjacency(b, allowed, keep=dt)
            if from_source is not None:
                # a server store: load every node the search below may visit, at once
                from_source.extend(length - 1)
                ds = from_source.dist
                # (only nodes a path leaves with a hop to spare: the last hop is into_target's)
                adjacent.load(
                    u
                    for u, d in ds.items()
                    if u == source
                    or (u != target and u in dt and d + dt[u] <= length and d <= length - 2)
                )
            stack: list[tuple[str, list[str], list[Edge]]] = [(source, [source], [])]
            steps = 0
            while stack and len(found) < MAX_PATH_CANDIDATES:
                steps += 1
                if steps % DEADLINE_EVERY == 0:
                    deadline.check()
                u, seq, edges = stack.pop()
                left = length - len(edges) - 1
                if left == 0:
                    # one hop left: only the target will do (it is never on seq)
                    last = into_target.get(u)
                    if last is not None:
                        path = [*edges, last]
                        key = (
                            -round(sum(x.weight for x in path), 9),
                            (*seq, target),
                            tuple(x.type.value for x in path),
                        )
                        found.append((key, path))
                    continue
                if first_hop is not None and not edges:
                    # the source's whole list: its neighbours' distances are asked one by
                    # one (the same pairs, in the same order, as the list kept to dt)
                    for v, e in reversed(whole(source)):
                        if v != target and v not in seq and first_hop(v):
                            stack.append((v, [*seq, v], [*edges, e]))
                    continue
                for v, e in reversed(adjacent(u)):
                    # the target with hops to spare makes no path of this length
                    if v == target or v in seq or dt.get(v, max_hops + 1) > left:
                        continue
                    stack.append((v, [*seq, v], [*edges, e]))
            if len(found) >= k or len(found) >= MAX_PATH_CANDIDATES:
                break
        if len(found) >= MAX_PATH_CANDIDATES:
            log.info("k_paths %s -> %s: stopped at %d candidates", source, target, len(found))
        # within one query every candidate of a shorter length came first, so sorting by
        # (hops, key) is path_sort_key without building the paths that lose
        found.sort(key=lambda c: (len(c[1]), c[0]))
        best = found[:k]
        nodes: dict[str, GraphNode] = b.get_nodes(sorted({n for key, _ in best for n in key[1]}))
    return [GraphPath(tuple(nodes[n] for n in key[1]), tuple(path)) for key, path in best]
