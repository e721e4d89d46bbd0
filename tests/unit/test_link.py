"""Edge computation: exact top-k, incremental updates, rarity-weighted shared terms."""

from __future__ import annotations

import dataclasses
import itertools
import math
import pickle
from collections import Counter
from typing import Any

import numpy as np
import pytest

from graph.embed import normalize
from graph.lexical import word_vectors
from graph.link import (
    CSLS_WEIGHT,
    MAX_TERM_PAPERS,
    TERM_WEIGHT_REFERENCE,
    Near,
    PaperVectors,
    cooccurrence_edges,
    csls_similar,
    full_similar,
    hubness,
    hubs_from_edges,
    linking_cap,
    neighbours_from_edges,
    plain_similar,
    shared_term_edges,
    similar_edges,
    term_weight,
    top_k_similar,
    update_csls,
    update_shared_terms,
)
from graph.model import Edge, RelType


def _vectors(n: int, dim: int = 16, seed: int = 0) -> np.ndarray:
    return normalize(np.random.default_rng(seed).normal(size=(n, dim)))


def _brute(
    ids: list[str], m: np.ndarray, k: int, min_score: float
) -> dict[str, list[tuple[str, float]]]:
    out = {}
    full = m.astype(np.float64)
    for i, pid in enumerate(ids):
        pairs = [(ids[j], round(float(full[i] @ full[j]), 6)) for j in range(len(ids)) if j != i]
        pairs = [p for p in pairs if p[1] >= min_score]
        out[pid] = sorted(pairs, key=lambda p: (-p[1], p[0]))[:k]
    return out


def test_top_k_matches_brute_force_in_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    import graph.link as link

    monkeypatch.setattr(link, "BLOCK_ROWS", 7)  # force several blocks
    ids = [f"p{i:03d}" for i in range(50)]
    m = _vectors(50)
    assert top_k_similar(ids, m, 5, 0.0) == _brute(ids, m, 5, 0.0)


def test_ties_broken_by_id() -> None:
    ids = ["c", "a", "b", "q"]
    m = normalize(np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [1.0, 0.0]]))
    lists = top_k_similar(ids, m, 2, 0.0)
    assert [nb for nb, _ in lists["q"]] == ["a", "b"]
    assert [nb for nb, _ in lists["a"]] == ["b", "c"]


def test_min_score_filters() -> None:
    ids = ["a", "b"]
    m = normalize(np.array([[1.0, 0.0], [0.0, 1.0]]))
    assert top_k_similar(ids, m, 5, 0.5) == {"a": [], "b": []}


def test_similar_edges_carry_score_and_rank() -> None:
    edges = similar_edges({"a": [Near("b", 0.9, 0.1), Near("c", 0.8, 0.0)]})
    assert [(e.target, e.attrs["rank"], e.weight) for e in edges] == [("b", 1, 0.9), ("c", 2, 0.8)]
    assert all(e.type is RelType.SIMILAR_TO for e in edges)


def test_shared_terms_weighted_by_rarity_and_common_terms_ignored() -> None:
    # "common" is in every paper: it must link nothing; "rare" only in p1 and p2.
    terms = {f"p{i}": {"common": 1.0} for i in range(10)}
    terms["p1"]["rare"] = 1.0
    terms["p2"]["rare"] = 1.0
    terms["p3"]["mid"] = 1.0
    terms["p4"]["mid"] = 1.0
    terms["p5"]["mid"] = 1.0
    edges = shared_term_edges(terms, {"rare": "Rare Thing"}, max_df=0.5, min_weight=0.0)
    pairs = {(e.source, e.target): e for e in edges}
    assert set(pairs) == {("p1", "p2"), ("p3", "p4"), ("p3", "p5"), ("p4", "p5")}
    assert pairs[("p1", "p2")].attrs["terms"] == ["Rare Thing"]
    assert pairs[("p1", "p2")].weight == pytest.approx(math.log(math.e * 1000 / 2), abs=1e-6)
    assert pairs[("p1", "p2")].weight > pairs[("p3", "p4")].weight


def test_cooccurrence_needs_two_papers() -> None:
    terms = {
        "p1": {"c:a": 1.0, "c:b": 1.0},
        "p2": {"c:a": 1.0, "c:b": 1.0},
        "p3": {"c:a": 1.0, "c:c": 1.0},
    }
    edges = cooccurrence_edges(terms, ["c:a", "c:b", "c:c"])
    assert [(e.source, e.target, e.attrs["count"]) for e in edges] == [("c:a", "c:b", 2)]


