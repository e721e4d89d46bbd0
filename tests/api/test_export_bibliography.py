"""``/export/bibtex`` and ``/export/ris``: a selection's papers for a reference manager."""

from __future__ import annotations

import bibtexparser
import pytest
import rispy
from fastapi.testclient import TestClient

from graph.model import NodeKind
from graph.store.memory import NetworkxStore

pytestmark = pytest.mark.slow


def test_ris_of_ids_reads_back(client: TestClient, seed_store: NetworkxStore) -> None:
    papers, _ = seed_store.list_nodes(NodeKind.PAPER, limit=3)
    ids = [p.id for p in papers]
    r = client.get(f"/export/ris?ids={','.join(ids)}")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/x-research-info-systems; charset=utf-8"
    assert r.headers["content-disposition"] == 'attachment; filename="citegraph.ris"'
    entries = rispy.loads(r.content.decode("utf-8"))
    assert sorted(e["id"] for e in entries) == sorted(ids)
    by_id = {p.id: p for p in papers}
    for e in entries:
        assert e["abstract"] == by_id[e["id"]].abstract


def test_bibtex_around_a_paper_holds_its_papers_only(
    client: TestClient, seed_store: NetworkxStore
) -> None:
    pid = seed_store.list_nodes(NodeKind.PAPER, limit=1)[0][0].id
    r = client.get(f"/export/bibtex?around={pid}&depth=1")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/x-bibtex; charset=utf-8"
    assert r.headers["content-disposition"] == 'attachment; filename="citegraph.bib"'
    library = bibtexparser.parse_string(r.content.decode("utf-8"))
    assert not library.failed_blocks
    around = seed_store.neighborhood([pid], 1, limit=500)
    want = {n.id for n in around.nodes if n.kind is NodeKind.PAPER}
    assert {e.key for e in library.entries} == want and pid in want


def test_bibliography_errors_are_clear(client: TestClient) -> None:
    r = client.get("/export/ris")  # the whole graph is not a reference list
    assert r.status_code == 400
    assert r.json()["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"
    assert "give ids, around or path" in r.json()["errors"][0]["message"]
    r = client.get("/export/bibtex?around=nope")
    assert r.status_code == 404 and "nope" in r.json()["errors"][0]["message"]
    r = client.get("/export/endnote?ids=x")
    assert r.status_code == 404 and "bibtex or ris" in r.json()["errors"][0]["message"]
