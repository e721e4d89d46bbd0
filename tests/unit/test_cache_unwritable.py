"""A cache file that can no longer take rows never fails the write it serves."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from graph.cache import BlobCache


def test_a_cache_whose_folder_was_deleted_keeps_values_in_memory(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "cache"
    cache = BlobCache(folder / "c.sqlite", "t")
    cache.put_many("ns", {"a": b"1"})
    # the data folder deleted under a running server (probe3 F8): SQLite refuses writes
    # to the unlinked file ("attempt to write a readonly database")
    shutil.rmtree(folder)
    with caplog.at_level(logging.WARNING, logger="graph.cache"):
        cache.put_many("ns", {"b": b"2"})
    assert "not written" in caplog.text and "kept in memory" in caplog.text
    assert cache.get_many("ns", ["a", "b"]) == {"a": b"1", "b": b"2"}
    cache.close()
