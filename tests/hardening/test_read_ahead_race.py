"""The read ahead's graph and its version token describe the same graph.

``Pipeline._read_ahead`` keeps a snapshot and a version token; under the write lock the
snapshot is used when the token has not moved. Found from outside (probe 4, and by the
lead at the same time: ``versioned_snapshot``): the token was read *after* the snapshot,
so a commit by another process between the two reads was vouched for by a token newer
than the graph read: the write was computed from a graph without that commit (the
removed paper still counted in SHARES_TERM weights and SIMILAR_TO ranks: not the graph
the two writes make one after the other). Here a real second process commits right
after the read ahead's read, end to end through the CLI's store. And a store answering
from its mirror handed ``snapshot()`` up to ``SYNC_INTERVAL_S`` older than ``version()``
(the server caches whole-graph results under ``version()``).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from graph import build
from graph.build import Pipeline
from graph.model import GraphData, Paper
from graph.settings import Settings
from graph.store import embedded
from graph.store.embedded import EmbeddedStore
from tests.hardening.test_embed_ahead import _cli, _cold, _finish, _load, _papers, _same

pytestmark = pytest.mark.slow


def _remove_elsewhere(data: Path, pid: str) -> None:
    rc, _, err = _finish(_cli(data, "remove", pid))
    assert rc == 0, err[-1500:]


class _CommitAfterSnapshot(EmbeddedStore):
    """A store whose first whole-graph read is followed at once by another process's
    commit: the moment after the read ahead's read, made certain."""

    def __init__(self, path: Path, gone: str) -> None:
        super().__init__(path, reads="sql")  # as the CLI opens it
        self.gone = gone
        self.fired = False

    def versioned_snapshot(self) -> tuple[GraphData, str]:
        out = super().versioned_snapshot()
        if not self.fired:
            self.fired = True
            _remove_elsewhere(self.path.parent, self.gone)
        return out


def test_a_commit_between_the_read_aheads_two_reads_is_not_lost(
    hard_seed_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    batch = tmp_path / "a.jsonl"
    batch.write_text("".join(
        json.dumps({"id": f"race-{i}", "abstract": "Graph neural networks predict molecule "
                    f"property {i} with contrastive pretraining on unlabeled molecules."}) + "\n"
        for i in range(2)
    ), encoding="utf-8")
    data = _cold(hard_seed_dir, tmp_path / "d")
    gone = sorted(_papers(_load(data)))[0]
    store = _CommitAfterSnapshot(data / "graph.db", gone)
    pipe = Pipeline(Settings(data_dir=data), incremental=False)
    try:
        with caplog.at_level(logging.INFO, logger=build.__name__):
            report = pipe.run(store, add_paths=[batch])
    finally:
        pipe.close()
        store.close()
    assert store.fired and "ahead" in report.stage_seconds  # the read ahead really ran
    assert "changed since it was read ahead" in caplog.text
    after = _load(data)
    assert gone not in after.nodes
    # the same as the remove, then the add, one process at a time
    seq = _cold(hard_seed_dir, tmp_path / "seq")
    _remove_elsewhere(seq, gone)
    rc, _, err = _finish(_cli(seq, "add", str(batch), CITEGRAPH_EMBED_IN_PROCESS_AHEAD="false"))
    assert rc == 0, err[-1500:]
    _same(after, _load(seq))


def test_a_mirror_snapshot_is_as_new_as_the_version_beside_it(
    hard_seed_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store with a mirror (a library user's, the server's) checks the database for
    other processes' commits at most every SYNC_INTERVAL_S; a long interval makes the
    window certain instead of 0.2 s wide."""
    monkeypatch.setattr(embedded, "SYNC_INTERVAL_S", 3600.0)
    data = _cold(hard_seed_dir, tmp_path / "d")
    store = EmbeddedStore(data / "graph.db")
    try:
        gone = sorted(p for p, n in store.snapshot().nodes.items() if isinstance(n, Paper))[0]
        before = store.version()
        _remove_elsewhere(data, gone)
        assert store.version() != before
        assert gone not in store.snapshot().nodes
    finally:
        store.close()
