"""Readable reasons for graph hops, shared by the CLI and the API."""

from __future__ import annotations

from collections.abc import Mapping

from graph.model import Edge, RelType


def hop_reason(edge: Edge, labels: Mapping[str, str]) -> str:
    """A short sentence saying why two nodes on a path are joined.

    Directed hops name both ends ("PaRa mentions diffusion model"), so the sentence is
    right whichever way a path walks the edge.
    """
    if edge.type is RelType.SIMILAR_TO:
        return f"similar abstracts (cosine {edge.weight:.2f})"
    if edge.type is RelType.SHARES_TERM:
        return "share " + ", ".join(list(edge.attrs.get("terms", []))[:3])
    if edge.type is RelType.RELATED_TO:
        return f"concepts co-mentioned by {int(edge.attrs.get('count', edge.weight))} papers"
    verb = {
        RelType.MENTIONS: "mentions",
        RelType.USES: "uses",
        RelType.INTRODUCES: "introduces",
        RelType.CITES: "cites",
    }[edge.type]
    source = _short(labels.get(edge.source, edge.source))
    return f"{source} {verb} {_short(labels.get(edge.target, edge.target))}"


def _short(label: str, limit: int = 40) -> str:
    """A label cut to ``limit`` characters at a word boundary."""
    if len(label) <= limit:
        return label
    return label[:limit].rsplit(" ", 1)[0] + "…"
