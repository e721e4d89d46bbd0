"""Every id the graph holds can be named by every route that takes ids (probe3 F3).

Ingest used to accept ids that the export route could not name: ``a,b`` (the ``ids``
list was split on commas), a lone zero-width space (``around`` said "must not be
empty" while ``paper(id:)`` found it), and ``café`` NFC and NFD as two papers that look
the same. These tests add such ids through the real API (real model, real pipeline),
and write the ones the old ingest let in straight through the pipeline, as an older
graph holds them, then name each one through GraphQL and every export parameter.
"""

from __future__ import annotations

import dataclasses
import io
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from graph.build import Pipeline
from graph.ingest import paper_from_record
from graph.store.embedded import EmbeddedStore
from tests.api.conftest import GQL
from tests.support.seeds import EMBED_CACHE, seed_settings

pytestmark = pytest.mark.slow

KEY = {"X-API-Key": "k3y"}
ADD = """mutation($in: [PaperInput!]!) { addPapers(input: $in) {
  added removed updated duplicates problems } }"""
NFC = unicodedata.normalize("NFC", "café-2024")
NFD = unicodedata.normalize("NFD", "café-2024")
ZWSP = "\u200b"
OLD_NFD = unicodedata.normalize("NFD", "naïve-bayes")
OLD_KELVIN = "\u212a-old"  # KELVIN SIGN: its key (NFC) is the ASCII "K-old"
HOSTILE = {
    "a,b": "Contrastive pretraining of vision transformers with large language models "
           "improves zero-shot image classification on ImageNet.",
    "x, y": "Sparse attention patterns let transformers read book-length documents with "
            "linear memory and little loss in perplexity.",
    "a": "Graph neural networks trained with message passing predict molecular "
         "properties on the QM9 benchmark with low error.",
    "x\ufeffy": "Diffusion models generate high fidelity images by reversing a gradual "
                "noising process with a learned denoiser.",
    "\u202eabc-rtl": "Reinforcement learning agents with intrinsic curiosity explore sparse "
                     "reward Atari games more efficiently than baselines.",
    NFC: "Retrieval-augmented generation with large language models reduces hallucination "
         "in open-domain question answering.",
}


def _paper(pid: str, abstract: str) -> Any:
    """A paper as the ingest of an older version built it, with ``pid`` unchecked."""
    return dataclasses.replace(paper_from_record({"abstract": abstract}, source="old"), id=pid)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, seed_dir: Path) -> Iterator[TestClient]:
    import shutil

    data = tmp_path_factory.mktemp("hostile-ids") / "data"
    shutil.copytree(seed_dir, data)
    settings = seed_settings(data, api_key="k3y", request_timeout_s=120.0)
    store = EmbeddedStore(settings.graph_db)
    # what an older graph may hold: ids the old ingest accepted, written as it wrote them
    pipeline = Pipeline(settings, cache_dir=EMBED_CACHE)
    try:
        pipeline.run(store, add_papers=[
            _paper(ZWSP, "Variational autoencoders learn disentangled latent factors of "
                         "speech with a hierarchical prior."),
            _paper(OLD_NFD, "Naive Bayes classifiers remain strong baselines for short text "
                            "sentiment classification with bag of words features."),
            _paper(OLD_KELVIN, "Thermal imaging datasets help pedestrian detection at night "
                               "when visible light cameras fail."),
        ])
    finally:
        pipeline.close()
    with TestClient(create_app(settings, opener=lambda _s: store)) as client:
        body = GQL(client).raw(ADD, headers=KEY, **{"in": [
            {"id": pid, "abstract": text} for pid, text in HOSTILE.items()
        ] + [{"id": "\u200b\u2060", "abstract": "Only invisible characters in this id are "
                                                 "refused with a clear reason."}]})
        report = body["data"]["addPapers"]
        assert sorted(report["added"]) == sorted(HOSTILE), body
        (problem,) = report["problems"]
        assert "input[6]" in problem and "no visible character" in problem, problem
        assert "U+200B U+2060" in problem
        yield client


