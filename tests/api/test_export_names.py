"""Exports find nodes the way every other query does (issue 14: around=SDE was a 404).

``/export/cytoscape.json?around=SDE`` used ``store.find_node`` while GraphQL and the CLI
used the lookup rules (a paper's short name); now all three go through one service.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import GQL

pytestmark = pytest.mark.slow

NEIGHBORHOOD = """query($id: ID!) { neighborhood(id: $id, depth: 1, limit: 500) {
  nodes { id } } }"""


@pytest.mark.parametrize("name", ["SDE", "LocoVR", "PaRa", "LLM"])
def test_export_around_a_short_name_matches_graphql(
    client: TestClient, gql: GQL, name: str
) -> None:
    shown = {n["id"] for n in gql.data(NEIGHBORHOOD, id=name)["neighborhood"]["nodes"]}
    r = client.get(f"/export/cytoscape.json?around={name}&depth=1")
    assert r.status_code == 200, r.text
    elements = r.json()["elements"]
    exported = {el["data"]["id"] for el in elements["nodes"]}
    assert exported == shown


def test_export_path_between_short_names(client: TestClient, gql: GQL) -> None:
    r = client.get("/export/cytoscape.json?path=LocoVR,SDE")
    assert r.status_code == 200, r.text
    ids = [el["data"]["id"] for el in r.json()["elements"]["nodes"]]
    assert len(ids) >= 2
