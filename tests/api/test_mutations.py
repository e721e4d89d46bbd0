"""addPapers / removePaper: API key required, incremental, report what changed."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from graph.model import NodeKind
from graph.store.embedded import EmbeddedStore
from tests.api.conftest import GQL
from tests.support.seeds import seed_settings

pytestmark = pytest.mark.slow

ADD = """mutation($in: [PaperInput!]!) { addPapers(input: $in) {
  added removed nodesWritten edgesWritten problems } }"""
ABSTRACT = (
    "We study retrieval-augmented generation with large language models (LLMs) and show that "
    "diffusion-based rerankers improve answer accuracy on open-domain question answering "
    "benchmarks while reducing hallucination across several model sizes."
)


def test_mutations_disabled_without_a_key(gql: GQL) -> None:
    (err,) = gql.errors(ADD, **{"in": [{"abstract": ABSTRACT}]})
    assert err["extensions"]["code"] == "FORBIDDEN"
    assert "CITEGRAPH_API_KEY" in err["message"]


def test_add_then_remove(writable_dir: Path) -> None:
    settings = seed_settings(writable_dir, api_key="s3cret", request_timeout_s=120.0)
    store = EmbeddedStore(settings.graph_db)
    before = store.stats()
    app = create_app(settings, opener=lambda _s: store)
    with TestClient(app) as c:
        gql = GQL(c)
        wrong = gql.raw(ADD, headers={"X-API-Key": "nope"}, **{"in": [{"abstract": ABSTRACT}]})
        assert wrong["errors"][0]["extensions"]["code"] == "FORBIDDEN"
        body = gql.raw(ADD, headers={"X-API-Key": "s3cret"}, **{"in": [
            {"id": "p-new-1", "title": "Diffusion rerankers for RAG", "abstract": ABSTRACT,
             "year": 2025},
            {"abstract": "too short"},
        ]})
        report = body["data"]["addPapers"]
        assert report["added"] == ["p-new-1"] and report["removed"] == []
        assert report["nodesWritten"] >= 1 and report["edgesWritten"] >= 1
        assert len(report["problems"]) == 1 and "input[1]" in report["problems"][0]
        p = gql.data('{ paper(id: "p-new-1") { title similar(first: 3) { score } '
                     "concepts { concept { key } } } }")["paper"]
        assert p["title"] == "Diffusion rerankers for RAG" and p["similar"]
        assert "concept:large-language-model" in {c["concept"]["key"] for c in p["concepts"]}
        removed = gql.raw('mutation { removePaper(id: "p-new-1") { removed added } }',
                          headers={"X-API-Key": "s3cret"})["data"]["removePaper"]
        assert removed == {"removed": ["p-new-1"], "added": []}
        assert gql.raw('{ paper(id: "p-new-1") { key } }')["data"]["paper"] is None
    assert store.stats() == before
    assert EmbeddedStore(settings.graph_db).stats().nodes[NodeKind.PAPER.value] == \
        before.nodes[NodeKind.PAPER.value]
