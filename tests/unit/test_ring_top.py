"""The in-memory engine's ``ring_top`` (a ring's reach summed in numpy) against the plain
walk over ``ring_weights``, on random graphs with hub nodes and weights whose sums round
to ties at 9 decimals, before and after changes.

The ranking must be the plain walk's exactly: the same ids in the same order, and the same
count of reached nodes, so a depth-2 neighbourhood is the same whichever path served it.
"""

from __future__ import annotations

import random

import pytest

import graph.store.memory as memory
from graph.model import Concept, Edge, GraphChange, Paper, RelType
from graph.query.traverse import ring_top
from graph.store.memory import NetworkxStore

#: weights whose sums differ in the last bits (0.1 + 0.2 != 0.3) and tie once rounded
WEIGHTS = (0.1, 0.2, 0.3, 0.7, 1.0, 1 / 3, 2 / 3, 0.30000000000000004, 1e-10, 0.0)
TYPES = (RelType.SIMILAR_TO, RelType.SHARES_TERM, RelType.MENTIONS, RelType.CITES)


class PlainWalk(NetworkxStore):
    """The same store without its numpy ring: the query layer falls back to ring_weights."""

    def ring_top(self, *args: object, **kwargs: object) -> None:  # type: ignore[override]
        return None


def _graph(rng: random.Random, store: NetworkxStore, papers: int, hubs: int) -> list[str]:
    ps = [Paper(f"p{i:04d}", f"P{i}", "x", f"h{i}") for i in range(papers)]
    cs = [Concept(f"c{i:03d}", f"c{i}") for i in range(hubs)]
    edges = []
    for p in ps:
        for c in rng.sample(cs, rng.randint(1, 4)):  # a few hub concepts each
            edges.append(Edge(p.id, c.id, RelType.MENTIONS, rng.choice(WEIGHTS)))
        for q in rng.sample(ps, 3):
            if q.id != p.id:
                edges.append(Edge(p.id, q.id, rng.choice(TYPES[:2] + TYPES[3:]),
                                  rng.choice(WEIGHTS)))
    store.apply(GraphChange(upsert_nodes=(*ps, *cs), upsert_edges=tuple(edges)))
    return [n.id for n in (*ps, *cs)]


def _same_rankings(store: NetworkxStore, plain: NetworkxStore, rng: random.Random,
                   ids: list[str]) -> int:
    served = 0
    present = [i for i in ids if i in store.g]
    for _ in range(12):
        ring = rng.sample(present, rng.randint(1, 6))
        exclude = set(ring) | set(rng.sample(present, rng.randint(0, 30)))
        room = rng.choice([1, 5, 50, 200, 5000])
        own = store.ring_top(ring, None, None, exclude, room)
        want = ring_top(plain, ring, None, None, exclude, room)
        if own is not None:
            served += 1
            assert own == want
        assert ring_top(store, ring, None, None, exclude, room) == want
        for seed in rng.sample(present, 2):
            for depth, limit in ((2, 200), (2, 40), (3, 300)):
                assert store.neighborhood([seed], depth=depth, limit=limit) == \
                    plain.neighborhood([seed], depth=depth, limit=limit)
    return served


@pytest.mark.parametrize("seed", range(6))
def test_ring_top_ranks_as_the_plain_walk_through_changes(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory, "RING_ARRAYS_FROM", 0)  # every ring through numpy
    rng = random.Random(seed)
    store, plain = NetworkxStore(), PlainWalk()
    ids = _graph(random.Random(seed), store, papers=300, hubs=12)
    _graph(random.Random(seed), plain, papers=300, hubs=12)
    served = _same_rankings(store, plain, rng, ids)
    for _ in range(6):  # changes: the kept arrays and numbering must follow them
        present = sorted(store.g.nodes)
        gone = rng.sample(present, 5)
        new = [Edge(a, b, rng.choice(TYPES), rng.choice(WEIGHTS))
               for a, b in (rng.sample([i for i in present if i not in gone], 2)
                            for _ in range(20))]
        back = [Paper(f"n{seed}-{rng.randrange(10**6)}", "new", "x", "h")]
        new.append(Edge(back[0].id, rng.choice(present), RelType.CITES, 0.3))
        change = GraphChange(upsert_nodes=tuple(back), upsert_edges=tuple(new),
                             delete_nodes=tuple(gone))
        for s in (store, plain):
            s.apply(change)
        ids = [*ids, back[0].id]
        served += _same_rankings(store, plain, rng, ids)
    assert served > 0  # the numpy path really ran


def test_big_rings_go_through_numpy_and_small_ones_do_not() -> None:
    store = NetworkxStore()
    ids = _graph(random.Random(1), store, papers=3000, hubs=4)  # hubs of ~1,900 papers
    hubs = [i for i in ids if i.startswith("c")][:2]
    paper = ids[0]
    assert store.ring_top(hubs, None, None, set(hubs), 200) is not None
    assert store.ring_top([paper], None, None, {paper}, 200) is None
    assert store.ring_top(hubs, frozenset({RelType.MENTIONS}), None, set(hubs), 200) is None
    plain = PlainWalk()
    _graph(random.Random(1), plain, papers=3000, hubs=4)
    for ring in (hubs, ids[:3], [*hubs, ids[5]]):
        for room in (1, 200, 4000):
            assert ring_top(store, ring, None, None, set(ring), room) == \
                ring_top(plain, ring, None, None, set(ring), room)