def test_term_weight_is_free_of_n_and_at_least_one_on_every_linking_term() -> None:
    assert pytest.approx(math.e * MAX_TERM_PAPERS) == TERM_WEIGHT_REFERENCE
    weights = [term_weight(df) for df in range(1, MAX_TERM_PAPERS + 1)]
    assert min(weights) >= 1.0
    assert all(x >= y for x, y in itertools.pairwise(weights))  # rarer weighs more
    for df, w in enumerate(weights, start=1):  # ln(C / df), df rounded down to 2^(k/4)
        assert -1e-12 <= w - math.log(TERM_WEIGHT_REFERENCE / df) <= math.log(2) / 4 + 1e-12
    assert [term_weight(d) for d in (2, 4, 8, 1024)] == pytest.approx(
        [math.log(TERM_WEIGHT_REFERENCE / d) for d in (2, 4, 8, 1024)]
    )
    # a common term's weight moves only at grid points: 19 % growth, not every paper
    assert term_weight(100) == term_weight(107) != term_weight(108)
    # the same pair of papers weighs the same in a corpus of 10 and of 10 + 90 strangers
    small = {"a": {"t": 1.0, "u": 1.0}, "b": {"t": 1.0, "u": 1.0}}
    small.update({f"x{i}": {} for i in range(8)})
    big = {**small, **{f"y{i:02d}": {"z": 1.0} for i in range(90)}}
    w_small = {e.key: e.weight for e in shared_term_edges(small, {}, max_df=0.5)}
    w_big = {e.key: e.weight for e in shared_term_edges(big, {}, max_df=0.5)}
    assert w_small[("a", "b", RelType.SHARES_TERM)] == w_big[("a", "b", RelType.SHARES_TERM)]
    assert w_small[("a", "b", RelType.SHARES_TERM)] == pytest.approx(2 * term_weight(2), abs=1e-6)


Terms = dict[str, dict[str, float]]


def _zipf_corpus(rng: np.random.Generator, ids: list[str], vocab: int) -> Terms:
    # a few very common terms, a long tail of rare ones: like real concepts
    out = {}
    for pid in ids:
        k = int(rng.integers(0, 7))
        picks = np.minimum(rng.zipf(1.4, size=k), vocab) - 1
        out[pid] = {f"t{int(t):03d}": 1.0 for t in picks}
    return out


def _full(terms: Terms) -> list[Edge]:
    # small caps so that a 40-90 paper corpus has terms on both sides of the gate
    return shared_term_edges(terms, {}, max_df=0.2, min_weight=1.5, top_k=3, max_term_papers=12)


def _update(edges: list[Edge], old: Terms, new: Terms) -> tuple[list[Edge], set[str]] | None:
    old_sets = {p: set(v) for p, v in old.items()}
    return update_shared_terms(
        edges, old_sets, new, {}, max_df=0.2, min_weight=1.5, top_k=3, max_term_papers=12
    )


def _rows(edges: list[Edge]) -> dict[tuple[str, str], dict[str, object]]:
    return {(e.source, e.target): {"w": e.weight, **e.attrs} for e in edges}


