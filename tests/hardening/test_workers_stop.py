"""``citegraph serve --workers 2`` stopping: new connections refused, the one in flight answered.

probe3 F8: with two workers, SIGINT/SIGTERM gave clients ``ReadError`` (10 of 10 in a
burst) where one worker gave none. The requests lost were not the ones in flight (those
drain) but the ones that connected after the stop began: uvicorn's supervisor kept its
copy of the listening socket open until every worker had exited, so the kernel accepted
them for no one and reset them at the end. A client cannot tell such a reset from a
request dropped mid-way (was the write done?); a refused connection is plainly unsent.

A request is held in flight by sending its body in two halves, so the
workers are still draining while new connections are tried.
"""

from __future__ import annotations

import json
import shutil
import signal
import socket
import time
from pathlib import Path

import httpx
import pytest

from bench.load import HOST, connections_by_worker, start_server

pytestmark = pytest.mark.slow

QUERY = json.dumps({"query": "{ stats { totalNodes } }"}).encode()


def _read_response(sock: socket.socket, timeout_s: float) -> bytes:
    sock.settimeout(timeout_s)
    chunks = []
    while True:
        try:
            data = sock.recv(65536)
        except TimeoutError:
            break
        if not data:
            break
        chunks.append(data)
        head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), None)
        if length is not None and len(body) >= length:
            break
    return b"".join(chunks)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
def test_a_stopping_two_worker_server_refuses_new_connections_and_answers_in_flight(
    hard_seed_dir: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    data = tmp_path / "data"
    shutil.copytree(hard_seed_dir, data)
    server = start_server(data, {"CITEGRAPH_WORKERS": "2", "CITEGRAPH_REQUEST_TIMEOUT_S": "60"})
    try:
        held = socket.create_connection((HOST, server.port), timeout=10)
        held.sendall(
            b"POST /graphql HTTP/1.1\r\nHost: citegraph\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(QUERY)}\r\n\r\n".encode() + QUERY[:10]
        )
        # wait until a worker has accepted the held connection: the request is in flight
        deadline = time.monotonic() + 60
        while not sum(connections_by_worker(server.pid, server.port).values()):
            assert server.process.poll() is None, server.log_tail()
            assert time.monotonic() < deadline, "no worker accepted the held connection"
            time.sleep(0.05)
        server.process.send_signal(sig)
        t0 = time.monotonic()
        seen: list[str] = []
        refused_after = None
        with httpx.Client(base_url=server.url, timeout=2) as probe:
            while time.monotonic() - t0 < 8:
                try:
                    probe.get("/healthz", headers={"Connection": "close"})
                    seen.append("answered")  # a worker had not begun to stop yet
                except httpx.ConnectError:
                    refused_after = time.monotonic() - t0
                    break
                except httpx.TransportError as exc:  # accepted, then never answered
                    seen.append(type(exc).__name__)
                time.sleep(0.1)
        assert refused_after is not None, f"new connections were not refused: {seen}"
        # One reset is allowed, only as the last try before refusals begin: a connection
        # the kernel completed, or a worker accepted, in the instant its worker closes
        # the listener is reset (TCP has no way to refuse what is already queued; one
        # worker has the same window, docs/reliability.md). Before the fix every try
        # after the stop was reset until the held request ended, never refused.
        assert all(s == "answered" for s in seen[:-1]), seen
        assert seen[-1:] in ([], ["answered"], ["ReadError"], ["RemoteProtocolError"]), seen
        assert server.process.poll() is None, "the server must still be draining"
        held.sendall(QUERY[10:])
        answer = _read_response(held, 30)
        held.close()
        status, _, rest = answer.partition(b"\r\n")
        assert status == b"HTTP/1.1 200 OK", answer[:300]
        assert b'"totalNodes"' in rest
        rc = server.process.wait(60)
        assert rc in (0, -signal.SIGTERM), (rc, server.log_tail())
        log = server.log_tail(20000)
        assert "Traceback" not in log, log
        # tqdm's process lock, made by every encode, was never freed by a worker
        assert "leaked semaphore" not in log, log
    finally:
        server.stop()
