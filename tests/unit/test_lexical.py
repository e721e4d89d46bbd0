"""The word-overlap channel: scikit-learn's TF-IDF, kept current as the corpus changes.

Checked against scikit-learn itself (not against numbers written here), and an index
kept current through adds, edits and removals must score exactly like a fresh one.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer

from graph.lexical import (
    QUERY_TF_K1,
    TITLE_WEIGHT,
    LexicalIndex,
    WordScores,
    appears,
    overlaps,
    paper_text,
    spelled,
)
from graph.model import GraphChange, NodeKind, Paper
from graph.store.memory import NetworkxStore

WORDS = [
    "graph", "neural", "network", "message", "passing", "diffusion", "model", "score",
    "matching", "language", "model", "preference", "optimization", "reward", "alignment",
    "benchmark", "dataset", "retrieval", "transformer", "attention", "sparse", "kernel", "token",
    "image", "video", "robot", "policy", "reinforcement", "learning",
]


def _paper(i: int, rng: random.Random, title: bool = True) -> Paper:
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 40)))
    return Paper(
        id=f"p{i:03d}",
        label=f"paper {i}",
        abstract=text,
        text_hash=f"h{i}-{hash(text)}",
        title=f"{rng.choice(WORDS)} {rng.choice(WORDS)}" if title else None,
    )


def _store(papers: list[Paper]) -> NetworkxStore:
    store = NetworkxStore()
    store.apply(GraphChange(upsert_nodes=tuple(papers)))
    return store


def _sklearn_counts(papers: list[Paper]) -> tuple[Any, np.ndarray]:
    """scikit-learn's 1-2-gram counts of each paper's text, its title counted TITLE_WEIGHT
    times, and which columns are bigrams."""
    ps = sorted(papers, key=lambda p: p.id)
    vec = CountVectorizer(stop_words="english", ngram_range=(1, 2), min_df=2)
    counts = vec.fit_transform([paper_text(p) for p in ps]).astype(np.float64)
    counts = counts + (TITLE_WEIGHT - 1) * vec.transform([p.title or "" for p in ps])
    return counts, np.asarray([" " in g for g in vec.get_feature_names_out()])


def _sklearn_cosines(papers: list[Paper]) -> np.ndarray:
    counts, _ = _sklearn_counts(papers)
    m = TfidfTransformer(sublinear_tf=True).fit_transform(counts)
    return np.asarray((m @ m.T).todense())


def _index_cosines(index: LexicalIndex, papers: list[Paper]) -> np.ndarray:
    ids = sorted(p.id for p in papers)
    out = np.zeros((len(ids), len(ids)))
    for i, pid in enumerate(ids):
        vec = index.vector_of(pid)
        assert vec is not None
        got = index.scores(vec)
        for j, other in enumerate(ids):
            out[i, j] = got.get(other, 0.0)
    return out


def test_weights_are_scikit_learns_tfidf() -> None:
    rng = random.Random(3)
    papers = [_paper(i, rng, title=i % 3 != 0) for i in range(40)]
    store = _store(papers)
    index = LexicalIndex()
    index.sync(store)
    assert len(index) == 40
    np.testing.assert_allclose(_index_cosines(index, papers), _sklearn_cosines(papers), atol=1e-9)


def test_a_title_word_weighs_more_than_the_same_word_in_an_abstract() -> None:
    words = ["kernel", "attention", "sparse", "token", "graph", "policy", "reward", "video"]
    filler = [Paper(f"f{i}", f"F{i}", f"{words[i]} {words[i + 1]} model", f"hf{i}")
                for i in range(len(words) - 1)]
    in_title = Paper("a", "A", "sparse video model", "ha", title="kernel attention")
    in_text = Paper("b", "B", "kernel attention sparse video model", "hb")
    index = LexicalIndex()
    index.sync(_store([*filler, in_title, in_text]))
    got = index.scores(index.vector_for_text("kernel attention"))
    assert got["a"] > got["b"] > 0


def test_a_seed_saturates_its_words_tf_not_its_bigrams() -> None:
    """vector_of(query=True) against scikit-learn's counts and IDF, its unigrams' tf as
    BM25's count x (k1 + 1) / (count + k1), its bigrams' 1 + ln(count)."""
    rng = random.Random(11)
    papers = [_paper(i, rng, title=i % 2 == 0) for i in range(40)]
    index = LexicalIndex()
    index.sync(_store(papers))
    counts, bigram = _sklearn_counts(papers)
    idf = TfidfTransformer().fit(counts).idf_
    dense = counts.toarray()
    log = np.where(dense > 0, 1.0 + np.log(np.maximum(dense, 1.0)), 0.0)
    sat = dense * (QUERY_TF_K1 + 1.0) / (dense + QUERY_TF_K1)
    q, d = np.where(bigram, log, sat) * idf, log * idf
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    want = q @ d.T
    ids = sorted(p.id for p in papers)
    got = np.zeros_like(want)
    for i, pid in enumerate(ids):
        vec = index.vector_of(pid, query=True)
        assert vec is not None
        row = index.scores(vec)
        got[i] = [row.get(other, 0.0) for other in ids]
    np.testing.assert_allclose(got, want, atol=1e-9)
    # the random texts repeat words: the seed's weighting really differs from a candidate's
    assert np.abs(want - _sklearn_cosines(papers)).max() > 1e-3


def test_kept_current_through_adds_edits_and_removals_equals_a_fresh_index() -> None:
    rng = random.Random(5)
    papers = [_paper(i, rng) for i in range(30)]
    store = _store(papers)
    index = LexicalIndex()
    index.sync(store)
    # add 10, rewrite 5 abstracts, retitle 2, remove 4, in separate changes
    added = [_paper(i, rng) for i in range(30, 40)]
    store.apply(GraphChange(upsert_nodes=tuple(added)))
    index.sync(store)
    edited = []
    for p in papers[:5]:
        text = " ".join(rng.choice(WORDS) for _ in range(20))
        edited.append(
            Paper(id=p.id, label=p.label, abstract=text, text_hash=f"new-{p.id}", title=p.title)
        )
    edited += [
        Paper(
            id=p.id,
            label=p.label,
            abstract=p.abstract,
            text_hash=p.text_hash,
            title="retitled kernel attention",
        )
        for p in papers[5:7]
    ]
    store.apply(GraphChange(upsert_nodes=tuple(edited)))
    index.sync(store)
    gone = [p.id for p in papers[10:14]]
    store.apply(GraphChange(delete_nodes=tuple(gone)))
    index.sync(store)

    now = store.list_nodes(NodeKind.PAPER, limit=100)[0]
    assert len(now) == 36 and len(index) == 36
    fresh = LexicalIndex()
    fresh.sync(store)
    papers_now = [p for p in now if isinstance(p, Paper)]
    np.testing.assert_allclose(
        _index_cosines(index, papers_now), _index_cosines(fresh, papers_now), atol=1e-12
    )
    np.testing.assert_allclose(
        _index_cosines(index, papers_now), _sklearn_cosines(papers_now), atol=1e-9
    )
    assert index.vector_of(gone[0]) is None


def test_a_free_text_is_weighed_against_the_corpus() -> None:
    rng = random.Random(7)
    papers = sorted((_paper(i, rng) for i in range(20)), key=lambda p: p.id)
    store = _store(papers)
    index = LexicalIndex()
    index.sync(store)
    text = "Message passing graph neural network for preference optimization, unheardofword."
    vec = CountVectorizer(stop_words="english", ngram_range=(1, 2), min_df=2)
    counts = vec.fit_transform([paper_text(p) for p in papers]).astype(np.float64)
    counts = counts + (TITLE_WEIGHT - 1) * vec.transform([p.title or "" for p in papers])
    tfidf = TfidfTransformer(sublinear_tf=True).fit(counts)
    m = tfidf.transform(counts)
    want = np.asarray((m @ tfidf.transform(vec.transform([text])).T).todense()).ravel()
    got = index.scores(index.vector_for_text(text))
    np.testing.assert_allclose([got.get(p.id, 0.0) for p in papers], want, atol=1e-9)
    assert len(index.vector_for_text("").ids) == 0
    assert index.scores(index.vector_for_text("zzzz qqqq")) == {}


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("diffusion", "diffusion model", True),
        ("robust", "robustness", True),
        ("perturbations", "perturbation", True),
        ("graph neural", "graph neural network", True),
        ("text", "text-to-image", True),
        ("image", "text-to-image", True),
        ("imagenet", "image", True),
        ("token", "attention", False),
        ("var", "variance", False),
        ("score matching", "matching pursuit", False),
    ],
)
def test_overlaps(a: str, b: str, same: bool) -> None:
    assert overlaps(a, b) is same
    assert overlaps(b, a) is same


@pytest.mark.parametrize(
    ("gram", "text", "found"),
    [
        ("generation images", "the generation of images", False),  # a stop word between
        ("text image", "Text-to-image models", False),
        ("text", "Text-to-image models", True),
        ("image models", "Text-to-image models", True),
        ("graph neural", "a graph-neural, sparse", True),
        ("generation text", "for generation. Text is", False),  # a sentence between
        ("t2i", "(T2I) models", True),
        ("robust", "robustness", False),
    ],
)
def test_appears_means_as_written(gram: str, text: str, found: bool) -> None:
    assert appears(gram, text) is found
    assert appears(gram, spelled(text)) is found


def _shared(index: LexicalIndex, papers: list[Paper]) -> list[list[str]]:
    ids = sorted(p.id for p in papers)
    out = []
    for a, b in itertools.pairwise(ids):
        va, vb = index.vector_of(a), index.vector_of(b)
        assert va is not None and vb is not None
        out.append(index.shared_words(va, vb, top=5))
    return out


def test_saved_restored_and_synced_index_answers_as_a_fresh_one(tmp_path: Path) -> None:
    """What a CLI ``related`` does: start from the last command's file, catch up, save."""
    rng = random.Random(7)
    papers = [_paper(i, rng) for i in range(60)]
    first = LexicalIndex()
    first.sync(_store(papers))
    first.save(tmp_path / "lexical.npz")
    # the graph moves on: papers added in the middle of the id order, edited, removed
    later = [p for p in papers if p.id not in {"p005", "p040"}]
    later[3] = _paper(3, random.Random(99))
    later += [_paper(i, rng) for i in (100, 7_000, 25)[:2]]
    restored = LexicalIndex()
    assert restored.restore(tmp_path / "lexical.npz")
    restored.sync(_store(later))
    fresh = LexicalIndex()
    fresh.sync(_store(later))
    assert len(restored) == len(fresh) == len(later)
    assert np.allclose(_index_cosines(restored, later), _index_cosines(fresh, later), atol=1e-12)
    # the words shown as reasons too, ties included (gram ids differ between the two)
    assert _shared(restored, later) == _shared(fresh, later)
    assert restored.dirty and not LexicalIndex().dirty


