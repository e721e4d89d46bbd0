"""One long-lived pipeline (as the API keeps) through adds and removes equals fresh rebuilds.

The API's pipeline keeps its resolver and the corpus's extractions between writes, so an
add resolves only what it can reach. After every step of a sequence (add, remove,
add-then-remove, a changed text, an acronym defined by a new paper that changes how old
papers resolve) the stored graph must equal a full build of the same papers by a fresh
pipeline, and an add must not have re-resolved the whole corpus.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graph.build import Pipeline, graphs_equal
from graph.errors import NotFoundError
from graph.ingest import paper_from_record, read_corpus
from graph.model import GraphData, Paper, concept_id
from graph.store.embedded import EmbeddedStore
from graph.store.memory import NetworkxStore
from tests.support.seeds import EMBED_CACHE, SEEDS, seed_settings
from tests.support.updates import updated

pytestmark = pytest.mark.slow

BARE = [
    "We probe the DKV cache of transformer models with short prompts and long prompts.",
    "A DKV layout for sharded serving: we measure DKV hit rates under skewed load.",
]
DEFINES = "A distributed key value (DKV) store shards a cache across many machines."


def _paper(pid: str, text: str) -> Paper:
    return paper_from_record({"id": pid, "title": f"Paper {pid}", "abstract": text},
                             source=f"test:{pid}")


@pytest.fixture(scope="module")
def seed_papers() -> list[Paper]:
    result = read_corpus([SEEDS])
    assert not result.problems
    return result.papers


@pytest.fixture(scope="module")
def settings_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("incremental-pipeline")


@pytest.fixture()
def pipeline(settings_dir: Path) -> Iterator[Pipeline]:
    p = Pipeline(seed_settings(settings_dir), cache_dir=EMBED_CACHE)
    yield p
    p.close()


def _rebuild(settings_dir: Path, papers: list[Paper]) -> GraphData:
    fresh = Pipeline(seed_settings(settings_dir), cache_dir=EMBED_CACHE)
    try:
        store = NetworkxStore()
        fresh.run(store, add_papers=papers, replace=True)
        return store.snapshot()
    finally:
        fresh.close()


def _same(store: EmbeddedStore, settings_dir: Path, papers: dict[str, Paper]) -> GraphData:
    got = store.snapshot()
    full = _rebuild(settings_dir, list(papers.values()))
    assert graphs_equal(full, got) == []
    # stored attributes too (evidence, kept_by, shared terms), not only weights
    assert full.edges == got.edges
    return got


def test_a_long_lived_pipeline_equals_rebuilds(
    tmp_path: Path, pipeline: Pipeline, seed_papers: list[Paper], settings_dir: Path
) -> None:
    store = EmbeddedStore(tmp_path / "graph.db")
    corpus = {p.id: p for p in seed_papers[:50]}
    bare = [_paper(f"bare{i}", t) for i, t in enumerate(BARE)]
    corpus.update({p.id: p for p in bare})
    pipeline.run(store, add_papers=list(corpus.values()), replace=True)
    before = _same(store, settings_dir, corpus)
    cid = concept_id("distributed key value")
    assert cid not in before.nodes

    # an acronym defined by a new paper: the old papers that wrote DKV alone move to it
    new = _paper("defines", DEFINES)
    report = pipeline.run(store, add_papers=[new])
    corpus[new.id] = new
    after = _same(store, settings_dir, corpus)
    assert all((p.id, cid) in {(e.source, e.target) for e in after.edges.values()} for p in bare)
    assert report.step_seconds["extract.resolve"] >= 0.0

    # more seeds, then remove two old papers and one just added
    more = seed_papers[50:62]
    pipeline.run(store, add_papers=more)
    corpus.update({p.id: p for p in more})
    _same(store, settings_dir, corpus)
    gone = [seed_papers[3].id, seed_papers[20].id, more[0].id]
    pipeline.run(store, remove=gone)
    for pid in gone:
        del corpus[pid]
    _same(store, settings_dir, corpus)

    # the definition leaves again: the old papers resolve as before
    pipeline.run(store, remove=[new.id])
    del corpus[new.id]
    assert cid not in _same(store, settings_dir, corpus).nodes

    # a paper whose text changed under the same id is a remove and an add
    changed = _paper(bare[0].id, DEFINES + " We also time DKV lookups.")
    pipeline.run(store, add_papers=[changed])
    corpus[changed.id] = updated(corpus[changed.id], changed)
    assert cid in _same(store, settings_dir, corpus).nodes

    # only a title changed: the title is embedded and worded too, so the paper's
    # SIMILAR_TO rows (and the rows it is in) must follow, as a rebuild has them
    old = corpus[seed_papers[10].id]
    retitled = paper_from_record(
        {"id": old.id, "title": "Protein folding with molecular dynamics simulators",
         "abstract": old.abstract}, source="test:retitled")
    pipeline.run(store, add_papers=[retitled])
    corpus[retitled.id] = updated(old, retitled)  # venue and year stay: not in the record
    _same(store, settings_dir, corpus)
    store.close()


def test_an_add_does_not_resolve_the_whole_corpus(
    tmp_path: Path, pipeline: Pipeline, seed_papers: list[Paper]
) -> None:
    store = EmbeddedStore(tmp_path / "graph.db")
    pipeline.run(store, add_papers=seed_papers[:60], replace=True)
    resolver = pipeline._resolver
    assert resolver is not None
    pipeline.run(store, add_papers=[_paper("one-more", BARE[0])])
    # the papers whose terms this add changed: the new one and a few that share its words
    assert "one-more" in resolver.changed_papers
    assert len(resolver.changed_papers) < 30
    store.close()


def test_a_primed_pipeline_resolves_only_what_the_first_add_reaches(
    tmp_path: Path, seed_papers: list[Paper], settings_dir: Path
) -> None:
    store = EmbeddedStore(tmp_path / "graph.db")
    builder = Pipeline(seed_settings(settings_dir), cache_dir=EMBED_CACHE, incremental=False)
    try:
        builder.run(store, add_papers=seed_papers[:60], replace=True)
        assert builder._resolver is None  # a one-shot pipeline keeps no resolver
    finally:
        builder.close()
    served = Pipeline(seed_settings(settings_dir), cache_dir=EMBED_CACHE)
    try:
        served.prime(store)  # what the API's warm-up does
        resolver = served._resolver
        assert resolver is not None
        assert len(resolver.changed_papers) == 60
        served.run(store, add_papers=[_paper("first-add", DEFINES)])
        assert "first-add" in resolver.changed_papers
        assert len(resolver.changed_papers) < 30
        corpus = {p.id: p for p in seed_papers[:60]}
        corpus["first-add"] = _paper("first-add", DEFINES)
        _same(store, settings_dir, corpus)
    finally:
        served.close()
        store.close()


def test_a_primed_pipeline_finds_the_similar_pools_and_its_adds_equal_rebuilds(
    tmp_path: Path, seed_papers: list[Paper], settings_dir: Path
) -> None:
    """A server's state is read from the store, which keeps no SIMILAR_TO pools: the
    warm-up finds them, and the adds and removes ranked from them equal rebuilds."""
    store = EmbeddedStore(tmp_path / "graph.db")
    builder = Pipeline(seed_settings(settings_dir), cache_dir=EMBED_CACHE, incremental=False)
    try:
        builder.run(store, add_papers=seed_papers[:60], replace=True)
    finally:
        builder.close()
    served = Pipeline(seed_settings(settings_dir), cache_dir=EMBED_CACHE)
    try:
        served.prime(store)
        assert served._state is not None and served._state.state.pools is not None
        corpus = {p.id: p for p in seed_papers[:60]}
        steps: list[tuple[list[Paper], list[str]]] = [
            ([_paper("pooled-1", DEFINES)], []),
            (seed_papers[60:64], [seed_papers[5].id]),  # a remove refills the rows it left
            ([], ["pooled-1", seed_papers[61].id]),
        ]
        for add, remove in steps:
            served.run(store, add_papers=add, remove=remove)
            corpus.update((p.id, p) for p in add)
            for pid in remove:
                del corpus[pid]
            _same(store, settings_dir, corpus)
            assert served._state is not None and served._state.state.pools is not None
    finally:
        served.close()
        store.close()


def test_cli_writes_between_server_writes_equal_rebuilds(
    tmp_path: Path, pipeline: Pipeline, seed_papers: list[Paper], settings_dir: Path
) -> None:
    """A server's long-lived pipeline and one-shot CLI writes (SQL reads, no mirror, no
    resolver) take turns on one database: after each write, from either side, both see
    the graph a full rebuild gives."""
    path = tmp_path / "graph.db"
    served = EmbeddedStore(path)
    corpus = {p.id: p for p in seed_papers[:40]}
    corpus.update({p.id: p for p in (_paper(f"bare{i}", t) for i, t in enumerate(BARE))})
    pipeline.run(served, add_papers=list(corpus.values()), replace=True)

    def cli(**kwargs: object) -> None:
        store = EmbeddedStore(path, reads="sql")
        one_shot = Pipeline(seed_settings(settings_dir), cache_dir=EMBED_CACHE,
                            incremental=False)
        try:
            one_shot.run(store, **kwargs)  # type: ignore[arg-type]
            assert store._mirror is None  # the CLI's write never built the networkx graph
            _same(store, settings_dir, corpus)
        finally:
            one_shot.close()
            store.close()

    def server(**kwargs: object) -> None:
        pipeline.run(served, **kwargs)  # type: ignore[arg-type]
        _same(served, settings_dir, corpus)

    more = seed_papers[40:46]
    corpus.update({p.id: p for p in more})
    cli(add_papers=more)
    new = _paper("defines", DEFINES)  # re-resolves old papers, the CLI's among them
    corpus[new.id] = new
    server(add_papers=[new])
    gone = [more[0].id, seed_papers[5].id, new.id]
    for pid in gone:
        del corpus[pid]
    cli(remove=gone)
    later = seed_papers[46:50]
    corpus.update({p.id: p for p in later})
    server(add_papers=later)
    served.refresh()
    assert graphs_equal(served.snapshot(), EmbeddedStore(path, reads="sql").snapshot()) == []
    served.close()



def test_texts_held_by_other_papers_across_adds_updates_and_removes(
    tmp_path: Path, pipeline: Pipeline, seed_papers: list[Paper], settings_dir: Path
) -> None:
    """Which paper holds a text moves with every add, update and remove (the region state
    keeps it between writes): a text is refused while another paper holds it, and free
    again once that paper is gone or holds another text."""
    store = EmbeddedStore(tmp_path / "graph.db")
    text_a, text_b = BARE
    text_a2 = DEFINES
    corpus = {p.id: p for p in seed_papers[:20]}
    corpus.update({p.id: p for p in (_paper("A", text_a), _paper("B", text_b))})
    pipeline.run(store, add_papers=list(corpus.values()), replace=True)

    def add(*papers: Paper) -> list[str]:
        report = pipeline.run(store, add_papers=list(papers))
        assert pipeline._state is not None  # the region path, state kept
        return [p.reason for p in report.problems]

    said = add(_paper("C", text_a))
    assert len(said) == 1 and "same text as paper 'A'" in said[0]
    said = add(_paper("A", text_b))
    assert len(said) == 1 and "its new text is paper 'B''s" in said[0]
    _same(store, settings_dir, corpus)

    pipeline.run(store, remove=["B"])
    del corpus["B"]
    assert add(_paper("D", text_b)) == []  # B's text is free once B is gone
    corpus["D"] = _paper("D", text_b)
    _same(store, settings_dir, corpus)

    moved = _paper("A", text_a2)
    assert add(moved) == []
    corpus["A"] = updated(corpus["A"], moved)
    assert add(_paper("E", text_a)) == []  # A's old text is free once A holds another
    corpus["E"] = _paper("E", text_a)
    said = add(_paper("F", text_a2))
    assert len(said) == 1 and "same text as paper 'A'" in said[0]
    _same(store, settings_dir, corpus)
    store.close()


def test_a_remove_finds_the_paper_by_any_spelling_of_its_id(
    tmp_path: Path, pipeline: Pipeline, seed_papers: list[Paper], settings_dir: Path
) -> None:
    """graph.ids: an id trimmed, in NFC or in NFD is one paper, for a remove as for a
    lookup or an add (an outside probe removed an NFC-stored id by its NFD spelling and
    got "no paper with id"). Both paths: the region's and the whole one."""
    nfc, nfd = "caf\u00e9-2025", "cafe\u0301-2025"
    store = EmbeddedStore(tmp_path / "graph.db")
    try:
        base = seed_papers[:12]
        extra = [_paper(nfc, BARE[0]), _paper("na\u00efve", BARE[1])]
        pipeline.run(store, add_papers=[*base, *extra], replace=True)
        report = pipeline.run(store, remove=[nfd])  # the long-lived pipeline's region path
        assert report.removed == [nfc]
        report = pipeline.run(store, remove=["  nai\u0308ve "])
        assert report.removed == ["na\u00efve"]
        _same(store, settings_dir, {p.id: p for p in base})
        fresh = Pipeline(seed_settings(settings_dir), cache_dir=EMBED_CACHE)
        try:  # a fresh pipeline: the whole path
            pipeline.run(store, add_papers=extra)
            assert fresh.run(store, remove=[nfd, "nai\u0308ve"]).removed == sorted(
                [nfc, "na\u00efve"])
        finally:
            fresh.close()
        _same(store, settings_dir, {p.id: p for p in base})
        with pytest.raises(NotFoundError):
            pipeline.run(store, remove=["cafe-2025"])  # no accent: another id
    finally:
        store.close()