def _export(client: TestClient, params: list[tuple[str, str]], fmt: str = "graphml") -> Any:
    r = client.get(f"/export/{fmt}", params=params)
    assert r.status_code == 200, (params, r.status_code, r.text)
    return nx.read_graphml(io.BytesIO(r.content))


ALL_IDS = [*HOSTILE, ZWSP, OLD_NFD]


@pytest.mark.parametrize("pid", ALL_IDS, ids=ascii)
def test_every_route_names_every_id(server: TestClient, pid: str) -> None:
    gql = GQL(server)
    assert gql.data("query($i: ID!) { paper(id: $i) { key } }", i=pid)["paper"]["key"] == pid
    node = gql.data("query($i: ID!) { node(id: $i) { ... on Paper { key } } }", i=pid)
    assert node["node"]["key"] == pid
    hood = gql.data("query($i: ID!) { neighborhood(id: $i) { nodes { id kind } } }", i=pid)
    keys = {n["id"]: n["kind"] for n in hood["neighborhood"]["nodes"]}
    assert keys[pid] == "PAPER"
    # the unambiguous export form: each value one id, whatever it holds
    other = next(k for k in ("a", "x\ufeffy") if k != pid)
    g = _export(server, [("ids", pid), ("ids", other)])
    assert set(g.nodes) == {pid, other}
    assert pid in _export(server, [("around", pid), ("depth", "1")]).nodes
    # a path from the paper to one of its concepts, both ends named by repeated params
    concept = next((k for k, kind in keys.items() if kind == "CONCEPT"), None)
    if concept is not None:
        assert {pid, concept} <= set(_export(server, [("path", pid), ("path", concept)]).nodes)
    # the single-value form still works for this id on its own
    assert set(_export(server, [("ids", pid)]).nodes) == {pid}


def test_the_comma_form_still_lists_ids_and_falls_back_to_a_whole_id(server: TestClient) -> None:
    seed = GQL(server).data("{ papers(first: 1) { edges { node { key } } } }")
    first = seed["papers"]["edges"][0]["node"]["key"]
    assert set(_export(server, [("ids", f"a,{first}")]).nodes) == {"a", first}
    # "a" is an id but "b" is none: the value whole is the id "a,b"
    assert set(_export(server, [("ids", "a,b")]).nodes) == {"a,b"}
    assert set(_export(server, [("ids", "a,b"), ("ids", "a")]).nodes) == {"a,b", "a"}
    assert set(_export(server, [("ids", "x, y")]).nodes) == {"x, y"}  # spaces and all
    gid = GQL(server).data('{ paper(id: "a") { id } }')["paper"]["id"]
    assert set(_export(server, [("ids", f"{gid}, {first}")]).nodes) == {"a", first}
    r = server.get("/export/gexf", params={"ids": "a,nope-1"})
    assert r.status_code == 404 and "'nope-1'" in r.text
    r = server.get("/export/gexf", params=[("path", "a,b"), ("path", "a"), ("path", "x")])
    assert r.status_code == 400 and "path=A&path=B" in r.text


def test_an_invisible_id_is_found_and_only_blanks_are_empty(server: TestClient) -> None:
    r = server.get("/export/graphml", params={"around": ZWSP})
    assert r.status_code == 200
    r = server.get("/export/graphml", params={"around": "\u2060"})  # no such id
    assert r.status_code == 404 and "no node" in r.text
    for blank in (" ", "\t "):
        r = server.get("/export/graphml", params={"around": blank})
        assert r.status_code == 400 and "must not be empty" in r.text
        errs = GQL(server).errors("query($i: ID!) { paper(id: $i) { key } }", i=blank)
        assert errs[0]["extensions"]["code"] == "INVALID_ARGUMENT"


