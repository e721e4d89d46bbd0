"""addPapers / removePaper: API key required, incremental, report what changed."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from graph.model import NodeKind, RelType
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


def test_fields_dropped_from_a_kept_paper_are_reported(writable_dir: Path) -> None:
    """A bad optional value is dropped and the paper kept; the report says which, per paper.

    Before, ``addPapers`` passed no notes to the record check, so the venue below vanished
    and the report said nothing. (A title is indexed: over its bound it rejects the record,
    tests/unit/test_index_bounds.py.)
    """
    settings = seed_settings(writable_dir, api_key="s3cret", request_timeout_s=120.0)
    store = EmbeddedStore(settings.graph_db)
    app = create_app(settings, opener=lambda _s: store)
    with TestClient(app) as c:
        gql = GQL(c)
        body = gql.raw(ADD, headers={"X-API-Key": "s3cret"}, **{"in": [
            {"id": "p-ok", "title": "Kept whole", "abstract": ABSTRACT + " One."},
            {"id": "p-long", "venue": "V" * 20_000, "authors": ["Ada Lovelace", "x" * 20_000],
             "abstract": ABSTRACT + " Two."},
            {"abstract": "too short"},
        ]})
        report = body["data"]["addPapers"]
        assert sorted(report["added"]) == ["p-long", "p-ok"]
        problems = report["problems"]
        assert [p for p in problems if p.startswith("input[0]")] == []
        dropped = [p for p in problems if p.startswith("input[1]: ")]
        assert len(dropped) == 2, problems
        assert any("venue" in p and "dropped" in p for p in dropped), dropped
        assert any("authors" in p and "dropped" in p for p in dropped), dropped
        assert all(len(p) < 500 for p in problems)  # the 20,000 characters are not echoed
        assert len([p for p in problems if p.startswith("input[2]: ")]) == 1
        paper = gql.data('{ paper(id: "p-long") { title venue authors } }')["paper"]
        assert paper == {"title": None, "venue": None, "authors": ["Ada Lovelace"]}


def test_a_paper_id_equal_to_an_alias_does_not_hide_the_concept(writable_dir: Path) -> None:
    """Ids are free text: a paper with id "LLM" made concept(name: "LLM") NOT_FOUND (probe)."""
    settings = seed_settings(writable_dir, api_key="s3cret", request_timeout_s=120.0)
    store = EmbeddedStore(settings.graph_db)
    app = create_app(settings, opener=lambda _s: store)
    concept = '{ concept(name: "LLM") { key paperCount } }'
    filtered = '{ papers(filter: {concept: "LLM"}, first: 50) { totalCount } }'
    with TestClient(app) as c:
        gql = GQL(c)
        before = gql.data(concept)["concept"]
        assert before["key"] == "concept:large-language-model"
        count = gql.data(filtered)["papers"]["totalCount"]
        body = gql.raw(ADD, headers={"X-API-Key": "s3cret"}, **{"in": [
            {"id": "LLM", "title": "A paper whose id is an alias", "abstract": ABSTRACT}]})
        assert body["data"]["addPapers"]["added"] == ["LLM"]
        after = gql.data(concept)["concept"]
        assert after["key"] == "concept:large-language-model"
        assert after["paperCount"] == before["paperCount"] + 1  # the new paper mentions LLMs
        assert gql.data(filtered)["papers"]["totalCount"] == count + 1
        # the paper is still found by its id
        assert gql.data('{ paper(id: "LLM") { key } }')["paper"] == {"key": "LLM"}
        # an argument that takes an id or a name takes the paper, and says the name is
        # the concept's too (it said nothing: outside probe, session 11)
        body = gql.raw('{ neighborhood(id: "LLM", depth: 1, limit: 5) { nodes { id } } }')
        [resolved] = body["extensions"]["resolved"]
        assert resolved["used"]["id"] == "LLM"
        assert [o["id"] for o in resolved["others"]] == ["concept:large-language-model"]


def test_write_problems_use_the_input_prefix(writable_dir: Path) -> None:
    """Field checks said ``input[i]: ...`` and the write's own checks (an id given twice)
    ``api:addPapers[i]: ...`` in one answer (outside probe, session 11)."""
    settings = seed_settings(writable_dir, api_key="s3cret", request_timeout_s=120.0)
    store = EmbeddedStore(settings.graph_db)
    app = create_app(settings, opener=lambda _s: store)
    with TestClient(app) as c:
        report = GQL(c).raw(ADD, headers={"X-API-Key": "s3cret"}, **{"in": [
            {"id": "p-twice", "abstract": ABSTRACT},
            {"id": "p-twice", "abstract": ABSTRACT + " Again."},
            {"abstract": "too short"},
        ]})["data"]["addPapers"]
        # one id, two texts: neither is applied, whichever comes first (issue 39, F12)
        assert report["added"] == []
        assert sorted(p.split(":", 1)[0] for p in report["problems"]) == [
            "input[0]", "input[1]", "input[2]"]
        assert "given twice" in next(p for p in report["problems"] if p.startswith("input[1]"))
        # no id given: the id made from the text is not called "given" (outside probe, F7)
        again = GQL(c).raw(ADD, headers={"X-API-Key": "s3cret"}, **{"in": [
            {"abstract": ABSTRACT + " Untitled."},
            {"abstract": ABSTRACT + " Untitled."},
        ]})["data"]["addPapers"]
        (said,) = again["problems"]
        assert said.startswith("input[1]: the same text as an earlier record without an id")
        assert "given twice" not in said


def test_add_papers_checks_fields_as_the_readers_do(writable_dir: Path) -> None:
    """addPapers builds its papers with the readers' paper_from_record, so the same
    bounds hold (issue 39): a title too long to index rejects its record (finding 2),
    a URL that is not an http(s), DOI or arXiv link is dropped with a problem (14)."""
    settings = seed_settings(writable_dir, api_key="s3cret", request_timeout_s=120.0)
    store = EmbeddedStore(settings.graph_db)
    app = create_app(settings, opener=lambda _s: store)
    with TestClient(app) as c:
        report = GQL(c).raw(ADD, headers={"X-API-Key": "s3cret"}, **{"in": [
            {"id": "p-long", "title": "T" * 9000, "abstract": ABSTRACT},
            {"id": "p-js", "url": "javascript:alert(1)", "abstract": ABSTRACT + " Again."},
            {"id": "p-doi", "url": "doi:10.1/x", "abstract": ABSTRACT + " Third."},
        ]})["data"]["addPapers"]
        assert sorted(report["added"]) == ["p-doi", "p-js"]
        assert report["problems"] == [
            "input[0]: title too long to index: 9000 characters > 1000",
            "input[1]: url: dropped 'javascript:alert(1)': not an http(s), DOI or arXiv link",
        ]
        urls = GQL(c).data('{ a: paper(id: "p-js") { url } b: paper(id: "p-doi") { url } }')
        assert urls == {"a": {"url": None}, "b": {"url": "https://doi.org/10.1/x"}}


def test_add_papers_with_dois_and_references(writable_dir: Path) -> None:
    """A DOI given to addPapers is the paper's; its references by DOI and title cite the
    papers of the graph, and the report counts them."""
    settings = seed_settings(writable_dir, api_key="s3cret", request_timeout_s=120.0)
    store = EmbeddedStore(settings.graph_db)
    app = create_app(settings, opener=lambda _s: store)
    add = """mutation($in: [PaperInput!]!) { addPapers(input: $in) {
      added referencesResolved referencesOutside referencesUnparseable problems } }"""
    with TestClient(app) as c:
        gql = GQL(c)
        report = gql.raw(add, headers={"X-API-Key": "s3cret"}, **{"in": [
            {"id": "d-cited", "title": "Diffusion rerankers for RAG", "abstract": ABSTRACT,
             "doi": "https://doi.org/10.5555/RAG"},
            {"id": "d-citing", "abstract": ABSTRACT + " We extend it to multilingual data.",
             "references": ["10.5555/rag", "DIFFUSION rerankers for RAG", "10.5555/elsewhere",
                            "x" * 20_000]},
        ]})["data"]["addPapers"]
        assert sorted(report["added"]) == ["d-cited", "d-citing"]
        assert (report["referencesResolved"], report["referencesOutside"],
                report["referencesUnparseable"]) == (2, 1, 1)
        assert any("references: dropped" in p for p in report["problems"])
        p = gql.data('{ paper(id: "d-citing") { doi } cited: paper(id: "d-cited") { doi } }')
        assert p == {"paper": {"doi": None}, "cited": {"doi": "10.5555/rag"}}
    cites = store.edges_of(["d-citing"], [RelType.CITES])
    # the DOI and the title name the paper once; the other DOI is an outside work
    assert sorted((e.source, e.target) for e in cites) == [
        ("d-citing", "d-cited"), ("d-citing", "work:doi:10.5555/elsewhere")]