@pytest.mark.parametrize("seed", range(8))
def test_shared_terms_update_equals_full_through_add_remove_and_moves(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ids = [f"p{i:03d}" for i in range(90)]
    terms = _zipf_corpus(rng, ids[:40], 30)
    edges = _full(terms)
    touched_sizes = []
    for step in range(6):
        new_terms = {k: dict(v) for k, v in terms.items()}
        if step % 3 == 2:  # remove a few papers
            for pid in rng.choice(sorted(new_terms), size=4, replace=False):
                del new_terms[str(pid)]
        else:  # add some, which moves the max_df x N gate (cap 8 -> 12 here)
            fresh = [i for i in ids if i not in new_terms][: int(rng.integers(1, 12))]
            new_terms.update(_zipf_corpus(rng, fresh, 30))
        # re-resolution: one old paper loses a term, another gains it (df unchanged)
        holders = [p for p in sorted(new_terms) if new_terms[p]]
        if holders:
            giver = holders[int(rng.integers(len(holders)))]
            term = sorted(new_terms[giver])[0]
            takers = [p for p in sorted(new_terms) if term not in new_terms[p]]
            if takers:
                del new_terms[giver][term]
                new_terms[takers[int(rng.integers(len(takers)))]][term] = 1.0
        result = _update(edges, terms, new_terms)
        assert result is not None
        edges, touched = result
        assert _rows(edges) == _rows(_full(new_terms)), f"step {step}"
        touched_sizes.append(len(touched))
        terms = new_terms
    assert any(0 < t < len(terms) for t in touched_sizes)  # some update was partial


def test_an_add_through_a_common_term_recomputes_only_the_lists_it_can_enter() -> None:
    # 40 papers share "common" and pair up through rare terms; a new paper holding only
    # "common" changes common's paper set (not its weight: 40 and 41 share a grid step),
    # so every holder is touched, but it scores below each holder's k-th partner
    old: Terms = {f"p{i:02d}": {"common": 1.0, f"r{i // 4}": 1.0, f"s{i // 2}": 1.0}
                  for i in range(40)}
    assert term_weight(40) == term_weight(41)
    new = {**old, "zz": {"common": 1.0}}
    kw: dict[str, Any] = {"max_df": 1.0, "min_weight": 0.0, "top_k": 3}
    before = shared_term_edges(old, {}, **kw)
    result = update_shared_terms(before, {p: set(v) for p, v in old.items()}, new, {}, **kw)
    assert result is not None
    edges, touched = result
    assert _rows(edges) == _rows(shared_term_edges(new, {}, **kw))
    assert touched == {"zz"}
    # a new paper that shares a rare term too enters its holders' lists: they are ranked
    newer = {**old, "zz": {"common": 1.0, "r0": 1.0, "s0": 1.0}}
    result = update_shared_terms(before, {p: set(v) for p, v in old.items()}, newer, {}, **kw)
    assert result is not None
    edges, touched = result
    assert _rows(edges) == _rows(shared_term_edges(newer, {}, **kw))
    assert {"zz", "p00", "p01"} <= touched < set(newer)


def test_shared_terms_update_crosses_the_gate_both_ways() -> None:
    # "g" is in 3 papers; the cap is max(2, int(0.2 N)): at N = 10 it is 2 (g links
    # nothing), at N = 15 it is 3 (g links) with no paper touching g itself.
    base: Terms = {f"p{i:02d}": {} for i in range(10)}
    for p in ("p00", "p01", "p02"):
        base[p]["g"] = 1.0
    assert linking_cap(10, 0.2) == 2 and linking_cap(15, 0.2) == 3
    before = shared_term_edges(base, {}, max_df=0.2, min_weight=0.0)
    assert before == []
    grown = {**base, **{f"q{i:02d}": {"other": 1.0} for i in range(5)}}
    old_sets = {p: set(v) for p, v in base.items()}
    result = update_shared_terms(before, old_sets, grown, {}, max_df=0.2, min_weight=0.0)
    assert result is not None
    edges, touched = result
    assert {(e.source, e.target) for e in edges} == {("p00", "p01"), ("p00", "p02"), ("p01", "p02")}
    assert {"p00", "p01", "p02"} <= touched
    assert _rows(edges) == _rows(shared_term_edges(grown, {}, max_df=0.2, min_weight=0.0))
    shrunk = {p: v for p, v in grown.items() if not p.startswith("q")}
    old_sets = {p: set(v) for p, v in grown.items()}
    back = update_shared_terms(edges, old_sets, shrunk, {}, max_df=0.2, min_weight=0.0)
    assert back is not None and back[0] == []


def test_shared_terms_update_refuses_edges_without_kept_by() -> None:
    terms = {"a": {"t": 1.0}, "b": {"t": 1.0}, "c": {}, "d": {}, "e": {}}
    edges = shared_term_edges(terms, {}, max_df=0.5)
    assert edges
    by = "kept_by"
    legacy = [
        Edge(e.source, e.target, e.type, e.weight, {k: v for k, v in e.attrs.items() if k != by})
        for e in edges
    ]
    assert update_shared_terms(legacy, {p: set(v) for p, v in terms.items()}, terms, {}) is None


def _npmi_order_edges(
    terms: dict[str, dict[str, float]], concepts: list[str], top_k: int
) -> dict[tuple[str, str], int]:
    # the order the edges had before: (-count, -NPMI, partner), NPMI unrounded
    n = len(terms)
    df: dict[str, int] = {}
    pairs: dict[tuple[str, str], int] = {}
    for ts in terms.values():
        mine = sorted(t for t in ts if t in concepts)
        for t in mine:
            df[t] = df.get(t, 0) + 1
        for i, a in enumerate(mine):
            for b in mine[i + 1 :]:
                pairs[(a, b)] = pairs.get((a, b), 0) + 1
    best: dict[str, list[tuple[int, float, str, tuple[str, str]]]] = {}
    for (a, b), c in pairs.items():
        if c < 2:
            continue
        p = c / n
        npmi = math.log(p / (df[a] / n * df[b] / n)) / -math.log(p) if p < 1 else 1.0
        best.setdefault(a, []).append((-c, -npmi, b, (a, b)))
        best.setdefault(b, []).append((-c, -npmi, a, (a, b)))
    keep: dict[tuple[str, str], int] = {}
    for lst in best.values():
        keep.update((x[-1], -x[0]) for x in sorted(lst)[:top_k])
    return keep


@pytest.mark.parametrize("seed", range(5))
def test_cooccurrence_order_is_the_npmi_order_without_n(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ids = [f"p{i:03d}" for i in range(120)]
    terms = _zipf_corpus(rng, ids, 25)
    concepts = sorted({t for ts in terms.values() for t in ts})
    edges = cooccurrence_edges(terms, concepts, top_k=3)
    assert {(e.source, e.target): e.attrs["count"] for e in edges} == _npmi_order_edges(
        terms, concepts, 3
    )
    assert all(set(e.attrs) == {"count"} and e.weight == e.attrs["count"] for e in edges)


def test_cooccurrence_when_every_paper_has_both() -> None:
    # p_ab = 1: NPMI is 1 for every pair; ties go by id either way
    terms = {f"p{i}": {"c:a": 1.0, "c:b": 1.0, "c:c": 1.0} for i in range(3)}
    edges = cooccurrence_edges(terms, ["c:a", "c:b", "c:c"], top_k=1)
    want = _npmi_order_edges(terms, ["c:a", "c:b", "c:c"], 1)
    assert {(e.source, e.target): e.attrs["count"] for e in edges} == want


_VOCAB = [f"w{i:02d}" for i in range(40)]


def _texts(n: int, seed: int) -> list[str]:
    """Short texts over a small vocabulary: word overlaps from 0 to near 1, repeats too."""
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(_VOCAB, size=int(rng.integers(3, 12)))) for _ in range(n)]


