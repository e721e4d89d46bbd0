"""TermCounts, related()'s cache of how many papers link to each term, against counting
the edges: right at first, right after the graph changes, and the same recommendations
with and without it."""

from __future__ import annotations

import random

import numpy as np

from graph.lexical import LexicalIndex
from graph.model import Concept, Dataset, Edge, GraphChange, Paper, RelType
from graph.related import TERM_TYPES, PaperProfile, TermCounts, related
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


def _fresh_profiles(store: NetworkxStore, ids: list[str]) -> dict[str, PaperProfile]:
    """Profiles read from the edges now, by walking edges_of (no cache, no typed index)."""
    out = {}
    for pid in ids:
        mine = sorted((e for e in store.edges_of([pid], None) if e.source == pid),
                      key=lambda e: (e.source, e.target, e.type.value))
        terms = {e.target: e for e in mine if e.type in TERM_TYPES}
        sims = [e for e in mine if e.type is RelType.SIMILAR_TO]
        stored = [e.attrs["hub_cos"] for e in sims if "hub_cos" in e.attrs]
        hub = float(stored[-1]) if stored else (
            float(np.mean([e.weight for e in sims])) if sims else 0.0)
        out[pid] = PaperProfile(terms, hub)
    return out


def test_profiles_follow_every_change_and_related_equals_a_fresh_computation() -> None:
    store = _store(5)
    counts, lexical = TermCounts(), LexicalIndex()
    rng = random.Random(8)
    ids = [f"p{i:02d}" for i in range(20)]
    concepts = [f"c{i}" for i in range(16)]
    for step in range(30):
        live = [p for p in ids if store.get_nodes([p])]
        assert counts.profiles(store, live) == _fresh_profiles(store, live), step
        for pid in rng.sample(live, 4):
            fresh = related(store, paper=pid, first=6, lexical=LexicalIndex())
            kept = related(store, paper=pid, first=6, lexical=lexical, term_counts=counts)
            assert kept == fresh, (step, pid)
        # one change of what a profile holds: terms, SIMILAR_TO weights and hub_cos,
        # papers (and their edges) going and coming back
        a, b = rng.sample(live, 2)
        what = step % 6
        if what == 0:
            change = GraphChange(upsert_edges=(
                Edge(a, rng.choice(concepts), RelType.MENTIONS, rng.random()),))
        elif what == 1:
            change = GraphChange(upsert_edges=(
                Edge(a, b, RelType.SIMILAR_TO, rng.random(), {"hub_cos": rng.random()}),))
        elif what == 2:
            change = GraphChange(upsert_edges=(Edge(a, b, RelType.SIMILAR_TO, rng.random()),))
        elif what == 3:
            gone = [e for e in store.edges_of([a], None) if e.source == a]
            change = GraphChange(delete_edges=tuple(
                (e.source, e.target, e.type) for e in gone[:2]))
        elif what == 4:
            change = GraphChange(delete_nodes=(a,))
        else:
            back = [p for p in ids if p not in live] or [a]
            change = GraphChange(
                upsert_nodes=(Paper(back[0], "Back", "graph token policy", f"h{step}"),),
                upsert_edges=(Edge(back[0], rng.choice(concepts), RelType.MENTIONS, 1.0),
                              Edge(back[0], b, RelType.SIMILAR_TO, 0.5)),
                embedding_ids=(back[0],), embeddings=[[rng.random() for _ in range(8)]],
            )
        store.apply(change)


def test_profiles_of_a_replaced_mirror_are_not_reused() -> None:
    """A mirror loaded again (another object, maybe the same change count) starts over."""
    first, second = _store(5), _store(6)
    counts = TermCounts()
    ids = [f"p{i:02d}" for i in range(20)]
    assert first.version().rsplit(":", 1)[1] == second.version().rsplit(":", 1)[1]
    assert counts.profiles(first, ids) == _fresh_profiles(first, ids)
    assert counts.profiles(second, ids) == _fresh_profiles(second, ids)
    assert _fresh_profiles(first, ids) != _fresh_profiles(second, ids)
