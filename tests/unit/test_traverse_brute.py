"""Shortest and k paths of graph.query.traverse against brute force on random graphs.

The shortest path searches from both ends and keeps only the meeting layer's sweeps; k
paths builds adjacency lists of the nodes near the target only. Both must still give
exactly the path(s) that ranking every simple path by ``path_sort_key`` gives: random
multigraphs with tied weights, parallel edges of several types and both directions.
"""

from __future__ import annotations

import itertools
import random

import networkx as nx
import pytest

from graph.model import Concept, Edge, GraphChange, GraphPath, Paper, RelType
from graph.query.rules import best_edge, path_sort_key
from graph.store.memory import NetworkxStore

TYPES = (RelType.CITES, RelType.SIMILAR_TO, RelType.SHARES_TERM)


def _graph(seed: int) -> tuple[NetworkxStore, list[Edge]]:
    rng = random.Random(seed)
    papers = [Paper(f"p{i:02d}", f"P{i}", "x", f"h{i}") for i in range(rng.randint(6, 14))]
    concepts = [Concept(f"c{i}", f"c{i}") for i in range(rng.randint(1, 4))]
    edges: dict[tuple[str, str, RelType], Edge] = {}
    for _ in range(rng.randint(8, 30)):
        a, b = rng.sample(papers, 2)
        typ = rng.choice(TYPES)
        s, t = (a.id, b.id) if typ is not RelType.SHARES_TERM else sorted((a.id, b.id))
        edges[(s, t, typ)] = Edge(s, t, typ, rng.choice([0.5, 1.0, 1.0, 2.0]))
    for p in papers:
        for c in rng.sample(concepts, rng.randint(0, len(concepts))):
            edges[(p.id, c.id, RelType.MENTIONS)] = Edge(
                p.id, c.id, RelType.MENTIONS, rng.choice([0.5, 1.0]))
    store = NetworkxStore()
    store.apply(GraphChange(upsert_nodes=(*papers, *concepts), upsert_edges=tuple(edges.values())))
    return store, list(edges.values())


def _all_paths(store: NetworkxStore, edges: list[Edge], a: str, b: str,
               max_hops: int) -> list[GraphPath]:
    g = nx.Graph()
    g.add_nodes_from(store.g.nodes)
    between: dict[frozenset[str], list[Edge]] = {}
    for e in edges:
        g.add_edge(e.source, e.target)
        between.setdefault(frozenset((e.source, e.target)), []).append(e)
    nodes = store.get_nodes(list(store.g.nodes))
    out = []
    for seq in nx.all_simple_paths(g, a, b, cutoff=max_hops):
        hops = tuple(best_edge(between[frozenset(pair)]) for pair in itertools.pairwise(seq))
        out.append(GraphPath(tuple(nodes[n] for n in seq), hops))
    return sorted(out, key=path_sort_key)


def _ids(p: GraphPath | None) -> tuple[tuple[str, ...], tuple[tuple[str, str, str], ...]] | None:
    if p is None:
        return None
    return tuple(n.id for n in p.nodes), tuple((e.source, e.target, e.type.value) for e in p.edges)


@pytest.mark.parametrize("seed", range(40))
def test_paths_match_brute_force(seed: int) -> None:
    store, edges = _graph(seed)
    rng = random.Random(1000 + seed)
    ids = sorted(store.g.nodes)
    for _ in range(12):
        a, b = rng.sample(ids, 2)
        for max_hops in (1, 2, 3, 5):
            every = _all_paths(store, edges, a, b, max_hops)
            want = every[0] if every else None
            assert _ids(store.shortest_path(a, b, None, max_hops)) == _ids(want), (a, b, max_hops)
            for k in (1, 3, 7):
                got = [_ids(p) for p in store.k_paths(a, b, k, None, max_hops)]
                assert got == [_ids(p) for p in every[:k]], (a, b, k, max_hops)
