"""SIMILAR_TO's word vectors: text-only, fixed rarity, plurals folded, cached on disk bit for
bit, bad cache rows ignored, older versions recomputed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from graph.build import Pipeline, WordVectorCache, _text_key
from graph.ingest import paper_from_record
from graph.lexical import (
    WORD_TF_K1,
    WORD_VECTOR_VERSION,
    paper_text,
    word_grams,
    word_rarity,
    word_vectors,
)
from graph.link import PaperVectors, full_similar, hubs_from_edges, similar_edges
from graph.model import Edge, Paper
from tests.support.seeds import seed_settings

TEXTS = [
    "Graph neural networks for molecules: message passing over bonds and atoms.",
    "Diffusion models generate images; we distil them into one-step generators.",
    "Message passing graph neural networks, again, for molecules and proteins.",
]


def _papers() -> list[Paper]:
    return [paper_from_record({"id": f"p{i}", "title": f"T{i}", "abstract": t * 3},
                              source="test") for i, t in enumerate(TEXTS)]


def test_a_vector_depends_on_its_text_alone() -> None:
    alone = word_vectors([TEXTS[0]])
    among = word_vectors(TEXTS)
    assert (alone[0] != among[0]).nnz == 0  # no vocabulary, no corpus statistics
    norms = np.sqrt(np.asarray(among.multiply(among).sum(axis=1)).ravel())
    assert np.allclose(norms, 1.0)
    overlap = (among @ among.T).toarray()
    assert overlap[0, 2] > overlap[0, 1]  # the shared wording shows


def test_cached_vectors_equal_fresh_ones_and_a_bad_row_is_recomputed(tmp_path: Path) -> None:
    papers = _papers()
    first = Pipeline(seed_settings(tmp_path), cache_dir=tmp_path / "cache")
    try:
        fresh = first._word_vectors(papers)
    finally:
        first.close()
    # a damaged row (wrong length) in the cache: ignored and recomputed, never trusted
    key = _text_key(paper_text(papers[1]))
    db = sqlite3.connect(tmp_path / "cache" / "words.sqlite")
    with db:
        db.execute("UPDATE words_v1 SET value = ? WHERE key = ?", (b"\x00" * 13, key))
    db.close()
    second = Pipeline(seed_settings(tmp_path), cache_dir=tmp_path / "cache")
    try:
        cached = second._word_vectors(papers)
    finally:
        second.close()
    assert (cached != fresh).nnz == 0
    assert np.array_equal(cached.indptr, fresh.indptr)
    assert np.array_equal(cached.data, fresh.data)  # bit for bit: the same edges follow
    rows = WordVectorCache(tmp_path / "cache" / "words.sqlite").get_many([key])
    assert key in rows and len(rows[key][0]) == fresh.indptr[2] - fresh.indptr[1]


def test_a_shared_rare_word_counts_more_than_a_shared_common_one() -> None:
    # the same shape of overlap, one shared word each: rarity is fixed, never counted here
    common = word_vectors(["results network alpha", "results network beta"])
    rare = word_vectors(["backpropagation reinforcement alpha",
                         "backpropagation reinforcement beta"])
    assert word_rarity("the") < word_rarity("network") < word_rarity("reinforcement")
    assert (rare[0] @ rare[1].T).toarray()[0, 0] > (common[0] @ common[1].T).toarray()[0, 0]


def test_plurals_fold_and_a_repeat_saturates() -> None:
    assert word_grams("Graph networks and studies") == ["graph", "network", "study",
                                                         "graph network", "network study"]
    assert word_grams("the loss of a corpus analysis") == ["loss", "corpus", "analysis",
                                                            "loss corpus", "corpus analysis"]
    # a word said twice counts for more, but less than twice (BM25's saturation); two words
    # of one rarity ("kernel", "kernels" share it) differ by their counts alone
    v = word_vectors(["kernels kernel vector"])
    kernel, vector = (word_vectors([w]) for w in ("kernel", "vector"))
    at = (v @ kernel.T).toarray()[0, 0] / word_rarity("kernel")
    once = (v @ vector.T).toarray()[0, 0] / word_rarity("vector")
    k1 = WORD_TF_K1
    assert at / once == pytest.approx(2 * (k1 + 1) / (2 + k1))
    assert 1.0 < at / once < 2.0
    assert (word_vectors(["graph networks"]) != word_vectors(["graph network"])).nnz == 0


def test_edges_of_older_word_vectors_are_recomputed_not_updated() -> None:
    ids = [f"p{i}" for i in range(len(TEXTS))]
    rng = np.random.default_rng(3)
    m = rng.normal(size=(len(ids), 8)).astype(np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    vec = PaperVectors(ids, m, word_vectors(TEXTS))
    lists, hubs = full_similar(vec, 2, -1.0)
    edges = similar_edges(lists, hubs, 2, -1.0, vec)
    assert hubs_from_edges(edges, ids, -1.0, 2, vec) == hubs
    older = [Edge(e.source, e.target, e.type, e.weight,
                  e.attrs | ({"words_version": WORD_VECTOR_VERSION - 1}
                             if "words_version" in e.attrs else {}))
             for e in edges]
    assert hubs_from_edges(older, ids, -1.0, 2, vec) is None
    unversioned = [Edge(e.source, e.target, e.type, e.weight,
                        {k: v for k, v in e.attrs.items() if k != "words_version"})
                   for e in edges]
    assert hubs_from_edges(unversioned, ids, -1.0, 2, vec) is None


def test_the_python_hasher_is_scikit_learns_to_the_bit() -> None:
    # a one-shot add hashes its few texts without importing scikit-learn (graph.lexical
    # _py_hashed); the rows must be FeatureHasher's exactly, or SIMILAR_TO would differ
    # with the number of texts hashed at once
    import random

    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS as THEIRS
    from sklearn.utils import murmurhash3_32

    from graph import lexical as lx

    assert set(THEIRS) == set(lx.ENGLISH_STOP_WORDS)
    rnd = random.Random(12)
    for n in [*range(12), *(rnd.randrange(12, 80) for _ in range(3000))]:
        data = bytes(rnd.randrange(256) for _ in range(n))
        assert lx._hash_column(data.decode("utf-8", "replace")) == lx._hash_column_of(
            murmurhash3_32(data.decode("utf-8", "replace").encode("utf-8"), seed=0)), data
    texts = [*TEXTS, "", "the of and", "café naïve Ωmega — 東京 graph networks " * 3,
             *(" ".join(rnd.choice(["graph", "kernels", "x1", "loss", "é", "a"])
                        for _ in range(rnd.randrange(1, 60))) for _ in range(40))]
    rows = [{g: rnd.choice([1.0, 0.5, 1e-3, 0.0, 2.0]) for g in word_grams(t)} for t in texts]
    mine, theirs = lx._py_hashed(rows), lx._hasher().transform(rows)
    assert type(mine) is type(theirs)
    assert mine.has_sorted_indices == theirs.has_sorted_indices
    for a, b in ((mine.indptr, theirs.indptr), (mine.indices, theirs.indices),
                 (mine.data, theirs.data)):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    # -2^31 has no absolute value in int32: scikit-learn defines its column apart
    assert lx._hash_column_of(-(1 << 31)) == (2**31 - 1 - (lx.WORD_HASH_FEATURES - 1)) % (
        lx.WORD_HASH_FEATURES)
