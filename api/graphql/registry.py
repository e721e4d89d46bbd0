"""The registry of node kinds and edge types (``graph.schema``) as GraphQL types.

Clients draw and word the graph from these, so a new edge type reaches the explorer
(colour, legend, toggle) with no change to its code.
"""

# mypy: disable-error-code="untyped-decorator"

from __future__ import annotations

import strawberry

from api.graphql.rows import NodeKindEnum, RelTypeEnum
from graph.schema import EDGE_TYPES, NODE_KINDS


@strawberry.type(description="How a node kind is drawn.")
class NodeKindSpec:
    kind: NodeKindEnum  # type: ignore[valid-type]
    name: str = strawberry.field(description="Its name in a legend (\"Paper\").")
    color: str = strawberry.field(description="CSS colour, e.g. `#2b6cb0`.")
    shape: str = strawberry.field(description="Cytoscape.js node shape, e.g. `ellipse`.")


@strawberry.type(description="What an edge type joins, and how it is drawn and worded.")
class EdgeTypeSpec:
    type: RelTypeEnum  # type: ignore[valid-type]
    source: NodeKindEnum  # type: ignore[valid-type]
    target: NodeKindEnum  # type: ignore[valid-type]
    undirected: bool = strawberry.field(
        description="Its direction means nothing (stored with source < target)."
    )
    name: str = strawberry.field(description="A short phrase for a legend (\"shares a term\").")
    color: str = strawberry.field(description="CSS colour, e.g. `#805ad5`.")
    shown: bool = strawberry.field(description="Drawn unless the user turns it off.")


def node_kinds() -> list[NodeKindSpec]:
    """Every node kind, in the registry's order."""
    return [
        NodeKindSpec(kind=s.kind, name=s.name, color=s.color, shape=s.shape)
        for s in NODE_KINDS.values()
    ]


def edge_types() -> list[EdgeTypeSpec]:
    """Every edge type, in the registry's order."""
    return [
        EdgeTypeSpec(
            type=s.type, source=s.source, target=s.target, undirected=s.undirected,
            name=s.name, color=s.color, shown=s.shown,
        )
        for s in EDGE_TYPES.values()
    ]
