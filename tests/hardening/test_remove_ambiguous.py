"""A removal by a name that names several papers is refused with their ids, on both
stores, from the CLI and the API (probe 18, finding 3).

"Zeta: sparse …" and "Zeta: dense …" share the short name "Zeta"; "Kappa" is one
paper's title and another's short name. `citegraph remove Zeta` deleted one of them,
exited 0 and said nothing; `removePaper(id: "Zeta")` did the same. A shared *title* was
refused already; now every way a name names a paper counts.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import neo4j
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from graph.build import Pipeline
from graph.ingest import read_corpus
from graph.model import NodeKind, Paper
from graph.settings import Settings
from graph.store.base import GraphStore
from graph.store.embedded import EmbeddedStore
from graph.store.neo4j import Neo4jStore
from tests.conftest import BoltServer
from tests.support.seeds import EMBED_CACHE, SEEDS, seed_settings

pytestmark = [pytest.mark.slow]

TITLES = {
    "r1": "Zeta: sparse attention for long documents",
    "r2": "Zeta: dense retrieval with small encoders",
    "r5": "Kappa: calibrated uncertainty for classifiers",
    "r6": "Kappa",
    "r7": "Omega: one of a kind",
}


def _papers() -> list[Paper]:
    seeds = read_corpus([SEEDS]).papers
    return [
        Paper(id=pid, label=title, title=title, abstract=seeds[i].abstract,
              text_hash=seeds[i].text_hash)
        for i, (pid, title) in enumerate(TITLES.items())
    ]


@pytest.fixture(params=["embedded", "neo4j"])
def built(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[GraphStore, Settings, dict[str, str]]]:
    env = dict(os.environ, CITEGRAPH_DATA_DIR=str(tmp_path / "d"), HF_HUB_OFFLINE="1")
    store: GraphStore
    if request.param == "neo4j":
        bolt: BoltServer = request.getfixturevalue("bolt_server")
        driver = neo4j.GraphDatabase.driver(bolt.uri, auth=bolt.auth)
        store = Neo4jStore(driver, bolt.database, owns_driver=True)
        store.clear()
        env.update(CITEGRAPH_STORE="neo4j", NEO4J_URI=bolt.uri, NEO4J_USER=bolt.user,
                   NEO4J_PASSWORD=bolt.password, NEO4J_DATABASE=bolt.database)
        settings = seed_settings(tmp_path / "d", api_key="k", store="neo4j",
                                 neo4j_uri=bolt.uri, neo4j_user=bolt.user,
                                 neo4j_password=bolt.password, neo4j_database=bolt.database)
    else:
        settings = seed_settings(tmp_path / "d", api_key="k")
        store = EmbeddedStore(settings.graph_db)
    pipeline = Pipeline(settings, cache_dir=EMBED_CACHE)
    try:
        pipeline.run(store, add_papers=_papers(), replace=True)
    finally:
        pipeline.close()
    try:
        yield store, settings, env
    finally:
        if isinstance(store, Neo4jStore):
            store.clear()
        store.close()


def _ids(store: GraphStore) -> list[str]:
    return sorted(n.id for n in store.list_nodes(NodeKind.PAPER, offset=0, limit=50)[0])


def _remove(env: dict[str, str], ref: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "citegraph", "remove", ref], env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize(("ref", "named"), [("Zeta", {"r1", "r2"}), ("kappa", {"r5", "r6"})])
def test_a_name_of_several_papers_removes_none_and_lists_them(
    built: tuple[GraphStore, Settings, dict[str, str]], ref: str, named: set[str]
) -> None:
    store, settings, env = built
    before = _ids(store)
    out = _remove(env, ref)
    assert out.returncode != 0, out.stdout
    assert all(pid in out.stderr for pid in named), out.stderr
    assert "give the id" in out.stderr
    assert _ids(store) == before

    with TestClient(create_app(settings)) as client:  # its own store, closed at its end
        body = client.post(
            "/graphql", headers={"X-API-Key": "k"},
            json={"query": "mutation($r: ID!) { removePaper(id: $r) { removed } }",
                  "variables": {"r": ref}},
        ).json()
    assert body["data"] is None or body["data"].get("removePaper") is None, body
    (err,) = body["errors"]
    assert all(pid in err["message"] for pid in named), err
    assert _ids(store) == before


def test_a_name_of_one_paper_and_an_id_still_remove(
    built: tuple[GraphStore, Settings, dict[str, str]],
) -> None:
    store, _, env = built
    out = _remove(env, "Omega")  # one paper's short name, no other's
    assert out.returncode == 0, out.stderr
    assert "r7" not in _ids(store)
    out = _remove(env, "r1")  # an id names one paper, whatever names it shares
    assert out.returncode == 0, out.stderr
    assert _ids(store) == ["r2", "r5", "r6"]
