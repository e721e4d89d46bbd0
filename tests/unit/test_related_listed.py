"""related()'s last term: a candidate in a seed's stored SIMILAR_TO list gains
``Weights.listed`` / its rank there, the mean over the seeds; nothing else moves."""

from __future__ import annotations

import dataclasses
import random

import pytest

from graph.model import Edge, GraphChange, Paper, RelType
from graph.related import WEIGHTS, related
from graph.store.memory import NetworkxStore


def _store(seed: int) -> tuple[NetworkxStore, dict[str, dict[str, int]]]:
    rng = random.Random(seed)
    words = ["graph", "diffusion", "language", "vision", "robust", "policy", "reward", "token",
             "kernel", "sparse", "video", "memory"]
    papers = [Paper(f"p{i:02d}", f"P{i}", " ".join(rng.sample(words, 5)), f"h{i}")
              for i in range(30)]
    vectors = [[rng.random() for _ in range(8)] for _ in papers]
    ranks: dict[str, dict[str, int]] = {}
    edges = []
    for p in papers:  # a stored list of 6, in an order of its own (not the cosine's)
        others = rng.sample([q.id for q in papers if q.id != p.id], 6)
        ranks[p.id] = {o: r for r, o in enumerate(others, 1)}
        edges += [Edge(p.id, o, RelType.SIMILAR_TO, 0.5, {"score": 0.5, "words": 0.1, "rank": r})
                  for o, r in ranks[p.id].items()]
    store = NetworkxStore()
    store.apply(GraphChange(upsert_nodes=tuple(papers), upsert_edges=tuple(edges),
                            embedding_ids=tuple(p.id for p in papers), embeddings=vectors))
    return store, ranks


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_listed_candidate_gains_its_reciprocal_rank(seed: int) -> None:
    store, ranks = _store(seed)
    off = dataclasses.replace(WEIGHTS, listed=0.0)
    for seeds in (["p03"], ["p03", "p17"]):
        kw = {"paper": seeds[0], "positive": seeds[1:], "first": 30}
        with_it = {r.paper.id: r.score for r in related(store, **kw)}
        without = {r.paper.id: r.score for r in related(store, weights=off, **kw)}
        assert set(with_it) == set(without) and len(with_it) > 10
        gained = 0
        for pid, score in with_it.items():
            want = WEIGHTS.listed * sum(1.0 / ranks[s][pid] for s in seeds if pid in ranks[s])
            assert score - without[pid] == pytest.approx(want / len(seeds), abs=2e-6)
            gained += want > 0
        # the seeds' lists really were read; the lists holding a seed (edges into it) are
        # in the store too, and must add nothing: ``want`` counts the seeds' own only
        assert gained >= 5
