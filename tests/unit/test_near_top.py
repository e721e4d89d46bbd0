"""A neighbourhood ring's first ``room`` nodes, picked from a numpy pre-selection.

``traverse._near_top`` keeps only the nodes whose weight may rank in the first ``room``
under ``(-round(weight, 9), id)``; ranking those alone must give exactly what ranking
the whole ring gives, also when weights sit a hair apart around a rounding step.
"""

from __future__ import annotations

import heapq
import random

import pytest

from graph.query.traverse import _near_top


def _rank(reach: dict[str, float]):  # type: ignore[no-untyped-def]
    return lambda v: (-round(reach[v], 9), v)


@pytest.mark.parametrize("seed", range(30))
def test_near_top_keeps_everything_that_ranks_first(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 3000)
    base = [rng.choice([0.5, 1.0, 1.5, 0.123456789, 2.0]) for _ in range(n)]
    # weights a few 1e-10 around a step of round(., 9), and sums of many small weights
    reach = {
        f"n{rng.randrange(10**7):07d}": b + rng.choice([0.0, 4e-10, 5e-10, 6e-10, -5e-10, 1e-12])
        * rng.choice([0, 1]) + (sum(rng.random() * 0.1 for _ in range(rng.randint(0, 3))))
        for b in base
    }
    for room in (0, 1, 5, 50, 100, 200):
        kept = _near_top(reach, room)
        assert set(kept) <= set(reach) and len(set(kept)) == len(kept)
        assert heapq.nsmallest(room, kept, key=_rank(reach)) == heapq.nsmallest(
            room, reach, key=_rank(reach)
        )
    if n > 400:  # it does pre-select: far fewer than the ring when it is big
        assert len(_near_top(reach, 10)) < len(reach)


def test_near_top_with_ties_everywhere() -> None:
    reach = {f"n{i:05d}": 1.0 for i in range(1000)}
    reach.update({f"m{i:05d}": 1.0 + 4e-10 for i in range(10)})  # rounds to 1.0 too
    kept = _near_top(reach, 20)
    assert heapq.nsmallest(20, kept, key=_rank(reach)) == heapq.nsmallest(
        20, reach, key=_rank(reach)
    )
    assert _near_top({"a": float("nan"), **reach}, 5) == list({"a": 0.0, **reach})
