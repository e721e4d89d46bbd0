"""An add writes only the SHARES_TERM / RELATED_TO rows it changes, and still equals a rebuild.

A graph of 300 real ICLR 2021 abstracts (real model, real extraction, real pipeline)
gets 6 more papers, then loses three. The bound checked on the GraphChange of the add:
every SHARES_TERM row written or deleted has an end holding a *touched* term (one whose
set of papers or linking status changed, and that links before or after), and every
RELATED_TO row has an end whose document frequency changed or that is co-mentioned
(count >= 2) with such a concept. Weights no longer depend on N, so nothing else moves.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from graph.build import Pipeline, diff, graphs_equal
from graph.ingest import read_corpus
from graph.link import linking_cap, paper_terms_of
from graph.model import Edge, GraphData, NodeKind, Paper, RelType
from graph.store.memory import NetworkxStore
from tests.support.seeds import EMBED_CACHE, ROOT, seed_settings

pytestmark = pytest.mark.slow

BASE, ADDED = 300, 6
LINKED = (RelType.SHARES_TERM, RelType.RELATED_TO)


def _iclr() -> Path | None:
    # ../shared beside the checkout (CI, the main checkout) or two levels up (a worktree)
    for up in (ROOT.parent, ROOT.parent.parent):
        path = up / "shared" / "data" / "iclr2021" / "paperlist.tsv"
        if path.exists():
            return path
    return None


@pytest.fixture(scope="module")
def papers() -> list[Paper]:
    path = _iclr()
    if path is None:
        pytest.skip("shared ICLR 2021 data not present")
    result = read_corpus([path])
    assert not result.problems
    return result.papers[: BASE + ADDED]


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pipeline]:
    p = Pipeline(seed_settings(tmp_path_factory.mktemp("links")), cache_dir=EMBED_CACHE)
    yield p
    p.close()


def _papers_of(g: GraphData) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {
        pid: set() for pid, n in g.nodes.items() if n.kind is NodeKind.PAPER
    }
    out.update(paper_terms_of(g.edges.values()))
    return out


def _postings(terms: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for pid, ts in terms.items():
        for t in ts:
            out[t].add(pid)
    return out


def _linked_rows(g: GraphData) -> dict[tuple[str, str, RelType], Edge]:
    return {k: e for k, e in g.edges.items() if e.type in LINKED}


def _full(pipeline: Pipeline, papers: list[Paper]) -> GraphData:
    store = NetworkxStore()
    pipeline.run(store, add_papers=papers, replace=True)
    return store.snapshot()


def _assert_bound(before: GraphData, after: GraphData, max_df: float) -> tuple[int, int]:
    """Check the bound on diff(before, after); (SHARES_TERM rows written, edges after)."""
    change = diff(before, after)
    old_terms, new_terms = _papers_of(before), _papers_of(after)
    post_old, post_new = _postings(old_terms), _postings(new_terms)
    cap_old = linking_cap(len(old_terms), max_df)
    cap_new = linking_cap(len(new_terms), max_df)

    def links(t: str, post: dict[str, set[str]], cap: int) -> bool:
        return 2 <= len(post.get(t, ())) <= cap

    touched_terms = {
        t
        for t in set(post_old) | set(post_new)
        if (links(t, post_old, cap_old) or links(t, post_new, cap_new))
        and (
            post_old.get(t) != post_new.get(t)
            or links(t, post_old, cap_old) != links(t, post_new, cap_new)
        )
    }
    new_ids = set(new_terms) - set(old_terms)
    assert any(t in new_terms[p] for p in new_ids for t in touched_terms)
    touched = {p for t in touched_terms for p in post_new.get(t, set()) | post_old.get(t, set())}
    written = [e.key for e in change.upsert_edges if e.type is RelType.SHARES_TERM] + [
        k for k in change.delete_edges if k[2] is RelType.SHARES_TERM
    ]
    outside = [k for k in written if k[0] not in touched and k[1] not in touched]
    assert outside == []
    shares_after = [e for e in after.edges.values() if e.type is RelType.SHARES_TERM]
    untouched = [e for e in shares_after if e.source not in touched and e.target not in touched]
    assert untouched, "the add touched every paper: the bound says nothing here"
    assert len(written) < len(shares_after)

    concepts_old = {c for c, n in before.nodes.items() if n.kind is NodeKind.CONCEPT}
    concepts_new = {c for c, n in after.nodes.items() if n.kind is NodeKind.CONCEPT}
    df_moved = {c for c in concepts_old | concepts_new if post_old.get(c) != post_new.get(c)}
    near = set(df_moved)
    for g in (before, after):
        for e in g.edges.values():
            if e.type is RelType.RELATED_TO and ({e.source, e.target} & df_moved):
                near.update((e.source, e.target))
    related_written = [e.key for e in change.upsert_edges if e.type is RelType.RELATED_TO] + [
        k for k in change.delete_edges if k[2] is RelType.RELATED_TO
    ]
    assert [k for k in related_written if k[0] not in near and k[1] not in near] == []
    related_after = sum(1 for e in after.edges.values() if e.type is RelType.RELATED_TO)
    assert len(related_written) < related_after
    return len(written), len(shares_after)


def test_add_writes_only_rows_touching_changed_terms_and_equals_rebuild(
    pipeline: Pipeline, papers: list[Paper]
) -> None:
    store = NetworkxStore()
    pipeline.run(store, add_papers=papers[:BASE], replace=True)
    before = store.snapshot()
    report = pipeline.run(store, add_papers=papers[BASE:])
    after = store.snapshot()
    assert len(report.added) == ADDED
    assert report.edges_written == len(diff(before, after).upsert_edges)
    _assert_bound(before, after, pipeline.settings.shared_term_max_df)

    # incremental == full, stored attributes included
    full = _full(pipeline, papers)
    assert graphs_equal(full, after) == []
    assert _linked_rows(full) == _linked_rows(after)

    # add then remove (two old papers and one new) == a build without them
    gone = [papers[3].id, papers[BASE // 2].id, papers[BASE + 1].id]
    pipeline.run(store, remove=gone)
    smaller = _full(pipeline, [p for p in papers if p.id not in gone])
    assert graphs_equal(smaller, store.snapshot()) == []
    assert _linked_rows(smaller) == _linked_rows(store.snapshot())


def test_an_add_that_moves_the_max_df_gate(
    tmp_path: Path, pipeline: Pipeline, papers: list[Paper]
) -> None:
    """A term no new paper holds starts linking only because N grew past its gate."""
    store = NetworkxStore()
    pipeline.run(store, add_papers=papers[:BASE], replace=True)
    before = store.snapshot()
    pipeline.run(store, add_papers=papers[BASE:])
    old_df = {t: len(ps) for t, ps in _postings(_papers_of(before)).items()}
    new_df = {t: len(ps) for t, ps in _postings(_papers_of(store.snapshot())).items()}
    # the commonest term the new papers leave alone; max_df puts the gate just at it
    term, df = max(
        ((t, d) for t, d in old_df.items() if new_df.get(t) == d and d >= 3),
        key=lambda td: (td[1], td[0]),
    )
    max_df = (df + 0.5) / (BASE + ADDED)
    assert linking_cap(BASE, max_df) < df <= linking_cap(BASE + ADDED, max_df)
    gated = Pipeline(
        seed_settings(tmp_path, shared_term_max_df=max_df), cache_dir=EMBED_CACHE
    )
    try:
        store = NetworkxStore()
        gated.run(store, add_papers=papers[:BASE], replace=True)
        g_before = store.snapshot()
        gated.run(store, add_papers=papers[BASE:])
        g_after = store.snapshot()
        holding = {
            k for k, e in g_after.edges.items() if term in e.attrs.get("term_ids", ())
        }
        assert holding, f"{term} (df {df}) should link once N = {BASE + ADDED}"
        assert not any(term in e.attrs.get("term_ids", ()) for e in g_before.edges.values())
        _assert_bound(g_before, g_after, max_df)
        full = _full(gated, papers)
    finally:
        gated.close()
    assert graphs_equal(full, g_after) == []
    assert _linked_rows(full) == _linked_rows(g_after)
