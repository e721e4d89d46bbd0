"""Faults on the Bolt side: the graph server killed under the API, and during writes.

A dedicated real Neo4j 5.26 (scripts/neo4j.sh through tests/support/neo4j.py, not the
shared session server) is started in a folder of this test, loaded with the seed graph,
and SIGKILLed by its pid:

* under the API: /readyz answers 503, /healthz 200, queries fail with a clear
  STORE_UNAVAILABLE error (no internals); restarted on the same ports and folder,
  the API recovers by itself, within a bounded wait, with the same data;
* during writes: a change that fails part-way leaves nothing of it (one transaction),
  a batched change leaves whole batches only, and a server killed mid-apply leaves
  whole batches only; the same change applied again completes it;
* the vector index after a restart over existing data: Neo4j rebuilds it in the
  background, and vector search gives the exact answers meanwhile and after.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from graph.build import diff
from graph.errors import StoreError, StoreUnavailableError
from graph.model import Concept, Edge, GraphChange, GraphData, RelType
from graph.settings import Settings
from graph.store import open_store
from graph.store.embedded import EmbeddedStore
from graph.store.neo4j import Neo4jStore, open_driver, store_from_settings
from tests.hardening.conftest import assert_no_leak
from tests.support.neo4j import Neo4jServer

pytestmark = [pytest.mark.slow, pytest.mark.bolt]

RECOVER_S = 60.0  # bounded wait for the API to see the server again


class Server:
    """One Neo4j that can be killed and started again on the same port and folder."""

    def __init__(self) -> None:
        self.server = Neo4jServer.start()

    def kill(self) -> None:
        """SIGKILL the JVM by its pid: no shutdown hook, no flush."""
        self.server.kill()

    def restart(self) -> None:
        """Start again with the same port, password and data folder (the data survives)."""
        port = self.server.port
        self.server.restart()
        assert self.server.port == port

    def settings(self, data_dir: Path, **overrides: object) -> Settings:
        s = self.server
        return Settings(  # type: ignore[arg-type]
            store="neo4j",
            neo4j_uri=s.uri,
            neo4j_user=s.user,
            neo4j_password=s.password,
            neo4j_database=s.database,
            data_dir=data_dir,
            model="/nonexistent/model",
            **overrides,
        )

    def stop(self) -> None:
        self.server.stop()


@pytest.fixture(scope="module")
def server(hard_seed_dir: Path) -> Iterator[Server]:
    server = Server()
    try:
        settings = server.settings(hard_seed_dir)
        store = open_store(settings)
        try:
            seed = EmbeddedStore(hard_seed_dir / "graph.db").snapshot()
            store.clear()
            store.apply(diff(GraphData(), seed))
        finally:
            store.close()
        yield server
    finally:
        server.stop()


def _stats(c: TestClient) -> dict[str, object]:
    r = c.post("/graphql", json={"query": "{ stats { totalNodes totalEdges } }"})
    body = r.json()
    assert r.status_code == 200 and "errors" not in body, body
    return dict(body["data"]["stats"])


def _wait_ready(c: TestClient, timeout: float) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if c.get("/readyz").status_code == 200:
            return time.monotonic() - t0
        time.sleep(0.5)
    raise AssertionError(f"API not ready {timeout:.0f}s after the server came back")


def test_injection_in_every_string_argument_neo4j(server: Server, hard_seed_dir: Path) -> None:
    """The abuse suite's injection sweep, against the Neo4j store (Cypher underneath)."""
    from tests.hardening.test_abuse import PAYLOADS, _check_injection

    app = create_app(server.settings(hard_seed_dir, api_key="k"))
    with TestClient(app) as c:
        body = c.post(
            "/graphql",
            json={
                "query": "{ papers(first: 2) { edges { node { key } } }"
                ' concept(name: "LLM") { key } }'
            },
        ).json()
        papers = [e["node"]["key"] for e in body["data"]["papers"]["edges"]]
        ids = {"a": papers[0], "b": papers[1], "concept": body["data"]["concept"]["key"]}
        before = _stats(c)
        sent = _check_injection(c, ids, mutations=False)
        for payload in PAYLOADS:
            r = c.post(
                "/graphql",
                json={
                    "query": "mutation($id: ID!) { removePaper(id: $id) { removed } }",
                    "variables": {"id": payload},
                },
                headers={"X-API-Key": "k"},
            )
            assert r.json()["errors"][0]["extensions"]["code"] == "NOT_FOUND", r.text
        assert _stats(c) == before
        print(f"neo4j injection: {sent} requests, stats unchanged")


