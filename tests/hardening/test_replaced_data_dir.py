"""A data folder deleted and copied back under a running server (probe3 F8).

An operator's ``rm -rf data && cp -r backup data`` left ``citegraph serve`` on the
unlinked ``graph.db``: /readyz said ready, and every ``addPapers`` was acknowledged
into a file no one would ever open again. Here, against a real server process on
127.0.0.1: a write lands before the swap (no false alarm after the server's own
commits), then /readyz is 503 naming the reason, a write is refused with
``STORE_REPLACED``, and nothing of it reaches either file.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bench.load import Server, start_server
from graph.store.embedded import EmbeddedStore
from tests.hardening.conftest import LEAKS

pytestmark = pytest.mark.slow

KEY = "replaced-dir-key-81c2"
ADD = """mutation($in: [PaperInput!]!) { addPapers(input: $in) { added } }"""


def _paper(pid: str) -> dict[str, str]:
    return {"id": pid, "abstract": "Sparse mixture of experts layers scale language models "
                                   f"to many parameters at a fixed compute budget ({pid})."}


@pytest.fixture
def server(hard_seed_dir: Path, tmp_path: Path) -> Iterator[Server]:
    data = tmp_path / "data"
    shutil.copytree(hard_seed_dir, data)
    srv = start_server(data, {"CITEGRAPH_API_KEY": KEY, "CITEGRAPH_REQUEST_TIMEOUT_S": "60"})
    try:
        yield srv
    finally:
        srv.stop()


def _add(http: httpx.Client, pid: str) -> dict[str, object]:
    r = http.post("/graphql", json={"query": ADD, "variables": {"in": [_paper(pid)]}},
                  headers={"X-API-Key": KEY})
    assert r.status_code == 200, r.text
    body: dict[str, object] = r.json()
    return body


def _papers_in(data: Path) -> set[str]:
    store = EmbeddedStore(data / "graph.db", reads="sql")
    try:
        return set(store.get_nodes(["before-swap", "after-swap"]))
    finally:
        store.close()


def test_a_swapped_data_folder_is_not_ready_and_refuses_writes(
    server: Server, hard_seed_dir: Path
) -> None:
    data = server.data_dir
    with httpx.Client(base_url=server.url, timeout=120) as http:
        assert http.get("/readyz").status_code == 200
        assert _add(http, "before-swap") == {"data": {"addPapers": {"added": ["before-swap"]}}}
        assert http.get("/readyz").status_code == 200  # its own commits are no alarm

        shutil.rmtree(data)
        shutil.copytree(hard_seed_dir, data)

        r = http.get("/readyz")
        assert r.status_code == 503, r.text
        detail = r.json()["store"]
        assert "replaced" in detail and "restart" in detail and str(data) in detail
        body = _add(http, "after-swap")
        (err,) = body["errors"]  # type: ignore[misc]
        assert err["extensions"]["code"] == "STORE_REPLACED", err
        assert "would be lost" in err["message"]
        assert not any(leak in json.dumps(body) for leak in LEAKS)
        log = server.log_tail(20000)
        assert log.count("was replaced by another file") == 1, log  # said once, no traceback
        assert "Traceback" not in log, log
        # neither the file now there nor (through the server) the old one took it
        assert _papers_in(data) == set()
        r = http.post("/graphql", json={"query": '{ paper(id: "after-swap") { key } }'})
        assert r.json()["data"]["paper"] is None
        # reads still answer, from the graph the server opened
        r = http.post("/graphql", json={"query": '{ paper(id: "before-swap") { key } }'})
        assert r.json()["data"]["paper"] == {"key": "before-swap"}

        shutil.rmtree(data)
        r = http.get("/readyz")
        assert r.status_code == 503 and "was deleted" in r.json()["store"], r.text
