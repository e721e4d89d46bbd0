"""Cosine similarity as every store computes it: float64, unit rows, 6 decimals."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

Matrix = np.ndarray[Any, Any]

#: scores are rounded to this many places, so stores that sum in another order still tie
DECIMALS = 6


def unit_rows(matrix: Matrix) -> Matrix:
    """Rows scaled to length 1 in float64 (a zero row stays zero)."""
    if not matrix.size:
        return np.zeros((0, 0))
    m = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(m, axis=1)
    norms[norms == 0] = 1.0
    unit: Matrix = m / norms[:, None]
    return unit


def unit_vector(vector: Sequence[float] | Matrix) -> Matrix | None:
    """The query vector at length 1, or None when it is empty, zero or not finite."""
    v = np.asarray(vector, dtype=np.float64).ravel()
    norm = float(np.linalg.norm(v)) if v.size else 0.0
    if norm == 0 or not math.isfinite(norm):
        return None
    unit: Matrix = v / norm
    return unit


def cosine(unit_matrix: Matrix, unit: Matrix) -> Matrix:
    """Rounded cosine of each (unit) row with ``unit``."""
    scores: Matrix = np.round(unit_matrix @ unit, DECIMALS)
    return scores


def top_rows(scores: Matrix, take: int) -> list[int]:
    """Row numbers of the ``take`` best scores plus every row tied with the last of them.

    ``argpartition`` finds the top without sorting everything; the ties join so that the
    caller's (score, id) order is exact. Rows scored ``-inf`` (excluded) never come back.
    """
    n = int(scores.shape[0])
    if take <= 0 or n == 0:
        return []
    if take >= n:
        return [i for i in range(n) if scores[i] != -np.inf]
    part = np.argpartition(-scores, take - 1)[:take]
    kth = scores[part].min()
    if kth == -np.inf:
        return [int(i) for i in np.nonzero(scores > -np.inf)[0]]
    return [int(i) for i in np.nonzero(scores >= kth)[0]]
