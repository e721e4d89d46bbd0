"""Shared fixtures: a real Bolt server for the session and a store factory.

``bolt_server``: with ``NEO4J_URI`` set (and ``NEO4J_USER`` / ``NEO4J_PASSWORD`` /
``NEO4J_DATABASE``) the Bolt tests run against that server, e.g. a real Neo4j 5;
otherwise an ArcadeDB server is started from the ``arcadedb-embedded`` package for
the session. If it cannot start, the tests that need it fail with the reason; they
are never skipped.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import neo4j
import pytest

from graph.store.base import GraphStore


@dataclass(frozen=True)
class BoltServer:
    uri: str
    user: str
    password: str
    database: str
    #: ArcadeDB's HTTP API (schema DDL it lacks in Cypher); None for Neo4j
    http_url: str | None = None

    @property
    def auth(self) -> tuple[str, str]:
        return (self.user, self.password)


@pytest.fixture(scope="session")
def bolt_server() -> Iterator[BoltServer]:
    """NEO4J_URI if set, else a throwaway ArcadeDB on free loopback ports."""
    uri = os.environ.get("NEO4J_URI")
    if uri:
        yield BoltServer(
            uri,
            os.environ.get("NEO4J_USER", "neo4j"),
            os.environ.get("NEO4J_PASSWORD", "neo4j"),
            os.environ.get("NEO4J_DATABASE", "neo4j"),
            os.environ.get("CITEGRAPH_ARCADEDB_HTTP"),
        )
        return
    from tests.support.arcadedb import ArcadeDBServer, ArcadeDBStartError

    try:
        server = ArcadeDBServer.start()
    except ArcadeDBStartError as exc:
        pytest.fail(f"could not start the ArcadeDB test server: {exc}", pytrace=False)
    try:
        yield BoltServer(
            server.bolt_uri, server.user, server.password, server.database, server.http_url
        )
    finally:
        server.stop()


@pytest.fixture(scope="session")
def bolt_driver(bolt_server: BoltServer) -> Iterator[neo4j.Driver]:
    driver = neo4j.GraphDatabase.driver(bolt_server.uri, auth=bolt_server.auth)
    try:
        driver.verify_connectivity()
    except Exception as exc:  # any failure to connect is a test failure
        driver.close()
        pytest.fail(f"Bolt server at {bolt_server.uri} not reachable: {exc}", pytrace=False)
    yield driver
    driver.close()


StoreFactory = Callable[[str], GraphStore]


@pytest.fixture
def make_store(request: pytest.FixtureRequest) -> Iterator[StoreFactory]:
    """``make_store("embedded" | "memory" | "neo4j")``: an empty store of that kind.

    The Bolt server is only started when a test asks for a "neo4j" store.
    """
    made: list[GraphStore] = []

    def make(kind: str) -> GraphStore:
        store: GraphStore
        if kind == "embedded":
            from graph.store.embedded import EmbeddedStore

            folder = request.getfixturevalue("tmp_path_factory").mktemp("embedded")
            store = EmbeddedStore(folder / "graph.db")
        elif kind == "memory":
            from graph.store.memory import NetworkxStore

            store = NetworkxStore()
        elif kind == "neo4j":
            from graph.store.dialect import detect_dialect
            from graph.store.neo4j import Neo4jStore

            server: BoltServer = request.getfixturevalue("bolt_server")
            driver: neo4j.Driver = request.getfixturevalue("bolt_driver")
            dialect = detect_dialect(
                driver, user=server.user, password=server.password, arcadedb_http=server.http_url
            )
            store = Neo4jStore(driver, server.database, dialect=dialect, batch_size=50)
            store.clear()
        else:
            raise ValueError(f"unknown store kind {kind!r}")
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()
