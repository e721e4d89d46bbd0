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


def test_a_value_read_or_written_is_not_kept_twice_and_a_later_write_wins(
    tmp_path: Path,
) -> None:
    cache = BlobCache(tmp_path / "c.sqlite", "t")
    cache.put_many("ns", {"a": b"1"})
    assert cache.get_many("ns", ["a"]) == {"a": b"1"}
    assert cache._mem == {}  # the file holds it: no copy in memory (~700 MB at 100k papers)
    # a write the file refused stays in memory; once a later write lands, the file's
    # value is the one answered, not the older copy in memory
    cache._db.execute("CREATE TRIGGER no_b BEFORE INSERT ON t WHEN NEW.key = 'b'"
                      " BEGIN SELECT RAISE(ABORT, 'refused'); END")
    cache.put_many("ns", {"b": b"old"})
    assert cache.get_many("ns", ["b"]) == {"b": b"old"}
    cache._db.execute("DROP TRIGGER no_b")
    cache.put_many("ns", {"b": b"new"})
    assert cache._mem == {}
    assert cache.get_many("ns", ["a", "b"]) == {"a": b"1", "b": b"new"}
    cache.close()


def test_a_key_the_file_holds_keeps_its_first_value_for_every_reader(tmp_path: Path) -> None:
    # two processes that computed one text's vector (a batch-dependent float apart): the
    # first to write it wins, for both of them and for every later read (probe 13 O1)
    mine = BlobCache(tmp_path / "c.sqlite", "t", keep_first=True)
    other = BlobCache(tmp_path / "c.sqlite", "t", keep_first=True)
    mine.put_many("ns", {"a": b"first"})
    other.put_many("ns", {"a": b"second", "b": b"2"})
    assert mine.get_many("ns", ["a", "b"]) == {"a": b"first", "b": b"2"}
    assert other.get_many("ns", ["a", "b"]) == {"a": b"first", "b": b"2"}
    assert other._mem == {}  # not kept aside as if the write had failed
    mine.close()
    other.close()
