"""Finding a node the way a person names it, shared by the CLI and the API."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from graph.errors import NotFoundError
from graph.model import GraphNode, NodeKind, Paper
from graph.store.base import GraphStore


@dataclass(frozen=True, slots=True)
class Resolution:
    """A name that named more than one node: which was picked, and the others."""

    argument: str
    ref: str
    picked: GraphNode
    others: tuple[GraphNode, ...]

    def message(self) -> str:
        """One line for a person: what the name was taken as, and how to get the others."""
        also = "; ".join(f"{_what(n)} (id {n.id})" for n in self.others)
        return f"{self.argument} {self.ref!r} taken as {_what(self.picked)}; it also names {also}"


def _what(node: GraphNode) -> str:
    return f"the {node.kind.value.lower()} {node.label!r}"


def find(
    store: GraphStore, ref: str, kinds: Collection[NodeKind] | None = None
) -> GraphNode | None:
    """A node by id, name, label, title or alias; a paper also by its short name.

    The short name is a label's part before ":" — "LocoVR" finds the paper labelled
    "LocoVR: dataset of …" when no node is *named* LocoVR among ``kinds``.
    """
    node = store.find_node(ref, kinds)
    if node is not None or (kinds is not None and NodeKind.PAPER not in kinds):
        return node
    short = _short_named(store, ref)
    return short[0] if short else None


def matches(
    store: GraphStore, ref: str, kinds: Collection[NodeKind] | None = None
) -> list[GraphNode]:
    """Every node ``ref`` names, the one :func:`find` picks first.

    "PaRa" names the concept PaRa and the paper labelled "PaRa: …" (its method's short
    name); a caller picks the first and can offer the others.
    """
    first = find(store, ref, kinds)
    if first is None:
        return []
    out = [first]
    if first.id == ref:  # an id names one node
        return out
    if kinds is None or NodeKind.PAPER in kinds:
        out += [n for n in _short_named(store, ref) if n.id != first.id]
    if first.kind is NodeKind.PAPER:
        others = [k for k in (kinds or list(NodeKind)) if k is not NodeKind.PAPER]
        other = store.find_node(ref, others) if others else None
        if other is not None and other.id != first.id:
            out.append(other)
    return out


def _short_named(store: GraphStore, ref: str) -> list[GraphNode]:
    """Papers whose label's part before ":" is ``ref`` (any case), best keyword hit first."""
    prefix = " ".join(ref.split()).casefold() + ":"
    if prefix == ":" or len(prefix) > 200:  # no label is that long
        return []
    return [
        hit.node
        for hit in store.keyword_search(ref, [NodeKind.PAPER], limit=20)
        if hit.node.label.casefold().startswith(prefix)
    ]


def resolve_paper(store: GraphStore, ref: str) -> Paper:
    """A paper by id, label, title or short name; NotFoundError otherwise."""
    node = find(store, ref, [NodeKind.PAPER])
    if not isinstance(node, Paper):
        raise NotFoundError(f"no paper with id or label {ref!r}")
    return node
