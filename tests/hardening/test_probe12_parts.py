"""Probe 12: the one-shot write in parts (Pipeline._write_in_parts), from outside.

* F1: a cold add (its model loads in a second process while the graph is read ahead)
  computed the model-free part ahead of the lock (extraction, resolution, SHARES_TERM,
  RELATED_TO, the stored SIMILAR_TO lists) and then threw it away: ``_update`` sets
  ``self._ahead = None`` before ``_write_in_parts``, so ``_pieces`` and ``_similar`` find
  nothing and do it all again under the write lock (the report's ``extract`` stage and
  its ``extract.resolve``/``link.shares_term`` steps are back; before 5422968 they were not).
* F2: a build of exactly the graph that is stored (nothing changed) commits an empty
  write: a new ``commits`` row and a new version, which every reader and server takes
  as a change (before 5422968: no commit).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.hardening.test_embed_ahead import _batch, _cli, _cold, _finish
from tests.support.seeds import SEEDS

pytestmark = pytest.mark.slow


def test_a_cold_add_uses_what_it_read_ahead(
    hard_seed_dir: Path, tmp_path: Path
) -> None:
    abstracts = ["We study graph neural networks for molecule property prediction on QM9."]
    _batch(tmp_path / "a.jsonl", "ahead12-", abstracts)
    data = _cold(hard_seed_dir, tmp_path / "d")
    rc, out, err = _finish(_cli(data, "add", str(tmp_path / "a.jsonl"), "--json"))
    assert rc == 0, err[-2000:]
    assert "in a second process" in err, err[-2000:]
    report = json.loads(out)
    assert "ahead" in report["stage_seconds"]
    # the lexical part was done ahead, while the model loaded: not again under the lock
    assert "extract.resolve" not in report["step_seconds"], report["step_seconds"]
    assert "link.shares_term" not in report["step_seconds"], report["step_seconds"]


def _seqs(data: Path) -> list[int]:
    db = sqlite3.connect(data / "graph.db")
    try:
        return [s for (s,) in db.execute("SELECT seq FROM commits ORDER BY seq")]
    finally:
        db.close()


def test_a_build_that_changes_nothing_commits_nothing(
    hard_seed_dir: Path, tmp_path: Path
) -> None:
    data = tmp_path / "d"
    shutil.copytree(hard_seed_dir, data, ignore=shutil.ignore_patterns("*.lock"))
    # the graph as a build leaves it: with its topics (computed once here)
    rc, out, err = _finish(_cli(data, "topics", "--recompute"))
    assert rc == 0, err[-2000:]
    before = _seqs(data)
    rc, out, err = _finish(_cli(data, "build", str(SEEDS), "--json"))
    assert rc == 0, err[-2000:]
    report = json.loads(out)
    assert report["nodes_written"] == report["edges_written"] == 0, report
    assert report["nodes_deleted"] == report["edges_deleted"] == 0, report
    assert _seqs(data) == before  # no empty commit, the version unmoved
