"""What a long-lived pipeline keeps between writes (graph.region.CorpusState) stays the
stored graph's: through adds, removes, a write that fails, and another process's write.

The region path compares the SHARES_TERM edges it makes with the stored ones it keeps in
the state (``CorpusState.shares``), not with rows read from the store, and reads stored
SIMILAR_TO lists as Near lists it keeps (``CorpusState.near``). Those kept edges and lists
must be the store's after every write the pipeline commits; a write that fails must not
leave them (or anything else the next add reads) ahead of the store; and a commit by
another process makes the next add read the graph again. After each step, the stored
graph must also equal a full rebuild.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graph.build import Pipeline
from graph.ingest import read_corpus
from graph.model import GraphChange, Paper, RelType
from graph.region import _StateLists
from graph.store.embedded import EmbeddedStore
from tests.e2e.test_incremental_pipeline import _same
from tests.support.seeds import EMBED_CACHE, SEEDS, seed_settings

pytestmark = pytest.mark.slow


class _FailingStore(EmbeddedStore):
    """An embedded store whose next ``apply`` fails (as a full disk would), rolled back."""

    fail_next = False

    def apply(self, change: GraphChange) -> None:
        if self.fail_next:
            self.fail_next = False
            raise OSError("disk full (test)")
        super().apply(change)


@pytest.fixture(scope="module")
def seed_papers() -> list[Paper]:
    result = read_corpus([SEEDS])
    assert not result.problems
    return result.papers


@pytest.fixture(scope="module")
def settings_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("region-state")


@pytest.fixture()
def pipeline(settings_dir: Path) -> Iterator[Pipeline]:
    p = Pipeline(seed_settings(settings_dir), cache_dir=EMBED_CACHE)
    yield p
    p.close()


def _kept_shares_are_stored(pipe: Pipeline, store: EmbeddedStore) -> bool:
    """True when the pipeline holds a state and its SHARES_TERM edges are the store's
    (every pair under both ends, same weight and attributes); False when it holds none."""
    held = pipe._state
    if held is None:
        return False
    kept = held.state.shares
    stored = {
        (e.source, e.target): e for e in store.snapshot().edges.values()
        if e.type is RelType.SHARES_TERM
    }
    pairs = {(a, b) for a, partners in kept.items() for b in partners if a < b}
    assert pairs == set(stored)
    for (a, b), e in stored.items():
        mine = kept[a][b]
        assert kept[b][a] is mine
        assert (mine.weight, dict(mine.attrs)) == (e.weight, dict(e.attrs)), (a, b)
    # the SIMILAR_TO lists kept as Near (filled as adds read them) are the stored lists
    similar: dict[str, list[tuple[str, float, float]]] = {}
    for e in sorted((e for e in store.snapshot().edges.values()
                     if e.type is RelType.SIMILAR_TO), key=lambda e: int(e.attrs["rank"])):
        similar.setdefault(e.source, []).append(
            (e.target, float(e.weight), float(e.attrs.get("words", 0.0))))
    for pid, lst in held.state.near.items():
        assert [tuple(n) for n in lst] == similar.get(pid, []), pid
    return True


def test_kept_shares_follow_adds_removes_failures_and_other_writers(
    tmp_path: Path, pipeline: Pipeline, seed_papers: list[Paper], settings_dir: Path
) -> None:
    path = tmp_path / "graph.db"
    store = _FailingStore(path)
    corpus = {p.id: p for p in seed_papers[:40]}
    pipeline.run(store, add_papers=list(corpus.values()), replace=True)
    assert _kept_shares_are_stored(pipeline, store)

    def add(papers: list[Paper], remove: list[str] = ()) -> None:  # type: ignore[assignment]
        held = pipeline._state
        assert held is not None
        lists = _StateLists(held.state)
        for pid in corpus:  # every list read once, as a server's adds come to do
            lists.get(pid)
        report = pipeline.run(store, add_papers=papers, remove=remove)
        assert "region.terms" in report.step_seconds  # by region, from the kept state
        corpus.update({p.id: p for p in papers})
        for pid in remove:
            del corpus[pid]
        assert _kept_shares_are_stored(pipeline, store)
        _same(store, settings_dir, corpus)

    add(seed_papers[40:45])
    add([], remove=[seed_papers[3].id, seed_papers[41].id])  # edges of removed papers go
    add(seed_papers[45:48], remove=[seed_papers[7].id])

    # a write that fails: nothing changes on disk, and what the pipeline keeps is not
    # ahead of the store (it is dropped; the next add reads the graph and is exact)
    store.fail_next = True
    assert pipeline._state is not None
    held = pipeline._state.state
    postings = {t: frozenset(ps) for t, ps in held.postings.items()}
    with pytest.raises(OSError):
        pipeline.run(store, add_papers=seed_papers[48:50], remove=[seed_papers[9].id])
    _same(store, settings_dir, corpus)
    assert not _kept_shares_are_stored(pipeline, store)
    # the dropped state was not moved in place either (the change copies what it moves)
    assert {t: frozenset(ps) for t, ps in held.postings.items()} == postings
    pipeline.run(store, add_papers=seed_papers[48:50], remove=[seed_papers[9].id])
    corpus.update({p.id: p for p in seed_papers[48:50]})
    del corpus[seed_papers[9].id]
    assert _kept_shares_are_stored(pipeline, store)
    _same(store, settings_dir, corpus)
    add(seed_papers[50:52])  # by region again, from the state the whole write left

    # another process's write (a CLI add, its own pipeline and connection): the next add
    # reads the graph again rather than trusting the kept state
    other_store = EmbeddedStore(path, reads="sql")
    other = Pipeline(seed_settings(settings_dir), cache_dir=EMBED_CACHE, incremental=False)
    try:
        gone = seed_papers[11].id
        other.run(other_store, add_papers=seed_papers[52:55], remove=[gone])
    finally:
        other.close()
        other_store.close()
    corpus.update({p.id: p for p in seed_papers[52:55]})
    del corpus[gone]
    report = pipeline.run(store, add_papers=seed_papers[55:57])
    assert "region.terms" not in report.step_seconds  # the whole way, once
    corpus.update({p.id: p for p in seed_papers[55:57]})
    assert _kept_shares_are_stored(pipeline, store)
    _same(store, settings_dir, corpus)
    add(seed_papers[57:59], remove=[seed_papers[12].id])
    store.close()
