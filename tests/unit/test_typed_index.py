"""The in-memory store's edge indexes against a walk of the graph itself.

``NetworkxStore.incident_edges`` with types reads an index (node -> type -> edges) that
every change keeps current instead of rebuilding it; untyped, it and ``ring_weights``
read per-node lists (edges; (neighbour, weight)) kept until the next change, and so do the
sorted (neighbour, best edge) lists of path searches (``adjacent``) and the out-edge lists
of ``edges_among``. After every step
of random changes (new and replaced edges, deleted edges, deleted nodes, a change that
fails half-way, a whole replace), each node's typed edges must be exactly the graph's,
and the ring sums exactly (bit for bit) those of the plain walk.
"""

from __future__ import annotations

import random

import pytest

from graph.errors import StoreError
from graph.model import UNDIRECTED, Concept, Edge, GraphChange, GraphData, Paper, RelType
from graph.query.traverse import adjacency
from graph.store.memory import NetworkxStore

TYPES = (RelType.CITES, RelType.SIMILAR_TO, RelType.SHARES_TERM, RelType.MENTIONS)
Key = tuple[str, str, str, float]


def _scan(store: NetworkxStore, nid: str, types: frozenset[RelType]) -> set[Key]:
    """The edges of ``types`` touching ``nid``, straight from the networkx graph."""
    out = set()
    for s, t, key, attrs in store.g.edges(keys=True, data=True):
        if nid in (s, t) and key in types:
            e = attrs["edge"]
            out.add((e.source, e.target, e.type.value, e.weight))
    return out


def _typed(store: NetworkxStore, nid: str, types: frozenset[RelType]) -> list[Key]:
    return [(e.source, e.target, e.type.value, e.weight)
            for e in store.incident_edges([nid], types)]


def _check(store: NetworkxStore, rng: random.Random) -> None:
    every = frozenset(RelType)  # the plain walk: it tests each edge's type
    nodes = sorted(store.g.nodes)
    for _ in range(4):
        ring = rng.sample(nodes, min(len(nodes), rng.randint(1, 5)))
        exclude = set(ring) | set(rng.sample(nodes, min(len(nodes), 2)))
        fast = store.ring_weights(ring, None, None, exclude)
        assert fast == store.ring_weights(ring, every, None, exclude)
        assert store.ring_weights(ring, None, None, exclude) == fast  # from the lists kept
    for nid in store.g.nodes:
        # untyped: from per-node lists kept until the next change
        untyped = [(e.source, e.target, e.type.value, e.weight)
                   for e in store.incident_edges([nid], None)]
        assert sorted(untyped) == sorted(_scan(store, nid, every)), nid
        for types in (frozenset(TYPES), frozenset(rng.sample(TYPES, rng.randint(1, 3)))):
            got = _typed(store, nid, types)
            assert len(got) == len(set(got)), f"{nid}: an edge listed twice"
            assert set(got) == _scan(store, nid, types), nid
    # the sorted (neighbour, best edge) lists that paths walk, kept until the next change,
    # against lists made afresh from the graph's own edges
    every_edge = [a["edge"] for _, _, a in store.g.edges(data=True)]
    asked = [*rng.sample(nodes, min(len(nodes), 6)), "nobody"]
    for nid in asked:
        store.adjacent([nid])  # some kept from before this check, some made now
    fresh = adjacency(every_edge, asked)
    assert store.adjacent(asked) == fresh
    assert store.adjacent(nodes) == adjacency(every_edge, nodes)
    # the edges among a set of nodes, from per-node out-edge lists kept until the next
    # change, against the graph's own edges: untyped and typed
    for _ in range(3):
        among = set(rng.sample(nodes, min(len(nodes), rng.randint(2, 8))))
        store.edges_among(sorted(among), None)  # some lists kept from before, some made now
        for types in (None, frozenset(rng.sample(TYPES, rng.randint(1, 3)))):
            want = sorted(
                (e.source, e.target, e.type.value, e.weight) for e in every_edge
                if e.source in among and e.target in among and (types is None or e.type in types)
            )
            got = sorted((e.source, e.target, e.type.value, e.weight)
                         for e in store.edges_among(sorted(among), types))
            assert got == want
    for nid in ("nobody", *rng.sample(sorted(store.g.nodes), 3)):
        # the untyped read is unchanged: the same edges, whatever the index holds
        assert {k[:3] for k in _typed(store, nid, frozenset(TYPES))} <= {
            (e.source, e.target, e.type.value) for e in store.incident_edges([nid], None)
        }


def _random_edge(rng: random.Random, ids: list[str]) -> Edge:
    a, b = rng.sample(ids, 2)
    typ = rng.choice(TYPES)
    return Edge(a, b, typ, rng.choice([0.25, 0.5, 1.0]))


