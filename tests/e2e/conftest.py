"""A real ``citegraph serve`` on the seed graph, and a real headless Chromium driving it.

Chromium is Debian's (``/usr/bin/chromium``), driven by Playwright's Python package;
``playwright install`` is never run (its downloads are not available in CI). A missing
browser is a failure, not a skip: CI installs it, so its absence is a broken setup.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from bench.load import copy_cache
from graph.store.embedded import EmbeddedStore
from graph.store.memory import NetworkxStore
from tests.support.seeds import EMBED_CACHE, ROOT, SEEDS, copy_seed_graph, seed_settings

CHROMIUM = Path(os.environ.get("CITEGRAPH_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
START_TIMEOUT_S = 60.0
SCREENSHOT = ROOT / "docs" / "explorer.png"


@dataclass
class Server:
    url: str
    store: NetworkxStore
    log: Path
    proc: subprocess.Popen[bytes] = field(repr=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"citegraph serve exited with {proc.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    pytest.fail(f"citegraph serve not healthy after {START_TIMEOUT_S:.0f}s:\n{log.read_text()}")


@contextmanager
def serve(data: Path, store: NetworkxStore) -> Iterator[Server]:
    """``citegraph serve`` on a loopback port over the embedded graph in ``data``; ``store``
    (that graph, opened by the caller) is closed when the server stops."""
    port = _free_port()
    log = data / "serve.log"
    env = {
        **os.environ,
        "CITEGRAPH_DATA_DIR": str(data),
        "CITEGRAPH_SEEDS_DIR": str(SEEDS),
        "CITEGRAPH_STORE": "embedded",
        "HF_HUB_OFFLINE": "1",
    }
    cmd = [sys.executable, "-m", "citegraph", "serve", "--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc, log)
        yield Server(url=url, store=store, log=log, proc=proc)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        store.close()


@pytest.fixture(scope="session")
def seed_server(
    tmp_path_factory: pytest.TempPathFactory, seed_graph_template: Path
) -> Iterator[Server]:
    """``citegraph serve`` on a loopback port, on the seed graph built with the real model."""
    data = tmp_path_factory.mktemp("explorer-data")
    with serve(data, copy_seed_graph(seed_graph_template, data)) as server:
        yield server


@pytest.fixture(scope="session")
def cited_server(
    tmp_path_factory: pytest.TempPathFactory, seed_graph_template: Path
) -> Iterator[Server]:
    """The seed graph plus the JSONL papers of ``test_explorer_citations`` (years, authors,
    references), added by the real ``citegraph add``, and its topics computed
    (``citegraph topics --recompute``): shared by the citation view's tests and the topic
    map's."""
    from tests.e2e.test_explorer_citations import PAPERS

    root = tmp_path_factory.mktemp("explorer-cited")
    data = root / "data"
    copy_seed_graph(seed_graph_template, data).close()
    copy_cache(EMBED_CACHE, data / "cache")
    lib = root / "lib.jsonl"
    lib.write_text("\n".join(json.dumps({"venue": "Imaging", **p}) for p in PAPERS), "utf-8")
    cli = [sys.executable, "-m", "citegraph", "--store", "embedded", "--data-dir", str(data)]
    # the template is built by the pipeline alone (no topic step): topics computed here
    for args in (["add", str(lib)], ["topics", "--recompute"]):
        out = subprocess.run([*cli, *args], capture_output=True, text=True, timeout=600,
                             env={**os.environ, "HF_HUB_OFFLINE": "1"})
        assert out.returncode == 0, out.stderr
    with serve(data, EmbeddedStore(seed_settings(data).graph_db)) as server:
        yield server


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """Debian's headless Chromium through Playwright (never a downloaded browser).

    One per module, not per session: Playwright's sync API keeps an event loop running
    in the main thread while it is open, and a later test's ``asyncio.run`` then fails
    (tests/api after tests/e2e did)."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} not found: the browser tests need Debian's chromium "
            "(apt-get install chromium chromium-driver); CI installs it."
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@dataclass
class Page:
    """A Playwright page plus every console error and uncaught exception it logged."""

    page: Any
    errors: list[str]


@pytest.fixture
def tab(chromium: Any) -> Iterator[Page]:
    context = chromium.new_context(viewport={"width": 1500, "height": 920}, accept_downloads=True)
    pg = context.new_page()
    pg.set_default_timeout(60_000)  # the first semantic query loads the embedding model
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(f"console: {m.text}") if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    try:
        yield Page(pg, errors)
    finally:
        context.close()
