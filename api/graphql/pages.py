"""Pages of nodes for the list fields (``papers``, ``concepts``, ``datasets``).

Plain functions over the store, in domain types, run in a worker thread by the
resolvers. Only the API pages through nodes like this (the CLI searches instead), so
they live here rather than in :class:`graph.service.GraphService`.
"""

from __future__ import annotations

from collections.abc import Sequence

from graph.model import GraphNode, NodeKind, Paper
from graph.store import GraphStore

TEXT_FILTER_CAP = 10_000  # most candidates a free-text or combined filter considers


def text_page(
    store: GraphStore, kind: NodeKind, text: str | None, offset: int, first: int
) -> tuple[list[GraphNode], int]:
    """Nodes of ``kind`` by id, or those matching ``text`` best first; and the total."""
    if not text:
        return store.list_nodes(kind, offset=offset, limit=first)
    hits = store.keyword_search(text, [kind], TEXT_FILTER_CAP)
    return [h.node for h in hits[offset : offset + first]], len(hits)


def filtered_papers(
    store: GraphStore,
    *,
    neighbors: Sequence[str],
    venue: str | None,
    year: int | None,
    text: str | None,
    offset: int,
    first: int,
) -> tuple[list[Paper], int]:
    """Papers by id joined to every node in ``neighbors`` and matching ``text``.

    One neighbour and no text is one store page; more need the candidate pools
    intersected here (at most TEXT_FILTER_CAP papers each).
    """
    if len(neighbors) <= 1 and not text:
        nodes, total = store.list_nodes(
            NodeKind.PAPER, offset=offset, limit=first, venue=venue, year=year,
            neighbor=neighbors[0] if neighbors else None,
        )
        return [n for n in nodes if isinstance(n, Paper)], total
    joined: Sequence[str | None] = neighbors or [None]
    pools = [
        store.list_nodes(
            NodeKind.PAPER, offset=0, limit=TEXT_FILTER_CAP, venue=venue, year=year, neighbor=nb
        )[0]
        for nb in joined
    ]
    keep = set.intersection(*({n.id for n in pool} for pool in pools))
    papers = [n for n in pools[0] if n.id in keep and isinstance(n, Paper)]
    if text:
        matching = {h.node.id for h in store.keyword_search(text, [NodeKind.PAPER],
                                                            TEXT_FILTER_CAP)}
        papers = [p for p in papers if p.id in matching]
    return papers[offset : offset + first], len(papers)
