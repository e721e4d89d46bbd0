"""Lookups by name, pages, keyword and vector search, written once over a Backend."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from graph.ids import id_key, spellings
from graph.model import GraphNode, NodeKind, SearchHit
from graph.query.rules import (
    check_count,
    hit_sort_key,
    kinds_filter,
    name_key,
    name_variants,
)
from graph.query.text import query_terms
from graph.query.vectors import Matrix, unit_vector

if TYPE_CHECKING:
    from graph.store.base import Backend


def names_of(node: GraphNode) -> set[str]:
    """The keys a node is found by: its label/name, title and aliases, folded."""
    names = (node.label, getattr(node, "title", None), *getattr(node, "aliases", ()))
    return {name_key(n) for n in names if n}


def find_node(b: Backend, name: str, kinds: Collection[NodeKind] | None) -> GraphNode | None:
    """Exact id (any of its :func:`~graph.ids.spellings`), then label/name, title or
    alias on name_variants (ties by lowest id), then the paper whose stored id has the
    key of ``name`` (a Kelvin sign's "K", as an add finds it)."""
    allowed = kinds_filter(kinds)
    with b.reading():
        forms = spellings(name)
        by_id = b.get_nodes(list(forms)) if forms else {}
        for form in forms:
            exact = by_id.get(form)
            if exact is not None and (allowed is None or exact.kind in allowed):
                return exact
        keys = name_variants(name)
        candidates = [
            n for n in b.nodes_named(keys) if allowed is None or n.kind in allowed
        ] if keys[0] else []
        for key in keys:  # the name itself before its singular, then the lowest id
            hits = [n for n in candidates if key in names_of(n)]
            if hits:
                return min(hits, key=lambda n: n.id)
        if not forms or (allowed is not None and NodeKind.PAPER not in allowed):
            return None
        # last: a scan of the odd ids (a whole-graph pass, but only for a lookup that
        # found nothing, and most graphs have none)
        odd = b.odd_paper_ids().get(id_key(name))
        return None if odd is None else b.get_nodes([odd]).get(odd)


def list_nodes(
    b: Backend,
    kind: NodeKind,
    *,
    offset: int,
    limit: int,
    venue: str | None,
    year: int | None,
    neighbor: str | None,
) -> tuple[list[GraphNode], int]:
    """A page of nodes of one kind ordered by id, and the total count."""
    kind = NodeKind(kind)
    check_count("offset", offset)
    check_count("limit", limit)
    with b.reading():
        return b.page(kind, offset=offset, limit=limit, venue=venue, year=year, neighbor=neighbor)


def keyword_search(
    b: Backend, query: str, kinds: Collection[NodeKind] | None, limit: int
) -> list[SearchHit]:
    """BM25 hits from the backend's index for the query's words; ties by id."""
    check_count("limit", limit)
    allowed = kinds_filter(kinds)
    terms = query_terms(query)
    if limit == 0 or not terms:
        return []
    scored = b.keyword_candidates(terms, allowed, limit)
    with b.reading():
        nodes = b.get_nodes([i for i, _ in scored])
    # an index may run ahead of the nodes a reader holds (the embedded store's mirror
    # follows other processes' commits within 0.2 s): such a hit waits for the next query
    hits = [
        SearchHit(nodes[i], round(s, 6))
        for i, s in scored
        if i in nodes and (allowed is None or nodes[i].kind in allowed)
    ]
    hits.sort(key=hit_sort_key)
    return hits[:limit]


def vector_search(
    b: Backend, vector: Sequence[float] | Matrix, limit: int, exclude: Collection[str]
) -> list[SearchHit]:
    """Papers by rounded cosine, descending; ties by id; a zero vector finds nothing."""
    check_count("limit", limit)
    unit = unit_vector(vector)
    if unit is None or limit == 0:
        return []
    with b.reading():
        scored = b.vector_candidates(unit, limit, frozenset(exclude))
        best = sorted(scored, key=lambda c: (-c[1], c[0]))[:limit]
        nodes = b.get_nodes([i for i, _ in best])
    return [SearchHit(nodes[i], s) for i, s in best if i in nodes]
