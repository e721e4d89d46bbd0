"""CITES and outside works: what a paper's references name, in the corpus or outside it.

A reference (graph.refs) that names a corpus paper is a CITES edge to it. A well-formed
one that names none is a CITES edge to an **outside work** (:class:`graph.model.Work`),
a node whose id is :func:`work_id` of its reference key: ``work:doi:10.1/x``,
``work:arxiv:2101.00001``, or ``work:`` + the id or title as written (an arXiv DOI,
``10.48550/arxiv.<id>``, is that arXiv id's work). A work is a pure function of its key,
so the whole build and an add (graph.region) make the same node from it; it exists while
some paper cites it, and gives way to the paper once one that its key names is in the
corpus (the same graph.refs.reference_target decides both).

Co-citation and bibliographic coupling are not stored: they are two-hop counts over
CITES that every store computes at read time (graph.store.base.CitationReads).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from graph.model import Edge, Paper, RelType, Work
from graph.refs import names_of, reference_target

WORK_PREFIX = "work:"
_ARXIV_DOI = "doi:10.48550/arxiv."


def work_id(ref: str) -> str:
    """The id of the outside work a reference key names."""
    if ref.startswith(_ARXIV_DOI):
        return WORK_PREFIX + "arxiv:" + ref[len(_ARXIV_DOI):]
    return WORK_PREFIX + ref


def work_of(ref: str) -> Work:
    """The outside work a reference key names (label: the title or id as written, the DOI,
    or ``arXiv:<id>``)."""
    wid = work_id(ref)
    body = wid[len(WORK_PREFIX):]
    if body.startswith("doi:"):
        name = body[4:]
    elif body.startswith("arxiv:"):
        name = "arXiv:" + body[6:]
    else:
        name = body
    return Work(wid, name, ref)


def cited(
    paper: Paper, papers: Mapping[str, Any], names: Mapping[str, Collection[str]]
) -> dict[str, Work | None]:
    """What ``paper``'s references name: target id -> None (a corpus paper) or the
    outside work. A reference to the paper itself names nothing."""
    out: dict[str, Work | None] = {}
    for ref in paper.references:
        target = reference_target(ref, papers, names)
        if target is None:
            work = work_of(ref)
            out.setdefault(work.id, work)
        elif target != paper.id:
            out[target] = None
    return out


def cites_edges(cited_ids: Iterable[str], source: str) -> list[Edge]:
    """The CITES edges from ``source`` to each of ``cited_ids``, in key order."""
    return [Edge(source, t, RelType.CITES, 1.0, {}) for t in sorted(set(cited_ids))]


def outside_works(papers: Iterable[Paper], known: Mapping[str, Any]) -> dict[str, Work]:
    """Every outside work ``papers`` cite (``known``: the graph's nodes by id)."""
    names = names_of(p for p in known.values() if isinstance(p, Paper))
    works: dict[str, Work] = {}
    for p in papers:
        for wid, work in cited(p, known, names).items():
            if work is not None:
                works.setdefault(wid, work)
    return works


def citation_edges(papers: Iterable[Paper], known: Mapping[str, Any]) -> list[Edge]:
    """CITES edges of ``papers``: to the corpus papers their references name (by DOI,
    arXiv id, id or title: graph.refs.reference_target), and to outside works."""
    names = names_of(p for p in known.values() if isinstance(p, Paper))
    edges: list[Edge] = []
    for p in sorted(papers, key=lambda q: q.id):
        edges.extend(cites_edges(cited(p, known, names), p.id))
    return edges
