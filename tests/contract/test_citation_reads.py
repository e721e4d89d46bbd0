"""Co-citation, bibliographic coupling, prior and derivative works on every store.

The Backend primitive ``citation_overlap`` (SQL on the embedded store, one Cypher query
on Neo4j, networkx in memory) must give, for every paper and outside work of a random
citation graph with hostile ids, exactly the pairs a brute-force count over the edge
list gives; the ranked reads over it (graph.query.citations) must then agree across
stores, Salton's cosine included, and follow the graph through a change that removes
an outside work and a paper.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import defaultdict
from typing import Any

import pytest

from graph.citations import work_of
from graph.errors import InvalidArgumentError
from graph.model import CitationLink, Edge, GraphChange, Overlap, Paper, RelType, Work
from graph.query.filters import PaperFilter
from graph.store.base import GraphStore
from tests.contract.test_ring_primitives import HOSTILE, backend
from tests.contract.test_store_contract import KINDS

CITES = RelType.CITES


def citation_graph(seed: int = 3) -> tuple[GraphChange, list[tuple[str, str]]]:
    """Hostile-id papers citing each other and a few outside works, plus other edges
    (SIMILAR_TO between the same papers: no citation)."""
    rng = random.Random(seed)
    ids = [*HOSTILE, *(f"p{i}" for i in range(14))]
    papers = [Paper(i, f"Paper {n}", "", f"h{n}", year=None if n % 7 == 0 else 2018 + n % 5,
                    venue=f"V{n % 2}") for n, i in enumerate(ids)]
    works = [work_of(r) for r in ("doi:10.1/classic", "Attention Is All You Need",
                                  "arxiv:1706.03762", "a 'quoted' title } RETURN 1")]
    targets = [*ids, *(w.id for w in works)]
    pairs: set[tuple[str, str]] = set()
    for p in ids:
        for t in rng.sample(targets, rng.randint(0, 6)):
            if t != p:
                pairs.add((p, t))
    edges = [Edge(a, b, CITES, 1.0, {}) for a, b in sorted(pairs)]
    edges += [Edge(a, b, RelType.SIMILAR_TO, 0.5, {}) for a, b in itertools.pairwise(ids)]
    return GraphChange(upsert_nodes=(*papers, *works), upsert_edges=tuple(edges)), sorted(pairs)


def brute(pairs: list[tuple[str, str]], nodes: list[str], coupling: bool) -> list[Overlap]:
    """Each node's partners through CITES, counted from the edge list alone."""
    out: dict[str, set[str]] = defaultdict(set)
    for a, b in pairs:
        if coupling:
            out[a].add(b)
        else:
            out[b].add(a)
    found = []
    for s in nodes:
        for q in sorted(out):
            shared = out[s] & out[q]
            if q != s and shared:
                found.append(Overlap(s, q, tuple(sorted(shared)), len(out[s]), len(out[q])))
    return sorted(found, key=lambda o: (o.seed, o.partner))


def _plain(links: list[CitationLink]) -> list[tuple[str, float, int, list[str]]]:
    return [(x.node.id, x.strength, x.count, [n.id for n in x.shared]) for x in links]


@pytest.mark.parametrize("kind", KINDS)
def test_citation_overlap_is_the_brute_force_count(kind: str, make_store: Any) -> None:
    s: GraphStore = make_store(kind)
    change, pairs = citation_graph()
    s.apply(change)
    b = backend(s)
    nodes = sorted(n.id for n in change.upsert_nodes)
    for coupling in (True, False):
        with b.reading():
            got = b.citation_overlap(nodes, coupling)
        want = brute(pairs, nodes, coupling)
        assert len(want) > 50  # the graph joins many pairs both ways
        assert got == want, f"coupling={coupling}"
        # one seed at a time, an unknown id and a repeat change nothing
        with b.reading():
            one = b.citation_overlap([nodes[3], "no such id", nodes[3]], coupling)
        assert one == [o for o in want if o.seed == nodes[3]]


