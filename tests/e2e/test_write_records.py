"""What an add does with records that repeat, move or update what the graph holds.

Found by an outside probe (h-probe2); each of these lost data or answered wrong before.

* A reference that names a concept or dataset id makes a CITES edge to that node.
* An add that gives an existing paper new text and puts its old text under a new id
  drops the new paper without a problem (the text is gone from the graph), while a
  fresh build of the same records keeps it.
* An add that gives an existing paper the text of another paper, or a new title or
  references with the same abstract, is dropped without a problem: the paper keeps
  what it had.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from graph.build import Pipeline, graphs_equal
from graph.errors import InvalidArgumentError, NotFoundError
from graph.ingest import paper_from_record
from graph.lookup import paper_to_remove
from graph.model import NodeKind, Paper, RelType
from graph.store.base import GraphStore
from graph.store.embedded import EmbeddedStore
from graph.store.memory import NetworkxStore
from tests.support.seeds import EMBED_CACHE, seed_settings

pytestmark = pytest.mark.slow

A = "We propose a method for graph learning that improves node classification on citation networks."
B = "Graph neural networks for node classification on citation networks are studied anew."
C = "Kernel two sample tests with deep features are calibrated to keep their power on images."


def _paper(pid: str, text: str, refs: list[str] | None = None) -> Paper:
    record: dict[str, object] = {"id": pid, "abstract": text}
    if refs:
        record["references"] = refs
    return paper_from_record(record, source=f"test:{pid}")


def _build(tmp_path: Path, papers: list[Paper]) -> tuple[Pipeline, NetworkxStore]:
    pipe = Pipeline(seed_settings(tmp_path), cache_dir=EMBED_CACHE)
    store = NetworkxStore()
    pipe.run(store, add_papers=papers, replace=True)
    return pipe, store


def test_a_reference_to_a_concept_id_is_no_citation(tmp_path: Path) -> None:
    first = _paper("r1", A)
    pipe, store = _build(tmp_path, [first])
    try:
        concept = next(n.id for n in store.snapshot().nodes.values() if n.kind is NodeKind.CONCEPT)
        pipe.run(store, add_papers=[_paper("r2", B, ["r1", concept])])
        data = store.snapshot()
        cites = sorted((e.source, e.target) for e in data.edges.values()
                       if e.type is RelType.CITES)
        # a concept is not a paper: the reference names an outside work of that key
        assert cites == [("r2", "r1"), ("r2", f"work:{concept}")]
        assert data.nodes[f"work:{concept}"].kind is NodeKind.WORK
    finally:
        pipe.close()


def test_moving_a_text_to_a_new_id_loses_nothing(tmp_path: Path) -> None:
    pipe, store = _build(tmp_path, [_paper("s1", A), _paper("s2", B)])
    try:
        report = pipe.run(store, add_papers=[_paper("s1", C), _paper("z9", A)])
        papers = {n.id: n for n in store.snapshot().nodes.values() if isinstance(n, Paper)}
        # the same records built fresh hold z9 with text A
        assert papers["z9"].abstract == A and papers["s1"].abstract == C
        assert not report.problems
    finally:
        pipe.close()


def test_an_update_to_another_papers_text_is_applied_or_reported(tmp_path: Path) -> None:
    pipe, store = _build(tmp_path, [_paper("s1", A), _paper("s2", B)])
    try:
        report = pipe.run(store, add_papers=[_paper("s1", B)])
        s1 = store.snapshot().nodes["s1"]
        assert isinstance(s1, Paper)
        assert s1.abstract == A  # not applied, and said why
        assert any("s2" in p.reason and "s1" in p.reason for p in report.problems)
    finally:
        pipe.close()


def test_a_new_title_or_reference_with_the_same_abstract_is_applied(tmp_path: Path) -> None:
    pipe, store = _build(tmp_path, [_paper("s1", A), _paper("s2", B)])
    try:
        again = paper_from_record(
            {"id": "s1", "abstract": A, "title": "A new title", "references": ["s2"]},
            source="test:s1-again",
        )
        report = pipe.run(store, add_papers=[again])
        data = store.snapshot()
        s1 = data.nodes["s1"]
        assert isinstance(s1, Paper)
        cites = [(e.source, e.target) for e in data.edges.values() if e.type is RelType.CITES]
        # a fresh build of these records has the title and the citation
        assert (s1.title, cites) == ("A new title", [("s1", "s2")])
        assert report.updated == 1 and not report.problems
    finally:
        pipe.close()


@pytest.mark.parametrize("one_shot", [False, True], ids=["server", "cli"])
def test_a_build_from_a_moved_file_counts_only_changed_papers_as_updated(
    tmp_path: Path, one_shot: bool
) -> None:
    """Probe 17 O4: a build of the same papers from a renamed or reordered file reported
    every paper "updated" (2,755 for 5 changed abstracts): each one's ``source`` is
    ``path:line``. The sources are still rewritten (a rebuild would write them). Both
    paths: a long-lived pipeline's, and the CLI's one-shot build written in parts."""
    def read(pid: str, text: str, where: str) -> Paper:
        return paper_from_record({"id": pid, "abstract": text}, source=where)

    first = [read("m1", A, "a.jsonl:1"), read("m2", B, "a.jsonl:2")]
    store: GraphStore
    if one_shot:
        pipe = Pipeline(seed_settings(tmp_path), cache_dir=EMBED_CACHE, incremental=False)
        store = EmbeddedStore(tmp_path / "graph.db", reads="sql")
        pipe.run(store, add_papers=first, replace=True)
    else:
        pipe, store = _build(tmp_path, first)
    try:
        report = pipe.run(store, add_papers=[read("m2", B, "b.jsonl:1"),
                                             read("m1", A, "b.jsonl:2")], replace=True)
        assert (report.added, report.updated, report.removed) == ([], 0, [])
        report = pipe.run(store, add_papers=[read("m2", C, "c.jsonl:1"),
                                             read("m1", A, "c.jsonl:2")], replace=True)
        assert (report.added, report.updated, report.removed) == ([], 1, [])
        nodes = store.snapshot().nodes
        assert [nodes[p].source for p in ("m1", "m2")] == ["c.jsonl:2", "c.jsonl:1"]  # type: ignore[union-attr]
    finally:
        pipe.close()
        store.close()


def test_an_update_keeps_the_fields_its_record_leaves_out(tmp_path: Path) -> None:
    """Outside probe, session 11: a record with a stored id and only a new abstract
    erased the paper's venue, year and title in silence."""
    full = paper_from_record(
        {"id": "u1", "abstract": A, "title": "Graph learning", "venue": "ICLR 2025",
         "authors": ["Ada Lovelace"], "references": ["u2"]},
        source="test:u1",
    )
    pipe, store = _build(tmp_path, [full, _paper("u2", B)])
    try:
        report = pipe.run(store, add_papers=[_paper("u1", C)])
        u1 = store.snapshot().nodes["u1"]
        assert isinstance(u1, Paper)
        assert u1.abstract == C and report.updated == 1 and not report.problems
        assert (u1.title, u1.label, u1.venue, u1.year) == (
            "Graph learning", "Graph learning", "ICLR 2025", 2025)
        assert (u1.authors, u1.references) == (("Ada Lovelace",), ("u2",))
        # a field the record gives is changed; the same record again is a duplicate
        report = pipe.run(store, add_papers=[paper_from_record(
            {"id": "u1", "abstract": C, "venue": "NeurIPS 2024"}, source="test:u1-venue")])
        u1 = store.snapshot().nodes["u1"]
        assert isinstance(u1, Paper)
        assert (u1.venue, u1.year, u1.title) == ("NeurIPS 2024", 2024, "Graph learning")
        report = pipe.run(store, add_papers=[_paper("u1", C)])
        assert report.updated == 0 and report.duplicates == 1
    finally:
        pipe.close()


