"""The store contract: one suite, run against every GraphStore.

Each test runs on the embedded networkx store and on the Neo4j store over Bolt (a real
Neo4j 5.26 started for the session by scripts/neo4j.sh, or the server in NEO4J_URI).
Expected values
are written out by hand from the ordering contract in graph/store/base.py, so both
stores are checked against the contract, not merely against each other;
``test_stores_agree`` then compares them query by query.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest

from graph.errors import InvalidArgumentError, StoreError, StoreUnavailableError
from graph.model import (
    Concept,
    Edge,
    GraphChange,
    GraphPath,
    NodeKind,
    Paper,
    RelType,
    SearchHit,
    Subgraph,
)
from graph.store.base import GraphStore
from tests.contract import fixtures as fx

KINDS = [
    pytest.param("embedded", id="embedded"),
    pytest.param("sql", id="sql"),
    pytest.param("memory", id="memory"),
    pytest.param("neo4j", id="neo4j", marks=pytest.mark.bolt),
]


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store(kind: str, make_store: Any) -> GraphStore:
    s: GraphStore = make_store(kind)
    s.apply(fx.full_change())
    return s


# --------------------------------------------------------------------------- helpers


def edge_t(e: Edge) -> tuple[Any, ...]:
    attrs = {k: list(v) if isinstance(v, tuple) else v for k, v in e.attrs.items()}
    return (e.source, e.target, e.type.value, round(e.weight, 9), sorted(attrs.items()))


def path_t(p: GraphPath | None) -> Any:
    if p is None:
        return None
    return ([n.id for n in p.nodes], [edge_t(e) for e in p.edges])


def hits_t(hits: list[SearchHit]) -> list[tuple[str, float]]:
    return [(h.node.id, round(h.score, 6)) for h in hits]


def sub_t(s: Subgraph) -> Any:
    return ([n.id for n in s.nodes], [edge_t(e) for e in s.edges], s.truncated)


# --------------------------------------------------------------------------- writes


def test_stats_count_every_kind_and_type(store: GraphStore) -> None:
    st = store.stats()
    # (topics: tests/contract/test_topics.py)
    assert dict(st.nodes) == {"Paper": 8, "Concept": 6, "Dataset": 2, "Work": 0, "Topic": 0}
    assert dict(st.edges) == {
        "SIMILAR_TO": 6, "SHARES_TERM": 2, "MENTIONS": 8, "USES": 2,
        "INTRODUCES": 1, "RELATED_TO": 2, "CITES": 2, "IN_TOPIC": 0, "SUBTOPIC_OF": 0,
    }


def test_apply_is_idempotent(store: GraphStore) -> None:
    before = store.stats()
    store.apply(fx.full_change())
    assert store.stats() == before


def test_empty_store_stats_have_zeros(kind: str, make_store: Any) -> None:
    s = make_store(kind)
    st = s.stats()
    assert set(st.nodes) == {k.value for k in NodeKind} and not any(st.nodes.values())
    assert set(st.edges) == {t.value for t in RelType} and not any(st.edges.values())


def test_nodes_round_trip(store: GraphStore) -> None:
    got = store.get_nodes([n.id for n in fx.PAPERS] + ["missing", "concept:gnn"])
    assert "missing" not in got
    for p in fx.PAPERS:
        assert got[p.id] == p
    assert got["concept:gnn"] == fx.CONCEPTS[0]


def test_a_doi_round_trips_and_changes(kind: str, make_store: Any) -> None:
    """A paper's DOI is stored as any field is: written, read back, replaced, removed."""
    s = make_store(kind)
    with_doi = Paper("d1", "D", "An abstract with a DOI.", "h-d1", doi="10.1/abc")
    s.apply(GraphChange(upsert_nodes=(with_doi,)))
    assert s.get_nodes(["d1"])["d1"] == with_doi
    moved = dataclasses.replace(with_doi, doi="10.2/xyz")
    s.apply(GraphChange(upsert_nodes=(moved,)))
    assert s.get_nodes(["d1"])["d1"].doi == "10.2/xyz"  # type: ignore[union-attr]
    gone = dataclasses.replace(with_doi, doi=None)
    s.apply(GraphChange(upsert_nodes=(gone,)))
    assert s.get_nodes(["d1"])["d1"] == gone


def test_undirected_edges_stored_source_lt_target(store: GraphStore) -> None:
    edges = store.edges_of(["p3"], [RelType.SHARES_TERM])
    assert [(e.source, e.target) for e in edges] == [("p1", "p3")]
    assert edges[0].attrs["terms"] == ["graph"]


