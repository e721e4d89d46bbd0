"""Citation reads, once for every store: coupling, co-citation, prior and derivative works.

Over two Backend primitives: ``citation_overlap`` (the store counts two hops over CITES
where the graph is) and ``incident_edges``. Ranking, ties and the shared nodes shown are
decided here, so every store gives the same answer.

* **Bibliographic coupling** of a paper: the papers that cite works it cites (outside
  works included); **co-citation**: the papers (or outside works) cited together with it
  by corpus papers. Strength: Salton's cosine, shared / sqrt(n_a x n_b), where n counts
  the works each cites (coupling) or the papers citing each (co-citation); for several
  seeds, its mean over the seeds (a seed not joined to the node adds 0).
* **Prior works** of a set of seed papers (Connected Papers): the works the set cites
  most, outside works included; **derivative works**: the corpus papers that cite the set
  most. Ranked by how many seeds (-count, id).

Ties rank by id; the seeds themselves are never in an answer. A
:class:`~graph.query.filters.PaperFilter` (a ``where``) keeps the papers it admits before
the list is cut, checked by the store over the ranked candidates (an outside work has no
year, venue or concepts: a paper field drops it).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from enum import StrEnum
from typing import TYPE_CHECKING

from graph.errors import InvalidArgumentError
from graph.model import CitationLink, Paper, RelType
from graph.query.filters import ANY, PaperFilter, PaperSort
from graph.query.papers import kept, sorted_papers

if TYPE_CHECKING:
    from graph.store.base import Backend

class Relation(StrEnum):
    """A citation read of a set of seeds (module docstring)."""

    PRIOR = "prior"
    DERIVATIVE = "derivative"
    COUPLED = "coupled"
    COCITED = "cocited"


#: shared works (or citing papers) an answer names; ``count`` says how many in all
MAX_SHARED = 3
#: the longest list one call answers
MAX_LINKS = 1000


def _check(ids: Sequence[str], limit: int) -> list[str]:
    if not 1 <= limit <= MAX_LINKS:
        raise InvalidArgumentError("limit", f"must be between 1 and {MAX_LINKS}")
    return list(dict.fromkeys(ids))


def _links(
    backend: Backend,
    scores: dict[str, float],
    counts: dict[str, int],
    shared: dict[str, set[str]],
    limit: int,
    papers_only: bool,
    keep: PaperFilter,
    sort: PaperSort | None = None,
) -> list[CitationLink]:
    """The best ``limit`` by (-round(score, 9), id) that ``keep`` admits, with their nodes
    and first shared; ``sort``: the first ``limit`` of the papers among them by that
    order instead (sorted by the store; outside works have no year or citations)."""
    order = sorted(scores, key=lambda n: (-round(scores[n], 9), n))
    if sort is not None:
        order = sorted_papers(backend, keep, sort, order, limit)
        papers_only, keep = False, ANY
    whole = papers_only or not keep.empty
    nodes = backend.get_nodes(order if whole else order[:limit])
    if papers_only:
        order = [n for n in order if isinstance(nodes.get(n), Paper)]
    if not keep.empty:  # the store checks the filter over the candidates (graph.query.papers)
        order = [n.id for n in kept(backend, keep, [nodes[n] for n in order if n in nodes])]
    order = order[:limit]
    firsts = {n: sorted(shared[n])[:MAX_SHARED] for n in order}
    named = backend.get_nodes(sorted({s for f in firsts.values() for s in f}))
    return [
        CitationLink(
            node=nodes[n], strength=round(scores[n], 6), count=counts[n],
            shared=tuple(named[s] for s in firsts[n] if s in named),
        )
        for n in order
    ]


def overlap(
    backend: Backend, ids: Sequence[str], *, coupling: bool, limit: int = 20,
    papers_only: bool = True, keep: PaperFilter = ANY, sort: PaperSort | None = None,
) -> list[CitationLink]:
    """Coupling (``coupling``) or co-citation partners of the seeds (module docstring);
    ``papers_only``: corpus papers alone (co-citation also joins outside works)."""
    seeds = _check(ids, limit)
    with backend.reading():
        found = backend.citation_overlap(seeds, coupling)
        total: dict[str, float] = defaultdict(float)
        shared: dict[str, set[str]] = defaultdict(set)
        for o in found:
            if o.partner in seeds or not o.seed_degree or not o.partner_degree:
                continue
            total[o.partner] += len(o.shared) / math.sqrt(o.seed_degree * o.partner_degree)
            shared[o.partner].update(o.shared)
        scores = {n: s / len(seeds) for n, s in total.items()}
        counts = {n: len(s) for n, s in shared.items()}
        return _links(backend, scores, counts, shared, limit, papers_only, keep, sort)


def _cited_by_seeds(
    backend: Backend, ids: Sequence[str], limit: int, prior: bool, keep: PaperFilter,
    sort: PaperSort | None,
) -> list[CitationLink]:
    seeds = _check(ids, limit)
    with backend.reading():
        edges = backend.incident_edges(seeds, frozenset([RelType.CITES]))
        inside = set(seeds)
        shared: dict[str, set[str]] = defaultdict(set)
        for e in edges:
            seed, other = (e.source, e.target) if prior else (e.target, e.source)
            if seed in inside and other not in inside:
                shared[other].add(seed)
        counts = {n: len(s) for n, s in shared.items()}
        scores = {n: c / len(seeds) for n, c in counts.items()}
        return _links(backend, scores, counts, shared, limit, not prior, keep, sort)


def prior_works(
    backend: Backend, ids: Sequence[str], limit: int = 20, keep: PaperFilter = ANY,
    sort: PaperSort | None = None,
) -> list[CitationLink]:
    """The works the seeds cite most, outside works included (module docstring)."""
    return _cited_by_seeds(backend, ids, limit, True, keep, sort)


def derivative_works(
    backend: Backend, ids: Sequence[str], limit: int = 20, keep: PaperFilter = ANY,
    sort: PaperSort | None = None,
) -> list[CitationLink]:
    """The corpus papers that cite the seeds most (module docstring)."""
    return _cited_by_seeds(backend, ids, limit, False, keep, sort)


def reason_text(link: CitationLink, coupling: bool) -> str:
    """"both cite *Attention Is All You Need* and 3 more" / "cited together by *A* and 2
    more" (the first shared by id)."""
    first = link.shared[0].label if link.shared else None
    head = "both cite" if coupling else "cited together by"
    if first is None:
        return f"{head} {link.count}"
    more = link.count - 1
    return f"{head} *{first}*" + (f" and {more} more" if more > 0 else "")
