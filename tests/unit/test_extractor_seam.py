"""The pipeline reaches concept extraction only through the Extractor protocol.

A second extractor (a fake that knows a fixed word list) is passed in; the graph must be
made of its concepts, and its ``version`` must key the extraction cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from graph.build import Pipeline
from graph.extract import Extraction, Extractor, PaperTerm, Resolution, TermMention
from graph.ingest import paper_from_record
from graph.model import Concept, NodeKind, Paper, RelType, concept_id
from graph.settings import Settings

ABSTRACTS = (
    "We study graph kernels for molecules and show that kernels over walks beat fingerprints.",
    "A survey of walks on graphs: random walks, quantum walks and their mixing times.",
    "Fingerprints of molecules are compared with learned embeddings on three property tasks.",
)
WORDS = ("walks", "fingerprints", "molecules")


class WordListExtractor:
    """Concepts are the words of a fixed list that a text contains; no datasets."""

    def __init__(self, version: str) -> None:
        self.version = version
        self.calls: list[str] = []

    def extract(self, text: str) -> Extraction:
        self.calls.append(text)
        low = text.lower()
        found = tuple(
            TermMention(w, w, low.count(w), text, "concept") for w in WORDS if w in low
        )
        return Extraction(concepts=found, datasets=(), acronyms=(), label=f"fake {len(found)}")

    def resolve(self, extractions: Mapping[str, Extraction]) -> Resolution:
        concepts: dict[str, Concept] = {}
        terms: list[PaperTerm] = []
        for pid in sorted(extractions):
            for m in extractions[pid].concepts:
                cid = concept_id(m.key)
                concepts[cid] = Concept(cid, m.key)
                terms.append(PaperTerm(pid, cid, NodeKind.CONCEPT, float(m.count), m.evidence,
                                       m.count))
        paper_terms: dict[str, dict[str, float]] = {}
        for t in terms:
            paper_terms.setdefault(t.paper, {})[t.term] = t.weight
        return Resolution(concepts, {}, terms, paper_terms)


def _papers() -> list[Paper]:
    return [paper_from_record({"abstract": a}, source=f"test:{i}") for i, a in enumerate(ABSTRACTS)]


def _pipeline(cache: Path, extractor: Extractor) -> Pipeline:
    return Pipeline(Settings(data_dir=cache), cache_dir=cache, extractor=extractor)


def test_a_second_extractor_makes_the_graph_and_its_version_keys_the_cache(
    tmp_path: Path,
) -> None:
    papers = _papers()
    fake = WordListExtractor("fake-1")
    pipe = _pipeline(tmp_path, fake)
    try:
        graph = pipe.compute(papers)
    finally:
        pipe.close()
    assert sorted(fake.calls) == sorted(p.abstract for p in papers)
    concepts = {n.id for n in graph.nodes.values() if n.kind is NodeKind.CONCEPT}
    assert concepts == {concept_id(w) for w in WORDS}  # the rule-based extractor made none
    mentions = {(e.source, e.target) for e in graph.edges.values() if e.type is RelType.MENTIONS}
    by_text = {p.abstract: p.id for p in papers}
    assert (by_text[ABSTRACTS[1]], concept_id("walks")) in mentions
    assert (by_text[ABSTRACTS[1]], concept_id("molecules")) not in mentions
    walks = graph.edges[(by_text[ABSTRACTS[1]], concept_id("walks"), RelType.MENTIONS)]
    assert walks.weight == 3.0  # the fake's weight (its count), not the rules' log weight
    for p in papers:  # an untitled paper takes the extractor's label
        n_words = sum(w in p.abstract.lower() for w in WORDS)
        assert graph.nodes[p.id].label == f"fake {n_words}"

    # same version: every extraction comes from the cache, none is recomputed
    again = WordListExtractor("fake-1")
    pipe = _pipeline(tmp_path, again)
    try:
        cached = pipe.compute(papers)
    finally:
        pipe.close()
    assert again.calls == []
    assert set(cached.edges) == set(graph.edges)

    # a new version finds nothing under its name and extracts every text again
    bumped = WordListExtractor("fake-2")
    pipe = _pipeline(tmp_path, bumped)
    try:
        pipe.compute(papers)
    finally:
        pipe.close()
    assert sorted(bumped.calls) == sorted(p.abstract for p in papers)