def test_edges_of_sorted_with_attrs(store: GraphStore) -> None:
    edges = store.edges_of(["p4"])
    keys = [(e.source, e.target, e.type.value) for e in edges]
    assert keys == sorted(keys)
    assert ("p4", "p3", "CITES") in keys and ("p3", "p4", "SIMILAR_TO") in keys
    st = next(e for e in edges if e.type is RelType.SHARES_TERM)
    assert st.weight == pytest.approx(1.7)
    assert st.attrs["terms"] == ["transformer", "attention"]
    assert st.attrs["term_weights"] == [0.9, 0.8]
    sim = next(e for e in edges if e.type is RelType.SIMILAR_TO and e.source == "p3")
    assert sim.attrs == {"score": 0.9, "rank": 1}
    assert isinstance(sim.attrs["rank"], int)


def test_snapshot_matches_input(store: GraphStore) -> None:
    snap = store.snapshot()
    want = fx.graph_data()
    assert snap.nodes == want.nodes
    norm = {}
    for e in want.edges.values():
        if e.type in {RelType.SHARES_TERM, RelType.RELATED_TO} and e.source > e.target:
            e = Edge(e.target, e.source, e.type, e.weight, e.attrs)
        norm[e.key] = edge_t(e)
    assert {k: edge_t(e) for k, e in snap.edges.items()} == norm
    assert snap.embedding_model == fx.MODEL
    got = dict(zip(snap.embedding_ids, np.asarray(snap.embeddings), strict=True))
    for pid, row in zip(want.embedding_ids, want.embeddings, strict=True):
        np.testing.assert_allclose(got[pid], row, rtol=0, atol=1e-6)


def test_incremental_add_and_remove(store: GraphStore) -> None:
    new = Paper("p9", "Graph transformers revisited", "Attention on graphs again.", "h9")
    ids, m = fx.embeddings()
    store.apply(
        GraphChange(
            delete_nodes=("p8", "p2"),
            delete_edges=(("p3", "p4", RelType.SIMILAR_TO), ("p3", "p1", RelType.SHARES_TERM)),
            upsert_nodes=(new, Paper("p1", "GAT v2", "Renamed.", "h1b")),
            upsert_edges=(Edge("p9", "p3", RelType.CITES),),
            embedding_ids=("p9",),
            embeddings=m[:1],
        )
    )
    st = store.stats()
    assert st.nodes["Paper"] == 7
    assert st.edges["SIMILAR_TO"] == 3  # p1-p2, p2-p6 gone with p2; p3-p4 deleted
    assert st.edges["SHARES_TERM"] == 1
    assert st.edges["CITES"] == 3
    assert st.edges["USES"] == 1 and st.edges["INTRODUCES"] == 0
    p1 = store.get_nodes(["p1"])["p1"]
    assert isinstance(p1, Paper) and p1.label == "GAT v2" and p1.venue is None  # replaced
    assert set(store.embeddings(["p1", "p2", "p9"])) == {"p1", "p9"}  # p1's kept
    assert store.embedding_model() == fx.MODEL


def test_failed_apply_leaves_nothing(store: GraphStore) -> None:
    before = store.snapshot()
    bad = GraphChange(
        upsert_nodes=(Paper("p10", "Half written", "x", "h10"),),
        delete_edges=(("p4", "p3", RelType.CITES),),
        upsert_edges=(Edge("p10", "nowhere", RelType.CITES),),
    )
    with pytest.raises(StoreError):
        store.apply(bad)
    after = store.snapshot()
    assert after.nodes == before.nodes
    assert set(after.edges) == set(before.edges)


def test_link_settings_recorded_kept_and_rolled_back(store: GraphStore) -> None:
    """GraphData.link_settings: what SHARES_TERM was computed with (graph.build)."""
    assert store.snapshot().link_settings is None  # none recorded by fx.full_change
    text = '{"shares_term": {"max_df": 0.2, "min_weight": 1.0, "top_k": 20}}'
    store.apply(GraphChange(link_settings=text))  # a change of nothing else is written
    assert store.snapshot().link_settings == text
    store.apply(GraphChange(upsert_edges=(Edge("p1", "p4", RelType.CITES),)))
    assert store.snapshot().link_settings == text  # None: unchanged
    with pytest.raises(StoreError):
        store.apply(GraphChange(
            upsert_edges=(Edge("p1", "nowhere", RelType.CITES),), link_settings='{"other": 1}'
        ))
    assert store.snapshot().link_settings == text  # a failed write changes nothing


