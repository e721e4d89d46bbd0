"""SIMILAR_TO from the kept pools (graph.link.update_csls_pools) equals the whole computation.

The region state keeps every row's pool between writes (graph.link.SimilarPools) and ranks
the rows an add reaches from them. A pool gone stale (a member that left, a paper that
entered without being merged, a cosine or overlap from an old vector, rows numbered wrong
after a remove) shows up as a list, a hub or a pool that differs from ``full_similar`` of
the same corpus: each step of a random sequence of adds, removes and text changes, with
the pools carried from step to step and applied only when the step "commits", is compared
with it to the bit (pickled), on vectors made for ties.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

from graph.lexical import word_vectors
from graph.link import (
    ListSource,
    Near,
    PaperVectors,
    ScoringArrays,
    SimilarPools,
    full_similar,
    update_csls_pools,
)
from graph.overlay import Overlay

_VOCAB = [f"w{i:02d}" for i in range(30)]


def _universe(seed: int, n: int) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Vectors on a coarse grid (exact ties at a pool's edge), repeated rows, pairs 1e-7
    apart, and short texts over a small vocabulary (tied word overlaps)."""
    rng = np.random.default_rng(seed)
    base = np.round(rng.normal(size=(n, 4)) * 2) / 2
    base[np.abs(base).sum(axis=1) == 0, 0] = 1.0
    base[n // 2 : n // 2 + 6] = base[:6]
    base[n // 2 + 6 : n // 2 + 10] = base[6:10] + 1e-7 * rng.normal(size=(4, 4))
    m = (base / np.linalg.norm(base, axis=1, keepdims=True)).astype(np.float32)
    ids = [f"p{i:03d}" for i in range(n)]
    texts = [" ".join(rng.choice(_VOCAB, size=int(rng.integers(2, 7)))) for _ in range(n)]
    texts[n // 2 : n // 2 + 6] = texts[:6]
    return dict(zip(ids, m, strict=True)), dict(zip(ids, texts, strict=True))


def _vec(ids: list[str], vec: dict[str, np.ndarray], text: dict[str, str], pool: int,
         words: bool) -> PaperVectors:
    return PaperVectors(ids, np.asarray([vec[p] for p in ids], dtype=np.float32),
                        word_vectors([text[p] for p in ids]) if words else None, pool=pool)


def _pools_by_id(pools: SimilarPools) -> dict[str, list[tuple[str, float, float]]]:
    out = {}
    for i, pid in enumerate(pools.ids):
        cols, cos, words = pools.row(i)
        out[pid] = sorted((pools.ids[int(c)], float(a), float(b))
                          for c, a, b in zip(cols, cos, words, strict=True))
    return out


def _dump(lists: dict[str, list[Near]], hubs: dict[str, Any]) -> bytes:
    return pickle.dumps((sorted(lists.items()), sorted(hubs.items())))


@pytest.mark.parametrize(("seed", "pool", "words", "size"), [
    (1, 3, True, 40), (2, 5, True, 40), (3, 8, False, 40), (4, 4, True, 40),
    (5, 12, True, 40), (6, 2, False, 40),
    # more rows than an add reaches: lists that move only through a moved r
    (7, 6, True, 250), (8, 10, True, 250), (9, 4, False, 250),
])
def test_kept_pools_give_the_whole_computation_through_adds_removes_and_changes(
    seed: int, pool: int, words: bool, size: int
) -> None:
    rng = np.random.default_rng(100 + seed)
    universe_vec, text = _universe(seed, size + 50)
    vec = dict(universe_vec)
    universe = sorted(vec)
    k = 3
    f = np.asarray(vec["p000"], np.float64), np.asarray(vec["p001"], np.float64)
    min_score = float(np.round(f[0] @ f[1], 6)) if seed % 2 else 0.1  # ties with the floor
    current = sorted(rng.choice(universe, size=size, replace=False).tolist())
    keep: list[SimilarPools] = []
    lists, hubs = full_similar(_vec(current, vec, text, pool, words), k, min_score, keep=keep)
    pools = keep[0]
    order = list(current)  # the rows as the region state numbers them
    first = _vec(order, vec, text, pool, words)
    arrays = ScoringArrays.of(first.matrix, first.words)  # as the region state keeps them
    for step in range(10):
        outside = [p for p in universe if p not in current]
        kind = step % 4
        added = set(rng.choice(outside, size=min(int(rng.integers(1, 5)), len(outside)),
                               replace=False).tolist())
        removed: set[str] = set()
        changed: set[str] = set()
        if kind >= 2:
            removed = set(rng.choice(current, size=2, replace=False).tolist())
        if kind == 3:
            changed = set(rng.choice([p for p in current if p not in removed], size=1).tolist())
            for p in changed:  # its text changed: a new vector (sometimes another's)
                other = universe[int(rng.integers(len(universe)))]
                vec[p] = vec[other].copy() if rng.random() < 0.5 else (
                    universe_vec[p][::-1].copy())
                text[p] = text[other]
        gone = removed | changed
        # the region's numbering: the rows that stay in their order, then the fresh ones
        order = [p for p in order if p not in gone] + sorted(added | changed)
        if step == 5:
            order = sorted(order)  # any numbering: the pools are renumbered
        now = sorted(set(order))
        whole = _vec(order, vec, text, pool, words)

        def grown(arrays: ScoringArrays = arrays, whole: PaperVectors = whole,
                  gone: set[str] = gone, step: int = step,
                  order: list[str] = order) -> PaperVectors:
            # the region's way: an add grows the kept arrays, anything else makes them anew
            n_old = arrays.n
            if gone or step == 5:
                got = ScoringArrays.of(whole.matrix, whole.words)
            else:
                got = arrays.grown(whole.matrix[n_old:],
                                   whole.words[n_old:] if whole.words is not None else None)
            return PaperVectors(order, got.matrix, got.words, pool=pool, arrays=got)

        previous = ListSource({p: lst for p, lst in lists.items() if p not in gone})
        # the region passes the hubs the last change returned, the same object (then the
        # pools' kept floors and r are read, not every hub)
        prev_hubs = hubs if not gone else {p: h for p, h in hubs.items() if p not in gone}
        before_hubs = dict(prev_hubs)
        if step in (2, 7):  # a write that fails: its change is never applied
            update_csls_pools(previous, prev_hubs, pools, grown(), added | changed, gone, k,
                              min_score)
        v = grown()
        assert v.arrays is not None
        _same_arrays(v.arrays, ScoringArrays.of(whole.matrix, whole.words))
        arrays = v.arrays
        fresh, got_hubs, change = update_csls_pools(previous, prev_hubs, pools, v,
                                                    added | changed, gone, k, min_score)
        if isinstance(got_hubs, Overlay):
            # a view of prev_hubs: the region's commit applies it (prev_hubs unmoved so far)
            assert got_hubs.base is prev_hubs and dict(prev_hubs) == before_hubs
            got_hubs.apply()
            got_hubs = got_hubs.base
        hubs = got_hubs
        lists = {p: fresh[p] if p in fresh else lists[p] for p in order}
        pools.apply(change)
        want_keep: list[SimilarPools] = []
        want_lists, want_hubs = full_similar(v, k, min_score, keep=want_keep)
        assert _dump(lists, hubs) == _dump(want_lists, want_hubs), f"step {step}"
        assert pools.ids == order
        assert pools.hub_rows is not None and pools.hub_rows[0] is hubs
        assert pools.hub_rows[1].tolist() == [hubs[p].floor for p in order]
        assert pools.hub_rows[2].tolist() == [hubs[p].r for p in order]
        assert _pools_by_id(pools) == _pools_by_id(want_keep[0]), f"step {step}"
        current = now


def _same_arrays(got: ScoringArrays, want: ScoringArrays) -> None:
    assert got.n == want.n and got.nnz == want.nnz and got.norm == want.norm
    assert np.array_equal(got.matrix, want.matrix) and np.array_equal(got.full, want.full)
    if want.words is None:
        assert got.words is None
        return
    a, b = got.words, want.words
    assert a.shape == b.shape
    for x, y in ((a.indptr, b.indptr), (a.indices, b.indices), (a.data, b.data)):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    for x, y in zip(got.dots_arrays(), want.dots_arrays(), strict=True):
        assert x.dtype == y.dtype and np.array_equal(x, y)


@pytest.mark.parametrize("words", [True, False])
def test_kept_arrays_grown_past_their_room_equal_arrays_made_whole(words: bool) -> None:
    """An add appends its rows to the kept scoring arrays (graph.link.ScoringArrays): after
    many adds (the room outgrown several times) they are those made from the whole
    matrices; a parent's rows never move when a child grows (a dropped change's arrays,
    then the next change's from the same parent)."""
    vec, text = _universe(31, 600)
    ids = sorted(vec)
    rng = np.random.default_rng(5)
    n = 5
    arrays = ScoringArrays.of(_vec(ids[:n], vec, text, 10, words).matrix,
                              _vec(ids[:n], vec, text, 10, words).words)
    assert arrays.grown(np.zeros((0, arrays.dim), np.float32), None) is arrays  # nothing new
    while n < len(ids):
        k = min(int(rng.integers(1, 20)), len(ids) - n)
        whole = _vec(ids[: n + k], vec, text, 10, words)
        before = (arrays.matrix.copy(), arrays.full.copy(),
                  [a.copy() for a in arrays.dots_arrays()] if words else [])
        tail = whole.words[n:] if words else None
        dropped = arrays.grown(whole.matrix[n:][::-1].copy(),
                               tail[::-1] if tail is not None else None)
        assert dropped.n == n + k
        child = arrays.grown(whole.matrix[n:], tail)
        assert np.array_equal(arrays.matrix, before[0]) and np.array_equal(arrays.full, before[1])
        for x, y in zip(arrays.dots_arrays() if words else [], before[2], strict=True):
            assert np.array_equal(x, y)
        _same_arrays(child, ScoringArrays.of(whole.matrix, whole.words))
        arrays, n = child, n + k


@pytest.mark.parametrize("seed", range(4))
def test_the_pools_found_alone_are_the_builds(seed: int) -> None:
    """A state read from a stored graph finds its pools without ranking a list
    (graph.link.similar_pools): the same pools as the build's full_similar keeps."""
    from graph.link import similar_pools

    vec, text = _universe(700 + seed, 120)
    ids = sorted(vec)
    for pool, words in ((100, True), (7, False)):
        v = _vec(ids, vec, text, pool, words)
        kept: list[SimilarPools] = []
        full_similar(v, 5, 0.1, keep=kept)
        alone = similar_pools(v, 5, 0.1)
        assert alone is not None and kept
        assert pickle.dumps(_pools_by_id(alone)) == pickle.dumps(_pools_by_id(kept[0]))
    assert similar_pools(_vec(ids[:1], vec, text, 100, True), 5, 0.1) is None


def test_finding_the_pools_stops_when_asked() -> None:
    """A server closing during its warm-up: the pools pass ends at the next block."""
    from graph.link import similar_pools

    vec, text = _universe(900, 60)
    ids = sorted(vec)
    v = _vec(ids, vec, text, 100, True)
    asked: list[int] = []

    def stop() -> bool:
        asked.append(1)
        return True

    assert similar_pools(v, 5, 0.1, stop) is None
    assert asked == [1]  # asked before the first block, nothing computed
    assert similar_pools(v, 5, 0.1, lambda: False) is not None