def test_an_id_twice_in_one_add_with_two_texts_applies_neither(tmp_path: Path) -> None:
    # which of the two was meant is not for the write to guess, nor to go by their order
    # (it kept the first: issue 39, finding 12)
    pipe, store = _build(tmp_path, [_paper("s1", A)])
    try:
        report = pipe.run(store, add_papers=[_paper("q1", B), _paper("q1", C)])
        assert "q1" not in store.snapshot().nodes
        assert sum("twice" in p.reason for p in report.problems) == 2
    finally:
        pipe.close()


D = "Sparse mixture of experts routes each token to two experts and trains faster at scale."


@pytest.mark.parametrize("order", [0, 1])
def test_a_chain_of_text_moves_gives_one_graph_in_any_order(tmp_path: Path, order: int) -> None:
    """s1 takes s2's text while s2 takes a new one: refused in one order ("its new text is
    paper 's2''s"), applied in the other (issue 39, finding 12). Now both apply, in both
    orders, on the embedded store, and the graph is the one a fresh build of the same
    papers gives."""
    pipe = Pipeline(seed_settings(tmp_path), cache_dir=EMBED_CACHE)
    store = EmbeddedStore(tmp_path / "graph.db")
    try:
        pipe.run(store, add_papers=[_paper("s1", A), _paper("s2", B), _paper("s3", C)],
                 replace=True)
        batch = [_paper("s1", B), _paper("s2", D)]
        report = pipe.run(store, add_papers=batch[::-1] if order else batch)
        assert report.problems == [] and report.updated == 2
        fresh = NetworkxStore()
        pipe.run(fresh, add_papers=[_paper("s1", B), _paper("s2", D), _paper("s3", C)],
                 replace=True)
        assert graphs_equal(fresh.snapshot(), store.snapshot()) == []
    finally:
        store.close()
        pipe.close()


