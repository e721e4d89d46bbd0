"""References as data: a DOI, an arXiv id or a title names a corpus paper as an id does.

The CITES edges an add makes from the region it touches (graph.region) must be the ones a
whole build makes (graph.citations.citation_edges), outside works included, and the
report counts the references read as resolved, outside or unparseable. Real pipeline,
real model (embeddings cached).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graph.build import BuildReport, Pipeline, graphs_equal
from graph.model import RelType, Work
from graph.store.base import GraphStore
from tests.support.seeds import EMBED_CACHE, seed_settings

pytestmark = pytest.mark.slow

A = {"id": "gat", "doi": "https://doi.org/10.1/GAT", "title": "Graph Attention Networks",
     "abstract": "We propose graph attention networks for node classification on citation "
                 "networks such as Cora and Citeseer."}
T = {"id": "transformer", "doi": "10.48550/arXiv.1706.03762", "title": "Attention Is All You Need",
     "abstract": "The transformer architecture relies on self-attention alone, without "
                 "recurrence or convolution, for machine translation."}
B = {"id": "citing", "abstract": "Kernel two sample tests with deep features are calibrated "
                                 "to keep their power on images and graphs.",
     "references": ["10.1/gat", {"title": "graph  attention NETWORKS"},
                    {"arxiv": "1706.03762v5"}, {"doi": "10.9/outside"},
                    "Some Classic Outside The Corpus", {"url": "nothing to go by"}]}


C = {"id": "second", "abstract": "Sparse attention patterns for long documents cut the cost "
                                 "of transformers on summarisation.",
     "references": ["10.9/outside", "arXiv:1706.03762"]}


def _file(tmp_path: Path, name: str, *records: dict[str, object]) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    return path


def _cites(store: GraphStore) -> list[tuple[str, str]]:
    edges = store.snapshot().edges.values()
    return sorted((e.source, e.target) for e in edges if e.type is RelType.CITES)


def _works(store: GraphStore) -> dict[str, str]:
    return {n.id: n.label for n in store.snapshot().nodes.values() if isinstance(n, Work)}


def _counts(report: BuildReport) -> tuple[int, int, int]:
    return (report.references_resolved, report.references_outside,
            report.references_unparseable)


@pytest.mark.parametrize("kind", ["embedded", pytest.param("neo4j", marks=pytest.mark.bolt)])
def test_references_by_doi_arxiv_and_title_on_both_paths(
    tmp_path: Path, kind: str, make_store: Any
) -> None:
    """On the embedded store and on Neo4j: the whole build, then the same corpus in two
    adds (the second from the region it touches), give the same CITES and the same graph."""
    data = tmp_path / "in"
    data.mkdir()
    citing = _file(data, "citing.jsonl", B)
    cited = _file(data, "cited.jsonl", A, T)

    # one Neo4j database: the whole build goes to the embedded store, the adds to Neo4j
    whole_store = make_store("embedded")
    whole = Pipeline(seed_settings(tmp_path / "w"), cache_dir=EMBED_CACHE, incremental=False)
    try:
        report = whole.run(whole_store, add_paths=[citing, cited], replace=True)
    finally:
        whole.close()
    # the DOI and the title both name gat: one edge; the arXiv id names transformer by
    # its arXiv DOI; the outside DOI and title are outside works, cited
    assert _cites(whole_store) == [
        ("citing", "gat"), ("citing", "transformer"),
        ("citing", "work:Some Classic Outside The Corpus"), ("citing", "work:doi:10.9/outside")]
    assert _works(whole_store) == {"work:Some Classic Outside The Corpus":
                                   "Some Classic Outside The Corpus",
                                   "work:doi:10.9/outside": "10.9/outside"}
    assert _counts(report) == (3, 2, 1)
    paper = whole_store.get_nodes(["citing"])["citing"]
    assert paper.references == (  # type: ignore[union-attr]
        "doi:10.1/gat", "graph attention NETWORKS", "arxiv:1706.03762", "doi:10.9/outside",
        "Some Classic Outside The Corpus")

    # the same corpus arriving in two adds: the citing paper first (all outside), then
    # the cited ones, whose DOI and title the region path must find the citer by
    store = make_store(kind)
    pipe = Pipeline(seed_settings(tmp_path / "r"), cache_dir=EMBED_CACHE)
    try:
        first = pipe.run(store, add_paths=[citing], replace=True)
        # every reference names an outside work; the arXiv one by its id
        assert _counts(first) == (0, 5, 1)
        assert _cites(store) == [("citing", w) for w in (
            "work:Some Classic Outside The Corpus", "work:arxiv:1706.03762",
            "work:doi:10.1/gat", "work:doi:10.9/outside", "work:graph attention NETWORKS")]
        held = pipe._state
        assert held is not None  # a long-lived pipeline: the next add goes by region
        second = pipe.run(store, add_paths=[cited])
        assert "load" not in second.stage_seconds  # no whole-graph read: the region path
        assert _counts(second) == (0, 0, 0)  # the papers read cite nothing
        assert _cites(store) == _cites(whole_store)
        assert graphs_equal(store.snapshot(), whole_store.snapshot()) == []
        # the works gat and transformer stood for are gone: they are papers now
        assert "work:doi:10.1/gat" not in _works(store)
        # a cited paper removed takes the edge to it, and its references are outside
        # works again (two: a DOI and a title named it), as a fresh build makes them
        pipe.run(store, remove=["gat"])
        assert _cites(store) == sorted([
            ("citing", "transformer"), ("citing", "work:Some Classic Outside The Corpus"),
            ("citing", "work:doi:10.1/gat"), ("citing", "work:doi:10.9/outside"),
            ("citing", "work:graph attention NETWORKS")])
        again = make_store("embedded")
        fresh = Pipeline(seed_settings(tmp_path / "f"), cache_dir=EMBED_CACHE, incremental=False)
        try:
            # the whole path: the graph computed from the corpus left, and diffed
            fresh.run(again, add_paths=[citing, cited], replace=True)
            fresh.run(again, remove=["gat"])
        finally:
            fresh.close()
        assert graphs_equal(store.snapshot(), again.snapshot()) == []
        # a second citer of the outside DOI: removing the first keeps the work it still
        # cites, and drops the ones only the first cited, as the whole path does
        pipe.run(store, add_paths=[_file(data, "second.jsonl", C)])
        pipe.run(store, remove=["citing"])
        assert _works(store) == {"work:doi:10.9/outside": "10.9/outside"}
        assert _cites(store) == [("second", "transformer"), ("second", "work:doi:10.9/outside")]
        fresh = Pipeline(seed_settings(tmp_path / "g"), cache_dir=EMBED_CACHE, incremental=False)
        try:
            fresh.run(again, remove=["citing"], add_paths=[_file(data, "second.jsonl", C)])
        finally:
            fresh.close()
        assert graphs_equal(store.snapshot(), again.snapshot()) == []
        # the last citer removed: no work is left
        pipe.run(store, remove=["second"])
        assert _works(store) == {} and _cites(store) == []
    finally:
        pipe.close()
