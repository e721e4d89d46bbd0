"""Finding a node the way a person names it, shared by the CLI and the API."""

from __future__ import annotations

from collections.abc import Collection

from graph.errors import NotFoundError
from graph.model import GraphNode, NodeKind, Paper
from graph.store.base import GraphStore


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
    prefix = " ".join(ref.split()).casefold() + ":"
    if prefix == ":" or len(prefix) > 200:  # no label is that long
        return None
    for hit in store.keyword_search(ref, [NodeKind.PAPER], limit=20):
        if hit.node.label.casefold().startswith(prefix):
            return hit.node
    return None


def resolve_paper(store: GraphStore, ref: str) -> Paper:
    """A paper by id, label, title or short name; NotFoundError otherwise."""
    node = find(store, ref, [NodeKind.PAPER])
    if not isinstance(node, Paper):
        raise NotFoundError(f"no paper with id or label {ref!r}")
    return node