def _b(
    ids: list[str], vec: PaperVectors, min_score: float
) -> tuple[np.ndarray, np.ndarray]:
    """Dense cosines (rounded, floored, self -inf) and word overlaps, by brute force."""
    full = np.asarray(vec.matrix, dtype=np.float64)
    cos = np.round(full @ full.T, 6)
    np.fill_diagonal(cos, -np.inf)
    cos[cos < min_score] = -np.inf
    if vec.words is None:
        return cos, np.zeros_like(cos)
    return cos, np.round((vec.words @ vec.words.T).toarray(), 6)


def _brute_pool(row: np.ndarray, size: int) -> tuple[list[int], float | None]:
    finite = [j for j in range(len(row)) if np.isfinite(row[j])]
    if len(finite) <= size:
        return finite, None
    last = sorted((row[j] for j in finite), reverse=True)[size - 1]
    return [j for j in finite if row[j] >= last], float(last)


def _brute_csls(
    ids: list[str], vec: PaperVectors, k: int, min_score: float
) -> tuple[dict[str, list[Near]], dict[str, tuple[float, float, float]]]:
    """SIMILAR_TO as its definition reads: pool by cosine, plain top-k by b, r, then CSLS."""
    cos, words = _b(ids, vec, min_score)
    w = vec.word_weight if vec.words is not None else 0.0
    pools, floors, plain, cosines = {}, {}, {}, {}
    for i, pid in enumerate(ids):
        pool, last = _brute_pool(cos[i], vec.pool)
        pools[pid], floors[pid] = pool, (min_score if last is None else last)
        ranked = sorted(pool, key=lambda j, i=i: (-(cos[i, j] + w * words[i, j]), ids[j]))[:k]
        plain[pid] = [cos[i, j] + w * words[i, j] for j in ranked]
        cosines[pid] = [cos[i, j] for j in ranked]
    r = {p: round(math.fsum(v) / len(v), 9) if v else 0.0 for p, v in plain.items()}
    at = {p: j for j, p in enumerate(ids)}
    out = {}
    for i, pid in enumerate(ids):
        def key(j: int, i: int = i) -> tuple[float, str]:
            return (-round(cos[i, j] + w * words[i, j] - 0.5 * r[ids[j]], 9), ids[j])

        out[pid] = [Near(ids[j], float(cos[i, j]), float(words[i, j]))
                    for j in sorted(pools[pid], key=key)[:k]]
    del at
    rcos = {p: round(math.fsum(v) / len(v), 9) if v else 0.0 for p, v in cosines.items()}
    return out, {p: (r[p], floors[p], rcos[p]) for p in ids}


