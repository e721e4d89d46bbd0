"""SIMILAR_TO's word vectors: text-only, cached on disk bit for bit, bad cache rows ignored."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from graph.build import Pipeline, WordVectorCache, _text_key
from graph.ingest import paper_from_record
from graph.lexical import paper_text, word_vectors
from graph.model import Paper
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
