"""A Neo4j writer whose lock the server ended commits nothing over the next writer's
(probe 18, finding 1).

The writers' lock is a transaction held open. When the server ends it while the writer
still works (``db.transaction.timeout``, ``TERMINATE TRANSACTIONS``, a dropped
connection), a second writer took the lock at once and both committed: two adds said
"Added 1 papers" and the graph was neither a fresh build's nor either order's. Now each
write transaction checks the writers' fence in its own transaction: a writer that lost
the lock is refused (the store) and computes its write again (the pipeline).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest

from graph.build import Pipeline, graphs_equal
from graph.errors import WriteLockLostError
from graph.ingest import read_corpus
from graph.model import GraphChange, NodeKind, Paper
from graph.store.embedded import EmbeddedStore
from graph.store.neo4j import Neo4jStore
from tests.conftest import BoltServer
from tests.support.neo4j import Neo4jServer
from tests.support.seeds import EMBED_CACHE, SEEDS, seed_settings

pytestmark = [pytest.mark.slow, pytest.mark.bolt]

LOCK_TXS = """
SHOW TRANSACTIONS YIELD transactionId, metaData
WHERE metaData.role = 'writer lock'
RETURN transactionId AS id
"""


def _driver(bolt_server: BoltServer) -> neo4j.Driver:
    return neo4j.GraphDatabase.driver(
        bolt_server.uri, auth=bolt_server.auth,
        notifications_min_severity=neo4j.NotificationMinimumSeverity.OFF,
    )


@pytest.fixture
def two_stores(bolt_server: BoltServer) -> Iterator[tuple[Neo4jStore, Neo4jStore]]:
    stores = [Neo4jStore(_driver(bolt_server), bolt_server.database, owns_driver=True)
              for _ in range(2)]
    stores[0].clear()
    try:
        yield stores[0], stores[1]
    finally:
        stores[0].clear()
        for s in stores:
            s.close()


def _lock_ended(store: Neo4jStore) -> bool:
    """The lock's transaction is gone or marked terminated (listed until its client looks)."""
    rows = store._read(
        "SHOW TRANSACTIONS YIELD metaData, status WHERE metaData.role = 'writer lock' "
        "RETURN status"
    )
    return all(str(r["status"]).startswith("Terminated") for r in rows)


def _terminate_lock(store: Neo4jStore) -> None:
    """What an admin's TERMINATE TRANSACTIONS does to the writer holding the lock."""
    ids = [r["id"] for r in store._read(LOCK_TXS)]
    assert len(ids) == 1, ids
    store._call(lambda: store._driver.execute_query("TERMINATE TRANSACTIONS $ids", {"ids": ids}))


def _paper(pid: str) -> GraphChange:
    return GraphChange(upsert_nodes=(
        Paper(id=pid, label=f"Paper {pid}", abstract="text", text_hash=pid),
    ))


def _papers(store: Neo4jStore) -> list[str]:
    return sorted(n.id for n in store.list_nodes(NodeKind.PAPER, offset=0, limit=100)[0])


def test_a_writer_whose_lock_was_terminated_commits_nothing(
    two_stores: tuple[Neo4jStore, Neo4jStore],
) -> None:
    first, second = two_stores
    with first.writer():
        first.apply(_paper("before"))  # its lock still held: committed
        _terminate_lock(first)
        entered = threading.Event()

        def other() -> None:
            with second.writer():
                entered.set()
                second.apply(_paper("other"))

        t = threading.Thread(target=other, daemon=True)
        t.start()
        assert entered.wait(30), "the second writer never got the lock the server freed"
        t.join(30)
        with pytest.raises(WriteLockLostError, match="rolled back"):
            first.apply(_paper("late"))
    assert _papers(first) == ["before", "other"]
    with first.writer():  # the lost lock left nothing behind: the next write goes in
        first.apply(_paper("after"))
    assert _papers(second) == ["after", "before", "other"]


def test_a_writer_whose_lock_timed_out_on_the_server_commits_nothing() -> None:
    # a server of its own: the timeout is a server setting (dbms.setConfigValue is not in
    # the Community edition); not much shorter, or the server's own start-up transactions
    # time out on a loaded machine
    server = Neo4jServer.start(conf=("db.transaction.timeout=20s",))
    bolt = BoltServer(server.uri, server.user, server.password, server.database)
    first, second = (Neo4jStore(_driver(bolt), bolt.database, owns_driver=True)
                     for _ in range(2))
    try:
        with first.writer():
            # until the server's timeout ends the first's lock (a second writer waiting on
            # it meanwhile would time out with it)
            deadline = time.monotonic() + 120
            while not _lock_ended(first) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert _lock_ended(first), "the server never ended the lock"
            with second.writer():
                second.apply(_paper("other"))
            with pytest.raises(WriteLockLostError):
                first.apply(_paper("late"))
        assert _papers(first) == ["other"]
    finally:
        first.close()
        second.close()
        server.stop()


class _PausedStore(Neo4jStore):
    """The real store, stopped at its first write until the test lets it go (so that the
    test can end its lock and let another writer in between its read and its commit)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.at_write = threading.Event()
        self.go_on = threading.Event()

    def apply(self, change: GraphChange) -> None:
        if not self.at_write.is_set():
            self.at_write.set()
            assert self.go_on.wait(120)
        super().apply(change)


def _run(store: Any, settings: Any, papers: list[Paper], replace: bool = False) -> Any:
    pipeline = Pipeline(settings, cache_dir=EMBED_CACHE)
    try:
        return pipeline.run(store, add_papers=papers, replace=replace)
    finally:
        pipeline.close()


def test_two_adds_whose_first_lost_its_lock_give_the_graph_of_a_fresh_build(
    bolt_server: BoltServer, tmp_path: Path,
) -> None:
    papers = read_corpus([SEEDS]).papers
    base, x, y = papers[:40], papers[40:42], papers[42:44]
    settings = seed_settings(tmp_path / "d")
    paused = _PausedStore(_driver(bolt_server), bolt_server.database, owns_driver=True)
    plain = Neo4jStore(_driver(bolt_server), bolt_server.database, owns_driver=True)
    reference = EmbeddedStore(tmp_path / "ref.db")
    try:
        plain.clear()
        _run(plain, settings, base, replace=True)
        reports: list[Any] = []
        errors: list[BaseException] = []

        def add_x() -> None:
            try:
                reports.append(_run(paused, settings, x))
            except BaseException as exc:  # shown by the assertion below
                errors.append(exc)

        t = threading.Thread(target=add_x, daemon=True)
        t.start()
        while t.is_alive() and not paused.at_write.wait(0.5):
            pass
        assert not errors, errors
        assert paused.at_write.is_set(), "the first add ended without a write"
        _terminate_lock(paused)
        _run(plain, settings, y)  # goes in at once: the server freed the lock
        paused.go_on.set()
        t.join(300)
        assert not errors, errors
        assert sorted(reports[0].added) == sorted(p.id for p in x)
        _run(reference, settings, base + x + y, replace=True)
        assert graphs_equal(reference.snapshot(), plain.snapshot()) == []
    finally:
        paused.go_on.set()
        plain.clear()
        for s in (paused, plain, reference):
            s.close()