def test_csls_lists_match_brute_force_and_lower_the_largest_in_degree() -> None:
    ids = [f"p{i:03d}" for i in range(80)]
    rng = np.random.default_rng(5)
    base = rng.normal(size=(80, 8))
    base[:, 0] += np.linspace(0, 3, 80)  # papers near the end sit close to everything: hubs
    m = normalize(base)
    for vec in (PaperVectors(ids, m), PaperVectors(ids, m, word_vectors(_texts(80, 5))),
                PaperVectors(ids, m, word_vectors(_texts(80, 6)), pool=12)):
        lists, hubs = full_similar(vec, 5, 0.0)
        brute_lists, brute_hubs = _brute_csls(ids, vec, 5, 0.0)
        assert lists == brute_lists
        assert {p: h[:3] for p, h in hubs.items()} == brute_hubs
        # the k-th b of each full plain list (what lets an add keep a list unranked)
        assert all(h.kth is None or h.kth <= h.r + 1e-9 for h in hubs.values())
    plain = top_k_similar(ids, m, 5, 0.0)
    lists, _ = full_similar(PaperVectors(ids, m), 5, 0.0)

    def largest(ls: dict[str, list[Any]]) -> int:
        return max(Counter(nb[0] for lst in ls.values() for nb in lst).values())

    assert largest(lists) < largest(plain)


def test_word_overlap_reorders_by_shared_wording() -> None:
    """Two papers equally near by cosine: the one sharing the seed's wording ranks first."""
    ids = ["a", "b", "c"]
    m = normalize(np.array([[1.0, 0.0], [0.8, 0.6], [0.8, -0.6]]))
    texts = ["graph neural networks molecules", "protein folding dynamics",
             "graph neural networks chemistry"]
    lists, _ = full_similar(PaperVectors(ids, m, word_vectors(texts)), 2, 0.0)
    assert [nb.id for nb in lists["a"]] == ["c", "b"]
    assert lists["a"][0].words > 0.5 and lists["a"][1].words == 0.0
    assert lists["a"][0].score == lists["a"][1].score == 0.8  # the score stays the cosine


def test_a_texts_word_vector_is_the_same_alone_or_in_a_batch() -> None:
    # the pipeline caches rows by text and mixes them with fresh ones: a row must not
    # depend on what it was computed with, to the last bit
    texts = [*_texts(30, 3), "", "x", "Graph neural networks. Graph neural networks!"]
    batch = word_vectors(texts)
    for i, t in enumerate(texts):
        alone = word_vectors([t])
        row = batch[i]
        assert np.array_equal(alone.indices, row.indices)
        assert np.array_equal(alone.data, row.data)
        norm = float(np.sqrt((row.data**2).sum()))
        assert norm == 0.0 if not row.nnz else abs(norm - 1.0) < 1e-12


def _corpus_vectors(
    ids: list[str], vec: dict[str, Any], text: dict[str, str], pool: int
) -> PaperVectors:
    """The PaperVectors of ``ids`` out of a universe of vectors and texts."""
    return PaperVectors(ids, np.asarray([vec[p] for p in ids], dtype=np.float32),
                        word_vectors([text[p] for p in ids]), pool=pool)


