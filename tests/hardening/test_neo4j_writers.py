"""Two processes writing one Neo4j database take turns (probe 8, finding F1).

Each write computes its change from the graph it read (SIMILAR_TO lists, SHARES_TERM
weights, which concepts reach two papers) and then applies it. Two `citegraph --store
neo4j add` at once, or a CLI add beside `citegraph serve`'s `addPapers`, each read the
graph before the other's commit: both said "Added 10 papers" and the graph was neither
run's nor a fresh build's (SIMILAR_TO lists of 14, concepts and MENTIONS missing; the
same id added with two texts kept one text and the MENTIONS and SIMILAR_TO of both).
``Neo4jStore.writer()`` serialised only the writers of one process.

Two stores on two drivers stand for two processes here; a real process killed while it
holds the lock must not keep it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import neo4j
import pytest

from graph.errors import WriteLockTimeoutError
from graph.store.neo4j import Neo4jStore
from tests.conftest import BoltServer

pytestmark = [pytest.mark.slow, pytest.mark.bolt]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def two_stores(bolt_server: BoltServer) -> Iterator[tuple[Neo4jStore, Neo4jStore]]:
    drivers = [
        neo4j.GraphDatabase.driver(
            bolt_server.uri, auth=bolt_server.auth,
            notifications_min_severity=neo4j.NotificationMinimumSeverity.OFF,
        )
        for _ in range(2)
    ]
    stores = [Neo4jStore(d, bolt_server.database, owns_driver=True) for d in drivers]
    try:
        yield stores[0], stores[1]
    finally:
        for s in stores:
            s.close()


def test_a_writer_of_another_process_waits_for_the_first(
    two_stores: tuple[Neo4jStore, Neo4jStore],
) -> None:
    first, second = two_stores
    events: list[str] = []
    said: list[str] = []
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with first.writer():
            holding.set()
            release.wait(30)
            events.append("first done")

    def write() -> None:
        with second.writer(on_wait=said.append):
            events.append("second in")

    t1 = threading.Thread(target=hold, daemon=True)
    t1.start()
    assert holding.wait(30)
    t2 = threading.Thread(target=write, daemon=True)
    t2.start()
    try:
        # wait for the event (the second writer says it waits), not for a time
        deadline = time.monotonic() + 60
        while not said and not events and time.monotonic() < deadline:
            time.sleep(0.05)
        assert events == [], "the second writer went in while the first held the lock"
        assert said and "waiting for another writer" in said[0]
        assert f"(pid {os.getpid()})" in said[0]  # both stores are this process here
    finally:
        release.set()
        t1.join(30)
        t2.join(30)
    assert events == ["first done", "second in"]
    # the lock leaves nothing behind in the graph
    rows = first._read("MATCH (m:CitegraphMeta) "
                       "WHERE NOT m.id IN ['meta', 'writer-fence', 'version'] "
                       "RETURN count(m) AS c")
    assert rows[0]["c"] == 0


def test_a_writer_waits_at_most_the_lock_timeout(
    two_stores: tuple[Neo4jStore, Neo4jStore],
) -> None:
    first, second = two_stores
    second.lock_timeout_s = 2.0
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with first.writer():
            holding.set()
            release.wait(30)

    t = threading.Thread(target=hold, daemon=True)
    t.start()
    assert holding.wait(30)
    try:
        t0 = time.monotonic()
        with pytest.raises(WriteLockTimeoutError, match="nothing was written"), second.writer():
            pytest.fail("went in while another writer held the lock")
        assert time.monotonic() - t0 < 15
    finally:
        release.set()
        t.join(30)
    with second.writer():  # free again: the timed-out wait left nothing behind
        pass


def test_nested_writer_in_one_process_does_not_deadlock(
    two_stores: tuple[Neo4jStore, Neo4jStore],
) -> None:
    first, _ = two_stores
    done = threading.Event()

    def nested() -> None:
        with first.writer(), first.writer():
            done.set()

    t = threading.Thread(target=nested, daemon=True)
    t.start()
    t.join(20)
    assert done.is_set()


def test_a_writer_killed_while_it_holds_the_lock_releases_it(
    bolt_server: BoltServer, two_stores: tuple[Neo4jStore, Neo4jStore],
) -> None:
    _, second = two_stores
    code = (
        "import sys, time, neo4j\n"
        "from graph.store.neo4j import Neo4jStore\n"
        "d = neo4j.GraphDatabase.driver(sys.argv[1], auth=(sys.argv[2], sys.argv[3]))\n"
        "s = Neo4jStore(d, sys.argv[4])\n"
        "with s.writer():\n"
        "    print('held', flush=True)\n"
        "    time.sleep(120)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-c", code, bolt_server.uri, bolt_server.user, bolt_server.password,
         bolt_server.database],
        stdout=subprocess.PIPE, text=True, env=env,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "held"
        entered = threading.Event()

        def write() -> None:
            with second.writer():
                entered.set()

        t = threading.Thread(target=write, daemon=True)
        t.start()
        assert not entered.wait(1.5), "went in while another process held the lock"
        os.kill(proc.pid, signal.SIGKILL)
        assert entered.wait(30), "the lock of a killed process was not released"
        t.join(10)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