@pytest.mark.parametrize("seed", range(12))
def test_typed_index_follows_every_change(seed: int) -> None:
    rng = random.Random(seed)
    papers = [Paper(f"p{i:02d}", f"P{i}", "x", f"h{i}") for i in range(12)]
    concepts = [Concept(f"c{i}", f"c{i}") for i in range(4)]
    store = NetworkxStore()
    ids = [n.id for n in (*papers, *concepts)]
    store.apply(GraphChange(
        upsert_nodes=(*papers, *concepts),
        upsert_edges=tuple(_random_edge(rng, ids) for _ in range(40)),
    ))
    _check(store, rng)
    for _ in range(25):
        present = sorted(store.g.nodes)
        edges = [a["edge"] for _, _, a in store.g.edges(data=True)]
        step = rng.random()
        if step < 0.35:  # new edges, and new weights for existing ones (either spelling
            # of an undirected edge's ends)
            new = [_random_edge(rng, present) for _ in range(rng.randint(1, 6))]
            for old in rng.sample(edges, min(3, len(edges))):
                s, t = old.source, old.target
                if old.type in UNDIRECTED and rng.random() < 0.5:
                    s, t = t, s
                new.append(Edge(s, t, old.type, old.weight + 1.0))
            store.apply(GraphChange(upsert_edges=tuple(new)))
        elif step < 0.6:
            gone = rng.sample(edges, min(rng.randint(1, 5), len(edges)))
            store.apply(GraphChange(delete_edges=tuple((e.source, e.target, e.type) for e in gone)))
        elif step < 0.75 and len(present) > 4:
            store.apply(GraphChange(delete_nodes=tuple(rng.sample(present, 2))))
        elif step < 0.85:  # nodes back, with edges to them in the same change
            back = [n for n in (*papers, *concepts) if n.id not in store.g]
            if back:
                node = rng.choice(back)
                others = [i for i in present if i != node.id]
                store.apply(GraphChange(
                    upsert_nodes=(node,),
                    upsert_edges=(Edge(node.id, rng.choice(others), RelType.CITES, 1.0),),
                ))
        else:  # fails half-way (an edge to an unknown node): the store keeps what it had
            before = {(e.source, e.target, e.type.value, e.weight)
                      for e in store.incident_edges(present, frozenset(TYPES))}
            bad = GraphChange(
                delete_edges=tuple((e.source, e.target, e.type) for e in edges[:2]),
                upsert_edges=(_random_edge(rng, present), Edge(present[0], "ghost",
                                                               RelType.CITES, 1.0)),
            )
            with pytest.raises(StoreError, match="unknown endpoint"):
                store.apply(bad)
            assert {(e.source, e.target, e.type.value, e.weight)
                    for e in store.incident_edges(present, frozenset(TYPES))} == before
        _check(store, rng)


def test_typed_index_after_replace_and_trusted_apply() -> None:
    rng = random.Random(99)
    store = NetworkxStore()
    data = GraphData()
    for i in range(8):
        data.nodes[f"p{i}"] = Paper(f"p{i}", f"P{i}", "x", f"h{i}")
    ids = sorted(data.nodes)
    for _ in range(20):
        data.add_edge(_random_edge(rng, ids))
    store._replace(data)
    _check(store, rng)
    store.apply_trusted(GraphChange(delete_nodes=("p0",), upsert_edges=(
        Edge("p1", "p2", RelType.SHARES_TERM, 3.0), Edge("p3", "p4", RelType.CITES, 2.0))))
    _check(store, rng)
    assert "p0" not in store._by_type


@pytest.mark.parametrize("seed", range(20))
def test_a_change_indexes_its_edges_in_the_order_one_by_one_gives(seed: int) -> None:
    """A change's edges are indexed in one pass per (node, type) list (bulk), in the order
    adding them one at a time gives: the lists' order is what readers see."""
    from graph.ingest import paper_from_record

    rng = random.Random(seed)
    ids = [f"p{i}" for i in range(30)]
    papers = tuple(paper_from_record({"id": i, "abstract": f"some words about the paper {i}"},
                                     source="t") for i in ids)

    def edges(n: int) -> list[Edge]:
        out = {}
        for _ in range(n):
            a, b = rng.sample(ids, 2)
            t = rng.choice(TYPES[:3])
            out[(a, b, t)] = Edge(a, b, t, rng.random(), {})
        return list(out.values())

    bulk, single = NetworkxStore(), NetworkxStore()
    first = GraphChange(upsert_nodes=papers, upsert_edges=tuple(edges(150)))
    bulk.apply(first)
    single.apply(first)
    for _ in range(5):
        change = GraphChange(upsert_edges=tuple(edges(60)))
        bulk.apply(change)
        for e in change.upsert_edges:
            single._add_edge(e)

        def lists(s: NetworkxStore) -> dict[str, dict[RelType, list[tuple[str, str, float]]]]:
            return {n: {t: [(e.source, e.target, e.weight) for e in es] for t, es in by.items()}
                    for n, by in s._by_type.items()}

        assert lists(bulk) == lists(single)
