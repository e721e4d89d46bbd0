"""An add under other ``CITEGRAPH_SHARED_TERM_*`` settings equals a full build under them.

Probe 10 (F3) found that SHARES_TERM's partner lists were trusted across a change of
``shared_term_top_k`` or ``shared_term_max_df``: an add kept the stored lists, made with
the old values, and left 65-176 edges a full build with the new values does not have
(60 papers), with no warning. The graph now records what its SHARES_TERM links were made
with (``GraphData.link_settings``); a write under other values recomputes them for every
paper, the region path included (a server restarted with new settings).

Each case builds 60 seed papers with the defaults, then adds 8 and removes 2 with the new
value, one-shot (the CLI's pipeline) and long-lived (the server's), and compares the
stored graph with a fresh full build of the final papers under the new value: every
node, every edge with its attributes, every vector.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from graph.build import Pipeline
from graph.ingest import read_corpus
from graph.model import Paper, RelType
from graph.store.embedded import EmbeddedStore
from tests.support.compare import assert_same_graph, fresh_build
from tests.support.seeds import EMBED_CACHE, SEEDS, seed_settings

pytestmark = pytest.mark.slow


def _seed_papers() -> list[Paper]:
    return sorted(read_corpus([SEEDS]).papers, key=lambda p: p.id)


def _cache(tmp: Path) -> Path:
    """A cache folder with the session's seed vectors (no text embedded twice)."""
    cache = tmp / "cache"
    cache.mkdir()
    if (EMBED_CACHE / "embeddings.sqlite").exists():
        shutil.copy(EMBED_CACHE / "embeddings.sqlite", cache / "embeddings.sqlite")
    return cache


def _shares(store: EmbeddedStore) -> set[tuple[str, str]]:
    return {(e.source, e.target) for e in store.snapshot().edges.values()
            if e.type is RelType.SHARES_TERM}


@pytest.mark.parametrize("long_lived", [False, True], ids=["one-shot", "by-region"])
@pytest.mark.parametrize(
    "setting", [("shared_term_top_k", 3), ("shared_term_max_df", 0.05)],
    ids=["top_k", "max_df"],
)
def test_an_add_under_other_shared_term_settings_equals_a_full_build(
    tmp_path: Path, long_lived: bool, setting: tuple[str, object]
) -> None:
    papers = _seed_papers()
    first, later = papers[:60], papers[60:68]
    gone = [first[0].id, first[1].id]
    final = [p for p in first if p.id not in gone] + later
    cache = _cache(tmp_path)
    store = EmbeddedStore(tmp_path / "graph.db")
    try:
        pipe = Pipeline(seed_settings(tmp_path), cache_dir=cache, incremental=False)
        try:
            pipe.run(store, add_papers=first, replace=True)
            defaults = pipe.link_settings()
        finally:
            pipe.close()
        assert store.snapshot().link_settings == defaults
        before = _shares(store)

        name, value = setting
        pipe = Pipeline(seed_settings(tmp_path, **{name: value}), cache_dir=cache,
                        incremental=long_lived)
        try:
            changed = pipe.link_settings()
            assert changed != defaults and json.loads(changed)["shares_term"][
                name.removeprefix("shared_term_")] == value
            if long_lived:
                pipe.prime(store)  # a server's warm-up: it must not trust the stored lists
            report = pipe.run(store, add_papers=later)
            assert "region.terms" not in report.step_seconds  # the whole way, this once
            report = pipe.run(store, remove=gone)
            # recorded now: the next write may go by region again
            assert ("region.terms" in report.step_seconds) is long_lived
        finally:
            pipe.close()
        got = store.snapshot()
        assert got.link_settings == changed
        assert _shares(store) != before
        assert_same_graph(fresh_build(tmp_path, cache, final, **{name: value}), got)
    finally:
        store.close()


def test_a_graph_that_recorded_no_settings_is_taken_to_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A graph written before the settings were recorded (as older code did: none): an
    add trusts its lists, as before (docs/format.md says to build once after changing
    the settings), and records its own."""
    papers = _seed_papers()[:30]
    cache = _cache(tmp_path)
    store = EmbeddedStore(tmp_path / "graph.db")
    try:
        old = Pipeline(seed_settings(tmp_path), cache_dir=cache, incremental=False)
        monkeypatch.setattr(old, "link_settings", lambda: None)
        try:
            old.run(store, add_papers=papers[:25], replace=True)
        finally:
            old.close()
        assert store.snapshot().link_settings is None
        pipe = Pipeline(seed_settings(tmp_path), cache_dir=cache, incremental=False)
        try:
            report = pipe.run(store, add_papers=papers[25:])
            assert report.added == sorted(p.id for p in papers[25:])
            assert store.snapshot().link_settings == pipe.link_settings()
            assert_same_graph(fresh_build(tmp_path, cache, papers), store.snapshot())
        finally:
            pipe.close()
    finally:
        store.close()


def test_a_pipeline_with_no_progress_logs_the_recompute_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Probe 11: the server's pipeline (no progress) recomputed every list under other
    settings and said so nowhere: not in its log, not in the mutation's answer."""
    papers = _seed_papers()[:24]
    cache = _cache(tmp_path)
    store = EmbeddedStore(tmp_path / "graph.db")
    try:
        pipe = Pipeline(seed_settings(tmp_path), cache_dir=cache, incremental=False)
        try:
            pipe.run(store, add_papers=papers[:20], replace=True)
        finally:
            pipe.close()
        server = Pipeline(seed_settings(tmp_path, shared_term_top_k=3), cache_dir=cache,
                          incremental=True)
        try:
            with caplog.at_level(logging.WARNING, logger="graph.build"):
                server.run(store, add_papers=papers[20:22])
                said = [r.getMessage() for r in caplog.records]
                assert any("CITEGRAPH_SHARED_TERM_" in m for m in said), said
                caplog.clear()
                server.run(store, add_papers=papers[22:])  # recorded now: no second time
                assert not any("CITEGRAPH_SHARED_TERM_" in r.getMessage()
                               for r in caplog.records)
        finally:
            server.close()
    finally:
        store.close()
