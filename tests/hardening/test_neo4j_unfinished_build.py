"""A Neo4j build killed between its batches shows as unfinished in `stats`, GraphQL and
/readyz, and the same command completes it and says so (probe 18, finding 8).

The build commits batch by batch above ``CITEGRAPH_NEO4J_MAX_TX_ROWS`` rows. SIGKILLed
part way, readers saw 2,966 papers and 43 edges while /readyz said "ready", `related`
answered "abstract similarity 0.00", stats warned of nothing, and the rerun that repaired
it printed no line about it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import neo4j
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from graph.store.neo4j import Neo4jStore
from tests.conftest import BoltServer
from tests.support.seeds import EMBED_CACHE, SEEDS, seed_settings

pytestmark = [pytest.mark.slow, pytest.mark.bolt]


def _env(bolt: BoltServer, data: Path) -> dict[str, str]:
    return dict(
        os.environ, CITEGRAPH_STORE="neo4j", NEO4J_URI=bolt.uri, NEO4J_USER=bolt.user,
        NEO4J_PASSWORD=bolt.password, NEO4J_DATABASE=bolt.database,
        CITEGRAPH_DATA_DIR=str(data), HF_HUB_OFFLINE="1",
        # many small batches: the kill lands between two of them
        CITEGRAPH_NEO4J_BATCH_SIZE="5", CITEGRAPH_NEO4J_MAX_TX_ROWS="50",
    )


def test_a_killed_batched_build_is_shown_unfinished_then_completed(
    bolt_server: BoltServer, tmp_path: Path
) -> None:
    data = tmp_path / "d"
    data.mkdir()
    (data / "cache").symlink_to(EMBED_CACHE, target_is_directory=True)
    env = _env(bolt_server, data)
    store = Neo4jStore(neo4j.GraphDatabase.driver(bolt_server.uri, auth=bolt_server.auth),
                       bolt_server.database, owns_driver=True)
    store.clear()
    proc = subprocess.Popen([sys.executable, "-m", "citegraph", "build", str(SEEDS)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 600
        while proc.poll() is None and time.monotonic() < deadline:
            if store.stats().incomplete:  # its first batches are in
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the build ended before it was seen part-written"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
        assert store.stats().incomplete

        out = subprocess.run([sys.executable, "-m", "citegraph", "stats", "--json"], env=env,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["incomplete"] is True
        assert "holds part of a write" in out.stderr

        settings = seed_settings(
            data, store="neo4j", neo4j_uri=bolt_server.uri, neo4j_user=bolt_server.user,
            neo4j_password=bolt_server.password, neo4j_database=bolt_server.database,
        )
        with TestClient(create_app(settings)) as client:
            ready = client.get("/readyz")
            assert ready.status_code == 503
            assert ready.json()["status"] == "incomplete"
            assert "same command" in ready.json()["detail"]
            body = client.post("/graphql", json={"query": "{ stats { incomplete } }"}).json()
            assert body["data"]["stats"]["incomplete"] is True

            again = subprocess.run([sys.executable, "-m", "citegraph", "build", str(SEEDS)],
                                   env=env, capture_output=True, text=True, timeout=900)
            assert again.returncode == 0, again.stderr
            assert "Completed an earlier write that was cut off" in again.stdout
            assert not store.stats().incomplete
            body = client.post("/graphql", json={"query": "{ stats { incomplete } }"}).json()
            assert body["data"]["stats"]["incomplete"] is False
            deadline = time.monotonic() + 300  # the server's warm-up (the model) first
            while client.get("/readyz").status_code != 200 and time.monotonic() < deadline:
                time.sleep(0.2)
            assert client.get("/readyz").json()["status"] == "ready"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
        store.clear()
        store.close()