@pytest.mark.parametrize(
    "damage",
    ["truncate", "garbage", "ids out of range", "lengths disagree", "pickle", "empty"],
)
def test_a_damaged_saved_index_is_ignored(tmp_path: Path, damage: str) -> None:
    rng = random.Random(3)
    papers = [_paper(i, rng) for i in range(20)]
    index = LexicalIndex()
    index.sync(_store(papers))
    path = tmp_path / "lexical.npz"
    index.save(path)
    with np.load(path) as f:
        parts = {k: f[k] for k in f.files}
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[:300])
    elif damage == "garbage":
        path.write_bytes(b"\x00not a zip" * 50)
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        if damage == "ids out of range":
            parts["ids"] = parts["ids"] + 10**9
        elif damage == "lengths disagree":
            parts["lengths"] = parts["lengths"][:-1]
        else:
            parts["ids"] = np.array([object()], dtype=object)
        np.savez(path, **parts)  # type: ignore[arg-type]
    other = LexicalIndex()
    assert not other.restore(path)
    assert len(other) == 0
    other.sync(_store(papers))  # and it still works from scratch
    assert np.allclose(_index_cosines(other, papers), _index_cosines(index, papers))


@pytest.mark.parametrize("seed", range(20))
def test_best_scores_are_the_first_of_all_sorted(seed: int) -> None:
    """WordScores.best(n, skip) picks without sorting every score: it must still give
    exactly sorted((-score, id))[:n] of the papers not skipped, ties and zeros included."""
    rng = random.Random(seed)
    n_rows = rng.randint(0, 60)
    rows = sorted(f"p{rng.randrange(10**6):06d}" for _ in range(n_rows))
    rows = sorted(set(rows))
    # few distinct values, so ties are common; zeros are no score at all
    got = np.array([rng.choice([0.0, 0.0, 0.1, 0.25, 0.25, 0.5, 1 / 3]) for _ in rows])
    scores = WordScores(rows, {p: i for i, p in enumerate(rows)}, got)
    as_dict = {p: float(v) for p, v in zip(rows, got, strict=True) if v > 0}
    assert dict(scores) == as_dict and len(scores) == len(as_dict)
    for p in rows:
        assert scores.get(p, -1.0) == as_dict.get(p, -1.0)
    skip = set(rng.sample(rows, min(len(rows), rng.randint(0, 8)))) | {"not-a-paper"}
    for n in (0, 1, 3, 10, 59, 100):
        want = sorted((p for p in as_dict if p not in skip), key=lambda p: (-as_dict[p], p))[:n]
        assert scores.best(n, skip) == want, (n, skip)
    assert WordScores.none().best(5) == [] and dict(WordScores.none()) == {}