def _in_parts() -> list[GraphChange]:
    """fx.full_change() as a build writes it (graph.build.Pipeline._pieces): the nodes
    with the edges of some types first, then the vectors, then the other edges, each
    naming nodes of the first."""
    whole = fx.full_change()
    first_types = {RelType.MENTIONS, RelType.USES, RelType.INTRODUCES}
    return [
        GraphChange(upsert_nodes=whole.upsert_nodes,
                    upsert_edges=tuple(e for e in whole.upsert_edges if e.type in first_types),
                    embedding_model=whole.embedding_model),
        GraphChange(embedding_ids=whole.embedding_ids, embeddings=whole.embeddings,
                    embedding_model=whole.embedding_model),
        GraphChange(upsert_edges=tuple(
            e for e in whole.upsert_edges if e.type not in first_types
        )),
    ]


def _graph_t(store: GraphStore) -> Any:
    snap = store.snapshot()
    rows = {pid: np.asarray(r).round(6).tolist()
            for pid, r in zip(snap.embedding_ids, snap.embeddings, strict=True)}
    return (snap.nodes, {k: edge_t(e) for k, e in snap.edges.items()}, rows,
            snap.embedding_model)


def test_write_in_parts_is_one_write(kind: str, make_store: Any) -> None:
    """GraphStore.write_in_parts: parts that name each other's nodes, one write."""
    whole = make_store(kind)
    whole.apply(fx.full_change())
    store = make_store(kind)
    with store.writer(), store.write_in_parts() as write:
        for part in _in_parts():
            write.apply(part)
        write.commit()
    assert _graph_t(store) == _graph_t(whole)
    assert store.stats() == whole.stats()


def test_write_in_parts_left_without_commit_writes_nothing(store: GraphStore) -> None:
    before, version = _graph_t(store), store.version()
    ids, m = fx.embeddings()
    with pytest.raises(RuntimeError, match="stopped"), store.writer(), (
        store.write_in_parts()
    ) as write:
        write.apply(GraphChange(delete_nodes=("p8",),
                                upsert_nodes=(Paper("p9", "New", "x", "h9"),)))
        write.apply(GraphChange(upsert_edges=(Edge("p9", "p1", RelType.CITES),),
                                embedding_ids=("p9",), embeddings=m[:1]))
        raise RuntimeError("stopped")  # an interrupt between two parts
    assert _graph_t(store) == before
    assert store.version() == version


def test_write_in_parts_failed_part_writes_nothing(store: GraphStore) -> None:
    """A bad second part undoes the good first one (the embedded store finds it as the
    part is written, the others on commit)."""
    before = _graph_t(store)
    with pytest.raises(StoreError, match="unknown endpoint"), store.writer(), (
        store.write_in_parts()
    ) as write:
        write.apply(GraphChange(upsert_nodes=(Paper("p10", "Half written", "x", "h10"),),
                                delete_edges=(("p4", "p3", RelType.CITES),)))
        write.apply(GraphChange(upsert_edges=(Edge("p10", "nowhere", RelType.CITES),)))
        write.commit()
    assert _graph_t(store) == before  # (the version may move: it keys caches only)
    # the store takes the next write as usual
    store.apply(GraphChange(upsert_nodes=(Paper("p10", "Whole", "x", "h10"),)))
    assert "p10" in store.get_nodes(["p10"])


def test_write_in_parts_of_nothing_changes_nothing(store: GraphStore) -> None:
    version = store.version()
    with store.writer(), store.write_in_parts() as write:
        write.apply(GraphChange())
        write.commit()
    assert store.version() == version


def test_clear(store: GraphStore) -> None:
    store.clear()
    assert not any(store.stats().nodes.values())
    assert store.vector_search(fx.embeddings()[1][0].tolist()) == []


# --------------------------------------------------------------------------- lookups


def test_find_node(store: GraphStore) -> None:
    assert (n := store.find_node("p2")) is not None and n.id == "p2"
    assert (n := store.find_node("gnn")) is not None and n.id == "concept:gnn"
    assert (n := store.find_node("  Graph Neural Network ")) is not None
    assert n.id == "concept:gnn"
    assert (n := store.find_node("graph attention networks")) is not None and n.id == "p1"
    assert store.find_node("gnn", kinds=[NodeKind.DATASET]) is None
    assert store.find_node("no such thing") is None
    assert (n := store.find_node("GCNs")) is not None and n.id == "concept:gcn"  # singular
    assert (n := store.find_node("cora citation", kinds=[NodeKind.DATASET])) is not None
    assert n.id == "dataset:cora"


