"""Filters, sorts and paper counts (graph.query.filters) on every store.

The Backend primitives ``match_papers`` and ``count_papers`` (SQL on the embedded store,
one Cypher query on Neo4j, a walk in memory) must give, on a random graph with hostile
ids, venues and titles (quotes, query syntax, unicode, empty), exactly what a brute-force
pass over the papers gives, for random filters and every sort.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from graph.citations import work_of
from graph.errors import InvalidArgumentError
from graph.model import Concept, Dataset, Edge, GraphChange, NodeKind, Paper, RelType, Topic
from graph.query.filters import (
    MAX_VALUES,
    CountBy,
    GroupCount,
    PaperFilter,
    PaperOrder,
    PaperSort,
)
from graph.store.base import GraphStore
from tests.contract.test_ring_primitives import HOSTILE
from tests.contract.test_store_contract import KINDS

VENUES = ["ICLR", "Neur'IPS", 'a "quoted" venue', "", "Café", "Cafe\u0301", "v😀",
          "x}) RETURN 1 //"]
TITLES = ["Alpha", "alpha", "Éclair", "Zed", "z\U0001f600", "b'q", "", "\uffff end"]


#: two topics, a subtopic of the first (a hostile label) and a subtopic of the second
TOPICS = [Topic("topic:0", "graph learning"), Topic("topic:1", "Café o'neil"),
          Topic("topic:0.1", "q'\"} topic", 2, "topic:0"),
          Topic("topic:1.1", "sub 1", 2, "topic:1")]


def filter_graph(seed: int = 5) -> tuple[GraphChange, dict[str, Any]]:
    """Papers with random years, venues, titles, concepts, datasets, citations, topics
    (a topic and maybe its subtopic; some papers in none) and importance (some tied, some
    None)."""
    rng = random.Random(seed)
    ids = [*HOSTILE, *(f"p{i:02d}" for i in range(24))]
    papers = [
        Paper(i, f"Label {n}", "", f"h{n}",
              title=None if n % 9 == 0 else rng.choice(TITLES) + f" {n % 4}",
              year=None if n % 6 == 0 else 2015 + rng.randrange(8),
              venue=None if n % 7 == 0 else rng.choice(VENUES))
        for n, i in enumerate(ids)
    ]
    concepts = [Concept(f"concept:{c}", c, (), "concept") for c in ("gnn", "o'neil", "é", "x}")]
    datasets = [Dataset("dataset:cora", "Cora", ()), Dataset("dataset:q'\"", "Q", ())]
    work = work_of("doi:10.1/classic")
    edges: set[tuple[str, str, RelType]] = set()
    for p in ids:
        for c in rng.sample(concepts, rng.randint(0, 3)):
            edges.add((p, c.id, RelType.MENTIONS))
        for d in rng.sample(datasets, rng.randint(0, 1)):
            edges.add((p, d.id, rng.choice([RelType.USES, RelType.INTRODUCES])))
        for t in rng.sample([*ids, work.id], rng.randint(0, 4)):
            if t != p:
                edges.add((p, t, RelType.CITES))
    trng = random.Random(seed + 1)  # apart, so the draws above stay as they were
    for n, p in enumerate(ids):
        if n % 5 == 4:
            continue  # in no topic
        top = TOPICS[n % 2]
        edges.add((p, top.id, RelType.IN_TOPIC))
        if trng.random() < 0.5:
            edges.add((p, TOPICS[2 + n % 2].id, RelType.IN_TOPIC))
    papers = [dataclasses.replace(p, importance=None if n % 4 == 1 else trng.choice(
        [0.5, 0.25, 0.125, 0.0625, 1e-3, 0.0]) + (n % 3) * 1e-6)
        for n, p in enumerate(papers)]
    edges.update((t.id, t.parent, RelType.SUBTOPIC_OF) for t in TOPICS if t.parent)
    change = GraphChange(
        upsert_nodes=(*papers, *concepts, *datasets, work, *TOPICS),
        upsert_edges=tuple(Edge(s, t, typ, 1.0, {}) for s, t, typ in sorted(edges)),
    )
    return change, {"papers": papers, "edges": edges, "concepts": concepts,
                    "datasets": datasets, "topics": TOPICS}


def string_key(kind: str) -> Callable[[str], Any]:
    """How the store orders strings: by code point on every store (Neo4j 5 too)."""
    return lambda s: s


def brute_ids(g: dict[str, Any], where: PaperFilter) -> list[Paper]:
    edges = g["edges"]
    out = []
    for p in g["papers"]:
        if where.year_from is not None and (p.year is None or p.year < where.year_from):
            continue
        if where.year_to is not None and (p.year is None or p.year > where.year_to):
            continue
        if where.venue_set and p.venue not in where.venue_set:
            continue
        if where.concepts and not any((p.id, c, RelType.MENTIONS) in edges
                                      for c in where.concepts):
            continue
        if where.datasets and not any((p.id, d, t) in edges for d in where.datasets
                                      for t in (RelType.USES, RelType.INTRODUCES)):
            continue
        if where.topics and not any((p.id, t, RelType.IN_TOPIC) in edges for t in where.topics):
            continue
        out.append(p)
    return out


def brute_sorted(g: dict[str, Any], papers: list[Paper], sort: PaperSort | None,
                 key: Callable[[str], Any]) -> list[str]:
    ids = sorted((p.id for p in papers), key=key)
    if sort is None:
        return ids
    paper_ids = {p.id for p in g["papers"]}
    cites = Counter(t for s, t, typ in g["edges"] if typ is RelType.CITES and s in paper_ids)
    by = {p.id: p for p in papers}

    def value(i: str) -> Any:
        p = by[i]
        if sort.by is PaperOrder.YEAR:
            return p.year
        if sort.by is PaperOrder.TITLE:
            return key(p.title if p.title is not None else p.label)
        if sort.by is PaperOrder.IMPORTANCE:
            return p.importance
        return cites[i]

    known = [i for i in ids if value(i) is not None]
    known.sort(key=value, reverse=sort.descending)
    return known + [i for i in ids if value(i) is None]


def brute_counts(g: dict[str, Any], where: PaperFilter, by: CountBy, limit: int,
                 key: Callable[[str], Any]) -> list[GroupCount]:
    counts: Counter[Any] = Counter()
    top_level = {t.id for t in g["topics"] if t.level == 1}
    for p in brute_ids(g, where):
        if by is CountBy.CONCEPT:
            counts.update({c for s, c, t in g["edges"] if s == p.id and t is RelType.MENTIONS})
        elif by is CountBy.TOPIC:
            counts.update({c for s, c, t in g["edges"]
                           if s == p.id and t is RelType.IN_TOPIC and c in top_level})
        else:
            k = p.year if by is CountBy.YEAR else p.venue
            if k is not None:
                counts[k] += 1
    if by is CountBy.YEAR:
        keys = sorted(counts)
    else:
        keys = sorted(counts, key=lambda k: (-counts[k], key(k)))
    return [GroupCount(k, counts[k]) for k in keys[:limit]]


def random_filter(rng: random.Random, g: dict[str, Any]) -> PaperFilter:
    lo = rng.choice([None, 2015, 2017, 2019])
    hi = rng.choice([None, 2018, 2020, 2022])
    if lo is not None and hi is not None and lo > hi:
        lo, hi = hi, lo
    return PaperFilter(
        year_from=lo, year_to=hi,
        venues=tuple(rng.sample(VENUES, rng.choice([0, 0, 1, 2]))),
        concepts=tuple(c.id for c in rng.sample(g["concepts"], rng.choice([0, 0, 1, 2]))),
        datasets=tuple(d.id for d in rng.sample(g["datasets"], rng.choice([0, 0, 1]))),
        topics=tuple(t.id for t in rng.sample(g["topics"], rng.choice([0, 0, 1, 2]))),
    )


SORTS = [None, *(PaperSort(by, d) for by in PaperOrder for d in (False, True))]


@pytest.fixture(params=KINDS)
def loaded(
    request: pytest.FixtureRequest, make_store: Any
) -> tuple[GraphStore, dict[str, Any]]:
    """A store of each kind holding :func:`filter_graph`, and the graph as plain data."""
    s: GraphStore = make_store(request.param)
    change, g = filter_graph()
    s.apply(change)
    g["kind"] = request.param
    return s, g


def test_filters_sorts_and_counts_are_the_brute_force_answer(
    loaded: tuple[GraphStore, dict[str, Any]],
) -> None:
    s, g = loaded
    key = string_key(g["kind"])
    rng = random.Random(11)
    filters = [PaperFilter(), *(random_filter(rng, g) for _ in range(14)),
               PaperFilter(venues=("",)), PaperFilter(concepts=("concept:none",)),
               PaperFilter(topics=("topic:0.1",)),
               PaperFilter(topics=("topic:1",), concepts=("concept:gnn",), year_from=2016)]
    nonempty = 0
    for where in filters:
        want = brute_ids(g, where)
        nonempty += bool(want)
        for sort in SORTS:
            expected = brute_sorted(g, want, sort, key)
            got, total = s.papers(where, sort, offset=0, limit=1000)
            diff = [(a, b) for a, b in zip([p.id for p in got], expected, strict=False) if a != b]
            assert ([p.id for p in got], total) == (expected, len(expected)), (where, sort, diff)
            page, total = s.papers(where, sort, offset=3, limit=4)
            assert [p.id for p in page] == expected[3:7] and total == len(expected)
        for by in CountBy:
            assert s.paper_counts(by, where, 5) == brute_counts(g, where, by, 5, key), (where, by)
        # a list's candidates filtered by the store keep their order
        nodes = list(s.get_nodes([p.id for p in reversed(g["papers"])]).values())
        assert [n.id for n in s.kept(where, nodes)] == [
            n.id for n in nodes if n.id in {p.id for p in want}]
    assert nonempty >= 10  # the random filters are not all empty


def test_filter_edge_cases(loaded: tuple[GraphStore, dict[str, Any]]) -> None:
    s, _ = loaded
    assert s.papers(PaperFilter(year_from=3000), None) == ([], 0)
    assert s.paper_counts(CountBy.CONCEPT, PaperFilter(datasets=("dataset:none",))) == []
    # kinds: a paper list under kinds without Paper is empty; outside works fail paper fields
    concepts_only = PaperFilter(kinds=frozenset({NodeKind.CONCEPT}))
    assert s.papers(concepts_only) == ([], 0)
    assert s.paper_counts(CountBy.YEAR, concepts_only) == []
    work_id = work_of("doi:10.1/classic").id
    work = s.get_nodes([work_id])[work_id]
    assert s.kept(PaperFilter(year_from=2000), [work]) == []
    assert s.kept(PaperFilter(), [work]) == [work]
    with pytest.raises(InvalidArgumentError, match="year_from"):
        PaperFilter(year_from=2020, year_to=2019)
    with pytest.raises(InvalidArgumentError, match="at most"):
        PaperFilter(venues=tuple(str(i) for i in range(MAX_VALUES + 1)))
    with pytest.raises(InvalidArgumentError, match="first"):
        s.paper_counts(CountBy.YEAR, PaperFilter(), 0)


def test_citation_lists_filter_and_sort_in_the_store(
    loaded: tuple[GraphStore, dict[str, Any]],
) -> None:
    s, g = loaded
    seeds = [p.id for p in g["papers"][:6]]
    where = PaperFilter(concepts=("concept:gnn", "concept:o'neil"), year_from=2016)
    admitted = {p.id for p in brute_ids(g, where)}
    for read in ("prior_works", "derivative_works", "coupled", "cocited"):
        whole = getattr(s, read)(seeds, limit=1000)
        kept = getattr(s, read)(seeds, limit=1000, keep=where)
        assert [x.node.id for x in kept] == [x.node.id for x in whole if x.node.id in admitted]
        for sort in SORTS[1:]:
            papers = [p for p in g["papers"] if p.id in {x.node.id for x in kept}]
            got = getattr(s, read)(seeds, limit=3, keep=where, sort=sort)
            want = brute_sorted(g, papers, sort, string_key(g["kind"]))[:3]
            assert [x.node.id for x in got] == want


def test_filters_follow_a_change(loaded: tuple[GraphStore, dict[str, Any]]) -> None:
    """What a store keeps between reads (the memory store's paper list and citation
    counts) follows a write: a paper removed, another newly the most cited."""
    s, g = loaded
    by_cites = PaperSort(PaperOrder.CITATIONS, True)
    papers = [p.id for p in g["papers"]]
    s.papers(PaperFilter(), by_cites)  # read once, so that anything kept is kept
    s.paper_counts(CountBy.YEAR)
    last, gone = papers[-1], papers[0]
    new_edges = tuple(Edge(p, last, RelType.CITES, 1.0, {}) for p in papers[1:-1])
    s.apply(GraphChange(delete_nodes=(gone,), upsert_edges=new_edges))
    first, total = s.papers(PaperFilter(), by_cites, limit=1)
    assert [p.id for p in first] == [last] and total == len(papers) - 1
    assert gone not in {p.id for p in s.papers(PaperFilter(), limit=1000)[0]}
    assert sum(c.count for c in s.paper_counts(CountBy.YEAR, limit=100)) == sum(
        1 for p in g["papers"][1:] if p.year is not None)
