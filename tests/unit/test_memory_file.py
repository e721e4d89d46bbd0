"""The embedded store's file: round trip, atomic replace, refusal of foreign files."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest

from graph.errors import StoreError
from graph.model import Concept, Edge, GraphChange, Paper, RelType
from graph.store.memory import NetworkxStore


def _store(path: Path | None) -> NetworkxStore:
    store = NetworkxStore(path)
    papers = [
        Paper(id=f"p{i}", label=f"P{i}", abstract=f"text {i}", text_hash=f"h{i}") for i in range(3)
    ]
    concept = Concept(id="concept:x", name="x", aliases=("X",))
    store.apply(
        GraphChange(
            upsert_nodes=(*papers, concept),
            upsert_edges=(
                Edge("p0", "p1", RelType.SIMILAR_TO, 0.5, {"score": 0.5, "rank": 1}),
                Edge("p2", "p1", RelType.SHARES_TERM, 1.2, {"terms": ["x"], "weight": 1.2}),
                Edge("p0", "concept:x", RelType.MENTIONS, 1.0, {"evidence": "text 0"}),
            ),
            embedding_ids=("p0", "p1", "p2"),
            embeddings=np.eye(3, 4, dtype=np.float32),
            embedding_model="m",
        )
    )
    return store


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "g.citegraph"
    store = _store(path)
    store.save()
    again = NetworkxStore(path)
    assert again.stats() == store.stats()
    assert again.snapshot().edges == store.snapshot().edges
    assert again.embedding_model() == "m"
    # undirected edges are stored with source < target
    assert ("p1", "p2", RelType.SHARES_TERM) in again.snapshot().edges
    with zipfile.ZipFile(path) as zf:
        assert sorted(zf.namelist()) == [
            "edges.jsonl",
            "embedding_ids.json",
            "embeddings.npy",
            "manifest.json",
            "nodes.jsonl",
        ]


def test_crash_during_save_keeps_previous_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "g.citegraph"
    store = _store(path)
    store.save()
    before = path.read_bytes()
    store.apply(GraphChange(delete_nodes=("p2",)))

    def boom(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(zipfile.ZipFile, "writestr", boom)
    with pytest.raises(OSError):
        store.save()
    assert path.read_bytes() == before
    assert not list(tmp_path.glob("*.tmp"))
    assert NetworkxStore(path).stats().nodes["Paper"] == 3


def test_failed_apply_changes_nothing(tmp_path: Path) -> None:
    store = _store(None)
    before = store.snapshot()
    bad = GraphChange(
        upsert_nodes=(Paper(id="p9", label="P9", abstract="t", text_hash="h9"),),
        upsert_edges=(Edge("p9", "nowhere", RelType.CITES),),
    )
    with pytest.raises(StoreError):
        store.apply(bad)
    after = store.snapshot()
    assert set(after.nodes) == set(before.nodes)
    assert after.edges == before.edges


def test_foreign_or_corrupt_file_is_a_clear_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.citegraph"
    junk.write_bytes(b"not a zip at all")
    with pytest.raises(StoreError, match="cannot read graph file"):
        NetworkxStore(junk)