def test_a_new_id_with_a_stored_text_is_reported(tmp_path: Path) -> None:
    pipe, store = _build(tmp_path, [_paper("s1", A)])
    try:
        report = pipe.run(store, add_papers=[_paper("copy", A)])
        assert "copy" not in store.snapshot().nodes
        assert report.duplicates == 1
        assert any("s1" in p.reason for p in report.problems)
    finally:
        pipe.close()


def test_a_removal_by_a_shared_title_is_refused(tmp_path: Path) -> None:
    twins = [paper_from_record({"id": pid, "abstract": text, "title": title}, source=f"t:{pid}")
             for pid, text, title in (("tt1", A, "Same title"), ("tt2", B, "Same title"),
                                      ("tt3", C, "tt1"))]
    pipe, store = _build(tmp_path, twins)
    try:
        with pytest.raises(InvalidArgumentError, match="tt1, tt2"):
            paper_to_remove(store, "Same title")
        with pytest.raises(InvalidArgumentError):
            paper_to_remove(store, "same TITLE")
        assert paper_to_remove(store, "tt1").id == "tt1"  # an id is an id, not tt3's title
        pipe.run(store, remove=["tt1"])
        assert paper_to_remove(store, "tt1").id == "tt3"  # now only a title names it
        with pytest.raises(NotFoundError):
            paper_to_remove(store, "no such paper")
    finally:
        pipe.close()


def test_changed_similar_settings_rebuild_every_list(tmp_path: Path) -> None:
    papers = [_paper(f"s{i}", t) for i, t in enumerate((A, B, C))] + [
        _paper("s3", "Deep kernels calibrate two-sample tests on image data with more power."),
        _paper("s4", "Citation networks are classified by message passing graph networks."),
    ]
    _, store = _build(tmp_path, papers)
    five = Pipeline(seed_settings(tmp_path, similar_k=2), cache_dir=EMBED_CACHE)
    try:
        extra = _paper("s5", "Two-sample tests with learned kernels.")
        five.run(store, add_papers=[extra])
        fresh = NetworkxStore()
        five.run(fresh, add_papers=[*papers, extra], replace=True)
    finally:
        five.close()

    def similar(s: NetworkxStore) -> dict[tuple[str, str], dict[str, object]]:
        return {(e.source, e.target): e.attrs for e in s.snapshot().edges.values()
                if e.type is RelType.SIMILAR_TO}

    assert similar(store) == similar(fresh)
    assert all(len([t for (s, t) in similar(store) if s == src]) <= 2 for src, _ in similar(store))