def test_nfc_and_nfd_spellings_are_one_paper(server: TestClient) -> None:
    gql = GQL(server)
    # either spelling finds the paper, in every route, under the spelling it was added as
    for spelled, stored in ((NFD, NFC), (NFC, NFC), (unicodedata.normalize("NFC", OLD_NFD),
                                                     OLD_NFD)):
        got = gql.data("query($i: ID!) { paper(id: $i) { key } }", i=spelled)
        assert got["paper"]["key"] == stored
        nodes = gql.data("query($i: [ID!]!) { nodes(ids: $i) { ... on Paper { key } } }",
                         i=[spelled])
        assert nodes["nodes"] == [{"key": stored}]
        assert set(_export(server, [("ids", spelled), ("ids", "a")]).nodes) == {stored, "a"}
        assert stored in _export(server, [("around", spelled)]).nodes
    q = """query($t: String!, $ex: [ID!]) { related(text: $t, first: 5, exclude: $ex) {
      paper { key } } }"""
    hits = gql.data(q, t=HOSTILE[NFC])["related"]
    assert NFC in [h["paper"]["key"] for h in hits]
    hits = gql.data(q, t=HOSTILE[NFC], ex=[NFD])["related"]
    assert NFC not in [h["paper"]["key"] for h in hits]
    before = gql.data("{ stats { nodes { kind count } } }")["stats"]["nodes"]
    # an add under the other spelling updates that paper; it is not a second one
    body = gql.raw(ADD, headers=KEY, **{"in": [
        {"id": NFD, "title": "Spelled apart", "abstract": HOSTILE[NFC]},
        {"id": unicodedata.normalize("NFC", OLD_NFD), "title": "Old spelling kept",
         "abstract": "Naive Bayes classifiers remain strong baselines for short text "
                     "sentiment classification with bag of words features."},
    ]})
    report = body["data"]["addPapers"]
    assert report["added"] == [] and report["updated"] == 2, body
    after = gql.data("{ stats { nodes { kind count } } }")["stats"]["nodes"]
    assert after == before
    assert gql.data(f'{{ paper(id: "{NFC}") {{ key title }} }}')["paper"] == {
        "key": NFC, "title": "Spelled apart"}
    old = gql.data("query($i: ID!) { paper(id: $i) { key title } }", i=OLD_NFD)["paper"]
    assert old == {"key": OLD_NFD, "title": "Old spelling kept"}


def test_an_id_in_no_normal_form_is_named_by_its_key(server: TestClient) -> None:
    """An add finds a stored Kelvin-sign id by its ASCII key; paper(id:) and removePaper
    did not (probe 17: NOT_FOUND), nor did ``citegraph remove``."""
    gql = GQL(server)
    q = "query($i: ID!) { paper(id: $i) { key } }"
    assert gql.data(q, i="K-old")["paper"] == {"key": OLD_KELVIN}
    assert gql.data(q, i=OLD_KELVIN)["paper"] == {"key": OLD_KELVIN}
    assert gql.errors(q, i="k-old")[0]["extensions"]["code"] == "NOT_FOUND"
    body = gql.raw("mutation($i: ID!) { removePaper(id: $i) { removed } }", headers=KEY,
                   i="K-old")
    assert body["data"]["removePaper"]["removed"] == [OLD_KELVIN], body
    assert gql.errors(q, i="K-old")[0]["extensions"]["code"] == "NOT_FOUND"


def test_remove_names_the_odd_ids_too(server: TestClient) -> None:
    gql = GQL(server)
    for pid in (ZWSP, "a,b", NFD):
        body = gql.raw("mutation($i: ID!) { removePaper(id: $i) { removed } }", headers=KEY,
                       i=pid)
        assert body["data"]["removePaper"]["removed"] == [unicodedata.normalize("NFC", pid)
                                                          if pid == NFD else pid], body
    assert gql.raw("query($i: ID!) { paper(id: $i) { key } }", i=ZWSP)["data"]["paper"] is None
