"""A big commit does not leave graph.db's write-ahead log at the size of the graph.

SQLite keeps a WAL file at its largest until the last connection closes: after a build
of 100k papers beside a running server, graph.db-wal stayed at 1.7 GB (as large as the
database) for as long as the server ran. A big commit now checkpoints and cuts it when
the readers let it within a short wait, and otherwise the next write cuts it to
``WAL_KEEP_BYTES`` (SQLite's journal_size_limit). Tried with a reader in another process
(short reads, as a server's; and one read transaction held through the commit), shrunk
limits so that a few MB count as big; what was written is all there afterwards, and the
reader sees it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import graph.store.embedded as embedded
from graph.model import GraphChange, Paper
from graph.store.embedded import EmbeddedStore

KEEP = 256 * 1024  # the WAL kept after a checkpoint, shrunk from 64 MB

_READER = textwrap.dedent("""
    import sqlite3, sys, time
    path, mode, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    db = sqlite3.connect(path, isolation_level=None, timeout=30)
    print("open", flush=True)
    end = time.monotonic() + seconds
    if mode == "hold":  # one read transaction kept open: the checkpoint cannot finish
        db.execute("BEGIN")
        db.execute("SELECT COUNT(*) FROM nodes").fetchone()
        time.sleep(seconds)
        db.execute("COMMIT")
    while time.monotonic() < end:  # short reads, as a server's
        db.execute("SELECT COUNT(*) FROM nodes").fetchone()
        time.sleep(0.02)
    print(db.execute("SELECT COUNT(*) FROM nodes").fetchone()[0], flush=True)
""")


def _wal(path: Path) -> int:
    try:
        return os.path.getsize(f"{path}-wal")
    except OSError:
        return 0


def _papers(start: int, n: int) -> GraphChange:
    """``n`` papers with ~4 KB abstracts each (a few MB of pages)."""
    words = " ".join(f"word{i}" for i in range(600))
    return GraphChange(upsert_nodes=tuple(
        Paper(id=f"p{i:05d}", label=f"Paper {i}", abstract=f"{words} {i}", text_hash=f"h{i}")
        for i in range(start, start + n)
    ))


Reader = Callable[[Path, str, float], "subprocess.Popen[str]"]


@pytest.fixture
def reader() -> Iterator[Reader]:
    procs: list[subprocess.Popen[str]] = []

    def start(path: Path, mode: str, seconds: float) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-c", _READER, str(path), mode, str(seconds)],
            stdout=subprocess.PIPE, text=True,
        )
        procs.append(proc)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "open"
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


def _big_write_beside(
    path: Path, reader: Reader, mode: str, seconds: float
) -> tuple[EmbeddedStore, subprocess.Popen[str]]:
    """10 papers, a reader started, then 1,500 papers (~6 MB of pages through the WAL)."""
    store = EmbeddedStore(path, reads="sql")
    store.apply(_papers(0, 10))
    proc = reader(path, mode, seconds)
    store.apply(_papers(10, 1500))
    return store, proc


def test_a_big_commit_cuts_the_wal_beside_a_reading_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: Reader
) -> None:
    monkeypatch.setattr(embedded, "WAL_KEEP_BYTES", KEEP)
    path = tmp_path / "graph.db"
    store, proc = _big_write_beside(path, reader, "poll", 3.0)
    assert _wal(path) <= KEEP
    out, _ = proc.communicate(timeout=60)
    assert out.split()[-1] == "1510"  # the reader saw the whole commit
    store.close()
    again = EmbeddedStore(path, reads="sql")
    assert sum(again.stats().nodes.values()) == 1510
    again.close()


def test_a_reader_holding_the_wal_lets_the_next_write_cut_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: Reader
) -> None:
    monkeypatch.setattr(embedded, "WAL_KEEP_BYTES", KEEP)
    path = tmp_path / "graph.db"
    store, proc = _big_write_beside(path, reader, "hold", 2.0)
    held = _wal(path)
    assert held > KEEP  # the reader's snapshot kept it: not cut, and the write went on
    out, _ = proc.communicate(timeout=60)
    assert out.split()[-1] == "1510"
    deadline = time.monotonic() + 30
    store.apply(_papers(2000, 1))  # the next write starts the WAL over: cut to the limit
    more = 0
    while _wal(path) > KEEP and time.monotonic() < deadline:  # bounded
        more += 1
        store.apply(_papers(3000 + more, 1))
    assert _wal(path) <= KEEP
    store.close()
    again = EmbeddedStore(path, reads="sql")
    assert sum(again.stats().nodes.values()) == 1511 + more
    again.close()