@pytest.mark.parametrize(
    ("stored", "asked"),
    [
        ("\u212a-9", "K-9"),  # KELVIN SIGN: its key is ASCII
        ("\u212bngstr\u00f6m-9", "\u00c5ngstr\u00f6m-9"),  # ANGSTROM SIGN
        ("e\u0301\u00e9-9", "\u00e9\u00e9-9"),  # one accent composed, one not
    ],
)
def test_a_paper_id_in_no_normal_form_is_found_by_its_key(
    store: GraphStore, stored: str, asked: str
) -> None:
    """An add finds such a paper by its key (graph.ids.find_id); so does every lookup
    (probe 17: ``citegraph remove K-9`` and ``removePaper`` answered "no paper")."""
    store.apply(GraphChange(upsert_nodes=(Paper(stored, "Odd id", "x", "h-odd"),)))
    assert store.get_nodes([asked]) == {}  # not one of its spellings
    assert (n := store.find_node(asked)) is not None and n.id == stored
    assert (n := store.find_node(f"  {asked} ", [NodeKind.PAPER])) is not None
    assert n.id == stored
    assert store.find_node(asked, [NodeKind.CONCEPT]) is None
    assert store.find_node(asked.swapcase()) is None  # a key, not a name: case counts
    assert (n := store.find_node(stored)) is not None and n.id == stored
    store.apply(GraphChange(delete_nodes=(stored,)))
    assert store.find_node(asked) is None  # gone from the store's index too


def test_injection_text_is_data(store: GraphStore) -> None:
    n = store.find_node(fx.HOSTILE)
    assert n is not None and n.id == "p7" and n.label == fx.HOSTILE
    c = store.find_node(fx.HOSTILE2)
    assert isinstance(c, Concept) and c.id == "concept:hostile"
    alias = store.find_node("X' or 1=1 --")
    assert alias is not None and alias.id == "concept:hostile"
    hits = store.keyword_search(fx.HOSTILE)
    assert hits and hits[0].node.id == "p7"
    assert store.get_nodes([fx.HOSTILE]) == {}
    assert store.list_nodes(NodeKind.PAPER, neighbor=fx.HOSTILE) == ([], 0)
    assert store.stats().nodes["Paper"] == 8  # nothing was deleted


def test_list_nodes(store: GraphStore) -> None:
    page, total = store.list_nodes(NodeKind.PAPER, offset=1, limit=3)
    assert total == 8 and [n.id for n in page] == ["p2", "p3", "p4"]
    page, total = store.list_nodes(NodeKind.PAPER, venue="ICLR")
    assert total == 3 and [n.id for n in page] == ["p1", "p2", "p6"]
    page, total = store.list_nodes(NodeKind.PAPER, venue="ICLR", year=2019)
    assert [n.id for n in page] == ["p6"] and total == 1
    page, total = store.list_nodes(NodeKind.PAPER, neighbor="concept:transformer")
    assert [n.id for n in page] == ["p3", "p4"] and total == 2
    page, total = store.list_nodes(NodeKind.CONCEPT, neighbor="p1", limit=2)
    assert total == 3 and [n.id for n in page] == ["concept:attention", "concept:gnn"]
    assert store.list_nodes(NodeKind.DATASET, offset=5) == ([], 2)


# --------------------------------------------------------------------------- traversal


def test_neighborhood_order_and_truncation(store: GraphStore) -> None:
    full = store.neighborhood(["p1"], depth=1)
    # ring 1 by (-weight from p1, id): gnn 2.0 = p3 (0.8 + 1.2); then the 1.0s; p2 0.8
    assert [n.id for n in full.nodes] == [
        "p1", "concept:gnn", "p3", "concept:attention", "concept:node-classification",
        "dataset:cora", "p7", "p2",
    ]
    assert not full.truncated
    keys = [(e.source, e.target, e.type.value) for e in full.edges]
    assert keys == sorted(keys)
    assert ("p1", "p3", "SHARES_TERM") in keys and ("p1", "p2", "SIMILAR_TO") in keys
    assert ("p2", "dataset:cora", "USES") in keys  # among kept nodes, not only from p1
    cut = store.neighborhood(["p1"], depth=2, limit=4)
    assert [n.id for n in cut.nodes] == ["p1", "concept:gnn", "p3", "concept:attention"]
    assert cut.truncated


def test_neighborhood_filters(store: GraphStore) -> None:
    sub = store.neighborhood(
        ["p1"], depth=2, rel_types=[RelType.SIMILAR_TO], node_kinds=[NodeKind.PAPER]
    )
    # ring 2: p6 reached from p2 and p3 (0.5 + 0.5) outranks p4 (0.9 from p3)
    assert [n.id for n in sub.nodes] == ["p1", "p2", "p3", "p6", "p4"]
    assert {e.type for e in sub.edges} == {RelType.SIMILAR_TO}
    seeds = store.neighborhood(["p8", "missing", "p5"], depth=1)
    assert [n.id for n in seeds.nodes] == ["p5", "p8", "p4"]
    assert store.neighborhood(["p2", "p1"], depth=0, limit=1).truncated