@pytest.mark.parametrize("incremental", [True, False])
def test_ids_kept_in_no_normal_form_are_found_by_key(
    tmp_path: Path, seed_papers: list[Paper], settings_dir: Path, incremental: bool
) -> None:
    """An id is kept as first given, which may be neither NFC nor NFD (an Angstrom sign,
    an accent composed and one not, a Kelvin sign whose NFC is an ASCII K): a remove
    by any spelling with its key finds it, and an add by one (an ASCII "K-3" too)
    updates it instead of making a second paper (probe 16). Both paths."""
    angstrom, mixed, kelvin = "\u212bngstr\u00f6m-1", "e\u0301t\u00e9-2", "\u212a-3"
    pipeline = Pipeline(seed_settings(settings_dir), cache_dir=EMBED_CACHE,
                        incremental=incremental)
    store = EmbeddedStore(tmp_path / "graph.db")
    try:
        base = seed_papers[:10]
        odd = [_paper(angstrom, BARE[0]), _paper(mixed, BARE[1]), _paper(kelvin, DEFINES)]
        pipeline.run(store, add_papers=[*base, *odd], replace=True)
        report = pipeline.run(store, add_papers=[_paper("K-3", DEFINES + " Twice.")])
        assert (report.added, report.updated) == ([], 1)
        stored = store.snapshot()
        assert kelvin in stored.nodes and "K-3" not in stored.nodes
        report = pipeline.run(store, remove=["\u00c5ngstr\u00f6m-1", "\u00e9t\u00e9-2"])
        assert report.removed == sorted([angstrom, mixed])
        assert pipeline.run(store, remove=[" K-3 "]).removed == [kelvin]
        _same(store, settings_dir, {p.id: p for p in base})
    finally:
        store.close()
        pipeline.close()
