"""Co-citation and bibliographic coupling counted where the graph is: two hops over CITES.

The Backend primitive ``citation_overlap`` (graph.store.base) for the in-memory graph
(networkx) and for SQLite; Neo4j's is one Cypher query (graph.store.cypher). Nothing is
stored: a count over a paper's references and their citers costs what its answer holds.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from graph.model import Overlap, RelType

_CITES = RelType.CITES


def _along(adj: Mapping[str, Mapping[str, Any]], node: str) -> list[str]:
    return [v for v, keys in adj.get(node, {}).items() if _CITES in keys]


def overlap_in_memory(
    succ: Mapping[str, Mapping[str, Any]],
    pred: Mapping[str, Mapping[str, Any]],
    ids: Sequence[str],
    coupling: bool,
) -> list[Overlap]:
    """``citation_overlap`` over a networkx MultiDiGraph's adjacency (keys: edge types)."""
    out_, in_ = (succ, pred) if coupling else (pred, succ)
    found: list[Overlap] = []
    for seed in dict.fromkeys(ids):
        if seed not in succ:
            continue
        mine = _along(out_, seed)
        shared: dict[str, list[str]] = defaultdict(list)
        for w in mine:
            for q in _along(in_, w):
                if q != seed:
                    shared[q].append(w)
        found.extend(
            Overlap(seed, q, tuple(sorted(ws)), len(mine), len(_along(out_, q)))
            for q, ws in shared.items()
        )
    return sorted(found, key=lambda o: (o.seed, o.partner))


# the seed's end and the partner's end of the two CITES edges, and the shared end
_PAIRS = {
    True: "SELECT s.source, o.source, s.target FROM edges s JOIN edges o"
          " ON o.target = s.target AND o.type = ? AND o.source <> s.source"
          " WHERE s.type = ? AND s.source IN ({ids})",
    False: "SELECT s.target, o.target, s.source FROM edges s JOIN edges o"
           " ON o.source = s.source AND o.type = ? AND o.target <> s.target"
           " WHERE s.type = ? AND s.target IN ({ids})",
}
_DEGREES = {
    True: "SELECT source, count(*) FROM edges WHERE type = ? AND source IN ({ids})"
          " GROUP BY source",
    False: "SELECT target, count(*) FROM edges WHERE type = ? AND target IN ({ids})"
           " GROUP BY target",
}

#: runs ``sql`` with ``{ids}`` as placeholders for ``ids`` (in chunks), the params first
InQuery = Callable[[str, Iterable[str], Sequence[Any]], list[Any]]


def overlap_in_sql(query: InQuery, ids: Sequence[str], coupling: bool) -> list[Overlap]:
    """``citation_overlap`` in SQL: the pairs through one join over the edges' primary
    key and ``edges_target``, then each end's CITES degree by the same indexes."""
    rows = query(_PAIRS[coupling], ids, [_CITES.value, _CITES.value])
    shared: dict[tuple[str, str], list[str]] = defaultdict(list)
    for seed, partner, via in rows:
        shared[(seed, partner)].append(via)
    ends = {s for s, _ in shared} | {p for _, p in shared}
    degree = {n: int(c) for n, c in query(_DEGREES[coupling], sorted(ends), [_CITES.value])}
    return [
        Overlap(s, p, tuple(sorted(ws)), degree.get(s, 0), degree.get(p, 0))
        for (s, p), ws in sorted(shared.items())
    ]
