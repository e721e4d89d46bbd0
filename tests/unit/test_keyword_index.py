"""The embedded store's keyword index (FTS5 in graph.db): kept with the rows, filled on
upgrade and migration, read safely while the mirror lags another process's commit."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from graph.errors import StoreError
from graph.model import Concept, GraphChange, NodeKind
from graph.store import fts
from graph.store.embedded import FORMAT_VERSION, EmbeddedStore
from graph.store.memory import NetworkxStore
from tests.contract import fixtures as fx

NEW = Concept("concept:zebrafish", "zebrafish model", ("ZFM",), "model")


def _ids(store: EmbeddedStore | NetworkxStore, q: str) -> list[str]:
    return [h.node.id for h in store.keyword_search(q, None, 10)]


def _rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    db = sqlite3.connect(path)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def test_a_database_from_before_the_index_is_indexed_on_open(tmp_path: Path) -> None:
    path = tmp_path / "graph.db"
    store = EmbeddedStore(path)
    store.apply(fx.full_change())
    expected = [(h.node.id, h.score) for h in store.keyword_search("attention networks")]
    store.close()
    # what format 1 wrote: no index tables, version 1
    db = sqlite3.connect(path)
    db.executescript(
        "DROP TABLE search_names; DROP TABLE search_body; DROP TABLE search_ids;"
        f"DELETE FROM meta WHERE key = '{fts.META_KEY}';"
        "UPDATE meta SET value = '1' WHERE key = 'version';"
    )
    db.close()
    again = EmbeddedStore(path)
    assert [(h.node.id, h.score) for h in again.keyword_search("attention networks")] == expected
    assert _rows(path, "SELECT value FROM meta WHERE key = 'version'") == [(str(FORMAT_VERSION),)]
    n_nodes = len(fx.PAPERS) + len(fx.CONCEPTS) + len(fx.DATASETS)
    assert _rows(path, "SELECT count(*) FROM search_names") == [(n_nodes,)]
    again.close()


def test_a_newer_format_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "graph.db"
    EmbeddedStore(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = ? WHERE key = 'version'", (str(FORMAT_VERSION + 1),))
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer citegraph"):
        EmbeddedStore(path)


def test_the_zip_migration_builds_the_index(tmp_path: Path) -> None:
    legacy = tmp_path / "graph.citegraph"
    old = NetworkxStore(legacy)
    old.apply(fx.full_change())
    old.save()
    store = EmbeddedStore(tmp_path / "graph.db", legacy_file=legacy)
    assert _ids(store, "GNN") == ["concept:gnn"]
    assert "concept:attention" in _ids(store, "attention")[:3]
    store.close()


class _FailsAtCommit(EmbeddedStore):
    def _before_commit(self) -> None:
        raise OSError(28, "No space left on device")


def test_a_failed_write_leaves_the_index_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "graph.db"
    store = EmbeddedStore(path)
    store.apply(fx.full_change())
    before = _rows(path, "SELECT id, name FROM search_names ORDER BY id")
    store.close()
    failing = _FailsAtCommit(path)
    renamed = Concept("concept:gnn", "zebrafish network", (), "model")
    with pytest.raises(StoreError, match="nothing was written"):
        failing.apply(GraphChange(upsert_nodes=(NEW, renamed), delete_nodes=("p8",)))
    assert _rows(path, "SELECT id, name FROM search_names ORDER BY id") == before
    assert _ids(failing, "zebrafish") == []
    assert _ids(failing, "weather") == ["p8"]
    failing.close()


def test_updates_and_deletes_reach_the_index(tmp_path: Path) -> None:
    store = EmbeddedStore(tmp_path / "graph.db")
    store.apply(fx.full_change())
    store.apply(GraphChange(upsert_nodes=(NEW,)))
    assert _ids(store, "ZFM") == ["concept:zebrafish"]
    store.apply(GraphChange(upsert_nodes=(Concept(NEW.id, "medaka model", (), "model"),)))
    assert _ids(store, "zebrafish") == [] and _ids(store, "medaka") == [NEW.id]
    store.apply(GraphChange(delete_nodes=(NEW.id, "p8")))
    assert _ids(store, "medaka") == [] and _ids(store, "weather") == []
    store.clear()
    assert _ids(store, "attention") == []
    store.close()


def test_a_hit_the_mirror_does_not_hold_yet_is_left_out(tmp_path: Path) -> None:
    path = tmp_path / "graph.db"
    reader = EmbeddedStore(path)
    reader.apply(fx.full_change())
    assert _ids(reader, "attention")  # the mirror is loaded and checked just now
    reader._next_check = float("inf")  # the mirror's 0.2 s between looks, made long
    writer = EmbeddedStore(path)
    writer.apply(GraphChange(upsert_nodes=(NEW,)))
    assert _rows(path, "SELECT id FROM search_names WHERE search_names MATCH 'zebrafish'") == [
        (NEW.id,)]
    # the index has the new node, the reader's mirror not yet: no error, no half node
    assert reader.keyword_search("zebrafish", None, 10) == []
    reader.refresh()
    assert [h.node for h in reader.keyword_search("zebrafish", None, 10)] == [NEW]
    writer.apply(GraphChange(delete_nodes=(NEW.id,)))
    assert reader.keyword_search("zebrafish", [NodeKind.CONCEPT], 10) == []  # gone at once
    reader.close()
    writer.close()


def test_memory_store_index_follows_changes_and_undoes_failures() -> None:
    store = NetworkxStore()
    store.apply(fx.full_change())
    assert _ids(store, "weather") == ["p8"]  # builds the index
    store.apply(GraphChange(upsert_nodes=(NEW,), delete_nodes=("p8",)))
    assert _ids(store, "zebrafish") == [NEW.id] and _ids(store, "weather") == []
    bad = GraphChange(upsert_nodes=(Concept("concept:x", "quokka", (), "model"),),
                      upsert_edges=(fx._e("concept:x", "nowhere", fx.RelType.MENTIONS),))
    with pytest.raises(StoreError):
        store.apply(bad)
    assert _ids(store, "quokka") == []
    store.clear()
    assert _ids(store, "attention") == []


def test_searches_from_many_threads_while_a_writer_changes_the_graph() -> None:
    """The API searches from several threads; writes go on meanwhile (memory store and
    the embedded store's separate search connection)."""
    import tempfile
    import threading

    with tempfile.TemporaryDirectory() as tmp:
        for store in (NetworkxStore(), EmbeddedStore(Path(tmp) / "graph.db")):
            store.apply(fx.full_change())
            errors: list[BaseException] = []
            stop = threading.Event()

            def search(
                s: NetworkxStore | EmbeddedStore = store,
                stop: threading.Event = stop,
                errors: list[BaseException] = errors,
            ) -> None:
                try:
                    while not stop.is_set():
                        hits = s.keyword_search("attention zebrafish", None, 10)
                        assert "concept:attention" in {h.node.id for h in hits}
                        assert all(h.node.id in IDS for h in hits)
                except BaseException as exc:  # reported below
                    errors.append(exc)

            threads = [threading.Thread(target=search) for _ in range(4)]
            for t in threads:
                t.start()
            for i in range(30):  # bounded: 30 writes, then stop
                node = Concept(f"concept:zebrafish-{i % 3}", f"zebrafish {i}", (), "model")
                store.apply(GraphChange(upsert_nodes=(node,)))
                if i % 3 == 2:
                    store.apply(GraphChange(delete_nodes=(node.id,)))
            stop.set()
            for t in threads:
                t.join(timeout=30)
            assert not errors, errors[0]
            assert not any(t.is_alive() for t in threads)
            store.close()


IDS = {n.id for n in [*fx.PAPERS, *fx.CONCEPTS, *fx.DATASETS]} | {
    f"concept:zebrafish-{i}" for i in range(3)}


def test_a_long_query_is_cut_between_words_never_inside_one() -> None:
    """Found by an outside probe: a title opening on a 600-letter word found nothing."""
    from graph.query.text import MAX_QUERY_CHARS, query_terms

    word = "x" * 600
    assert query_terms(f"{word} long title") == [word]
    pad = "a" * (MAX_QUERY_CHARS - 3)
    assert query_terms(f"{pad} graphs networks") == [pad, "graphs"]
