"""Names that named more than one node: the response says which was used, and the others.

"PaRa" is a concept and the short name of a paper. An argument that takes a name uses
the first (as the CLI does) and the response carries, under ``extensions.resolved``, what
it was taken as and the ids of the others, so a client can offer them (added by the
extension in :mod:`api.graphql.extension`).
"""

from __future__ import annotations

from typing import Any

from graph.lookup import Resolution
from graph.model import GraphNode


def _node(node: GraphNode) -> dict[str, str]:
    return {"id": node.id, "kind": node.kind.name, "label": node.label}  # as GraphQL spells kinds


def resolved_json(resolutions: list[Resolution]) -> list[dict[str, Any]]:
    """The ``extensions.resolved`` entries, one per argument whose name named several nodes."""
    return [
        {
            "argument": r.argument,
            "name": r.ref,
            "used": _node(r.picked),
            "others": [_node(n) for n in r.others],
            "message": r.message(),
        }
        for r in resolutions
    ]
