"""The registry (graph/schema.py) through the API: what clients draw and word edges with."""

from __future__ import annotations

import pytest

from graph.model import NodeKind, RelType
from graph.schema import EDGE_TYPES, NODE_KINDS, hop_reason
from graph.store.memory import NetworkxStore
from tests.api.conftest import GQL

pytestmark = pytest.mark.slow


def test_node_kinds_and_edge_types_are_the_registry(gql: GQL) -> None:
    d = gql.data("""{ nodeKinds { kind name color shape }
                      edgeTypes { type source target undirected name color shown } }""")
    assert d["nodeKinds"] == [
        {"kind": s.kind.name, "name": s.name, "color": s.color, "shape": s.shape}
        for s in NODE_KINDS.values()
    ]
    assert d["edgeTypes"] == [
        {"type": s.type.name, "source": s.source.name, "target": s.target.name,
         "undirected": s.undirected, "name": s.name, "color": s.color, "shown": s.shown}
        for s in EDGE_TYPES.values()
    ]
    # every type the schema's enum has is described, and nothing else
    assert {t["type"] for t in d["edgeTypes"]} == {t.name for t in RelType}


def test_every_graph_edge_carries_the_registrys_reason(
    gql: GQL, seed_store: NetworkxStore
) -> None:
    """Neighbourhood and path edges say why their ends are joined, in the registry's words."""
    pid = seed_store.keyword_search("diffusion", [NodeKind.PAPER], 1)[0].node.id
    sub = gql.data("""query($id: ID!) { neighborhood(id: $id, depth: 2, limit: 80) {
                        nodes { id label } edges { source target type weight terms reason } } }""",
                   id=pid)["neighborhood"]
    labels = {n["id"]: n["label"] for n in sub["nodes"]}
    stored = seed_store.neighborhood([pid], 2, limit=80)
    by_key = {(e.source, e.target, e.type.name): e for e in stored.edges}
    types = set()
    for e in sub["edges"]:
        edge = by_key[(e["source"], e["target"], e["type"])]
        assert e["reason"] == hop_reason(edge, labels), e
        assert e["reason"].strip()
        types.add(e["type"])
    assert {"MENTIONS", "SIMILAR_TO"} <= types  # more than one way of wording was checked
    # a path's edges say the same as its hops
    other = next(n["id"] for n in sub["nodes"] if n["id"] != pid and n["id"].startswith("p-"))
    p = gql.data("""query($a: ID!, $b: ID!) { shortestPath(from: $a, to: $b) {
                      edges { reason } hops { reason } } }""", a=pid, b=other)["shortestPath"]
    assert [e["reason"] for e in p["edges"]] == [h["reason"] for h in p["hops"]]