#: how long the API took to tell, once the server was gone (read by the test below)
OUTAGE: dict[str, float] = {}


def test_server_killed_under_the_api_then_back(server: Server, hard_seed_dir: Path) -> None:
    # a generous request limit, to see how long the API itself takes to tell
    app = create_app(server.settings(hard_seed_dir, request_timeout_s=60.0))
    with TestClient(app) as c:
        _wait_ready(c, RECOVER_S)  # "starting" while the warm-up reads and loads the model
        before = _stats(c)
        assert before["totalNodes"] > 0

        server.kill()
        t0 = time.monotonic()
        ready = c.get("/readyz")
        OUTAGE["readyz_s"] = time.monotonic() - t0
        assert ready.status_code == 503, ready.text
        assert ready.json()["status"] == "unavailable"
        assert_no_leak(ready.json())
        assert c.get("/healthz").status_code == 200
        t0 = time.monotonic()
        r = c.post("/graphql", json={"query": "{ stats { totalNodes } }"})
        OUTAGE["query_s"] = time.monotonic() - t0
        assert r.status_code == 200
        body = r.json()
        assert body["errors"][0]["extensions"]["code"] == "STORE_UNAVAILABLE", body
        assert "unavailable" in body["errors"][0]["message"]
        assert_no_leak(body)
        assert OUTAGE["readyz_s"] < 40 and OUTAGE["query_s"] < 40, OUTAGE
        print(
            f"server down: /readyz 503 after {OUTAGE['readyz_s']:.1f}s, "
            f"query error after {OUTAGE['query_s']:.1f}s"
        )

        server.restart()
        waited = _wait_ready(c, RECOVER_S)
        OUTAGE["recovered_s"] = waited
        assert _stats(c) == before  # same data after a SIGKILL and a restart
        print(f"server back: API ready again {waited:.1f}s after the restart")


def test_server_down_is_reported_before_the_request_limit() -> None:
    # /readyz pings once without retries; a query first lets the driver retry for
    # CITEGRAPH_NEO4J_MAX_RETRY_S (3 s, to ride out a restart or a leader election), and
    # must still say STORE_UNAVAILABLE well before the 10 s request limit (not 504)
    # the behaviour, not a speed claim: under the default request limit a client gets
    # STORE_UNAVAILABLE, never a 504 TIMEOUT
    assert OUTAGE, "the outage test did not run"
    assert OUTAGE["query_s"] < Settings().request_timeout_s, OUTAGE


# ------------------------------------------------------------------ failed writes


@pytest.fixture
def raw_store(server: Server, hard_seed_dir: Path) -> Iterator[Neo4jStore]:
    """A store over the fault server with small batches (its own driver)."""
    settings = server.settings(hard_seed_dir)
    driver = open_driver(settings)
    store = store_from_settings(settings, driver)
    store.batch_size = 50
    try:
        yield store
    finally:
        driver.close()


def _fresh_concepts(tag: str, n: int) -> list[Concept]:
    return [Concept(id=f"concept:fault-{tag}-{i:05d}", name=f"fault {tag} {i}") for i in range(n)]


def _count(store: Neo4jStore, tag: str) -> int:
    return len(store.get_nodes([c.id for c in _fresh_concepts(tag, 4000)]))


def test_failed_change_in_one_transaction_leaves_nothing(raw_store: Neo4jStore) -> None:
    before = raw_store.stats()
    concepts = _fresh_concepts("one", 120)
    bad = Edge(concepts[0].id, "concept:not-there", RelType.RELATED_TO, 1.0, {"count": 1})
    change = GraphChange(
        upsert_nodes=tuple(concepts),
        upsert_edges=(
            Edge(concepts[0].id, concepts[1].id, RelType.RELATED_TO, 1.0, {"count": 1}),
            bad,
        ),
    )
    with pytest.raises(StoreError, match="unknown endpoint"):
        raw_store.apply(change)
    assert raw_store.stats() == before
    assert _count(raw_store, "one") == 0


