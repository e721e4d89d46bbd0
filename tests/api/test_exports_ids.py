"""Export of an explicit node set (what the explorer has on screen)."""

from __future__ import annotations

import io

import networkx as nx
from fastapi.testclient import TestClient


def test_export_ids_gives_exactly_those_nodes(client: TestClient) -> None:
    hits = client.post(
        "/graphql",
        json={
            "query": '{ search(query: "diffusion", kinds: [PAPER], first: 3)'
            " { node { ... on Paper { key } } } }"
        },
    ).json()
    keys = [h["node"]["key"] for h in hits["data"]["search"]]
    r = client.get("/export/graphml", params={"ids": ",".join(keys)})
    assert r.status_code == 200
    g = nx.read_graphml(io.BytesIO(r.content))
    assert set(g.nodes) == set(keys)


def test_export_ids_unknown_and_conflicting_args(client: TestClient) -> None:
    r = client.get("/export/gexf", params={"ids": "nope-1"})
    assert r.status_code == 404 and "nope-1" in r.text
    r = client.get("/export/gexf", params={"ids": "a", "around": "b"})
    assert r.status_code == 400