def test_shortest_path_ties_and_best_edge(store: GraphStore) -> None:
    sim = store.shortest_path("p1", "p6", rel_types=[RelType.SIMILAR_TO])
    assert path_t(sim) is not None and [n.id for n in sim.nodes] == ["p1", "p2", "p6"]
    anyp = store.shortest_path("p1", "p6")
    assert anyp is not None and [n.id for n in anyp.nodes] == ["p1", "p3", "p6"]
    assert anyp.edges[0].type is RelType.SHARES_TERM  # the stronger of two p1-p3 edges
    assert (anyp.edges[0].source, anyp.edges[0].target) == ("p1", "p3")
    assert store.shortest_path("p1", "p8") is None
    assert store.shortest_path("p1", "p5", max_hops=2) is None
    p = store.shortest_path("p1", "p5", max_hops=3)
    # via the concept (1.0 + 1.5 + 1.7) beats via p3 (1.2 + 1.0 CITES + 1.7)
    assert p is not None and [n.id for n in p.nodes] == ["p1", "concept:attention", "p4", "p5"]
    assert p.edges[2].type is RelType.SHARES_TERM
    same = store.shortest_path("p1", "p1")
    assert same is not None and same.hops == 0 and same.nodes[0].id == "p1"
    assert store.shortest_path("p1", "missing") is None


def test_k_paths(store: GraphStore) -> None:
    paths = store.k_paths("p1", "p6", k=3, rel_types=[RelType.SIMILAR_TO])
    assert [[n.id for n in p.nodes] for p in paths] == [["p1", "p2", "p6"], ["p1", "p3", "p6"]]
    assert [round(p.strength, 6) for p in paths] == [1.3, 1.3]
    allp = store.k_paths("p1", "p4", k=10, max_hops=3)
    seqs = [[n.id for n in p.nodes] for p in allp]
    assert seqs[:2] == [["p1", "concept:attention", "p4"], ["p1", "p3", "p4"]]
    assert len({tuple(s) for s in seqs}) == len(seqs)  # node sequences are distinct
    assert all(len(set(s)) == len(s) for s in seqs)  # simple
    assert store.k_paths("p1", "p8") == []
    assert store.k_paths("p1", "p1") == []


# --------------------------------------------------------------------------- search


