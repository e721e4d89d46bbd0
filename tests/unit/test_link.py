"""Edge computation: exact top-k, incremental updates, IDF-weighted shared terms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from graph.embed import normalize
from graph.link import (
    cooccurrence_edges,
    shared_term_edges,
    similar_edges,
    top_k_similar,
    update_similar,
)
from graph.model import RelType


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


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_incremental_update_equals_full(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ids = [f"p{i:03d}" for i in range(60)]
    m = _vectors(60, seed=seed)
    old_ids = [i for i in ids if rng.random() > 0.2]
    old_m = m[[ids.index(i) for i in old_ids]]
    previous = top_k_similar(old_ids, old_m, 4, 0.1)
    removed = set(rng.choice(old_ids, size=5, replace=False).tolist())
    now_ids = [i for i in ids if i not in removed]
    now_m = m[[ids.index(i) for i in now_ids]]
    new = set(now_ids) - set(old_ids)
    kept_prev = {k: v for k, v in previous.items() if k not in removed}
    updated, changed = update_similar(kept_prev, now_ids, now_m, new, removed, 4, 0.1)
    assert updated == top_k_similar(now_ids, now_m, 4, 0.1)
    assert new <= changed


def test_similar_edges_carry_score_and_rank() -> None:
    edges = similar_edges({"a": [("b", 0.9), ("c", 0.8)]})
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
    assert pairs[("p1", "p2")].weight == pytest.approx(math.log(10 / 2), abs=1e-6)
    assert pairs[("p1", "p2")].weight > pairs[("p3", "p4")].weight


def test_cooccurrence_needs_two_papers() -> None:
    terms = {
        "p1": {"c:a": 1.0, "c:b": 1.0},
        "p2": {"c:a": 1.0, "c:b": 1.0},
        "p3": {"c:a": 1.0, "c:c": 1.0},
    }
    edges = cooccurrence_edges(terms, ["c:a", "c:b", "c:c"])
    assert [(e.source, e.target, e.attrs["count"]) for e in edges] == [("c:a", "c:b", 2)]
