"""The flat rows of the graph-shaped payloads (neighborhood, paths) and their conversions.

``GraphNode``, ``GraphEdge`` and ``PathHop`` have plain attributes and no resolvers,
so :mod:`api.graphql.fastpath` can complete whole lists of them at once.
"""

# mypy: disable-error-code="untyped-decorator"

from __future__ import annotations

from collections.abc import Mapping
from operator import attrgetter
from typing import cast

import strawberry

from api.graphql.fastpath import Getter, RawRows
from graph import model
from graph.model import NodeKind, RelType
from graph.schema import hop_reason

NodeKindEnum = strawberry.enum(NodeKind, name="NodeKind", description="What a node is.")
RelTypeEnum = strawberry.enum(RelType, name="RelType", description="Relationship types.")


@strawberry.type(description="A node in a graph payload; `id` is the raw key edges refer to.")
class GraphNode:
    id: strawberry.ID
    label: str
    kind: NodeKindEnum  # type: ignore[valid-type]


@strawberry.type(description="An edge in its stored direction; `terms` for SHARES_TERM edges.")
class GraphEdge:
    source: strawberry.ID
    target: strawberry.ID
    type: RelTypeEnum  # type: ignore[valid-type]
    weight: float
    _edge: strawberry.Private[model.Edge]
    _labels: strawberry.Private[Mapping[str, str]]

    # computed when asked for: a depth-2 neighbourhood has thousands of edges, and
    # building every reason (and decoding every edge's stored attributes for its terms)
    # cost more than the query itself when the client only wanted source, target, type

    @strawberry.field
    def terms(self) -> list[str] | None:
        terms = self._edge.attrs.get("terms")
        return list(terms) if terms is not None else None

    @strawberry.field(
        description="Why its ends are joined, as a sentence (the registry's wording)."
    )
    def reason(self) -> str:
        return hop_reason(self._edge, self._labels)


@strawberry.type(description="One step of a path, in walking order, with why it is there.")
class PathHop:
    from_: strawberry.ID = strawberry.field(name="from")
    to: strawberry.ID
    type: RelTypeEnum  # type: ignore[valid-type]
    weight: float
    reason: str
    terms: list[str] | None


#: the types api.graphql.fastpath completes a list at a time
FLAT_ROWS = (GraphNode, GraphEdge, PathHop)


def graph_node(node: model.GraphNode) -> GraphNode:
    return GraphNode(id=strawberry.ID(node.id), label=node.label, kind=node.kind)


def graph_edge(edge: model.Edge, labels: Mapping[str, str]) -> GraphEdge:
    """The row for ``edge``; ``labels`` (node id -> label) words its reason."""
    return GraphEdge(
        source=strawberry.ID(edge.source), target=strawberry.ID(edge.target), type=edge.type,
        weight=edge.weight, _edge=edge, _labels=labels,
    )


@strawberry.type(description="Nodes and edges around the start; `truncated` when `limit` cut it.")
class Subgraph:
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    truncated: bool


def _terms(edge: model.Edge) -> list[str] | None:
    terms = edge.attrs.get("terms")
    return list(terms) if terms is not None else None


#: GraphNode's fields read straight from a domain node (see api.graphql.fastpath.RawRows)
NODE_FIELDS: Mapping[str, Getter] = {
    "id": attrgetter("id"), "label": attrgetter("label"), "kind": attrgetter("kind"),
}


def edge_fields(labels: Mapping[str, str]) -> Mapping[str, Getter]:
    """GraphEdge's fields read straight from a domain edge (``labels`` word its reason)."""
    return {
        "source": attrgetter("source"), "target": attrgetter("target"),
        "type": attrgetter("type"), "weight": attrgetter("weight"), "terms": _terms,
        "reason": lambda edge: hop_reason(edge, labels),
    }


def subgraph(sub: model.Subgraph) -> Subgraph:
    """The payload, its rows left as the domain nodes and edges until a path reads them
    one by one (the fast path reads the fields from those directly)."""
    labels = {n.id: n.label for n in sub.nodes}
    nodes = RawRows(sub.nodes, graph_node, NODE_FIELDS)
    edges = RawRows(sub.edges, lambda e: graph_edge(e, labels), edge_fields(labels))
    return Subgraph(
        nodes=cast(list[GraphNode], nodes), edges=cast(list[GraphEdge], edges),
        truncated=sub.truncated,
    )


@strawberry.type(description="An ordered path: `hops[i]` joins `nodes[i]` and `nodes[i+1]`.")
class Path:
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    hops: list[PathHop]
    length: int
    strength: float


def path(p: model.GraphPath) -> Path:
    labels = {n.id: n.label for n in p.nodes}
    hops = []
    for a, b, e in zip(p.nodes, p.nodes[1:], p.edges, strict=False):
        terms = e.attrs.get("terms")
        hops.append(
            PathHop(
                from_=strawberry.ID(a.id), to=strawberry.ID(b.id), type=e.type, weight=e.weight,
                reason=hop_reason(e, labels), terms=list(terms) if terms is not None else None,
            )
        )
    return Path(
        nodes=[graph_node(n) for n in p.nodes],
        edges=[graph_edge(e, labels) for e in p.edges],
        hops=hops,
        length=p.hops,
        strength=round(p.strength, 6),
    )
