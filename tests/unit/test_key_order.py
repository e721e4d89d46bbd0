"""Edges put in key order by integer keys (graph.store.rows.in_key_order): the order of
``sorted`` by (source, target, type), ties kept in their order, for any ids."""

from __future__ import annotations

import random

import pytest

import graph.store.rows as rows
from graph.model import Edge, RelType

IDS = ["a", "a\x00", "a b", "B", "b", "\u00e9", "e\u0301", "\ud7ff", "\U0001f600", "z" * 40,
       "concept:x", "concept:x-y", "1", "10", "9", ""]


def _edges(seed: int, n: int) -> list[Edge]:
    rnd = random.Random(seed)
    types = list(RelType)
    # few ids and types, so that many edges share a key: ties must keep their order
    return [Edge(rnd.choice(IDS), rnd.choice(IDS), rnd.choice(types), float(i)) for i in range(n)]


@pytest.mark.parametrize("seed", range(5))
def test_the_order_of_sorted_ties_included(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rows, "KEY_ORDER_SORT_BELOW", 0)  # the integer path at any size
    edges = _edges(seed, 3000)
    want = sorted(edges, key=lambda e: (e.source, e.target, e.type.value))
    got = rows.in_key_order(edges)
    # weights number the edges: the same objects in the same order, ties as given
    assert [e.weight for e in got] == [e.weight for e in want]
    # already in order: the same order back
    assert [e.weight for e in rows.in_key_order(got)] == [e.weight for e in want]


def test_small_and_empty_inputs() -> None:
    assert rows.in_key_order([]) == []
    edges = _edges(9, 50)
    assert rows.in_key_order(edges) == sorted(edges, key=lambda e: (e.source, e.target,
                                                                    e.type.value))