def test_keyword_search(store: GraphStore) -> None:
    """BM25 over the index: a name or title match outranks an abstract mention."""
    hits = store.keyword_search("attention", limit=4)
    ids = [h.node.id for h in hits]
    # the concept named "attention", p1 and p4 with it in their labels; p3 only in its abstract
    assert set(ids[:3]) == {"concept:attention", "p1", "p4"} and ids[3] == "p3"
    assert all(h.score > 0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    only = store.keyword_search("attention", kinds=[NodeKind.CONCEPT])
    assert [h.node.id for h in only] == ["concept:attention"]
    assert store.keyword_search("") == []
    assert store.keyword_search("zzzz-qqqq") == []
    assert store.keyword_search("the of and") == []  # stop words only
    gnn = store.keyword_search("GNN")
    assert gnn[0].node.id == "concept:gnn"
    # words, not substrings: "net" is not in "networks"; stems: "network" is
    assert store.keyword_search("net") == []
    stem = {h.node.id for h in store.keyword_search("network", limit=20)}
    assert {"p1", "p2", "p6", "concept:gnn", "concept:gcn"} <= stem
    # every word ranks, more words rank higher: p1 has both in its label
    assert store.keyword_search("attention networks", limit=3)[0].node.id == "p1"
    assert [h.node.id for h in store.keyword_search("attention", limit=2)] == ids[:2]


def test_vector_search_ties_by_id(store: GraphStore) -> None:
    ids, m = fx.embeddings()
    hits = store.vector_search(m[ids.index("p3")].tolist(), limit=3)
    assert [h.node.id for h in hits][:2] == ["p3", "p4"]
    assert hits[0].score == pytest.approx(1.0, abs=1e-6)
    assert hits[0].score == hits[1].score
    ex = store.vector_search(m[0].tolist(), limit=3, exclude=["p1"])
    assert [h.node.id for h in ex] == ["p2", "p6", ex[2].node.id]
    assert ex[0].score > ex[1].score > ex[2].score
    assert store.vector_search([0.0] * fx.DIM) == []


def test_embeddings_and_model(store: GraphStore) -> None:
    ids, m = fx.embeddings()
    got = store.embeddings(["p1", "p8", "missing"])
    assert set(got) == {"p1"}
    np.testing.assert_allclose(got["p1"], m[0], atol=1e-6)
    assert store.embedding_model() == fx.MODEL


# --------------------------------------------------------------------------- both stores


def _answers(s: GraphStore) -> dict[str, Any]:
    ids, m = fx.embeddings()
    out: dict[str, Any] = {}
    every = [n.id for n in [*fx.PAPERS, *fx.CONCEPTS, *fx.DATASETS]]
    for seed in every:
        for depth in (1, 2, 3):
            out[f"nb {seed} {depth}"] = sub_t(s.neighborhood([seed], depth=depth, limit=6))
    for a in ["p1", "p4", "concept:gcn", "dataset:citeseer", "p7"]:
        for b in every:
            out[f"sp {a} {b}"] = path_t(s.shortest_path(a, b))
            out[f"sp-sim {a} {b}"] = path_t(
                s.shortest_path(a, b, rel_types=[RelType.SIMILAR_TO, RelType.CITES])
            )
            out[f"kp {a} {b}"] = [path_t(p) for p in s.k_paths(a, b, k=4, max_hops=4)]
    for q in KEYWORD_QUERIES:
        out[f"kw {q}"] = hits_t(s.keyword_search(q, limit=20))
    for i, pid in enumerate(ids):
        out[f"vec {pid}"] = hits_t(s.vector_search(m[i].tolist(), limit=8))
    out["stats"] = s.stats()
    return out


KEYWORD_QUERIES = ["graph", "attention networks", "Cora", "transformer", "x'", "classification",
                   "GNN", "node classification on citation graphs", "self-attention"]


#: a first hit scoring this many times the second is a clear winner (graph/store/base.py)
CLEAR_LEAD = 1.5


def _same_top(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> bool:
    """Keyword agreement with Neo4j, as the ordering contract states it: the same matching
    nodes, and a clear winner on one store is the first hit on the other. Lucene's BM25
    normalises each field by its own length, FTS5 names + titles and abstracts, so
    scores differ, and so may the order of near ties."""
    def clear(x: list[tuple[str, float]]) -> str | None:
        return x[0][0] if x and (len(x) == 1 or x[0][1] >= CLEAR_LEAD * x[1][1]) else None

    firsts = {x[0][0] for x in (a, b) if x}
    winners = [w for w in (clear(a), clear(b)) if w is not None]
    same_matches = {i for i, _ in a} == {i for i, _ in b}
    return same_matches and all(firsts == {w} for w in winners)


def test_sql_reads_agree_with_the_mirror(make_store: Any) -> None:
    """The embedded store read through SQL answers every query as its in-memory mirror."""
    answers = []
    for kind in ("embedded", "sql"):
        s = make_store(kind)
        s.apply(fx.full_change())
        answers.append(_answers(s))
    mirror, sql = answers
    diff = {k: (mirror[k], sql[k]) for k in mirror if mirror[k] != sql[k]}
    assert not diff, f"{len(diff)} answers differ, e.g. {next(iter(diff.items()))}"


@pytest.mark.bolt
def test_stores_agree(make_store: Any) -> None:
    """Same graph, same answers: every query above on both stores, compared."""
    answers = []
    for kind in ("embedded", "memory", "neo4j"):
        s = make_store(kind)
        s.apply(fx.full_change())
        answers.append(_answers(s))
    emb, mem, bolt = answers
    assert emb == mem  # keyword scores too: the same FTS5 index
    diff = {k: (emb[k], bolt[k]) for k in emb
            if not (_same_top(emb[k], bolt[k]) if k.startswith("kw ") else emb[k] == bolt[k])}
    assert not diff, f"{len(diff)} answers differ, e.g. {next(iter(diff.items()))}"
    assert all(emb[f"kw {q}"] for q in KEYWORD_QUERIES)  # each query finds something


# --------------------------------------------------------------------------- Bolt only


@pytest.mark.bolt
def test_unreachable_server_one_clear_line() -> None:
    from graph.settings import Settings
    from graph.store.neo4j import open_driver
    from tests.support.neo4j import free_port

    settings = Settings(NEO4J_URI=f"bolt://127.0.0.1:{free_port()}")  # type: ignore[call-arg]
    with pytest.raises(StoreUnavailableError) as err:
        open_driver(settings, connection_timeout=2.0)
    msg = str(err.value)
    assert "\n" not in msg and "unreachable" in msg and "127.0.0.1" in msg


@pytest.mark.bolt
def test_bad_credentials_one_clear_line(bolt_server: Any) -> None:
    from graph.settings import Settings
    from graph.store.neo4j import open_driver

    settings = Settings(  # type: ignore[call-arg]
        NEO4J_URI=bolt_server.uri, NEO4J_USER=bolt_server.user, NEO4J_PASSWORD="wrong-password"
    )
    with pytest.raises(StoreUnavailableError) as err:
        open_driver(settings)
    assert "\n" not in str(err.value)


@pytest.mark.bolt
def test_vector_index_path_matches_exact(make_store: Any) -> None:
    """Above the exact threshold the vector index gives candidates; ranking is unchanged."""
    s = make_store("neo4j")
    s.apply(fx.full_change())
    ids, m = fx.embeddings()
    exact = [hits_t(s.vector_search(v.tolist(), limit=4)) for v in m]
    s.exact_vector_max = 0  # force db.index.vector.queryNodes
    indexed = [hits_t(s.vector_search(v.tolist(), limit=4)) for v in m]
    assert indexed == exact


@pytest.mark.bolt
def test_batches_commit_separately_above_max_tx_rows(make_store: Any) -> None:
    s = make_store("neo4j")
    s.max_tx_rows = 0  # every batch its own transaction (bulk-load mode)
    s.batch_size = 3
    s.apply(fx.full_change())
    assert s.stats().edges["MENTIONS"] == 8
    s.apply(fx.full_change())  # idempotent re-run converges
    assert s.stats().nodes["Paper"] == 8


@pytest.mark.bolt
def test_schema_setup_is_idempotent(make_store: Any) -> None:
    s = make_store("neo4j")
    s.ensure_schema()
    s.ensure_schema()
    s.apply(fx.full_change())
    assert math.isclose(s.vector_search(fx.embeddings()[1][0].tolist(), limit=1)[0].score, 1.0,
                        abs_tol=1e-6)


@pytest.mark.bolt
@pytest.mark.slow
def test_seed_build_through_bolt_matches_embedded(make_store: Any, tmp_path: Any) -> None:
    """The real pipeline on seeds/ into both stores: same counts, same graph."""
    from graph.build import Pipeline, graphs_equal
    from tests.support.seeds import EMBED_CACHE, SEEDS, build_seed_graph, seed_settings

    embedded, _ = build_seed_graph(tmp_path / "embedded")
    bolt = make_store("neo4j")
    pipeline = Pipeline(seed_settings(tmp_path / "bolt"), cache_dir=EMBED_CACHE)
    try:
        pipeline.run(bolt, add_paths=[SEEDS], replace=True)
        pipeline.run(bolt, add_paths=[SEEDS], replace=True)  # twice: idempotent
    finally:
        pipeline.close()
    assert bolt.stats() == embedded.stats()
    assert graphs_equal(embedded.snapshot(), bolt.snapshot()) == []


# --------------------------------------------------------------------------- odd values

#: Edge attrs of every shape a Python caller can hand in; Neo4j cannot store most of
#: them as properties (maps, nulls in lists, nested and mixed lists, > 64-bit ints).
ODD_ATTRS: dict[str, Any] = {
    "meta": {"source": "manual", "scores": [0.5, None], "n": 2},
    "mixed": [1, 2.5],
    "bools_and_ints": [True, 1],
    "with_null": ["x", None],
    "nested": [[1, 2], [3]],
    "empty": [],
    "flags": [True, False],
    "big": 2**70,
    "plain": "text",
}


def test_odd_records_round_trip(kind: str, make_store: Any) -> None:
    """Empty lists, bare papers and edge attrs Neo4j cannot store natively come back
    exactly as written, on every store."""
    s = make_store(kind)
    bare = Paper("odd1", "Bare", "An abstract and nothing else.", "h-odd1")
    empty = Paper("odd2", "Empty lists", "Keywords and authors are empty.", "h-odd2",
                  authors=(), keywords=(), urls=(), references=())
    full = Paper("odd3", "Full", "Every field.", "h-odd3", title="T", venue="V", year=2024,
                 authors=("Ann", "Bob"), keywords=("k",), urls=("http://x.test/",),
                 references=("odd1", "doi:10.1/outside", "arxiv:2101.00001"),
                 doi="10.1/odd3")
    loner = Concept("concept:odd", "odd concept", (), "concept")
    edge = Edge("odd1", "odd2", RelType.SIMILAR_TO, 0.7, dict(ODD_ATTRS))
    s.apply(GraphChange(upsert_nodes=(bare, empty, full, loner), upsert_edges=(edge,)))
    got = s.get_nodes(["odd1", "odd2", "odd3", "concept:odd"])
    assert got == {"odd1": bare, "odd2": empty, "odd3": full, "concept:odd": loner}
    (back,) = s.edges_of(["odd1"])
    assert back.attrs == ODD_ATTRS
    assert {k: type(v) for k, v in back.attrs.items()} == {
        k: type(v) for k, v in ODD_ATTRS.items()
    }
    assert back.attrs["mixed"][0] == 1 and isinstance(back.attrs["mixed"][0], int)
    assert s.find_node("odd concept") == loner
    s.apply(GraphChange(upsert_edges=(edge,)))  # idempotent with the odd values too
    assert s.stats().edges["SIMILAR_TO"] == 1


@pytest.mark.bolt
def test_node_values_neo4j_cannot_store_fail_before_writing(make_store: Any) -> None:
    s = make_store("neo4j")
    s.apply(fx.full_change())
    before = s.stats()
    bad = Paper("odd9", "Null author", "x", "h9", authors=("Ann", None))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError) as err:
        s.apply(GraphChange(upsert_nodes=(Paper("ok1", "Fine", "y", "h8"), bad)))
    assert "odd9" in str(err.value) and "authors" in str(err.value)
    weird = Concept("concept:weird", "weird", ({"a": 1},))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="aliases"):
        s.apply(GraphChange(upsert_nodes=(weird,)))
    assert s.stats() == before  # nothing of either change
    assert s.get_nodes(["ok1"]) == {}


