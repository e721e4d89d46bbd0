"""Exports open in graph tools: networkx reads back what it wrote, with stable ids."""

from __future__ import annotations

import io
import json

import networkx as nx
import pytest
from fastapi.testclient import TestClient

from graph.model import NodeKind
from graph.store.memory import NetworkxStore

pytestmark = pytest.mark.slow


def test_graphml_whole_graph_reads_back(client: TestClient, seed_store: NetworkxStore) -> None:
    r = client.get("/export/graphml")
    assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
    g = nx.read_graphml(io.BytesIO(r.content))
    stats = seed_store.stats()
    assert g.number_of_nodes() == sum(stats.nodes.values())
    assert g.number_of_edges() == sum(stats.edges.values())
    pid = seed_store.list_nodes(NodeKind.PAPER, limit=1)[0][0].id
    assert g.nodes[pid]["kind"] == "Paper" and g.nodes[pid]["label"]
    # SIMILAR_TO carries its rank and word overlap, so a graph tool can filter by them
    stored = {(e.source, e.target): e.attrs for e in seed_store.snapshot().edges.values()
              if e.type.value == "SIMILAR_TO"}
    similar = [(u, v, d) for u, v, d in g.edges(data=True) if d["type"] == "SIMILAR_TO"]
    assert len(similar) == len(stored)
    for u, v, d in similar:
        assert d["rank"] == stored[(u, v)]["rank"] and d["words"] == stored[(u, v)]["words"]


def test_gexf_around_a_paper_reads_back(client: TestClient, seed_store: NetworkxStore) -> None:
    pid = seed_store.list_nodes(NodeKind.PAPER, limit=1)[0][0].id
    r = client.get(f"/export/gexf?around={pid}&depth=2")
    assert r.status_code == 200
    g = nx.read_gexf(io.BytesIO(r.content))
    expected = seed_store.neighborhood([pid], 2, limit=500)
    assert set(g.nodes) == {n.id for n in expected.nodes}
    assert {d["kind"] for _, d in g.nodes(data=True)} <= {"Paper", "Concept", "Dataset"}


def test_cytoscape_path(client: TestClient, seed_store: NetworkxStore) -> None:
    papers, _ = seed_store.list_nodes(NodeKind.PAPER, limit=100)
    a, b = papers[0].id, papers[-1].id
    r = client.get(f"/export/cytoscape.json?path={a},{b}")
    assert r.status_code == 200
    data = json.loads(r.content)
    ids = [n["data"]["id"] for n in data["elements"]["nodes"]]
    assert a in ids and b in ids
    assert all(e["data"]["type"] for e in data["elements"]["edges"])


def test_export_errors_are_clear(client: TestClient) -> None:
    assert client.get("/export/pdf").status_code == 404
    r = client.get("/export/graphml?around=nope")
    assert r.status_code == 404 and "nope" in r.json()["errors"][0]["message"]
    r = client.get("/export/graphml?path=onlyone")
    assert r.status_code == 400
    assert r.json()["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"
