"""TermCounts, related()'s cache of how many papers link to each term, against counting
the edges: right at first, right after the graph changes, and the same recommendations
with and without it."""

from __future__ import annotations

import random

from graph.lexical import LexicalIndex
from graph.model import Concept, Dataset, Edge, GraphChange, Paper, RelType
from graph.related import TermCounts, related
from graph.store.memory import NetworkxStore


def _store(seed: int = 3) -> NetworkxStore:
    rng = random.Random(seed)
    words = ["graph", "diffusion", "language", "vision", "robust", "policy", "reward", "token"]
    papers = [
        Paper(f"p{i:02d}", f"P{i}", " ".join(rng.sample(words, 4)), f"h{i}") for i in range(20)
    ]
    concepts = [Concept(f"c{i}", f"concept {i}") for i in range(16)]
    datasets = [Dataset("dataset:d0", "D0"), Dataset("dataset:d1", "D1")]
    edges = []
    for p in papers:
        for c in rng.sample(concepts, 2):
            edges.append(Edge(p.id, c.id, RelType.MENTIONS, 1.0))
        if rng.random() < 0.4:
            d = rng.choice(datasets)
            edges.append(Edge(p.id, d.id, RelType.USES, 1.0))
            if rng.random() < 0.3:  # uses and introduces the same dataset: one paper
                edges.append(Edge(p.id, d.id, RelType.INTRODUCES, 1.0))
    # a concept-concept edge touches a term but is no paper linking to it
    edges.append(Edge("c0", "c1", RelType.RELATED_TO, 2.0))
    vectors = [[rng.random() for _ in range(8)] for _ in papers]
    store = NetworkxStore()
    store.apply(GraphChange(
        upsert_nodes=(*papers, *concepts, *datasets), upsert_edges=tuple(edges),
        embedding_ids=tuple(p.id for p in papers), embeddings=vectors,
    ))
    return store


def _by_edges(store: NetworkxStore, term: str) -> int:
    return len({e.source for e in store.edges_of([term], None)
                if e.target == term and e.type in (RelType.MENTIONS, RelType.USES,
                                                   RelType.INTRODUCES)})


def test_counts_match_the_edges_and_follow_changes() -> None:
    store = _store()
    counts = TermCounts()
    terms = ["c0", "c1", "c5", "dataset:d0", "dataset:d1", "c-none"]
    assert counts.of(store, terms) == {t: _by_edges(store, t) for t in terms}
    assert counts.of(store, terms)["c-none"] == 0
    before = counts.of(store, ["c0"])["c0"]
    store.apply(GraphChange(
        upsert_nodes=(Paper("p99", "P99", "graph token", "h99"),),
        upsert_edges=(Edge("p99", "c0", RelType.MENTIONS, 1.0),),
    ))
    assert counts.of(store, ["c0"])["c0"] == before + 1 == _by_edges(store, "c0")
    store.apply(GraphChange(delete_nodes=("p99", "p00", "p01")))
    assert counts.of(store, terms) == {t: _by_edges(store, t) for t in terms}


def test_related_same_with_and_without_the_cache() -> None:
    store = _store()
    counts, lexical = TermCounts(), LexicalIndex()
    kinds = set()
    for pid in ["p00", "p03", "p07", "p11", "p19"]:
        plain = related(store, paper=pid, first=8, lexical=LexicalIndex())
        cached = related(store, paper=pid, first=8, lexical=lexical, term_counts=counts)
        again = related(store, paper=pid, first=8, lexical=lexical, term_counts=counts)
        assert plain == cached == again, pid
        assert plain, pid
        kinds |= {r.kind for rp in plain for r in rp.reasons}
    assert "concept" in kinds  # shared terms (and so their counts) took part
