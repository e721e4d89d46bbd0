"""Whose commit landed while a write was stopped: the store's history says (probe 17 O1)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from citegraph.cli import _committed_here
from graph.model import GraphChange, Paper
from graph.store.embedded import EmbeddedStore
from tests.support.seeds import ROOT

_WRITE = """
import sys
from graph.model import GraphChange, Paper
from graph.store.embedded import EmbeddedStore
from pathlib import Path
store = EmbeddedStore(Path(sys.argv[1]))
store.apply(GraphChange(upsert_nodes=(Paper(sys.argv[2], "t", "x", "h-" + sys.argv[2]),)))
store.close()
"""


def _service(store: Any) -> Any:
    return SimpleNamespace(store=store)


def test_a_commit_is_told_apart_from_another_process_commit(tmp_path: Path) -> None:
    path = tmp_path / "graph.db"
    store = EmbeddedStore(path)
    try:
        store.apply(GraphChange(upsert_nodes=(Paper("p0", "t", "x", "h-p0"),)))
        started = time.time()
        assert _committed_here(_service(store), started) is False  # before it started
        subprocess.run([sys.executable, "-c", _WRITE, str(path), "p1"], cwd=ROOT, check=True)
        assert _committed_here(_service(store), started) is False  # another process's
        store.apply(GraphChange(upsert_nodes=(Paper("p2", "t", "x", "h-p2"),)))
        assert _committed_here(_service(store), started) is True
    finally:
        store.close()


def test_a_store_without_a_history_cannot_tell() -> None:
    assert _committed_here(_service(object()), time.time()) is None
