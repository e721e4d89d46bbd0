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
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bench.load import Server, start_server
from graph.model import GraphChange, Paper
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


def _cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "citegraph", "--data-dir", str(data), *args],
        env={**os.environ, "HF_HUB_OFFLINE": "1"}, capture_output=True, text=True,
        timeout=120, check=False,
    )


def _integrity(db: Path) -> str:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        return str(con.execute("PRAGMA integrity_check").fetchone()[0])


def test_a_graph_db_moved_in_under_a_server_is_not_read_through_the_old_wal(
    server: Server, hard_seed_dir: Path, tmp_path: Path
) -> None:
    """Probe 9 F1: ``graph.db`` replaced (a backup moved in) while the server had the old
    one open left the old file's WAL beside it; the next process read the old graph
    through it and, at its checkpoint, wrote the old pages into the new file, which then
    failed ``PRAGMA integrity_check`` (7 of 7). Now the next process refuses the WAL,
    says what to do, and the moved-in file is never touched."""
    data = server.data_dir
    with httpx.Client(base_url=server.url, timeout=120) as http:
        assert _add(http, "before-swap") == {"data": {"addPapers": {"added": ["before-swap"]}}}
    assert (data / "graph.db-wal").stat().st_size > 0  # the server's commit is in its WAL
    # a backup of the same graph with a change of its own, moved in (a new inode)
    backup = tmp_path / "backup"
    shutil.copytree(hard_seed_dir, backup)
    other = EmbeddedStore(backup / "graph.db")
    other.apply(GraphChange(upsert_nodes=(Paper("in-backup", "Backup", "A paper only the "
                                                "backup holds.", "h-in-backup"),)))
    other.close()
    assert not (backup / "graph.db-wal").exists()
    moved_in = (backup / "graph.db").read_bytes()
    (backup / "graph.db").replace(data / "graph.db")

    proc = _cli(data, "stats", "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "belongs to another graph database" in proc.stderr, proc.stderr
    assert "graph.db-wal" in proc.stderr and "Traceback" not in proc.stderr
    assert (data / "graph.db").read_bytes() == moved_in

    server.stop()  # the server's connection was on the moved-away file
    if (data / "graph.db-wal").exists() and (data / "graph.db-wal").stat().st_size > 0:
        proc = _cli(data, "stats", "--json")  # still refused after the server is gone
        assert proc.returncode == 1 and "belongs to another" in proc.stderr, proc.stderr
        assert (data / "graph.db").read_bytes() == moved_in
    # as the message says: the old file's WAL and shared-memory index moved out
    for name in ("graph.db-wal", "graph.db-shm"):
        if (data / name).exists():
            (data / name).replace(tmp_path / name)
    proc = _cli(data, "stats", "--json")
    assert proc.returncode == 0, proc.stderr
    assert _integrity(data / "graph.db") == "ok"
    store = EmbeddedStore(data / "graph.db", reads="sql")
    try:
        assert set(store.get_nodes(["in-backup", "before-swap"])) == {"in-backup"}
    finally:
        store.close()


def test_a_whole_data_folder_copied_with_its_wal_opens_with_it(
    server: Server, tmp_path: Path
) -> None:
    """The record must not refuse a WAL that is the copied file's own: a folder copied
    whole (``cp -a``) while the server is idle holds its last commit only in the WAL."""
    data = server.data_dir
    with httpx.Client(base_url=server.url, timeout=120) as http:
        assert _add(http, "in-wal")["data"] == {"addPapers": {"added": ["in-wal"]}}
    assert (data / "graph.db-wal").stat().st_size > 0
    copy = tmp_path / "copy"
    shutil.copytree(data, copy)  # the WAL and the record too: new inodes for all
    proc = _cli(copy, "related", "in-wal", "--json")
    assert proc.returncode == 0, proc.stderr
    assert _integrity(copy / "graph.db") == "ok"
