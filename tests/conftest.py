"""Shared fixtures: a real Bolt server for the session and a store factory.

``bolt_server``: with ``NEO4J_URI`` set (and ``NEO4J_USER`` / ``NEO4J_PASSWORD`` /
``NEO4J_DATABASE``) the Bolt tests run against that server; otherwise a real Neo4j 5.26
is started for the session with ``scripts/neo4j.sh`` (tests/support/neo4j.py) and stopped
by its pid at the end, pass or fail. If it cannot start, the tests that need it fail with
the reason; they are never skipped. The server's version and Bolt agent are printed in
the summary at the end of the run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import neo4j
import pytest

from graph.store.base import GraphStore

#: what the session's Bolt server said about itself (printed in the terminal summary)
BOLT_SEEN: dict[str, str] = {}


@dataclass(frozen=True)
class BoltServer:
    uri: str
    user: str
    password: str
    database: str

    @property
    def auth(self) -> tuple[str, str]:
        return (self.user, self.password)


@pytest.fixture(scope="session")
def bolt_server() -> Iterator[BoltServer]:
    """NEO4J_URI if set, else a real local Neo4j on a free loopback port."""
    uri = os.environ.get("NEO4J_URI")
    if uri:
        yield BoltServer(
            uri,
            os.environ.get("NEO4J_USER", "neo4j"),
            os.environ.get("NEO4J_PASSWORD", "neo4j"),
            os.environ.get("NEO4J_DATABASE", "neo4j"),
        )
        return
    from tests.support.neo4j import Neo4jServer, Neo4jStartError

    try:
        server = Neo4jServer.start()
    except Neo4jStartError as exc:
        pytest.fail(f"could not start the Neo4j test server: {exc}", pytrace=False)
    try:
        yield BoltServer(server.uri, server.user, server.password, server.database)
    finally:
        server.stop()


@pytest.fixture(scope="session")
def bolt_driver(bolt_server: BoltServer) -> Iterator[neo4j.Driver]:
    driver = neo4j.GraphDatabase.driver(
        bolt_server.uri,
        auth=bolt_server.auth,
        notifications_min_severity=neo4j.NotificationMinimumSeverity.OFF,
    )
    try:
        driver.verify_connectivity()
    except Exception as exc:  # any failure to connect is a test failure
        driver.close()
        pytest.fail(f"Bolt server at {bolt_server.uri} not reachable: {exc}", pytrace=False)
    BOLT_SEEN["agent"] = str(driver.get_server_info().agent)
    records, _, _ = driver.execute_query(
        "CALL dbms.components() YIELD name, versions, edition "
        "RETURN name, versions[0] AS version, edition"
    )
    BOLT_SEEN["server"] = ", ".join(
        f"{r['name']} {r['version']} {r['edition']}" for r in records
    )
    yield driver
    driver.close()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if BOLT_SEEN:
        terminalreporter.write_line(
            f"Bolt server: {BOLT_SEEN.get('server')}; agent {BOLT_SEEN.get('agent')!r}"
        )


@pytest.fixture(scope="session", autouse=True)
def _one_torch_thread() -> None:
    """This process's torch runs one thread, as a server's does (``compute_threads``).

    On a busy 2-core machine two threads spin against each other: one query encode took
    ~250 ms instead of ~15, and tests/e2e/test_search_fusion.py ~22 minutes instead of ~2.
    The first app warm-up of a session (tests/api) set this anyway, process-wide, so the
    suite ran at one thread or two depending on which tests ran first. Subprocesses (the
    CLI, servers) keep their own defaults."""
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def seed_graph_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seed graph, built once per run (real model, real pipeline) and closed; the
    fixtures that need one copy it (``tests.support.seeds.copy_seed_graph``) instead of
    each building their own. Never opened, never changed.

    With pytest-xdist the workers share it: the first to get here builds it in the run's
    common temporary folder under an exclusive lock, the others wait for it, rather than
    each spending the same ~40 s of CPU at once at the start of the run."""
    import fcntl

    from tests.support.seeds import build_seed_graph

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # <run>/popen-gwN -> <run>, shared by the workers
    where = base / "seed-graph-template"
    with (base / "seed-graph-template.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (base / "seed-graph-template.built").exists():
            where.mkdir(exist_ok=True)
            store, report = build_seed_graph(where)
            store.close()
            assert not report.problems, report.problems
            (base / "seed-graph-template.built").touch()
    return where


StoreFactory = Callable[[str], GraphStore]


@pytest.fixture
def make_store(request: pytest.FixtureRequest) -> Iterator[StoreFactory]:
    """``make_store("embedded" | "sql" | "memory" | "neo4j")``: an empty store of that kind.

    The Bolt server is only started when a test asks for a "neo4j" store.
    """
    made: list[GraphStore] = []

    def make(kind: str) -> GraphStore:
        store: GraphStore
        if kind == "embedded":
            from graph.store.embedded import EmbeddedStore

            folder = request.getfixturevalue("tmp_path_factory").mktemp("embedded")
            store = EmbeddedStore(folder / "graph.db")
        elif kind == "sql":  # the embedded store read through SQL, as one-shot CLI commands do
            from graph.store.embedded import EmbeddedStore

            folder = request.getfixturevalue("tmp_path_factory").mktemp("sql")
            store = EmbeddedStore(folder / "graph.db", reads="sql")
        elif kind == "memory":
            from graph.store.memory import NetworkxStore

            store = NetworkxStore()
        elif kind == "neo4j":
            from graph.store.neo4j import Neo4jStore

            server: BoltServer = request.getfixturevalue("bolt_server")
            driver: neo4j.Driver = request.getfixturevalue("bolt_driver")
            store = Neo4jStore(driver, server.database, batch_size=50)
            store.clear()
        else:
            raise ValueError(f"unknown store kind {kind!r}")
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


#: folders in the order their tests start: the ones that start servers, CLI processes and
#: Neo4j first, the many quick unit tests last, so that with several workers
#: (scripts/test.sh: ``-n 3 --dist loadfile --no-loadscope-reorder``) a long module does
#: not start near the end while the other workers sit idle
FOLDER_ORDER = ("hardening", "e2e", "api", "contract", "unit")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order the tests by :data:`FOLDER_ORDER`, keeping each folder's own order."""
    tests = Path(__file__).resolve().parent
    rank = {name: i for i, name in enumerate(FOLDER_ORDER)}

    def folder(item: pytest.Item) -> int:
        try:
            top = item.path.resolve().relative_to(tests).parts[0]
        except (ValueError, IndexError):
            return len(rank)
        return rank.get(top, len(rank))

    items.sort(key=folder)
