"""The query layer over the Backend seam: the same search on every store, batched reads.

* k_paths collects at most MAX_PATH_CANDIDATES paths; the search that picks them is the
  query layer's, so on a graph dense enough to hit the cap every store still answers alike
  (the old per-store searches could not promise that).
* A Neo4j neighbourhood or path query costs a few round trips, however many nodes its
  rings hold (one query per ring, not one per node).
* A vector of another dimension than the stored ones finds nothing, on every store.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import numpy as np
import pytest

from graph.model import Edge, GraphChange, Paper, RelType
from graph.query.rules import MAX_PATH_CANDIDATES, path_sort_key
from graph.store.base import GraphStore
from graph.store.neo4j import Neo4jStore
from tests.contract.test_store_contract import KINDS, path_t, sub_t


def dense_change(n: int = 14, seed: int = 3) -> GraphChange:
    """Papers all joined to each other (SIMILAR_TO, distinct weights), a few CITES too."""
    rng = random.Random(seed)
    ids = [f"d{i:02d}" for i in range(n)]
    papers = tuple(Paper(pid, f"Dense {pid}", "", f"h{pid}") for pid in ids)
    edges = [
        Edge(a, b, RelType.SIMILAR_TO, round(rng.uniform(0.1, 1.0), 4), {})
        for a, b in itertools.combinations(ids, 2)
    ]
    edges += [Edge(ids[i], ids[(i * 5 + 1) % n], RelType.CITES, 1.0, {}) for i in range(n)
              if (i * 5 + 1) % n != i]
    return GraphChange(upsert_nodes=papers, upsert_edges=tuple(edges))


@pytest.mark.bolt
def test_k_paths_agree_past_the_candidate_cap(make_store: Any) -> None:
    answers = []
    for kind in ("memory", "embedded", "sql", "neo4j"):
        s: GraphStore = make_store(kind)
        s.apply(dense_change())
        paths = s.k_paths("d00", "d01", k=5000, max_hops=4)
        # 1 + 12 + 132 + 1320 simple paths exist: the cap is reached
        assert len(paths) == MAX_PATH_CANDIDATES
        assert paths == sorted(paths, key=path_sort_key)
        answers.append([path_t(p) for p in paths])
        answers.append([path_t(p) for p in s.k_paths("d03", "d09", k=7, max_hops=3)])
        answers.append(path_t(s.shortest_path("d02", "d13")))
    assert answers[0:3] == answers[3:6] == answers[6:9] == answers[9:12]


class CountingNeo4jStore(Neo4jStore):
    """The real store, counting the queries it sends (no reply is changed)."""

    reads = 0

    def _read(self, query: str, **params: Any) -> list[Any]:
        self.reads += 1
        return super()._read(query, **params)


@pytest.mark.bolt
def test_neo4j_round_trips_per_ring_not_per_node(bolt_server: Any, bolt_driver: Any) -> None:
    store = CountingNeo4jStore(bolt_driver, bolt_server.database, batch_size=500)
    store.clear()
    store.apply(dense_change(n=30))
    store.reads = 0
    sub = store.neighborhood(["d00"], depth=2, limit=200)
    assert len(sub.nodes) == 30
    # one walk: the seed, ring 1 (29 nodes at once, ranked in the database), ring 2, the
    # nodes with the edges among them
    assert store.reads == 1, store.reads
    store.reads = 0
    assert store.shortest_path("d00", "d17") is not None
    assert store.reads <= 6, store.reads
    store.reads = 0
    assert len(store.k_paths("d00", "d17", k=40, max_hops=2)) == 29
    assert store.reads <= 8, store.reads
    store.reads = 0
    store.stats()
    assert store.reads == 1


@pytest.mark.parametrize("kind", KINDS)
def test_vector_of_another_dimension_finds_nothing(kind: str, make_store: Any) -> None:
    s: GraphStore = make_store(kind)
    m = np.eye(4, dtype=np.float32)
    ids = ("v0", "v1", "v2", "v3")
    s.apply(GraphChange(upsert_nodes=tuple(Paper(i, i, "", i) for i in ids),
                        embedding_ids=ids, embeddings=m, embedding_model="m"))
    assert [h.node.id for h in s.vector_search([1.0, 0, 0, 0], limit=2)] == ["v0", "v1"]
    assert s.vector_search([1.0, 0, 0], limit=2) == []
    assert s.vector_search([float("nan")] * 4, limit=2) == []


@pytest.mark.parametrize("kind", KINDS)
def test_neighborhood_of_unknown_and_repeated_seeds(kind: str, make_store: Any) -> None:
    s: GraphStore = make_store(kind)
    s.apply(dense_change(n=6))
    got = s.neighborhood(["d01", "nope", "d01", "d00"], depth=1, limit=3)
    assert [n.id for n in got.nodes][:2] == ["d00", "d01"] and got.truncated
    assert sub_t(s.neighborhood(["nope"], depth=2)) == ([], [], False)
