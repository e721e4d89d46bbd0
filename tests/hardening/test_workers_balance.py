"""``citegraph serve --workers 2``: connections spread over both workers; a busy port fails.

With one socket shared by the workers, whichever worker woke first accepted every
connection queued: bench/load.py's 32 keep-alive clients were split 32/0, 26/6 and
2/30, and one process served the load while the other idled. Each worker now listens on
its own ``SO_REUSEPORT`` socket and the kernel hashes connections across them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from bench.load import HOST, connections_by_worker, start_server
from citegraph.workers import ListenError, balanced, worker_sockets

pytestmark = pytest.mark.skipif(not balanced(), reason="SO_REUSEPORT balancing is Linux's")

QUERY = {"query": "{ stats { totalNodes } }"}


def test_worker_sockets_share_one_port_and_listen() -> None:
    sockets = worker_sockets(HOST, 0, 3)
    try:
        assert len(sockets) == 3
        ports = {s.getsockname()[1] for s in sockets}
        assert len(ports) == 1 and ports != {0}
        for s in sockets:
            assert s.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT) == 1
            assert s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) == 1
        # a second group on the same port is refused: it would take half the connections
        with pytest.raises(ListenError, match=r"cannot listen on 127\.0\.0\.1:\d+"):
            worker_sockets(HOST, ports.pop(), 2)
    finally:
        for s in sockets:
            s.close()


def test_a_port_in_use_is_refused_not_shared() -> None:
    with socket.socket() as other:  # someone else's server, no SO_REUSEPORT
        other.bind((HOST, 0))
        other.listen()
        port = other.getsockname()[1]
        for workers in (1, 2):
            with pytest.raises(ListenError, match="cannot listen on"):
                worker_sockets(HOST, port, workers)


def test_one_worker_keeps_one_plain_socket() -> None:
    (sock,) = worker_sockets(HOST, 0, 1)
    with sock:
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT) == 0


@pytest.mark.slow
def test_connections_are_spread_over_both_workers(hard_seed_dir: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(hard_seed_dir, data)
    server = start_server(data, {"CITEGRAPH_WORKERS": "2"})
    try:
        clients = [httpx.Client(base_url=server.url, timeout=30) for _ in range(16)]
        try:
            # all at once, as a pool of keep-alive clients connects
            for c in clients:
                r = c.post("/graphql", json=QUERY)
                assert r.status_code == 200 and not r.json().get("errors"), r.text[:300]
            split = connections_by_worker(server.pid, server.port)
            held = [n for n in split.values() if n]
            # the hash puts all 16 on one socket with probability 2 * 2**-16
            assert sum(held) == 16 and len(held) == 2, split
            for c in clients:  # every connection stays answered where it landed
                assert c.post("/graphql", json=QUERY).status_code == 200
        finally:
            for c in clients:
                c.close()
    finally:
        server.stop()


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_serve_on_a_busy_port_says_so(hard_seed_dir: Path, tmp_path: Path, workers: int) -> None:
    """Before the app is built: one worker used to build it (~12 s), print "Serving on",
    then fail in uvicorn's bind with exit code 3, the code of rejected records."""
    data = tmp_path / "data"
    shutil.copytree(hard_seed_dir, data)
    with socket.socket() as other:
        other.bind((HOST, 0))
        other.listen()
        port = other.getsockname()[1]
        out = subprocess.run(
            [sys.executable, "-m", "citegraph", "--data-dir", str(data), "serve",
             "--host", HOST, "--port", str(port), "--workers", str(workers)],
            capture_output=True, text=True, timeout=120,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )
    assert out.returncode == 1, (out.returncode, out.stderr[-2000:])
    assert f"cannot listen on {HOST}:{port}" in out.stderr, out.stderr[-2000:]
    assert "Traceback" not in out.stderr, out.stderr[-2000:]
    assert "Serving on" not in out.stdout, out.stdout[-2000:]


@pytest.mark.slow
def test_a_killed_supervisor_takes_its_workers_with_it(
    hard_seed_dir: Path, tmp_path: Path
) -> None:
    """SIGKILL of ``serve --workers 2``'s supervisor: its workers stop and free the port
    (they went on serving, and the next ``serve`` failed with "address in use")."""
    data = tmp_path / "data"
    shutil.copytree(hard_seed_dir, data)
    server = start_server(data, {"CITEGRAPH_WORKERS": "2"})
    workers: list[int] = []
    try:
        workers = sorted(connections_by_worker(server.pid, server.port))
        assert len(workers) == 2, workers
        os.kill(server.pid, signal.SIGKILL)
        server.process.wait(timeout=30)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.2)
        assert not any(_alive(w) for w in workers), workers
        with socket.socket() as again:  # the port is free for the next server
            again.bind((HOST, server.port))
    finally:
        for w in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(w, signal.SIGKILL)
        server.stop()


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie counts as gone: it serves nothing)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


@pytest.mark.slow
def test_a_worker_killed_loses_no_new_connection(hard_seed_dir: Path, tmp_path: Path) -> None:
    """Connections hashed to a dead worker's socket wait for its replacement, not reset."""
    data = tmp_path / "data"
    shutil.copytree(hard_seed_dir, data)
    server = start_server(data, {"CITEGRAPH_WORKERS": "2"})
    try:
        first = sorted(connections_by_worker(server.pid, server.port))
        os.kill(first[0], signal.SIGKILL)
        for _ in range(12):  # ~half of them hash to the dead worker's socket
            with httpx.Client(base_url=server.url, timeout=90) as c:
                r = c.post("/graphql", json=QUERY)
                assert r.status_code == 200 and not r.json().get("errors"), r.text[:300]
        now = sorted(connections_by_worker(server.pid, server.port))
        assert len(now) == 2 and first[0] not in now, (first, now)
        assert server.process.poll() is None
    finally:
        server.stop()