@pytest.mark.parametrize(("seed", "pool"), [(1, 100), (2, 100), (3, 6), (4, 6), (5, 3), (6, 10)])
def test_csls_update_equals_full_over_add_remove_and_changed_papers(seed: int, pool: int) -> None:
    rng = np.random.default_rng(seed)
    universe = [f"p{i:03d}" for i in range(70)]
    vec = dict(zip(universe, _vectors(70, dim=6, seed=seed), strict=True))
    text = dict(zip(universe, _texts(70, seed), strict=True))
    vec["p001"] = vec["p000"].copy()  # exact ties
    text["p001"] = text["p000"]
    current = sorted(rng.choice(universe, size=40, replace=False).tolist())
    k, min_score = 4, 0.1

    def vectors(ids: list[str]) -> PaperVectors:
        return _corpus_vectors(ids, vec, text, pool)

    lists, hubs = full_similar(vectors(current), k, min_score)
    for _ in range(6):
        outside = [p for p in universe if p not in current]
        added = set(rng.choice(outside, size=min(4, len(outside)), replace=False).tolist())
        removed = set(rng.choice(current, size=3, replace=False).tolist())
        changed = set(rng.choice([p for p in current if p not in removed], size=1).tolist())
        old_vec = {p: vec[p] for p in removed | changed}
        for p in changed:  # its text changed: a new vector, removed and added again
            vec[p] = normalize(rng.normal(size=(1, 6)))[0].astype(np.float32)
            text[p] = _texts(1, int(rng.integers(1000)))[0]
        now = sorted((set(current) - removed) | added)
        gone = np.asarray([old_vec[p] for p in sorted(old_vec)], dtype=np.float32)
        keep = {p: v for p, v in lists.items() if p not in removed | changed}
        keep_hubs = {p: h for p, h in hubs.items() if p not in removed | changed}
        lists, hubs = update_csls(keep, keep_hubs, gone, vectors(now), added | changed,
                                  removed | changed, k, min_score)
        want_lists, want_hubs = full_similar(vectors(now), k, min_score)
        assert lists == want_lists
        assert hubs == want_hubs
        brute_lists, brute_hubs = _brute_csls(now, vectors(now), k, min_score)
        assert lists == brute_lists
        assert {p: h[:3] for p, h in hubs.items()} == brute_hubs
        current = now