def _by_word(index: LexicalIndex, pid: str) -> dict[str, float]:
    """A paper's seed vector keyed by its grams (gram ids differ between indexes)."""
    vec = index.vector_of(pid, query=True)
    assert vec is not None
    return {index._words[i]: w for i, w in zip(vec.ids.tolist(), vec.weights.tolist(),
                                               strict=True)}


def test_a_seed_vector_stays_exact_as_the_words_grow_and_after_a_restore(
    tmp_path: Path,
) -> None:
    """The unigram mask of the seed weighting is kept and grown with the vocabulary: seed
    vectors asked before new papers brought new grams, and after a restore of another
    index's words, equal those of an index that never asked before (bit for bit)."""
    rng = random.Random(23)
    extra = ["quantum", "annealing", "protein folding", "lattice", "spiking", "neurons"]
    first = [_paper(i, rng) for i in range(20)]
    more = [Paper(f"q{i:02d}", f"Q{i}", " ".join(rng.choice(WORDS + extra) for _ in range(30)),
                  f"hq{i}", title=f"{rng.choice(extra)} {rng.choice(WORDS)}")
            for i in range(10)]
    store = _store(first)
    used = LexicalIndex()
    used.sync(store)
    for p in first:
        _by_word(used, p.id)  # the mask made for the first vocabulary
    store.apply(GraphChange(upsert_nodes=tuple(more)))
    used.sync(store)
    fresh = LexicalIndex()
    fresh.sync(store)
    for p in [*first, *more]:
        assert _by_word(used, p.id) == _by_word(fresh, p.id), p.id
    # another vocabulary, in another order, restored into the index that asked already
    other = LexicalIndex()
    other.sync(_store(list(reversed(more))))
    other.save(tmp_path / "other.npz")
    assert used.restore(tmp_path / "other.npz")
    for p in more:
        assert _by_word(used, p.id) == _by_word(other, p.id), p.id