# --------------------------------------------------------------------------- vector index


def _vector_indexes(driver: Any) -> list[dict[str, Any]]:
    records, _, _ = driver.execute_query(
        "SHOW INDEXES YIELD name, type, state, labelsOrTypes, properties, options "
        "WHERE type = 'VECTOR' RETURN name, state, options"
    )
    return [dict(r) for r in records]


def _change_with_dims(dims: int, model: str) -> GraphChange:
    rng = np.random.default_rng(dims)
    m = rng.standard_normal((len(fx.PAPERS), dims)).astype(np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return GraphChange(
        upsert_nodes=tuple(fx.PAPERS),
        embedding_ids=tuple(p.id for p in fx.PAPERS),
        embeddings=m,
        embedding_model=model,
    )


@pytest.mark.bolt
def test_vector_search_through_the_index_right_after_the_first_build(make_store: Any) -> None:
    """The index is built in the background: a search at once waits for it (bounded)
    and then answers through it, exactly as the exact scan does."""
    s = make_store("neo4j")
    s.exact_vector_max = 0
    s.apply(fx.full_change())
    ids, m = fx.embeddings()
    got = hits_t(s.vector_search(m[0].tolist(), limit=4))
    assert s._vector_online  # answered by db.index.vector.queryNodes
    s.exact_vector_max = 10**9
    assert got == hits_t(s.vector_search(m[0].tolist(), limit=4))


@pytest.mark.bolt
def test_vector_index_gone_is_made_again(make_store: Any, bolt_driver: Any) -> None:
    s = make_store("neo4j")
    s.apply(fx.full_change())
    bolt_driver.execute_query("DROP INDEX paper_embedding IF EXISTS")
    fresh = type(s)(bolt_driver, "neo4j", exact_vector_max=0)
    ids, m = fx.embeddings()
    hits = fresh.vector_search(m[ids.index("p3")].tolist(), limit=2)
    assert [h.node.id for h in hits] == ["p3", "p4"]
    assert [i["name"] for i in _vector_indexes(bolt_driver)] == ["paper_embedding"]


@pytest.mark.bolt
def test_vector_index_follows_a_change_of_dimension(make_store: Any, bolt_driver: Any) -> None:
    """CREATE VECTOR INDEX … IF NOT EXISTS would keep the 384-d index (and an index of
    an older name) after a change of model: the store replaces it."""
    s = make_store("neo4j")
    bolt_driver.execute_query("DROP INDEX paper_embedding IF EXISTS")
    bolt_driver.execute_query(  # what an earlier version of the store created
        "CREATE VECTOR INDEX `Paper[embedding]` IF NOT EXISTS FOR (n:Paper) ON (n.embedding) "
        "OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}"
    )
    s.apply(fx.full_change())
    (index,) = _vector_indexes(bolt_driver)
    assert index["name"] == "paper_embedding"
    assert index["options"]["indexConfig"]["vector.dimensions"] == 384
    # another model, another dimension, from another process (a new store object)
    other = type(s)(bolt_driver, "neo4j", exact_vector_max=0)
    change = _change_with_dims(16, "other-model")
    other.apply(change)
    (index,) = _vector_indexes(bolt_driver)
    assert index["options"]["indexConfig"]["vector.dimensions"] == 16
    assert other.embedding_model() == "other-model"
    q = np.asarray(change.embeddings)[2].tolist()
    hits = other.vector_search(q, limit=3)
    assert other._vector_online and hits[0].node.id == fx.PAPERS[2].id
    assert hits[0].score == pytest.approx(1.0, abs=1e-6)


@pytest.mark.bolt
def test_vector_dimension_limit_is_neo4j_s(make_store: Any, bolt_driver: Any) -> None:
    s = make_store("neo4j")
    with pytest.raises(InvalidArgumentError, match="4096"):
        s.apply(_change_with_dims(4097, "huge"))
    assert not any(s.stats().nodes.values())  # refused before anything was written
    s.apply(_change_with_dims(4096, "largest"))
    (index,) = _vector_indexes(bolt_driver)
    assert index["options"]["indexConfig"]["vector.dimensions"] == 4096