@pytest.mark.parametrize("pool", [8, 30])
def test_adds_that_only_reach_a_pool_keep_its_list_and_stay_exact(
    pool: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # most rows an add reaches keep their plain top-k: only their floor moves. Those rows
    # are not ranked again; the update must still equal a full computation every time.
    import graph.link as link

    kept: list[int] = []
    real = link._pool_moves

    def counting(sc: Any, hubs: Any, rows: Any, *rest: Any) -> Any:
        out = real(sc, hubs, rows, *rest)
        kept.append(sum(1 for r in rows if r not in rest[-1]))  # rest[-1]: rows ranked again
        return out

    monkeypatch.setattr(link, "_pool_moves", counting)
    rng = np.random.default_rng(pool)
    universe = [f"q{i:03d}" for i in range(90)]
    vec = dict(zip(universe, _vectors(90, dim=5, seed=pool), strict=True))
    text = dict(zip(universe, _texts(90, pool), strict=True))
    current = sorted(universe[:50])
    k, min_score = 4, 0.0

    def vectors(ids: list[str]) -> PaperVectors:
        return _corpus_vectors(ids, vec, text, pool)

    lists, hubs = full_similar(vectors(current), k, min_score)
    for _ in range(8):
        outside = [p for p in universe if p not in current]
        added = set(rng.choice(outside, size=int(rng.integers(1, 4)), replace=False).tolist())
        now = sorted(set(current) | added)
        lists, hubs = update_csls(lists, hubs, np.zeros((0, 5), np.float32), vectors(now),
                                  added, (), k, min_score)
        assert (lists, hubs) == full_similar(vectors(now), k, min_score)
        current = now
    assert sum(kept) > 0  # the path under test ran: some reached rows were not ranked again


def test_hubs_survive_the_edges_they_are_stored_on() -> None:
    ids = [f"p{i}" for i in range(12)]
    vec = PaperVectors(ids, _vectors(12, seed=9), word_vectors(_texts(12, 9)))
    lists, hubs = full_similar(vec, 3, 0.0)
    edges = similar_edges(lists, hubs, 3, 0.0, vec)
    assert hubs_from_edges(edges, ids, 0.0, 3, vec) == hubs
    assert neighbours_from_edges(edges) == {p: lst for p, lst in lists.items() if lst}
    assert hubs_from_edges(similar_edges(lists), ids, 0.0) is None  # older edges: recompute all
    # computed for another k, min_score, pool or word weight: recompute all
    assert hubs_from_edges(edges, ids, 0.0, 5, vec) is None
    assert hubs_from_edges(edges, ids, 0.2, 3, vec) is None
    assert hubs_from_edges(edges, ids, 0.0, 3, dataclasses.replace(vec, pool=50)) is None
    assert hubs_from_edges(edges, ids, 0.0, 3, dataclasses.replace(vec, word_weight=1.0)) is None
    # ranked under another CSLS weight: recompute all; edges from before the weight was
    # recorded were ranked with 0.5
    assert {e.attrs["csls"] for e in edges if e.attrs["rank"] == 1} == {CSLS_WEIGHT}
    other = [dataclasses.replace(e, attrs=e.attrs | {"csls": CSLS_WEIGHT + 0.1})
             if e.attrs["rank"] == 1 else e for e in edges]
    assert hubs_from_edges(other, ids, 0.0, 3, vec) is None
    unrecorded = [dataclasses.replace(e, attrs={k: v for k, v in e.attrs.items() if k != "csls"})
                  for e in edges]
    assert hubs_from_edges(unrecorded, ids, 0.0, 3, vec) == (hubs if CSLS_WEIGHT == 0.5 else None)
    # edges of the cosine-only ranking (before word overlap): recompute all
    old = [Edge(e.source, e.target, e.type, e.weight,
                {k: v for k, v in e.attrs.items() if k not in ("words", "floor", "hub_cos")}
                | {"kth": 0.5})
           for e in edges]
    assert hubs_from_edges(old, ids, 0.0, 3, vec) is None


def test_hubs_ride_on_the_rank_1_edge_alone() -> None:
    # a source's floor moves whenever a paper enters or leaves its pool: one row rewritten
    ids = [f"p{i}" for i in range(12)]
    vec = PaperVectors(ids, _vectors(12, seed=4), word_vectors(_texts(12, 4)))
    lists, hubs = full_similar(vec, 3, 0.0)
    edges = similar_edges(lists, hubs, 3, 0.0, vec)
    assert {e.attrs["rank"] for e in edges if "floor" in e.attrs} == {1}
    assert all("words" in e.attrs and "rank" in e.attrs for e in edges)
    # a graph of the code before, hubs on every edge, still updates in place
    firsts = {e.source: e for e in edges if e.attrs["rank"] == 1}
    everywhere = [
        Edge(e.source, e.target, e.type, e.weight,
             dict(e.attrs) | {k: v for k, v in firsts[e.source].attrs.items()
                              if k not in ("score", "words", "rank")})
        for e in edges
    ]
    assert hubs_from_edges(everywhere, ids, 0.0, 3, vec) == hubs
    # a list whose rank-1 edge is gone (a hand-edited store): recompute everything
    assert hubs_from_edges([e for e in edges if e.attrs["rank"] != 1 or e.source != "p0"],
                           ids, 0.0, 3, vec) is None


@pytest.mark.parametrize("seed", range(10))
def test_the_build_ranks_both_lists_from_one_pool_as_two_passes_do(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """full_similar finds each row's pool once and ranks the plain and the CSLS lists from
    it: the lists, hubs and floors must be, to the bit and in the same order, those of
    plain_similar, hubness and csls_similar (each pass finding the pools again), on
    vectors built for ties (a coarse grid, repeated rows), ids out of row order, with and
    without word vectors, in one block and in several (and the word overlaps of a block
    in one group of rows and in several)."""
    import graph.link as link

    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 160))
    base = np.round(rng.normal(size=(n, int(rng.choice([2, 4, 16])))) * 2) / 2
    base[rng.integers(0, n, n // 3)] = base[rng.integers(0, n, n // 3)]
    base[np.abs(base).sum(axis=1) == 0, 0] = 1.0
    m = (base / np.linalg.norm(base, axis=1, keepdims=True)).astype(np.float32)
    ids = [f"p{int(x):04d}" for x in rng.permutation(3 * n)[:n]]
    words = word_vectors(_texts(n, seed)) if seed % 2 == 0 else None
    f = m.astype(np.float64)
    tie = float(np.round(f[0] @ f[-1], 6))  # min_score on a cosine that occurs
    if seed % 3 == 0:
        monkeypatch.setattr(link, "BLOCK_ROWS", 32)  # several blocks
        monkeypatch.setattr(link, "POOL_ENTRIES", 40)  # the overlaps in several groups
    # and 600 points on a circle: many b - r_j a rounding apart (the CSLS key's rounding)
    circle = normalize(rng.normal(size=(600, 2))).astype(np.float32)
    for pool, k, min_score in [(100, 3, 0.0), (3, 3, tie), (1, 2, -1.0),
                               (int(rng.integers(2, 12)), int(rng.integers(1, 6)), tie),
                               (int(rng.integers(2, 12)), 2, 0.3)]:
        vec = PaperVectors(ids, m, words, pool=pool)
        if min_score == 0.3:
            vec = PaperVectors([f"c{i:03d}" for i in range(600)], circle, pool=pool)
        got = full_similar(vec, k, min_score)
        plain, floors = plain_similar(vec, k, min_score)
        hubs = hubness(plain, floors, vec.word_weight if vec.words is not None else 0.0, k)
        want = (csls_similar(vec, hubs, k, min_score), hubs)
        assert pickle.dumps(got) == pickle.dumps(want)  # every float to the bit, in order


def _whole_rows(self: Any, i: int, rough: np.ndarray, size: int, min_score: float,
                also: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """_Scorer.near without the float32 prefilter: every paper, the whole float64 row."""
    ok = np.flatnonzero(np.isfinite(rough))
    exact = np.round(self.full[[i]] @ self.full.T, 6)[0][ok]
    exact[exact < min_score] = -np.inf
    return ok, exact


@pytest.mark.parametrize(("seed", "pool"), [(11, 3), (12, 5), (13, 8), (14, 20), (15, 5)])
def test_float32_prefilter_gives_the_whole_rows_answer_with_ties(
    seed: int, pool: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIMILAR_TO ranks each row's pool from float32 cosines within FLOAT32_SLACK of the
    (pool+1)-th best, rescored exactly: the lists, hubs and floors (full and by update)
    must be those of whole float64 rows, on vectors built for ties: repeated vectors,
    components on a coarse grid (many equal cosines at the pool's edge), pairs 1e-7 and
    1e-5 apart (inside the slack), and cosines on min_score itself."""
    import graph.link as link

    rng = np.random.default_rng(seed)
    base = np.round(rng.normal(size=(40, 4)) * 2) / 2  # a coarse grid: exact ties
    base[base.sum(axis=1) == 0, 0] = 1.0
    m = base / np.linalg.norm(base, axis=1, keepdims=True)
    near = m[:8] + rng.choice([1e-7, 1e-5], size=(8, 1)) * rng.normal(size=(8, 4))
    m = np.vstack([m, m[:6], near / np.linalg.norm(near, axis=1, keepdims=True)])
    universe = [f"p{i:03d}" for i in range(len(m))]
    vec = dict(zip(universe, m.astype(np.float32), strict=True))
    text = dict(zip(universe, _texts(len(m), seed), strict=True))
    # min_score on a cosine that occurs: ties with the threshold itself
    f = m.astype(np.float32).astype(np.float64)
    min_score = float(np.round(f[0] @ f[1], 6))
    k = 3

    def vectors(ids: list[str], words: bool) -> PaperVectors:
        v = _corpus_vectors(ids, vec, text, pool)
        return v if words else dataclasses.replace(v, words=None)

    def both(fn: Any, *args: Any) -> tuple[Any, Any]:
        got = fn(*args)
        with monkeypatch.context() as mp:
            mp.setattr(link._Scorer, "near", _whole_rows)
            want = fn(*args)
        return got, want

    for words in (False, True):
        current = sorted(rng.choice(universe, size=34, replace=False).tolist())
        got, want = both(full_similar, vectors(current, words), k, min_score)
        assert got == want
        lists, hubs = got
        assert (lists, {p: h[:3] for p, h in hubs.items()}) == _brute_csls(
            current, vectors(current, words), k, min_score)
        for _ in range(4):
            outside = [p for p in universe if p not in current]
            added = set(rng.choice(outside, size=min(5, len(outside)), replace=False).tolist())
            removed = set(rng.choice(current, size=3, replace=False).tolist())
            now = sorted((set(current) - removed) | added)
            gone = np.asarray([vec[p] for p in sorted(removed)], dtype=np.float32)
            keep = {p: v for p, v in lists.items() if p not in removed}
            keep_hubs = {p: h for p, h in hubs.items() if p not in removed}
            got, want = both(update_csls, keep, keep_hubs, gone, vectors(now, words), added,
                             removed, k, min_score)
            assert got == want
            lists, hubs = got
            assert (lists, hubs) == full_similar(vectors(now, words), k, min_score)
            current = now
