"""Cosine prefilters in bfloat16, with a proven bound on how far they may be off.

SIMILAR_TO's pools are found from a rough product of every paper against every paper
(the N x N x d float32 product was half of a 100k build's SIMILAR_TO time) and then
rescored exactly (float64), so the rough numbers only decide which papers are rescored.
Where the CPU multiplies bfloat16 natively (AVX512-BF16 or AMX, through oneDNN) and torch
is loaded already (:func:`usable`), the product in bfloat16 is ~1.5x as fast as float32
and half the memory; its error is bounded, so a prefilter that keeps every paper within
twice that bound of a cut misses none.

The bound, for vectors a and b of dimension d (unit roundoff u = 2^-8 of bfloat16):
rounding a and b to bfloat16 moves each product a_i b_i by at most (2u + u^2) |a_i b_i|;
oneDNN sums the d products in float32 (at most d x 2^-24 of the sum of their sizes); the
sum is rounded to bfloat16 (at most u of its size). By Cauchy-Schwarz every sum of |a_i
b_i| is at most |a| |b|, so |rough - a.b| <= (3u + u^2 + 1.01 d 2^-24) |a| |b|, ~0.012 for
unit vectors at d = 384 (0.0026 was the most seen, on the vectors of 30k synthetic
papers, bench/synthetic.py).
"""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

_U = 2.0**-8  # bfloat16's unit roundoff (8 significant bits)
#: at most this many dimensions (the float32 sum's share of the bound grows with d)
MAX_DIM = 4096
#: a block smaller than this many cells (rows x N: a corpus under ~10k papers) keeps
#: float32: the bfloat16 copy of the matrix and the first product's setup cost more than
#: it saves
MIN_CELLS = 4_000_000


def error_bound(dim: int, norm: float) -> float:
    """How far a bfloat16 dot product of two vectors of ``dim`` entries and length at
    most ``norm`` may be from the exact one (see the module's docstring)."""
    return (3 * _U + _U * _U + 1.01 * dim * 2.0**-24) * max(1.0, norm * norm)


def usable() -> bool:
    """Whether to take the bfloat16 product: torch is loaded in this process already (a
    server's, whose model runs in it) and this CPU multiplies bfloat16 natively (else
    the product is emulated, slower than float32's).

    torch is never imported for this alone: its import holds ~0.5 GB of RSS, and in a
    one-shot build (whose model runs in a process of its own) the peak went 1.96 -> 3.06
    GiB at 100k papers for 16 s of 237 (docs/benchmarks.md, round 21)."""
    return "torch" in sys.modules and _native()


@functools.cache
def _native() -> bool:
    try:
        import torch

        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except Exception:  # a torch without the check: float32
        return False


class HalfMatrix:
    """A float32 matrix held as bfloat16 (half its memory), for :meth:`block_bits`."""

    def __init__(self, matrix: NDArray[np.float32]) -> None:
        import torch

        self._torch = torch
        self._t = torch.from_numpy(np.ascontiguousarray(matrix, dtype=np.float32)).to(
            torch.bfloat16
        )

    def block_bits(self, rows: Sequence[int]) -> NDArray[np.int16]:
        """The bfloat16 products of ``rows`` against every row, as their bit patterns
        (int16: for values above 0 their order is the values' order; every negative
        value is below every positive one), each row's own entry left out (the lowest
        pattern)."""
        torch = self._torch
        at = torch.as_tensor(np.asarray(rows, dtype=np.int64))
        got = self._t.index_select(0, at) @ self._t.T
        bits: NDArray[np.int16] = got.view(torch.int16).numpy()
        bits[np.arange(len(rows)), np.asarray(rows)] = np.iinfo(np.int16).min
        return bits


def bits_at_least(value: float) -> int:
    """The lowest bfloat16 bit pattern whose value is >= ``value`` (> 0)."""
    if not value > 0:
        raise ValueError("only a positive cut has ordered bit patterns")
    b = int(np.float32(value).view(np.uint32)) >> 16
    if float(np.uint32(b << 16).view(np.float32)) < value:
        b += 1
    return b


def values(bits: NDArray[Any]) -> NDArray[np.float32]:
    """bfloat16 bit patterns as the float32 values they are (exactly)."""
    widened = bits.astype(np.uint16).astype(np.uint32) << np.uint32(16)
    return widened.view(np.float32)
