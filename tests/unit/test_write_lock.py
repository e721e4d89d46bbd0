"""The embedded store's write lock (graph.store.filelock.WriterLock) when its file is
removed or replaced while a writer holds it.

``flock`` locks an open file, not a path: an outside probe deleted ``graph.db.lock``
while one ``citegraph add`` held it, a second add locked a new file at the same path
without waiting, and both committed ("Added" twice; SIMILAR_TO, RELATED_TO and MENTIONS
rows lost or stale). Now the first writer's commit is refused and says why, and a writer
never holds a file that is not the one at the path.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from graph.errors import StoreError
from graph.model import GraphChange, Paper
from graph.store.embedded import EmbeddedStore
from graph.store.filelock import WriterLock


@pytest.mark.parametrize("how", ["removed", "replaced"])
def test_a_writer_whose_lock_file_went_is_told_before_it_commits(tmp_path: Path, how: str) -> None:
    path = tmp_path / "graph.db.lock"
    first, second = WriterLock(path), WriterLock(path)
    with first.hold(5.0):
        first.check()  # its own file: nothing to say
        if how == "removed":
            path.unlink()
        else:
            other = tmp_path / "new.lock"
            other.write_text("")
            os.replace(other, path)
        with second.hold(0.5):  # the path's file is free: no wait, no timeout
            second.check()
            with pytest.raises(StoreError, match="removed or replaced"):
                first.check()
    # once the first lets go, the path's file is locked and checked as usual
    with first.hold(1.0):
        first.check()


def test_a_writer_waiting_on_a_removed_file_locks_the_paths_file(tmp_path: Path) -> None:
    """A writer that waited on the old file (its holder done, the file gone) does not
    hold that orphan: it locks the file now at the path, so a third writer waits for it."""
    path = tmp_path / "graph.db.lock"
    holder, waiter, third = WriterLock(path), WriterLock(path), WriterLock(path)
    got = threading.Event()
    waiting = threading.Event()
    release = threading.Event()

    def wait_then_hold() -> None:
        with waiter.hold(10.0, lambda _message: waiting.set()):
            waiter.check()
            got.set()
            release.wait(10.0)

    with holder.hold(1.0):
        t = threading.Thread(target=wait_then_hold)
        t.start()
        assert waiting.wait(10.0)  # the waiter has the old file open, blocked on it
        path.unlink()
    assert got.wait(10.0)
    try:
        from graph.errors import WriteLockTimeoutError

        with pytest.raises(WriteLockTimeoutError), third.hold(0.3):
            pass
    finally:
        release.set()
        t.join(10.0)


class _LockTakenMidWrite(EmbeddedStore):
    """A store whose next commit finds its lock file deleted and another writer on the
    path's new file (as a second process would), between its rows and COMMIT."""

    intruder: WriterLock | None = None

    def _before_commit(self) -> None:
        if self.intruder is None:
            return
        self._writer.path.unlink()
        started = threading.Event()
        stop = threading.Event()

        def hold() -> None:
            assert self.intruder is not None
            with self.intruder.hold(5.0):
                started.set()
                stop.wait(5.0)

        t = threading.Thread(target=hold, daemon=True)
        t.start()
        assert started.wait(5.0)
        self._stop = (stop, t)


def test_a_store_write_under_a_removed_lock_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "graph.db"
    store = _LockTakenMidWrite(db)
    paper = Paper(id="p1", label="p1", abstract="a", text_hash="h1")
    store.apply(GraphChange(upsert_nodes=(paper,)))
    before = store.snapshot()
    store.intruder = WriterLock(db.with_name("graph.db.lock"))
    with pytest.raises(StoreError, match="removed or replaced"):
        store.apply(GraphChange(upsert_nodes=(Paper(id="p2", label="p2", abstract="b",
                                                    text_hash="h2"),)))
    stop, t = store._stop
    stop.set()
    t.join(5.0)
    store.intruder = None
    assert sorted(store.snapshot().nodes) == sorted(before.nodes) == ["p1"]
    reader = EmbeddedStore(db)
    try:
        assert sorted(reader.snapshot().nodes) == ["p1"]  # nothing reached the disk
    finally:
        reader.close()
    # the next write takes the path's file and lands
    store.apply(GraphChange(upsert_nodes=(Paper(id="p3", label="p3", abstract="c",
                                                text_hash="h3"),)))
    assert sorted(store.snapshot().nodes) == ["p1", "p3"]
    store.close()