def test_failed_batched_change_leaves_whole_batches(raw_store: Neo4jStore) -> None:
    raw_store.max_tx_rows = 100  # above this, one transaction per batch
    concepts = _fresh_concepts("batch", 300)
    bad = Edge(concepts[0].id, "concept:not-there", RelType.RELATED_TO, 1.0, {"count": 1})
    with pytest.raises(StoreError, match="batches committed") as info:
        raw_store.apply(GraphChange(upsert_nodes=tuple(concepts), upsert_edges=(bad,)))
    print(f"batched failure: {info.value}")
    assert _count(raw_store, "batch") == 300  # the node batches before the bad edge
    # the same change without the bad row completes it; applying twice changes nothing
    good = GraphChange(upsert_nodes=tuple(concepts))
    raw_store.apply(good)
    once = raw_store.stats()
    raw_store.apply(good)
    assert raw_store.stats() == once
    raw_store.apply(GraphChange(delete_nodes=tuple(c.id for c in concepts)))
    assert _count(raw_store, "batch") == 0


def test_server_killed_mid_apply_leaves_whole_batches(server: Server, hard_seed_dir: Path) -> None:
    settings = server.settings(hard_seed_dir)
    driver = open_driver(settings)
    store = store_from_settings(settings, driver)
    store.batch_size, store.max_tx_rows = 100, 200
    concepts = _fresh_concepts("kill", 3000)
    change = GraphChange(upsert_nodes=tuple(concepts))
    outcome: list[BaseException | None] = []

    def write() -> None:
        try:
            store.apply(change)
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    writer = threading.Thread(target=write)
    writer.start()
    # kill once some batches are in
    deadline = time.monotonic() + 60
    probe_driver = open_driver(settings)
    probe = store_from_settings(settings, probe_driver)
    try:
        while time.monotonic() < deadline and not outcome:
            if len(probe.get_nodes([c.id for c in concepts[:400]])) >= 200:
                break
            time.sleep(0.05)
    finally:
        probe_driver.close()
    server.kill()
    writer.join(timeout=120)
    driver.close()
    assert outcome, "apply did not return after the server died"
    if outcome[0] is not None:
        assert isinstance(outcome[0], StoreUnavailableError | StoreError), repr(outcome[0])
    server.restart()
    driver = open_driver(server.settings(hard_seed_dir))
    try:
        store = store_from_settings(server.settings(hard_seed_dir), driver)
        store.batch_size, store.max_tx_rows = 100, 200
        written = len(store.get_nodes([c.id for c in concepts]))
        print(f"killed mid-apply: {written} of {len(concepts)} nodes committed ({outcome[0]!r})")
        assert written % store.batch_size == 0, f"a torn batch: {written} nodes"
        store.apply(change)  # again: completes it
        assert len(store.get_nodes([c.id for c in concepts])) == len(concepts)
        store.apply(GraphChange(delete_nodes=tuple(c.id for c in concepts)))
    finally:
        driver.close()


# ------------------------------------------------------------------ vector index


def test_vector_search_right_after_a_restart_matches_embedded(
    server: Server, hard_seed_dir: Path
) -> None:
    """Killed and restarted over existing data, Neo4j rebuilds the vector index in the
    background; a search through the index at once gives the embedded store's answers."""
    embedded = EmbeddedStore(hard_seed_dir / "graph.db")
    try:
        snap = embedded.snapshot()
        queries = [snap.embeddings[i].tolist() for i in range(0, len(snap.embedding_ids), 9)]
        want = [[(h.node.id, h.score) for h in embedded.vector_search(q, limit=5)]
                for q in queries]
    finally:
        embedded.close()
    server.kill()
    server.restart()
    settings = server.settings(hard_seed_dir)
    driver = open_driver(settings)
    try:
        store = store_from_settings(settings, driver)
        store.exact_vector_max = 0  # through db.index.vector.queryNodes
        store.vector_index_wait_s = 60.0
        got = [[(h.node.id, h.score) for h in store.vector_search(q, limit=5)] for q in queries]
        states = driver.execute_query(
            "SHOW INDEXES YIELD name, type, state, populationPercent, options "
            "WHERE type = 'VECTOR' RETURN name, state, populationPercent, options"
        ).records
        # the index answered, not the exact fallback
        assert store._vector_online, [dict(r) for r in states]
        assert [(r["name"], r["state"]) for r in states] == [("paper_embedding", "ONLINE")]
    finally:
        driver.close()
    assert got == want
