"""Lookups by name, pages, keyword and vector search, written once over a Backend."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from graph.model import GraphNode, NodeKind, SearchHit
from graph.query.rules import (
    check_count,
    hit_sort_key,
    kinds_filter,
    name_key,
    name_variants,
)
from graph.query.text import MAX_QUERY_CHARS, keyword_score
from graph.query.vectors import Matrix, unit_vector

if TYPE_CHECKING:
    from graph.store.base import Backend


def names_of(node: GraphNode) -> set[str]:
    """The keys a node is found by: its label/name, title and aliases, folded."""
    names = (node.label, getattr(node, "title", None), *getattr(node, "aliases", ()))
    return {name_key(n) for n in names if n}


def find_node(b: Backend, name: str, kinds: Collection[NodeKind] | None) -> GraphNode | None:
    """Exact id, then label/name, title or alias on name_variants; ties by lowest id."""
    allowed = kinds_filter(kinds)
    with b.reading():
        exact = b.get_nodes([name]).get(name)
        if exact is not None and (allowed is None or exact.kind in allowed):
            return exact
        keys = name_variants(name)
        if not keys[0]:
            return None
        candidates = [
            n for n in b.nodes_named(keys) if allowed is None or n.kind in allowed
        ]
    for key in keys:  # the name itself before its singular, then the lowest id
        hits = [n for n in candidates if key in names_of(n)]
        if hits:
            return min(hits, key=lambda n: n.id)
    return None


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
    """Candidates from the backend, scored with keyword_score; ties by id."""
    check_count("limit", limit)
    allowed = kinds_filter(kinds)
    if limit == 0 or not query[:MAX_QUERY_CHARS].strip():
        return []
    hits = []
    with b.reading():
        for node, text in b.keyword_candidates(query, allowed):
            score = keyword_score(query, text)
            if score > 0:
                hits.append(SearchHit(node, score))
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
