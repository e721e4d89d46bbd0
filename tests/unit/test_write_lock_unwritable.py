"""A write lock that cannot be opened (read-only filesystem, a folder without write
permission, EIO) is the store failing to write, not the client's fault (probe 9).

An outside probe turned a running server's data folder read-only (an ext4 error with
``errors=remount-ro``): ``addPapers`` answered ``BAD_REQUEST`` ("cannot open the write lock
.../graph.db.lock: Read-only file system"), as if the input were wrong, and did not say
that nothing was written, while the same write on a full disk answers
``STORE_WRITE_FAILED`` (probe 7). Opening ``graph.db.lock`` is the first thing a write
does on such a folder, so it failed there before SQLite could say it.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from api.graphql.errors import error_code
from graph.errors import StoreWriteError
from graph.model import GraphChange, Paper
from graph.store import filelock
from graph.store.embedded import EmbeddedStore


@pytest.mark.parametrize("err", [errno.EROFS, errno.EACCES, errno.EIO])
def test_an_unopenable_write_lock_is_a_store_write_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, err: int
) -> None:
    db = tmp_path / "graph.db"
    store = EmbeddedStore(db)
    store.apply(GraphChange(upsert_nodes=(Paper(id="p1", label="p1", abstract="a",
                                                text_hash="h1"),)))
    real_open = os.open

    def failing_open(path: object, *args: object, **kwargs: object) -> int:
        if str(path).endswith("graph.db.lock"):
            raise OSError(err, os.strerror(err), str(path))
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(filelock.os, "open", failing_open)
    with pytest.raises(StoreWriteError, match="nothing was written") as caught:
        store.apply(GraphChange(upsert_nodes=(Paper(id="p2", label="p2", abstract="b",
                                                    text_hash="h2"),)))
    assert os.strerror(err) in str(caught.value)
    assert error_code(caught.value) == "STORE_WRITE_FAILED"
    monkeypatch.undo()
    assert sorted(store.snapshot().nodes) == ["p1"]
    # once the folder can be written again, the same write lands
    store.apply(GraphChange(upsert_nodes=(Paper(id="p2", label="p2", abstract="b",
                                                text_hash="h2"),)))
    assert sorted(store.snapshot().nodes) == ["p1", "p2"]
    store.close()
