"""The Backend primitives a neighbourhood is made of, on every store: ``ring_top`` (a ring
ranked, on Neo4j in the database) and ``nodes_and_edges`` (the kept nodes with the edges
among them, one round trip on Neo4j).

Each store's answer must be the plain ranking of its own ``ring_weights`` (what the query
layer does where a store answers None) and the same as the in-memory engine's, on hostile
inputs too: ids with quotes, backslashes, Lucene and Cypher syntax, characters beyond
U+FFFF (ordered differently by Neo4j, by UTF-16 units), sums that tie once rounded to 9
places, empty rings, a hub with thousands of neighbours.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from graph.model import Concept, Edge, GraphChange, NodeKind, Paper, RelType
from graph.query.traverse import rank_reach, ring_top
from graph.store.base import Backend, GraphStore
from tests.contract.test_query_layer import CountingNeo4jStore
from tests.contract.test_store_contract import KINDS, edge_t, sub_t

#: ids a user may give: quotes, backslashes, query syntax, accents, NFD, beyond U+FFFF
HOSTILE = [
    "p'quote", 'p"dq', "p\\back", "p\\'both", "p}) RETURN 1 //", "p$ids", "p` tick",
    "pé", "pe\u0301", "p\U0001f600", "p\U00010000x", "p\uffff", "p:colon", "p\ttab",
    "p😀😀", "p" + "x" * 300,
]
#: weights whose sums differ in the last bits (0.1 + 0.2 != 0.3) and tie once rounded
WEIGHTS = (0.1, 0.2, 0.3, 0.7, 1.0, 1 / 3, 2 / 3, 0.30000000000000004, 0.0)


def hostile_change(seed: int = 5) -> GraphChange:
    """The hostile ids as papers around three concepts, joined with tying weights."""
    rng = random.Random(seed)
    papers = [Paper(i, f"Paper {n}", "", f"h{n}") for n, i in enumerate(HOSTILE)]
    concepts = [Concept(c, c) for c in ("c'one", "c\\two", "c\U0001f600")]
    edges = []
    for p in papers:
        for c in rng.sample(concepts, 2):
            edges.append(Edge(p.id, c.id, RelType.MENTIONS, rng.choice(WEIGHTS)))
    for a, b in itertools.combinations(HOSTILE, 2):
        if rng.random() < 0.3:
            edges.append(Edge(a, b, rng.choice([RelType.SIMILAR_TO, RelType.CITES]),
                              rng.choice(WEIGHTS)))
    return GraphChange(upsert_nodes=(*papers, *concepts), upsert_edges=tuple(edges))


def backend(s: GraphStore) -> Backend:
    b: Backend = s.read_backend()  # type: ignore[attr-defined]
    return b


def plain(b: Backend, ring: list[str], types: Any, kinds: Any, exclude: set[str],
          room: int) -> tuple[list[str], int]:
    reach = b.ring_weights(ring, types, kinds, exclude)
    return rank_reach(reach, room), len(reach)


@pytest.mark.parametrize("kind", KINDS)
def test_ring_top_is_the_plain_ranking_on_hostile_ids(kind: str, make_store: Any) -> None:
    s: GraphStore = make_store(kind)
    s.apply(hostile_change())
    ref = make_store("memory")
    ref.apply(hostile_change())
    b, rb = backend(s), backend(ref)
    rng = random.Random(11)
    ids = [*HOSTILE, "c'one", "c\\two", "c\U0001f600"]
    filters: list[tuple[Any, Any]] = [
        (None, None),
        (frozenset({RelType.MENTIONS}), None),
        (None, frozenset({NodeKind.PAPER})),
        (frozenset({RelType.SIMILAR_TO, RelType.CITES}), frozenset({NodeKind.PAPER})),
    ]
    for _ in range(25):
        ring = rng.sample(ids, rng.randint(1, 4))
        exclude = set(ring) | set(rng.sample(ids, rng.randint(0, 5)))
        room = rng.choice([0, 1, 2, 3, 5, 8, 100])
        types, kinds = rng.choice(filters)
        with b.reading():
            got = ring_top(b, ring, types, kinds, exclude, room)
            assert got == plain(b, ring, types, kinds, exclude, room)
        with rb.reading():
            assert got == ring_top(rb, ring, types, kinds, exclude, room)


@pytest.mark.parametrize("kind", KINDS)
def test_ring_top_of_empty_and_unknown_rings(kind: str, make_store: Any) -> None:
    s: GraphStore = make_store(kind)
    s.apply(hostile_change())
    b = backend(s)
    with b.reading():
        assert ring_top(b, [], None, None, set(), 10) == ([], 0)
        # everything next to the ring excluded: reached 0
        everything = {*HOSTILE, "c'one", "c\\two", "c\U0001f600"}
        assert ring_top(b, ["c'one"], None, None, everything, 10) == ([], 0)
        # room 0 still counts what the ring reaches (a neighbourhood's `truncated`)
        ranked, reached = ring_top(b, ["c'one"], None, None, {"c'one"}, 0)
        assert ranked == [] and reached > 0


@pytest.mark.parametrize("kind", KINDS)
def test_nodes_and_edges_are_get_nodes_and_edges_among(kind: str, make_store: Any) -> None:
    s: GraphStore = make_store(kind)
    s.apply(hostile_change())
    b = backend(s)
    rng = random.Random(2)
    ids = [*HOSTILE, "c'one", "c\\two", "c\U0001f600"]
    for types in (None, frozenset({RelType.MENTIONS}), frozenset({RelType.CITES})):
        for size in (0, 1, 4, len(ids)):
            chosen = rng.sample(ids, size)
            with b.reading():
                nodes, edges = b.nodes_and_edges(chosen, types)
                assert nodes == b.get_nodes(chosen)
                want = sorted(edge_t(e) for e in b.edges_among(chosen, types))
            assert sorted(edge_t(e) for e in edges) == want
            assert len(edges) == len(want)  # each edge once


def hub_change(papers: int = 2500) -> GraphChange:
    """One concept mentioned by thousands of papers, weights that tie in groups."""
    ps = [Paper(f"h{i:05d}", f"Hub paper {i}", "", f"hh{i}") for i in range(papers)]
    hub = Concept("hub", "hub concept")
    edges = [Edge(p.id, hub.id, RelType.MENTIONS, WEIGHTS[i % len(WEIGHTS)])
             for i, p in enumerate(ps)]
    edges += [Edge(ps[i].id, ps[i + 1].id, RelType.CITES, 1.0) for i in range(0, papers - 1, 7)]
    return GraphChange(upsert_nodes=(*ps, hub), upsert_edges=tuple(edges))


@pytest.mark.parametrize("kind", KINDS)
def test_a_hub_with_thousands_of_neighbours(kind: str, make_store: Any) -> None:
    s: GraphStore = make_store(kind)
    s.apply(hub_change())
    ref = make_store("memory")
    ref.apply(hub_change())
    for depth, limit in ((1, 50), (1, 5000), (2, 300), (0, 10)):
        got = s.neighborhood(["hub"], depth=depth, limit=limit)
        assert sub_t(got) == sub_t(ref.neighborhood(["hub"], depth=depth, limit=limit))
    got = s.neighborhood(["hub"], depth=1, limit=50)
    assert got.truncated and len(got.nodes) == 50
    # 1.0 is the heaviest weight: the first papers kept are those, by id
    assert [n.id for n in got.nodes[1:4]] == ["h00004", "h00013", "h00022"]


@pytest.mark.parametrize("kind", KINDS)
def test_depth_past_the_graph_stops_at_its_end(kind: str, make_store: Any) -> None:
    s: GraphStore = make_store(kind)
    chain = [Paper(f"k{i:02d}", f"K{i}", "", f"k{i}") for i in range(12)]
    s.apply(GraphChange(upsert_nodes=tuple(chain), upsert_edges=tuple(
        Edge(chain[i].id, chain[i + 1].id, RelType.CITES, 1.0) for i in range(11))))
    got = s.neighborhood(["k00"], depth=1000, limit=200)
    assert [n.id for n in got.nodes] == [c.id for c in chain] and not got.truncated
    assert [n.id for n in s.neighborhood(["k05"], depth=0).nodes] == ["k05"]


@pytest.mark.bolt
def test_neo4j_neighbourhood_sends_back_the_top_not_the_ring(
    bolt_server: Any, bolt_driver: Any
) -> None:
    store = CountingNeo4jStore(bolt_driver, bolt_server.database, batch_size=1000)
    store.clear()
    store.apply(hub_change())
    store.reads = 0
    sub = store.neighborhood(["hub"], depth=1, limit=50)
    assert len(sub.nodes) == 50 and sub.truncated
    # the walk (2,500 papers tie at the cut: too many candidates to bring their nodes),
    # then the kept nodes with their edges
    assert store.reads == 2, store.reads
    store.reads = 0
    sub = store.neighborhood(["h00004"], depth=2, limit=200)
    assert store.reads == 1, store.reads  # the seed, both rings, the nodes and edges
    with store.reading():
        ranked, reached = store.ring_top(["hub"], None, None, {"hub"}, 10) or ([], 0)
    assert reached == 2500 and len(ranked) == 10


@pytest.mark.parametrize("kind", KINDS)
def test_edges_and_ends_are_edges_of_and_their_nodes(kind: str, make_store: Any) -> None:
    s: GraphStore = make_store(kind)
    s.apply(hostile_change())
    ids = [*HOSTILE, "c'one", "c\\two", "c\U0001f600"]
    rng = random.Random(4)
    for types in (None, [RelType.MENTIONS], [RelType.CITES, RelType.SIMILAR_TO]):
        for chosen in ([], ["unknown'id"], rng.sample(ids, 1), rng.sample(ids, 5), ids):
            edges, ends = s.edges_and_ends(chosen, types)
            want = s.edges_of(chosen, types)
            assert [edge_t(e) for e in edges] == [edge_t(e) for e in want]
            touched = sorted({n for e in want for n in (e.source, e.target)})
            assert ends == s.get_nodes(touched)


@pytest.mark.bolt
def test_neo4j_node_with_its_neighbours_is_one_round_trip(
    bolt_server: Any, bolt_driver: Any
) -> None:
    store = CountingNeo4jStore(bolt_driver, bolt_server.database, batch_size=1000)
    store.clear()
    store.apply(hostile_change())
    store.reads = 0
    edges, ends = store.edges_and_ends(["c'one"], [RelType.MENTIONS])
    assert store.reads == 1 and edges and "c'one" in ends


#: names a lookup must find as written (quotes, Lucene syntax, case, width, long ones)
HOSTILE_NAMES = [
    'Graph "Neural" Networks', "c++ \\ (x) AND y*", "OR", "ß-VAE", "Straße", "ǅemal",
    "a:b~2^3", "  spaced   out  ", "😀 emoji", "—", "NOT\ttab",
]


@pytest.mark.parametrize("kind", KINDS)
def test_lookup_by_hostile_names(kind: str, make_store: Any) -> None:
    s: GraphStore = make_store(kind)
    concepts = [Concept(f"n{i:02d}", name, aliases=(f"{name} alias",))
                for i, name in enumerate(HOSTILE_NAMES)]
    # an alias too long for Neo4j's name index: found by a scan there
    long = Concept("long", "long one", aliases=("y" * 9000,))
    s.apply(GraphChange(upsert_nodes=(*concepts, long)))
    found = s.find_node("Y" * 9000)
    assert found is not None and found.id == "long"
    for c in concepts:
        for ref in (c.name, c.name.upper(), f" {c.name} ", f"{c.name} alias"):
            found = s.find_node(ref)
            assert found is not None and found.id == c.id, (ref[:40], found)
    assert s.find_node("graph neural") is None
    assert s.find_node("y" * 8999) is None


@pytest.mark.bolt
def test_neo4j_gives_an_older_graph_its_name_keys(bolt_server: Any, bolt_driver: Any) -> None:
    from graph.store.neo4j import Neo4jStore

    store = Neo4jStore(bolt_driver, bolt_server.database, batch_size=7)
    store.clear()
    store.apply(hostile_change())
    # as an older release left it: no name index, no keys
    bolt_driver.execute_query("DROP INDEX citegraph_names IF EXISTS",
                              database_=bolt_server.database)
    bolt_driver.execute_query("MATCH (n) REMOVE n._name_keys", database_=bolt_server.database)
    reopened = Neo4jStore(bolt_driver, bolt_server.database, batch_size=7)
    for ref in ("Paper 3", "c'one", "C\\TWO", "c\U0001f600"):
        found = reopened.find_node(ref)
        assert found is not None, ref
    left = bolt_driver.execute_query("MATCH (n) WHERE n._name_keys IS NULL AND n.id <> 'meta' "
                                     "AND NOT n:CitegraphMeta RETURN count(n) AS c",
                                     database_=bolt_server.database).records[0]["c"]
    assert left == 0
