"""Node lookups that never block (GraphStore.nodes_at_once): the API makes them on its
event loop, so a store must say None rather than wait on a write, a catch-up or I/O."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from graph.model import Concept, GraphChange
from graph.store.embedded import SYNC_INTERVAL_S, EmbeddedStore
from graph.store.memory import NetworkxStore
from tests.contract import fixtures as fx

NEW = Concept("concept:zebrafish", "zebrafish model", ("ZFM",), "model")


def test_the_memory_store_answers_at_once_as_get_nodes_does() -> None:
    store = NetworkxStore()
    store.apply(fx.full_change())
    ids = [fx.PAPERS[0].id, fx.CONCEPTS[0].id, "no such id"]
    assert store.nodes_at_once(ids) == store.get_nodes(ids)
    assert fx.PAPERS[0].id in (store.nodes_at_once(ids) or {})


def test_the_embedded_store_answers_from_its_mirror_unless_that_would_wait(
    tmp_path: Path,
) -> None:
    store = EmbeddedStore(tmp_path / "graph.db")
    store.apply(fx.full_change())
    ids = [fx.PAPERS[0].id, fx.CONCEPTS[0].id, "no such id"]
    fresh = EmbeddedStore(tmp_path / "graph.db")
    assert fresh.nodes_at_once(ids) is None  # no mirror yet: reading it would load it
    assert store.get_nodes(ids)  # the mirror, just brought up to date
    assert store.nodes_at_once(ids) == store.get_nodes(ids)

    held, release = threading.Event(), threading.Event()

    def writer() -> None:  # a write holds the store's lock from its checks to the mirror
        with store._db_lock:
            held.set()
            release.wait(10)

    t = threading.Thread(target=writer)
    t.start()
    try:
        assert held.wait(10)
        assert store.nodes_at_once(ids) is None
    finally:
        release.set()
        t.join(10)
    store.get_nodes(ids)
    assert store.nodes_at_once(ids) is not None

    # another process's commit: once a catch-up is due, None, and get_nodes catches up
    other = EmbeddedStore(tmp_path / "graph.db")
    other.apply(GraphChange(upsert_nodes=(NEW,)))
    time.sleep(SYNC_INTERVAL_S + 0.05)
    assert store.nodes_at_once([NEW.id]) is None
    assert NEW.id in store.get_nodes([NEW.id])
    assert store.nodes_at_once([NEW.id]) == {NEW.id: NEW}
    for s in (store, fresh, other):
        s.close()
