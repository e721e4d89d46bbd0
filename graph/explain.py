"""Readable reasons for graph hops, shared by the CLI and the API."""

from __future__ import annotations

from collections.abc import Mapping

from graph.model import Edge, RelType


def hop_reason(edge: Edge, labels: Mapping[str, str]) -> str:
    """A short sentence saying why two nodes on a path are joined."""
    if edge.type is RelType.SIMILAR_TO:
        return f"similar abstracts (cosine {edge.weight:.2f})"
    if edge.type is RelType.SHARES_TERM:
        return "share " + ", ".join(list(edge.attrs.get("terms", []))[:3])
    if edge.type is RelType.MENTIONS:
        return f"mentions {labels.get(edge.target, edge.target)}"
    if edge.type is RelType.USES:
        return f"uses {labels.get(edge.target, edge.target)}"
    if edge.type is RelType.INTRODUCES:
        return f"introduces {labels.get(edge.target, edge.target)}"
    if edge.type is RelType.RELATED_TO:
        return f"concepts co-mentioned by {int(edge.attrs.get('count', edge.weight))} papers"
    return "cites"
