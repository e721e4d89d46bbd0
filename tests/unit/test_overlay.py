"""graph.overlay: copy-on-write views that read like the dict (Overlay) or set (DeltaSet)
they would be, and leave it alone until applied (the region state's postings, terms and
titles; a term's papers)."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from graph.overlay import DeltaSet, Overlay


@pytest.mark.parametrize("seed", range(20))
def test_overlay_reads_as_the_copy_and_applies_to_it(seed: int) -> None:
    rng = random.Random(seed)
    keys = [f"k{i}" for i in range(12)]
    base: dict[str, int] = defaultdict(int)  # a defaultdict must not grow by a read
    for k in rng.sample(keys, 6):
        base[k] = rng.randint(0, 9)
    before = dict(base)
    view = Overlay(base)
    copy = dict(base)
    for _ in range(40):
        k = rng.choice(keys)
        op = rng.random()
        if op < 0.35:
            v = rng.randint(0, 9)
            view[k] = v
            copy[k] = v
        elif op < 0.6:
            if k in copy:
                del view[k]
                del copy[k]
            else:
                with pytest.raises(KeyError):
                    del view[k]
        elif op < 0.8:
            assert view.pop(k, None) == copy.pop(k, None)
        for q in keys:
            assert (q in view) == (q in copy)
            assert view.get(q, -1) == copy.get(q, -1)
            if q in copy:
                assert view[q] == copy[q]
            else:
                with pytest.raises(KeyError):
                    view[q]
        assert len(view) == len(copy)
        assert sorted(view) == sorted(copy)
        assert dict(base) == before  # untouched until applied
    view.apply()
    assert dict(base) == copy


@pytest.mark.parametrize("seed", range(20))
def test_delta_set_reads_as_the_copy_and_applies_in_place(seed: int) -> None:
    rng = random.Random(seed)
    items = [f"p{i}" for i in range(15)]
    base = set(rng.sample(items, 7))
    before = set(base)
    view = DeltaSet(base)
    copy = set(base)
    for _ in range(50):
        x = rng.choice(items)
        if rng.random() < 0.5:
            view.add(x)
            copy.add(x)
        else:
            view.discard(x)
            copy.discard(x)
        assert len(view) == len(copy)
        assert sorted(view) == sorted(copy)  # each member once
        assert all((q in view) == (q in copy) for q in items)
        assert view == copy and bool(view) == bool(copy)
        other = set(rng.sample(items, 5))
        assert (view - other, view | other, view & other) == (copy - other, copy | other,
                                                             copy & other)
        assert type(view - other) is set
        assert view.copy() == copy and type(view.copy()) is set
        assert base == before  # untouched until applied
    assert view.apply() is base
    assert base == copy
    assert sorted(view) == sorted(copy) and len(view) == len(copy)  # the view is base now
