"""A stored graph against a fresh full build of the same papers, to the bit."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from graph.build import Pipeline
from graph.model import GraphData, Paper, node_to_props
from graph.store.memory import NetworkxStore
from tests.support.seeds import seed_settings


def fresh_build(tmp: Path, cache: Path, papers: list[Paper], **settings: object) -> GraphData:
    """A full build of ``papers`` with an empty extraction cache and the same vectors
    (``cache``'s embedding cache copied: a vector depends on its batch by a float step)."""
    own = tmp / "fresh-cache"
    shutil.rmtree(own, ignore_errors=True)
    own.mkdir()
    shutil.copy(cache / "embeddings.sqlite", own / "embeddings.sqlite")
    pipe = Pipeline(seed_settings(tmp / "fresh", **settings), cache_dir=own, incremental=False)
    try:
        store = NetworkxStore()
        pipe.run(store, add_papers=papers, replace=True)
        return store.snapshot()
    finally:
        pipe.close()


def assert_same_graph(full: GraphData, got: GraphData) -> None:
    """Every node's props, every edge with its attrs, every vector: equal."""
    assert sorted(full.nodes) == sorted(got.nodes)
    for nid, node in full.nodes.items():
        assert node_to_props(node) == node_to_props(got.nodes[nid]), nid
    assert sorted(full.edges, key=str) == sorted(got.edges, key=str)
    for key, e in full.edges.items():
        g = got.edges[key]
        assert e.weight == g.weight and dict(e.attrs) == dict(g.attrs), key
    rows = {pid: i for i, pid in enumerate(got.embedding_ids)}
    assert sorted(rows) == sorted(full.embedding_ids)
    for i, pid in enumerate(full.embedding_ids):
        assert np.array_equal(full.embeddings[i], got.embeddings[rows[pid]]), pid
