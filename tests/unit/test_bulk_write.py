"""The embedded store's write path for big changes (a build) and the rows it serialises.

A big change is written in key order, with a bigger page cache, and a first build makes
the edge table's secondary indexes after its rows. None of that may change what is
stored, what a rollback leaves, or the rule that memory and disk agree.
"""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pytest

import graph.store.embedded as embedded
from graph.build import graphs_equal
from graph.errors import StoreError
from graph.model import Edge, GraphChange, RelType
from graph.store.embedded import EmbeddedStore
from graph.store.rows import dumps
from tests.contract import fixtures as fx


def _indexes(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        return {
            name
            for (name,) in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'edges'"
                " AND name NOT LIKE 'sqlite_%'"
            )
        }


def _table(path: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as db:
        return sorted(db.execute(sql).fetchall())


@pytest.fixture
def small_big(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every change of the fixture graph counts as big."""
    monkeypatch.setattr(embedded, "BIG_CHANGE_ROWS", 5)


def test_a_big_first_write_stores_what_small_writes_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedded, "BIG_CHANGE_ROWS", 5)
    big = EmbeddedStore(tmp_path / "big.db")
    big.apply(fx.full_change())
    big.close()
    # the same graph in small changes (none big), nodes first
    monkeypatch.setattr(embedded, "BIG_CHANGE_ROWS", 10**9)
    small = EmbeddedStore(tmp_path / "small.db")
    change = fx.full_change()
    small.apply(GraphChange(upsert_nodes=change.upsert_nodes))
    for i in range(0, len(change.upsert_edges), 3):
        small.apply(GraphChange(upsert_edges=change.upsert_edges[i : i + 3]))
    small.apply(GraphChange(embedding_ids=change.embedding_ids, embeddings=change.embeddings,
                            embedding_model=change.embedding_model))
    small.close()
    for sql in (
        "SELECT id, kind, props FROM nodes",
        "SELECT * FROM names",
        "SELECT id, dim, vector FROM embeddings",
        "SELECT source, target, type, weight, attrs FROM edges",
    ):
        assert _table(tmp_path / "big.db", sql) == _table(tmp_path / "small.db", sql)
    assert _indexes(tmp_path / "big.db") == {"edges_target", "edges_seq"}
    with sqlite3.connect(tmp_path / "big.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        plan = " ".join(
            str(r) for r in db.execute(
                "EXPLAIN QUERY PLAN SELECT * FROM edges WHERE target = 'concept:gnn'"
            )
        )
        assert "edges_target" in plan


@pytest.mark.usefixtures("small_big")
@pytest.mark.parametrize("reads", ["memory", "sql"])
def test_a_big_write_that_fails_at_commit_leaves_everything_as_it_was(
    tmp_path: Path, reads: Literal["memory", "sql"], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "graph.db"
    store = EmbeddedStore(path, reads=reads)
    half = fx.full_change()
    store.apply(GraphChange(upsert_nodes=half.upsert_nodes[:4]))
    before = store.snapshot()
    rows_before = _table(path, "SELECT * FROM nodes")

    def boom() -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store, "_before_commit", boom)
    with pytest.raises(StoreError, match="nothing was written"):
        store.apply(fx.full_change())
    assert graphs_equal(store.snapshot(), before) == []
    assert _table(path, "SELECT * FROM nodes") == rows_before
    assert _table(path, "SELECT * FROM edges") == []
    # the indexes dropped for the bulk insert came back with the rollback
    assert _indexes(path) == {"edges_target", "edges_seq"}
    monkeypatch.setattr(store, "_before_commit", lambda: None)
    store.apply(fx.full_change())  # and the store still takes the write afterwards
    assert store.stats().edges["MENTIONS"] > 0


@pytest.mark.parametrize("bad", ["unknown end", "lone surrogate", "nan"])
@pytest.mark.parametrize("reads", ["memory", "sql"])
def test_a_bad_edge_after_parts_already_inserted_leaves_everything_as_it_was(
    tmp_path: Path, reads: Literal["memory", "sql"], bad: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # edges are checked as they are inserted, a part at a time: the bad one comes after
    # parts are in the table, inside the transaction, with the indexes dropped
    monkeypatch.setattr(embedded, "BIG_CHANGE_ROWS", 5)
    monkeypatch.setattr(embedded, "EDGE_ROWS_PER_PART", 3)
    path = tmp_path / "graph.db"
    store = EmbeddedStore(path, reads=reads)
    full = fx.full_change()
    store.apply(GraphChange(upsert_nodes=full.upsert_nodes[:4]))
    before = store.snapshot()
    stats = store.stats()
    tables = {t: _table(path, f"SELECT * FROM {t}") for t in ("nodes", "edges", "names")}
    wrong = {
        "unknown end": Edge("zz-last", "p1", RelType.CITES),
        "lone surrogate": Edge("p2", "p1", RelType.CITES, 1.0, {"note": "x\udfffy"}),
        "nan": Edge("p2", "p1", RelType.CITES, 1.0, {"score": math.nan}),
    }[bad]
    change = GraphChange(upsert_nodes=full.upsert_nodes,
                         upsert_edges=(*full.upsert_edges, wrong))
    assert len(change.upsert_edges) > 3 * embedded.EDGE_ROWS_PER_PART
    with pytest.raises(StoreError, match="nothing was written"):
        store.apply(change)
    assert graphs_equal(store.snapshot(), before) == []
    assert store.stats() == stats
    for t, rows in tables.items():
        assert _table(path, f"SELECT * FROM {t}") == rows
    assert _indexes(path) == {"edges_target", "edges_seq"}
    fresh = EmbeddedStore(path, reads="sql")
    assert graphs_equal(fresh.snapshot(), before) == []
    fresh.close()
    store.apply(full)  # and the store takes the good write afterwards
    assert store.stats().edges == EmbeddedStore(path, reads="sql").stats().edges
    assert sum(store.stats().edges.values()) == len({e.key for e in full.upsert_edges})


@pytest.mark.parametrize("big", [False, True])
@pytest.mark.parametrize("part", [1, 50_000])
def test_one_edge_twice_in_a_change_the_last_wins_in_memory_and_on_disk(
    tmp_path: Path, big: bool, part: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    if big:
        monkeypatch.setattr(embedded, "BIG_CHANGE_ROWS", 2)
    # part 1: the two rows of one key are inserted in two parts
    monkeypatch.setattr(embedded, "EDGE_ROWS_PER_PART", part)
    store = EmbeddedStore(tmp_path / "graph.db")
    store.apply(fx.full_change())
    store.get_nodes(["p1"])  # the mirror is loaded
    store._mem()
    first = Edge("p1", "p2", RelType.CITES, 0.25, {"note": "first"})
    last = Edge("p1", "p2", RelType.CITES, 0.75, {"note": "last"})
    # sorted by key, a row whose values sort lower must still win when it comes last
    store.apply(GraphChange(upsert_edges=(last, first)))
    mem = [e for e in store.edges_of(["p1"], [RelType.CITES]) if e.target == "p2"]
    assert [(e.weight, dict(e.attrs)) for e in mem] == [(0.25, {"note": "first"})]
    fresh = EmbeddedStore(tmp_path / "graph.db", reads="sql")
    disk = [e for e in fresh.edges_of(["p1"], [RelType.CITES]) if e.target == "p2"]
    assert [(e.weight, dict(e.attrs)) for e in disk] == [(0.25, {"note": "first"})]
    # the kept counts moved by one edge, not two
    with sqlite3.connect(tmp_path / "graph.db") as db:
        counted = dict(db.execute("SELECT type, COUNT(*) FROM edges GROUP BY type").fetchall())
    assert {t: n for t, n in fresh.stats().edges.items() if n} == counted


@pytest.mark.parametrize(
    "value",
    [
        {"score": 0.1, "rank": 3},
        {"terms": ("a", "b"), "weights": [1.5, 2.0]},  # a tuple is a JSON list
        {"evidence": "nullable output is null-safe"},  # "null" in a string
        {"nothing": None, "flag": True},
        {"tiny": 1e-05, "big": 1e16, "neg": -0.0},
        {"accented": "Schrödinger – ∇ 日本"},
        {"nested": {"k": [1, {"x": 2}]}},
        {"n": np.float64(0.5)},  # a float subclass: json.dumps writes it
    ],
)
def test_dumps_writes_what_json_reads_back(value: dict[str, Any]) -> None:
    text = dumps(value)
    expected = json.loads(json.dumps(value, allow_nan=False))
    assert json.loads(text) == expected


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ({"x": math.nan}, ValueError),
        ({"x": math.inf}, ValueError),
        ({"x": {1, 2}}, TypeError),
        ({"x": np.float32(0.5)}, TypeError),
    ],
)
def test_dumps_refuses_what_json_refuses(value: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        dumps(value)


def test_attrs_with_a_lone_surrogate_are_refused_with_the_edge_named(tmp_path: Path) -> None:
    store = EmbeddedStore(tmp_path / "graph.db")
    store.apply(fx.full_change())
    bad = Edge("p1", "p2", RelType.CITES, 1.0, {"note": "x\udfffy"})
    with pytest.raises(StoreError, match=r"unpaired surrogate.*nothing was written"):
        store.apply(GraphChange(upsert_edges=(bad,)))
    assert not [e for e in store.edges_of(["p1"], [RelType.CITES]) if e.target == "p2"]
