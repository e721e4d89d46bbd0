"""SIMILAR_TO written a few sources at a time equals it written whole.

A one-shot build or add computes SIMILAR_TO's lists before the rest of the graph, holds
them compact, and writes their edges a block of sources at a time (graph.build
``SIMILAR_PIECE_EDGES``; 25,000 sources a piece at k = 10, so the seeds make one piece).
Here a piece holds 4 sources' lists, so a build of the seeds writes ~20 SIMILAR_TO pieces
and every later write diffs each against the old edges of its own sources alone. After a
build, an add, a remove, an edit and a rebuild over a changed corpus, the stored graph
must equal a fresh build that wrote SIMILAR_TO whole; and a write cut off at one of the
later pieces must leave the graph as it was.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import graph.build as gb
from graph.embed import EmbeddingCache, text_key
from graph.errors import CitegraphError
from graph.ingest import paper_from_record, read_corpus
from graph.model import GraphData, Paper
from graph.store.embedded import EmbeddedStore, _SqlParts
from tests.support.compare import assert_same_graph
from tests.support.seeds import EMBED_CACHE, SEEDS, seed_settings
from tests.support.updates import updated

pytestmark = pytest.mark.slow

SMALL = 40  # edges a piece: 4 sources at k = 10


@pytest.fixture(scope="module")
def seed_papers() -> list[Paper]:
    result = read_corpus([SEEDS])
    assert not result.problems
    return sorted(result.papers, key=lambda p: p.id)


def _whole(tmp: Path, papers: list[Paper]) -> GraphData:
    """A fresh one-shot build of ``papers`` into a new database, SIMILAR_TO in one piece."""
    assert gb.SIMILAR_PIECE_EDGES > 76 * 10
    tmp.mkdir(parents=True, exist_ok=True)
    store = EmbeddedStore(tmp / "whole.db", reads="sql")
    pipe = gb.Pipeline(seed_settings(tmp), cache_dir=EMBED_CACHE, incremental=False)
    try:
        pipe.run(store, add_papers=papers, replace=True)
        return store.snapshot()
    finally:
        pipe.close()
        store.close()


def _in_small_pieces(monkeypatch: pytest.MonkeyPatch, run: Callable[[], Any]) -> tuple[Any, int]:
    """``run()`` with SIMILAR_TO in pieces of SMALL edges; and how many parts it wrote."""
    parts = []
    apply = _SqlParts.apply

    def counted(self: _SqlParts, change: Any) -> None:
        parts.append(change)
        apply(self, change)

    with monkeypatch.context() as m:
        m.setattr(gb, "SIMILAR_PIECE_EDGES", SMALL)
        m.setattr(_SqlParts, "apply", counted)
        got = run()
    return got, len(parts)


def test_similar_to_in_small_pieces_equals_it_whole_through_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed_papers: list[Paper]
) -> None:
    store = EmbeddedStore(tmp_path / "graph.db", reads="sql")
    pipe = gb.Pipeline(seed_settings(tmp_path), cache_dir=EMBED_CACHE, incremental=False)
    corpus = {p.id: p for p in seed_papers[:60]}
    try:
        _, parts = _in_small_pieces(
            monkeypatch, lambda: pipe.run(store, add_papers=list(corpus.values()), replace=True))
        # the nodes, SHARES_TERM, RELATED_TO, 60 sources / 4 a piece (CITES: none here)
        assert parts == 3 + 15
        assert_same_graph(_whole(tmp_path / "w1", list(corpus.values())), store.snapshot())

        added = seed_papers[60:70]
        _, parts = _in_small_pieces(monkeypatch, lambda: pipe.run(store, add_papers=added))
        corpus.update((p.id, p) for p in added)
        assert parts > 3  # several SIMILAR_TO pieces changed: the new lists, moved floors
        assert_same_graph(_whole(tmp_path / "w2", list(corpus.values())), store.snapshot())

        gone = [seed_papers[3].id, seed_papers[31].id, seed_papers[64].id]
        _in_small_pieces(monkeypatch, lambda: pipe.run(store, remove=gone))
        for pid in gone:
            del corpus[pid]
        assert_same_graph(_whole(tmp_path / "w3", list(corpus.values())), store.snapshot())

        old = corpus[seed_papers[10].id]
        edited = paper_from_record(
            {"id": old.id, "title": "Retitled: " + (old.title or ""), "abstract": old.abstract},
            source="test:edit")
        _in_small_pieces(monkeypatch, lambda: pipe.run(store, add_papers=[edited]))
        corpus[old.id] = updated(old, edited)
        assert_same_graph(_whole(tmp_path / "w4", list(corpus.values())), store.snapshot())

        # a rebuild over the stored graph, of a corpus that drops some papers and brings
        # others: every piece diffed against the stored edges of its own sources
        rebuilt = {p.id: p for p in [*seed_papers[8:50], *seed_papers[70:]]}
        _in_small_pieces(
            monkeypatch, lambda: pipe.run(store, add_papers=list(rebuilt.values()), replace=True))
        assert_same_graph(_whole(tmp_path / "w5", list(rebuilt.values())), store.snapshot())
    finally:
        pipe.close()
        store.close()


def test_a_write_cut_off_at_a_later_similar_piece_leaves_the_graph_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed_papers: list[Paper]
) -> None:
    store = EmbeddedStore(tmp_path / "graph.db", reads="sql")
    pipe = gb.Pipeline(seed_settings(tmp_path), cache_dir=EMBED_CACHE, incremental=False)
    try:
        pipe.run(store, add_papers=seed_papers[:50], replace=True)
        before = store.snapshot()
        version = store.version()
        made = gb._SimilarLists.edges
        calls = []

        def fails_at_the_fifth(self: gb._SimilarLists, lo: int, hi: int, k: int,
                               floor: float) -> list[Any]:
            calls.append(lo)
            if len(calls) == 5:
                raise CitegraphError("cut off at the fifth SIMILAR_TO piece")
            return made(self, lo, hi, k, floor)

        monkeypatch.setattr(gb._SimilarLists, "edges", fails_at_the_fifth)
        with pytest.raises(CitegraphError, match="fifth"):
            _in_small_pieces(
                monkeypatch, lambda: pipe.run(store, add_papers=seed_papers[50:], replace=True))
        assert len(calls) == 5
        assert store.version() == version
        assert_same_graph(before, store.snapshot())
        # and a reader from outside sees the old graph too
        other = EmbeddedStore(tmp_path / "graph.db", reads="sql")
        try:
            assert_same_graph(before, other.snapshot())
        finally:
            other.close()
    finally:
        pipe.close()
        store.close()


def test_vectors_written_are_the_ones_the_lists_were_ranked_by_though_the_cache_is_rewritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed_papers: list[Paper]
) -> None:
    """A one-shot build reads its vectors from the embedding cache for the lists, and
    again for their piece. Another process that embeds the same texts in between (its
    vectors a batch-dependent float apart) must not change what is written."""
    cache = tmp_path / "cache"
    cache.mkdir()
    shutil.copy(EMBED_CACHE / "embeddings.sqlite", cache / "embeddings.sqlite")
    pipe = gb.Pipeline(seed_settings(tmp_path), cache_dir=cache, incremental=False)
    store = EmbeddedStore(tmp_path / "graph.db", reads="sql")
    ranked: list[np.ndarray] = []
    lists = gb.Pipeline._similar_lists

    def then_another_process_embeds(self: gb.Pipeline, papers: Any, *args: Any) -> Any:
        got = lists(self, papers, *args)
        ranked.append(self._matrix(papers, None, gb.BuildReport()))
        elsewhere = EmbeddingCache(cache / "embeddings.sqlite")
        keys = [text_key(gb.embedding_text(p)) for p in papers]
        old = elsewhere.get_many(self.embedder.key, keys)
        elsewhere.put_many(self.embedder.key, {k: v + np.float32(1e-3) for k, v in old.items()})
        elsewhere.close()
        return got

    monkeypatch.setattr(gb.Pipeline, "_similar_lists", then_another_process_embeds)
    try:
        pipe.run(store, add_papers=seed_papers, replace=True)
        got = store.snapshot()
    finally:
        pipe.close()
        store.close()
    rows = {pid: i for i, pid in enumerate(got.embedding_ids)}
    order = [p.id for p in sorted(seed_papers, key=lambda p: p.id)]
    assert np.array_equal(ranked[0], np.vstack([got.embeddings[rows[pid]] for pid in order]))
