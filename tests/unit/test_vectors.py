"""The float32 pass of vector search never changes the float64 answer."""

from __future__ import annotations

import numpy as np
import pytest

from graph.query.vectors import UnitMatrix, cosine, top_rows, unit_rows


def _exact(matrix: np.ndarray, ids: list[str], q: np.ndarray, limit: int,
           exclude: frozenset[str]) -> list[tuple[str, float]]:
    scores = cosine(unit_rows(matrix), q)
    for i, pid in enumerate(ids):
        if pid in exclude:
            scores[i] = -np.inf
    return [(ids[i], float(scores[i])) for i in top_rows(scores, limit)]


@pytest.mark.parametrize("seed", range(6))
def test_float32_pass_gives_the_float64_answer_ties_and_near_ties_included(seed: int) -> None:
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((300, 32)).astype(np.float32)
    # rows float32 cannot tell apart from others: copies, and copies moved by 1e-7 relative
    near = base[:40] * (1 + rng.choice([0.0, 1e-7, -1e-7, 3e-7], size=(40, 1))).astype(np.float32)
    matrix = np.vstack([base, base[:20], near]).astype(np.float32)
    ids = [f"p{i:04d}" for i in range(len(matrix))]
    vectors = UnitMatrix(ids, matrix)
    for qi in range(0, 60, 3):
        q = unit_rows(matrix[qi : qi + 1])[0]
        for limit in (1, 3, 10, 50, len(ids), len(ids) + 5):
            exclude = frozenset(rng.choice(ids, size=int(rng.integers(0, 30))).tolist())
            got = sorted(vectors.top(q, limit, exclude))
            assert got == sorted(_exact(matrix, ids, q, limit, exclude)), (qi, limit)


def test_everything_excluded_or_empty_or_other_dimension() -> None:
    matrix = np.eye(4, dtype=np.float32)
    ids = ["a", "b", "c", "d"]
    v = UnitMatrix(ids, matrix)
    q = unit_rows(matrix[:1])[0]
    assert v.top(q, 2, frozenset(ids)) == []
    assert v.top(q, 0, frozenset()) == []
    assert v.top(np.ones(3) / np.sqrt(3), 2, frozenset()) == []
    assert UnitMatrix([], np.zeros((0, 0), np.float32)).top(q, 3, frozenset()) == []
    assert sorted(v.top(q, 9, frozenset({"a"}))) == [("b", 0.0), ("c", 0.0), ("d", 0.0)]
