"""The bfloat16 prefilter of SIMILAR_TO's pools (graph.halfdot) changes no list.

The rough bfloat16 product only decides which papers are rescored exactly, so a build's
lists, hubs and kept pools must be the same to the bit with it and without it. Tried on
vectors made to break it: a coarse grid (exact ties at a pool's edge), repeated rows,
pairs 1e-7 apart, clusters tight enough that a pool's edge is crowded, vectors longer
than 1, and entries that sit on bfloat16's rounding boundaries; and the error bound the
prefilter widens its cut by is checked against float64 on the same kinds of vectors.
Where this CPU has no native bfloat16 product the build keeps float32: those tests skip
and say so. (A process without torch loaded keeps float32 too: :func:`graph.halfdot.usable`.)
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch  # noqa: F401 - loaded first, as in a server: graph.halfdot takes it then

from graph import halfdot
from graph.lexical import word_vectors
from graph.link import PaperVectors, SimilarPools, full_similar

needs_bf16 = pytest.mark.skipif(
    not halfdot.usable(), reason="this CPU has no native bfloat16 product (float32 is used)"
)


def _grid(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    base = np.round(rng.normal(size=(n, dim)) * 2) / 2
    base[np.abs(base).sum(axis=1) == 0, 0] = 1.0
    base[n // 2 : n // 2 + 6] = base[:6]
    base[n // 2 + 6 : n // 2 + 10] = base[6:10] + 1e-7 * rng.normal(size=(4, dim))
    return base / np.linalg.norm(base, axis=1, keepdims=True)


def _clusters(rng: np.random.Generator, n: int, dim: int, spread: float) -> np.ndarray:
    centres = rng.normal(size=(max(2, n // 60), dim))
    m = centres[rng.integers(0, len(centres), size=n)] + spread * rng.normal(size=(n, dim))
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _boundaries(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """Entries halfway between two bfloat16 numbers (rounding moves each the most)."""
    exp = rng.integers(-9, -2, size=(n, dim)).astype(np.float64)
    mant = 1 + (rng.integers(0, 128, size=(n, dim)) + 0.5) / 128
    m = rng.choice([-1.0, 1.0], size=(n, dim)) * mant * 2.0**exp
    # a shared direction (cosines near the cut, not near 0), exact in bfloat16; not made
    # unit length, which would move every entry off its boundary (norms ~1.0-1.1)
    m[:, 0] = 1.0
    return m


def _kinds(seed: int) -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    long = _clusters(rng, 300, 32, 0.3) * 1.7  # longer than 1: the bound widens
    return [
        ("grid", _grid(rng, 300, 6)),
        ("tight clusters", _clusters(rng, 400, 384, 0.15)),
        ("loose clusters", _clusters(rng, 400, 64, 0.6)),
        ("rounding boundaries", _boundaries(rng, 300, 128)),
        ("longer than 1", long),
    ]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bfloat16_products_stay_within_the_bound(seed: int) -> None:
    if not halfdot.usable():
        pytest.skip("this CPU has no native bfloat16 product (float32 is used)")
    for name, m in _kinds(seed):
        m32 = m.astype(np.float32)
        norm = float(np.linalg.norm(m32.astype(np.float64), axis=1).max())
        rows = list(range(0, len(m32), 3))
        bits = halfdot.HalfMatrix(m32).block_bits(rows)
        rough = halfdot.values(bits).astype(np.float64)
        exact = m32[rows].astype(np.float64) @ m32.astype(np.float64).T
        mask = np.ones_like(exact, dtype=bool)
        mask[np.arange(len(rows)), rows] = False  # each row's own entry is left out
        worst = float(np.abs(rough - exact)[mask].max())
        assert worst <= halfdot.error_bound(m32.shape[1], norm), name
        assert (bits[np.arange(len(rows)), rows] == np.iinfo(np.int16).min).all(), name


def test_bit_patterns_order_positive_values() -> None:
    rng = np.random.default_rng(7)
    for value in [*rng.uniform(1e-6, 1.0, size=2000), 0.3, 0.25, 2.0**-9, 1.0]:
        b = halfdot.bits_at_least(float(value))
        assert halfdot.values(np.asarray([b], dtype=np.int16))[0] >= value
        assert halfdot.values(np.asarray([b - 1], dtype=np.int16))[0] < value
    with pytest.raises(ValueError, match="positive"):
        halfdot.bits_at_least(0.0)


def _build(vec: PaperVectors, k: int, min_score: float) -> bytes:
    keep: list[SimilarPools] = []
    lists, hubs = full_similar(vec, k, min_score, keep=keep)
    pools = keep[0] if keep else None
    kept = [] if pools is None else [
        (pools.ids[i], *(a.tolist() for a in pools.row(i))) for i in range(len(pools.ids))
    ]
    return pickle.dumps((sorted(lists.items()), sorted(hubs.items()), kept))


@needs_bf16
@pytest.mark.parametrize(("seed", "pool", "k", "min_score", "words"), [
    (1, 5, 3, 0.3, True), (2, 12, 5, 0.1, False), (3, 30, 10, 0.3, True),
    (4, 3, 2, 0.5, True), (5, 100, 10, 0.2, False),
])
def test_a_build_with_the_bfloat16_prefilter_equals_one_without(
    seed: int, pool: int, k: int, min_score: float, words: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(50 + seed)
    vocab = [f"w{i:02d}" for i in range(25)]
    for name, m in _kinds(seed):
        ids = [f"p{i:04d}" for i in range(len(m))]
        texts = [" ".join(rng.choice(vocab, size=int(rng.integers(2, 7)))) for _ in ids]
        vec = PaperVectors(ids, m.astype(np.float32),
                           word_vectors(texts) if words else None, pool=pool)
        monkeypatch.setattr(halfdot, "MIN_CELLS", 0)  # every block in bfloat16
        with_half = _build(vec, k, min_score)
        monkeypatch.setattr(halfdot, "MIN_CELLS", 1 << 62)  # every block in float32
        without = _build(vec, k, min_score)
        assert with_half == without, name


def test_the_prefilter_keeps_float32_where_its_cut_is_not_above_zero(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A min score within the bound of 0 has no ordered cut in bit patterns: float32."""
    made: list[object] = []
    real = halfdot.HalfMatrix

    def spy(matrix: np.ndarray) -> halfdot.HalfMatrix:
        made.append(matrix)
        return real(matrix)

    monkeypatch.setattr(halfdot, "HalfMatrix", spy)
    monkeypatch.setattr(halfdot, "MIN_CELLS", 0)
    m = _clusters(np.random.default_rng(3), 200, 16, 0.5).astype(np.float32)
    ids = [f"p{i:03d}" for i in range(len(m))]
    lists, _ = full_similar(PaperVectors(ids, m, pool=10), 5, 0.01)
    assert not made
    assert sum(len(v) for v in lists.values()) == 5 * len(ids)


@needs_bf16
def test_a_vector_that_is_not_finite_keeps_float32(monkeypatch: pytest.MonkeyPatch) -> None:
    """A NaN's bit pattern sorts above every number, where float32 leaves it out: such a
    matrix (the store refuses to keep one, but a build computes before it writes) takes
    the float32 prefilter, and the lists are what float32 gives."""
    m = _clusters(np.random.default_rng(5), 300, 16, 0.4).astype(np.float32)
    m[7, 3] = np.nan
    ids = [f"p{i:03d}" for i in range(len(m))]
    vec = PaperVectors(ids, m, pool=10)
    monkeypatch.setattr(halfdot, "MIN_CELLS", 1 << 62)
    without = _build(vec, 5, 0.3)
    made: list[object] = []
    real = halfdot.HalfMatrix

    def spy(matrix: np.ndarray) -> halfdot.HalfMatrix:
        made.append(matrix)
        return real(matrix)

    monkeypatch.setattr(halfdot, "HalfMatrix", spy)
    monkeypatch.setattr(halfdot, "MIN_CELLS", 0)
    assert _build(vec, 5, 0.3) == without
    assert not made
