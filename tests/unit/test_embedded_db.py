"""The embedded database store on its own: migration, history, reopen, refused writes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from graph.build import graphs_equal
from graph.errors import StoreError
from graph.model import Edge, GraphChange, RelType
from graph.store.embedded import EmbeddedStore
from graph.store.memory import NetworkxStore
from tests.contract import fixtures as fx


def _loaded(path: Path) -> EmbeddedStore:
    store = EmbeddedStore(path)
    store.apply(fx.full_change())
    return store


def test_legacy_file_is_migrated_once(tmp_path: Path) -> None:
    legacy = tmp_path / "graph.citegraph"
    old = NetworkxStore(legacy)
    old.apply(fx.full_change())
    old.save()
    store = EmbeddedStore(tmp_path / "graph.db", legacy_file=legacy)
    assert graphs_equal(store.snapshot(), old.snapshot()) == []
    ids, m = store.embedding_matrix()
    want_ids, want = old.embedding_matrix()
    assert sorted(ids) == sorted(want_ids)
    order = [want_ids.index(i) for i in ids]
    assert np.array_equal(m, want[order])
    assert store.embedding_model() == fx.MODEL
    store.close()
    # no temporary files are left, and a second open does not migrate again
    assert sorted(p.name for p in tmp_path.iterdir() if "migrating" in p.name) == []
    legacy.unlink()
    again = EmbeddedStore(tmp_path / "graph.db", legacy_file=legacy)
    assert again.stats() == old.stats()


def test_every_change_is_a_commit_in_the_history(tmp_path: Path) -> None:
    store = _loaded(tmp_path / "graph.db")
    store.apply(GraphChange(delete_nodes=("p8",)))
    history = store.history()
    assert [h["seq"] for h in history] == [2, 1]
    assert history[0]["summary"]["nodes_deleted"] == 1
    assert history[1]["summary"]["nodes_upserted"] == len(fx.full_change().upsert_nodes)


def test_stats_and_lookups_by_id_do_not_load_the_graph(tmp_path: Path) -> None:
    _loaded(tmp_path / "graph.db").close()
    store = EmbeddedStore(tmp_path / "graph.db")
    assert store.stats().nodes["Paper"] == len(fx.PAPERS)
    assert set(store.get_nodes(["p1", "nope"])) == {"p1"}
    assert store._mirror is None  # answered by SQL alone


def test_closed_store_reopens_on_use(tmp_path: Path) -> None:
    store = _loaded(tmp_path / "graph.db")
    store.close()
    store.close()
    assert store.stats().nodes["Paper"] == len(fx.PAPERS)


@pytest.mark.parametrize(
    "change",
    [
        GraphChange(upsert_edges=(Edge("p1", "nowhere", RelType.CITES),)),
        GraphChange(embedding_ids=("concept:gnn",), embeddings=np.ones((1, fx.DIM), np.float32)),
        GraphChange(embedding_ids=("p1",), embeddings=np.ones((1, fx.DIM + 1), np.float32)),
        GraphChange(embedding_ids=("p1",), embeddings=np.full((1, fx.DIM), np.nan, np.float32)),
        GraphChange(upsert_edges=(Edge("p1", "p2", RelType.CITES, 1.0, {"x": {1, 2}}),)),
    ],
    ids=["unknown-endpoint", "embedding-of-a-concept", "wrong-dimension", "nan", "unstorable-attr"],
)
def test_refused_change_writes_nothing(tmp_path: Path, change: GraphChange) -> None:
    store = _loaded(tmp_path / "graph.db")
    before = store.snapshot()
    with pytest.raises(StoreError, match=r"nothing was written|cannot be stored"):
        store.apply(change)
    assert graphs_equal(store.snapshot(), before) == []
    with sqlite3.connect(tmp_path / "graph.db") as db:
        assert db.execute("SELECT COUNT(*) FROM commits").fetchone()[0] == 1


def test_not_a_database_is_one_clear_error(tmp_path: Path) -> None:
    junk = tmp_path / "graph.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="cannot open the graph database"):
        EmbeddedStore(junk)


def test_other_process_sees_edge_deletions_whatever_the_ids(tmp_path: Path) -> None:
    """Deletions reach another reader, also for ids with separators, quotes and spaces."""
    from graph.model import Paper

    odd = [Paper(id=i, label=i, abstract="a", text_hash=i) for i in ("a\x1fb", 'q"x', "s p")]
    writer = _loaded(tmp_path / "graph.db")
    writer.apply(GraphChange(
        upsert_nodes=tuple(odd),
        upsert_edges=(Edge(odd[0].id, odd[1].id, RelType.CITES), Edge(odd[1].id, odd[2].id,
                                                                       RelType.CITES)),
    ))
    reader = EmbeddedStore(tmp_path / "graph.db")
    assert len(reader.edges_of([odd[1].id])) == 2
    writer.apply(GraphChange(delete_edges=((odd[0].id, odd[1].id, RelType.CITES),)))
    reader.refresh()
    assert [(e.source, e.target) for e in reader.edges_of([odd[1].id])] == [(odd[1].id, odd[2].id)]
    assert graphs_equal(reader.snapshot(), writer.snapshot()) == []


def test_a_damaged_row_is_one_clear_error(tmp_path: Path) -> None:
    _loaded(tmp_path / "graph.db").close()
    with sqlite3.connect(tmp_path / "graph.db") as db:
        db.execute("UPDATE nodes SET props = '{not json' WHERE id = 'p1'")
    with pytest.raises(StoreError, match="damaged row"):
        EmbeddedStore(tmp_path / "graph.db").snapshot()
