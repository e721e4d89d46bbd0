"""The embedded database store on its own: migration, history, reopen, refused writes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Literal

import numpy as np
import pytest

from graph.build import graphs_equal
from graph.errors import StoreError
from graph.model import Edge, GraphChange, NodeKind, RelType
from graph.store.embedded import FORMAT_VERSION, EmbeddedStore
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
@pytest.mark.parametrize("reads", ["memory", "sql"])
def test_refused_change_writes_nothing(
    tmp_path: Path, change: GraphChange, reads: Literal["memory", "sql"]
) -> None:
    _loaded(tmp_path / "graph.db").close()
    # "sql": a one-shot writer (the CLI) checks the change against the rows, no mirror
    store = EmbeddedStore(tmp_path / "graph.db", reads=reads)
    before = store.snapshot()
    with pytest.raises(StoreError, match=r"nothing was written|cannot be stored"):
        store.apply(change)
    assert graphs_equal(store.snapshot(), before) == []
    assert (store._mirror is None) == (reads == "sql")
    with sqlite3.connect(tmp_path / "graph.db") as db:
        assert db.execute("SELECT COUNT(*) FROM commits").fetchone()[0] == 1


@pytest.mark.parametrize("reads", ["memory", "sql"])
def test_a_nan_edge_weight_is_refused_with_the_edge_named(
    tmp_path: Path, reads: Literal["memory", "sql"]
) -> None:
    """Probe 12 F4: SQLite took NaN as NULL and said only "NOT NULL constraint failed"."""
    _loaded(tmp_path / "graph.db").close()
    store = EmbeddedStore(tmp_path / "graph.db", reads=reads)
    bad = GraphChange(upsert_edges=(Edge("p1", "p2", RelType.CITES, float("nan")),))
    with pytest.raises(StoreError, match=r"edge CITES 'p1' -> 'p2': weight is NaN; nothing"):
        store.apply(bad)
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


def _sql_reader(path: Path) -> EmbeddedStore:
    return EmbeddedStore(path, reads="sql")


def test_sql_reads_answer_queries_without_loading_the_graph(tmp_path: Path) -> None:
    """What one-shot CLI commands do: every read from SQL, the same answers, no mirror."""
    _loaded(tmp_path / "graph.db").close()
    mirror = EmbeddedStore(tmp_path / "graph.db")
    sql = _sql_reader(tmp_path / "graph.db")
    ids, m = fx.embeddings()
    gnn = sql.find_node("gnns")
    assert gnn is not None and gnn == mirror.find_node("gnns")
    assert sql.neighborhood(["p1"], 2, limit=7) == mirror.neighborhood(["p1"], 2, limit=7)
    assert sql.k_paths("p1", "p6", k=3) == mirror.k_paths("p1", "p6", k=3)
    assert sql.list_nodes(NodeKind.PAPER, venue="ICLR", limit=2) == mirror.list_nodes(
        NodeKind.PAPER, venue="ICLR", limit=2
    )
    assert sql.list_nodes(NodeKind.CONCEPT, neighbor="p1") == mirror.list_nodes(
        NodeKind.CONCEPT, neighbor="p1"
    )
    assert sql.vector_search(m[0].tolist(), limit=3) == mirror.vector_search(m[0].tolist(), limit=3)
    assert sql._mirror is None


def test_sql_reads_see_another_writer_at_once_names_included(tmp_path: Path) -> None:
    from graph.model import Concept, Paper

    writer = _loaded(tmp_path / "graph.db")
    reader = _sql_reader(tmp_path / "graph.db")
    assert reader.find_node("Late paper") is None
    late = Paper(id="late", label="Late paper", abstract="a", text_hash="late")
    concept = Concept("concept:late", "lateness", ("LTN",), "concept")
    writer.apply(GraphChange(
        upsert_nodes=(late, concept),
        upsert_edges=(
            Edge("late", "concept:late", RelType.MENTIONS), Edge("late", "p1", RelType.CITES)
        ),
    ))
    found = reader.find_node("ltn")  # an alias, through the names table
    assert found is not None and found.id == "concept:late"
    assert {n.id for n in reader.neighborhood(["late"]).nodes} == {"late", "concept:late", "p1"}
    # a renamed node is found by its new name only; a deleted one not at all
    writer.apply(GraphChange(upsert_nodes=(Concept("concept:late", "tardiness", (), "concept"),)))
    assert reader.find_node("ltn") is None
    assert reader.find_node("tardiness") is not None
    writer.apply(GraphChange(delete_nodes=("late", "concept:late")))
    assert reader.find_node("tardiness") is None and reader.find_node("Late paper") is None
    assert reader.neighborhood(["late"]).nodes == ()


def test_names_table_is_filled_for_a_database_without_one(tmp_path: Path) -> None:
    """A graph.db written before the names table existed gets it on first open."""
    _loaded(tmp_path / "graph.db").close()
    with sqlite3.connect(tmp_path / "graph.db") as db:
        db.execute("DROP TABLE names")
        db.execute("DELETE FROM meta WHERE key = 'names'")
        db.execute("UPDATE nodes SET props = '{not json' WHERE id = 'p8'")  # and a damaged row
    reader = _sql_reader(tmp_path / "graph.db")
    found = reader.find_node("GCN")
    assert found is not None and found.id == "concept:gcn"
    with pytest.raises(StoreError, match="damaged row"):
        reader.get_nodes(["p8"])


def test_a_version_1_file_is_brought_to_the_current_version(tmp_path: Path) -> None:
    _loaded(tmp_path / "graph.db").close()
    with sqlite3.connect(tmp_path / "graph.db") as db:
        db.execute("DROP TABLE names")
        db.execute("DELETE FROM meta WHERE key = 'names'")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'version'")
    EmbeddedStore(tmp_path / "graph.db").close()
    with sqlite3.connect(tmp_path / "graph.db") as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone() == (
            str(FORMAT_VERSION),)
        assert db.execute("SELECT COUNT(*) FROM names WHERE key = 'gcn'").fetchone() == (1,)


def _changes() -> list[GraphChange]:
    """A history that exercises every kind of row: deletions, a node deleted and written
    again in one change, a new vector, an edge rewritten with other attrs."""
    from graph.model import Paper

    ids, m = fx.embeddings()
    late = Paper(id="late", label="Late paper", abstract="a", text_hash="late")
    return [
        fx.full_change(),
        GraphChange(delete_nodes=("p8",)),
        GraphChange(
            upsert_nodes=(late,),
            upsert_edges=(Edge("late", "p1", RelType.CITES), Edge("p1", "p2", RelType.CITES,
                                                                   0.5, {"note": "x"})),
            embedding_ids=("late",), embeddings=m[:1] * 0.5, embedding_model=fx.MODEL,
        ),
        GraphChange(delete_nodes=("late",), upsert_nodes=(late,),
                    upsert_edges=(Edge("late", "p2", RelType.CITES),)),
        GraphChange(delete_edges=(("p1", "p2", RelType.CITES),)),
    ]


def test_a_writer_without_a_mirror_commits_what_a_mirrored_one_does(tmp_path: Path) -> None:
    """The CLI writes through SQL alone: the same rows, history and snapshots as a store
    that keeps the graph in memory, and a mirrored reader follows it."""
    mirrored = EmbeddedStore(tmp_path / "a" / "graph.db")
    sql_only = EmbeddedStore(tmp_path / "b" / "graph.db", reads="sql")
    follower = EmbeddedStore(tmp_path / "b" / "graph.db")
    for change in _changes():
        mirrored.apply(change)
        sql_only.apply(change)
        a, b = mirrored.snapshot(), sql_only.snapshot()
        assert graphs_equal(a, b) == []
        # rows in id order from SQL, in commit order in a mirror: the same vector per id
        assert sorted(a.embedding_ids) == b.embedding_ids
        assert a.embedding_model == b.embedding_model
        at = {pid: i for i, pid in enumerate(a.embedding_ids)}
        assert np.array_equal(np.asarray(a.embeddings)[[at[p] for p in b.embedding_ids]],
                              np.asarray(b.embeddings))
        follower.refresh()
        assert graphs_equal(follower.snapshot(), a) == []
    assert sql_only._mirror is None
    assert [h["summary"] for h in sql_only.history()] == [
        h["summary"] for h in mirrored.history()
    ]
    assert [h["seq"] for h in sql_only.history()] == list(range(len(_changes()), 0, -1))


@pytest.mark.parametrize("reads", ["memory", "sql"])
def test_a_versioned_snapshot_pairs_the_graph_with_its_own_version(
    tmp_path: Path, reads: Literal["memory", "sql"]
) -> None:
    """A writer that reads ahead of its lock keeps what it read only if the version is
    the same then: the pair must never be an old graph with a newer version. A reader's
    mirror catches up with other processes' commits only every so often, so ``snapshot()``
    then ``version()`` can give just that pair."""
    path = tmp_path / "graph.db"
    _loaded(path).close()
    reader = EmbeddedStore(path, reads=reads)
    first, v1 = reader.versioned_snapshot()
    assert v1 == reader.version() and "p8" in first.nodes
    writer = EmbeddedStore(path)
    writer.apply(GraphChange(delete_nodes=("p8",)))  # another process, as far as reader knows
    data, version = reader.versioned_snapshot()
    if version == v1:
        assert graphs_equal(data, first) == []  # the mirror has not caught up: the old pair
    else:
        assert "p8" not in data.nodes and version == reader.version()
    reader.refresh()
    data, version = reader.versioned_snapshot()
    assert "p8" not in data.nodes and version == writer.version() != v1
    writer.close()
    reader.close()


def test_a_stored_row_decodes_as_json_loads_decodes_it() -> None:
    # graph.store.rows.loads reads rows with orjson where that gives json's answer
    import math
    import random
    import struct

    from graph.store.rows import dumps, loads

    def same(a: object, b: object) -> bool:
        if type(a) is not type(b):
            return False
        if isinstance(a, float) and isinstance(b, float):
            return struct.pack("<d", a) == struct.pack("<d", b)
        if isinstance(a, dict) and isinstance(b, dict):
            return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
        if isinstance(a, list) and isinstance(b, list):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
        return a == b

    rnd = random.Random(3)
    texts = ['{"a":NaN,"b":Infinity}', '{"a":"\\ud800"}', '[18446744073709551616]',
             '[-18446744073709551617, 9223372036854775807]', '{"a":1,"a":2}',
             '[-0.0, 1e400, 5e-324]', '{"é":"東京","k":[1,2.5,null,true]}', "{}", "[1,]",
             '{"a":1', "", '"\ud800"']
    for _ in range(20000):
        x = struct.unpack("<d", struct.pack("<Q", rnd.getrandbits(64)))[0]
        if math.isfinite(x):
            texts.append(dumps({"weight": x, "rank": rnd.randrange(-10**6, 10**6)}))
    for text in texts:
        try:
            want: object = json.loads(text)
        except ValueError:
            with pytest.raises(ValueError):
                loads(text)
            continue
        assert same(loads(text), want), text
