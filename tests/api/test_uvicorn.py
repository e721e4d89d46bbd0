"""One real server: `citegraph serve` on a loopback port, queried over TCP."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.api.conftest import GQL

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_citegraph_serve(seed_dir: Path, tmp_path: Path) -> None:
    """Ready means warm: when /readyz first says so, the graph was read and the model
    loaded (the first query after "ready" used to wait on the graph's first read beside
    the model's import: a 504 after 10 s on ICLR 2021)."""
    port = _free_port()
    env = {**os.environ, "CITEGRAPH_DATA_DIR": str(seed_dir), "CITEGRAPH_SEEDS_DIR": "seeds"}
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "citegraph", "-v", "serve", "--host", "127.0.0.1",
             "--port", str(port)],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        seen = []
        while True:
            assert proc.poll() is None, log.read_text()[-3000:]
            try:
                r = httpx.get(f"{base}/readyz", timeout=5)
            except httpx.TransportError:
                pass
            else:
                if r.status_code == 200:
                    at_ready = log.read_text()
                    break
                seen.append(r.json())
            assert time.monotonic() < deadline, "server did not become ready in 180 s"
            time.sleep(0.1)
        assert all(b["status"] == "starting" and b["warming"] for b in seen), seen
        assert "loaded " in at_ready and "graph.db" in at_ready, at_ready[-2000:]
        assert "ready for queries" in at_ready, at_ready[-2000:]
        assert at_ready.index("graph.db") < at_ready.index("ready for queries")
        with httpx.Client(base_url=base, timeout=30) as c:
            assert c.get("/healthz").json() == {"status": "ok"}
            data = GQL(c).data('{ concept(name: "LLM") { key } stats { totalNodes } }')
            assert data["concept"]["key"] == "concept:large-language-model"
            assert data["stats"]["totalNodes"] > 0
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