@pytest.mark.parametrize("kind", KINDS)
def test_ranked_citation_reads_agree_with_memory_and_the_cosine(
    kind: str, make_store: Any
) -> None:
    s: GraphStore = make_store(kind)
    ref: GraphStore = make_store("memory")
    change, pairs = citation_graph()
    for store in (s, ref):
        store.apply(change)
    ids = [p.id for p in change.upsert_nodes if isinstance(p, Paper)]
    rng = random.Random(7)
    for _ in range(12):
        seeds = rng.sample(ids, rng.randint(1, 3))
        for read in ("coupled", "cocited", "prior_works", "derivative_works"):
            got = _plain(getattr(s, read)(seeds, limit=8))
            assert got == _plain(getattr(ref, read)(seeds, limit=8)), (read, seeds)
    # Salton's cosine, from the edge list: a paper and its best coupled partner
    out: dict[str, set[str]] = defaultdict(set)
    for a, t in pairs:
        out[a].add(t)
    seed = max(ids, key=lambda p: (len(out[p]), p))
    best = s.coupled([seed], limit=1)[0]
    q = best.node.id
    shared = out[seed] & out[q]
    assert best.strength == round(len(shared) / math.sqrt(len(out[seed]) * len(out[q])), 6)
    assert best.count == len(shared) and [n.id for n in best.shared] == sorted(shared)[:3]
    # prior works hold outside works; derivative works only corpus papers
    prior = s.prior_works(ids, limit=50)
    assert any(isinstance(x.node, Work) for x in prior)
    assert all(isinstance(x.node, Paper) for x in s.derivative_works(ids[:5], limit=50))


@pytest.mark.parametrize("kind", KINDS)
def test_citation_reads_follow_a_change(kind: str, make_store: Any) -> None:
    s: GraphStore = make_store(kind)
    change, pairs = citation_graph()
    s.apply(change)
    work = work_of("doi:10.1/classic").id
    citers = sorted(a for a, t in pairs if t == work)
    assert len(citers) >= 2
    before = _plain(s.cocited([work], limit=50, papers_only=False))
    assert before
    # the work becomes a paper: its citers' edges move to it, the work goes
    paper = Paper("classic", "A Classic", "", "hc", doi="10.1/classic")
    s.apply(GraphChange(
        upsert_nodes=(paper,), delete_nodes=(work,),
        upsert_edges=tuple(Edge(c, "classic", CITES, 1.0, {}) for c in citers),
    ))
    assert s.cocited([work], limit=50, papers_only=False) == []
    after = _plain(s.cocited(["classic"], limit=50, papers_only=False))
    assert [(n, st, c) for n, st, c, _ in after] == [(n, st, c) for n, st, c, _ in before]
    assert {x.node.id for x in s.derivative_works(["classic"], limit=50)} == set(citers)
    # a citer removed: it is in no answer any more
    s.apply(GraphChange(delete_nodes=(citers[0],)))
    assert citers[0] not in {x.node.id for x in s.derivative_works(["classic"], limit=50)}
    assert all(citers[0] not in [n.id for n in x.shared]
               for x in s.cocited(["classic"], limit=50, papers_only=False))


@pytest.mark.parametrize("kind", KINDS)
def test_citation_reads_keep_a_year_range_and_a_venue(kind: str, make_store: Any) -> None:
    s: GraphStore = make_store(kind)
    change, _ = citation_graph()
    s.apply(change)
    ids = [p.id for p in change.upsert_nodes if isinstance(p, Paper)]
    keep = PaperFilter(year_from=2019, year_to=2021, venue="V1")
    for read in ("coupled", "cocited", "prior_works", "derivative_works"):
        for seeds in (ids[:3], ids[5:6], ids):
            whole = getattr(s, read)(seeds, limit=1000)
            kept = getattr(s, read)(seeds, limit=1000, keep=keep)
            # the filtered list is the whole list less what the filter refuses, in order
            assert _plain(kept) == [x for x in _plain(whole)
                                    if keep.admits_fields(s.get_nodes([x[0]]).get(x[0]))]
            assert all(isinstance(x.node, Paper) and x.node.venue == "V1"
                       and x.node.year is not None and 2019 <= x.node.year <= 2021
                       for x in kept)
            # and cut after filtering: the first 2 admitted, not the admitted of the first 2
            assert _plain(getattr(s, read)(seeds, limit=2, keep=keep)) == _plain(kept)[:2]
    assert s.prior_works(ids[:10], limit=1000, keep=keep)  # not an empty check
    with pytest.raises(InvalidArgumentError):
        PaperFilter(year_from=2022, year_to=2020)
