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


def test_citegraph_serve(seed_dir: Path) -> None:
    port = _free_port()
    env = {**os.environ, "CITEGRAPH_DATA_DIR": str(seed_dir), "CITEGRAPH_SEEDS_DIR": "seeds"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "citegraph", "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
            try:
                if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "server did not become ready in 60 s"
            time.sleep(0.2)
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
