"""A word-overlap channel for related papers: TF-IDF over word 1-2-grams, kept current.

The index holds each paper's raw 1-2-gram counts and the corpus' document frequencies;
the TF-IDF weights are computed when read, from the current N and df, so adding papers
never rewrites what was stored for the others (the weights follow the corpus as it grows).

Weights are scikit-learn's ``TfidfVectorizer(sublinear_tf=True, stop_words="english",
ngram_range=(1, 2), min_df=2)``: tf = 1 + ln(count), idf = ln((1 + N) / (1 + df)) + 1,
grams in fewer than two papers left out, each vector L2-normalised; the analyzer
(tokens, stop words, bigrams) is scikit-learn's own. Two departures: a title's grams
count :data:`TITLE_WEIGHT` times, and a seed's vector (``query=True``) saturates its
unigrams' tf (:data:`QUERY_TF_K1`). bench/ranking.py measured this channel (see
docs/benchmarks.md, "Ranking research"), bench/related_fields.py the departures.

The index is store-agnostic: ``sync`` compares the store's papers (id + text hash +
title) with what it holds and tokenises only the new or changed ones.
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
import math
import os
import re
import threading
import time
import zipfile
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mmh3
import numpy as np

from graph.model import NodeKind, Paper
from graph.stopwords_en import ENGLISH_STOP_WORDS
from graph.store.base import GraphStore

log = logging.getLogger(__name__)

MIN_DF = 2
#: 2: title grams count TITLE_WEIGHT times (a version-1 file counted them once)
SAVE_FORMAT = "citegraph-lexical-2"
#: a title gram counts this many times an abstract gram, as KEYWORD search weighs a title
#: word (graph.query.text.COLUMN_WEIGHTS): a title says what a paper is about in a few
#: words. Cora has no titles, so only ICLR 2021 moves: keyword sharing 0.332 -> 0.335 in
#: bench/related_fields.py (docs/benchmarks.md, "Issue 13, round 7"); this one value was
#: measured, not tuned
TITLE_WEIGHT = 2
#: a seed's unigram tf saturates, count x (k1 + 1) / (count + k1) with this k1 (BM25's),
#: where a candidate's stays 1 + ln(count): chosen on the Cora tune half, and ICLR 2021
#: must not drop (docs/benchmarks.md, "Issue 13, round 7")
QUERY_TF_K1 = 0.5
#: a gram's count in one paper's text: more than this is no count a save wrote
MAX_GRAM_COUNT = 1_000_000
#: a saved index takes about 4.5 KB a paper (ICLR 2021); a restore accepts up to this
SAVED_BYTES_PER_PAPER = 64 * 1024
LIST_PAGE = 5000
# stores that cannot say whether they changed (Neo4j: other processes write it) are
# compared at most this often
UNVERSIONED_TTL_S = 5.0


def _analyzer() -> Callable[[str], list[str]]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(stop_words="english", ngram_range=(1, 2)).build_analyzer()  # type: ignore[no-any-return]


#: hashed gram columns of :func:`word_vectors`: two grams share one in ~1 of 50k pairs
WORD_HASH_FEATURES = 1 << 24
#: :func:`word_vectors`' tf saturation, BM25's k1: tf = count x (k1 + 1) / (count + k1)
WORD_TF_K1 = 2.0
#: what :func:`word_vectors` computes; SIMILAR_TO edges and the word cache carry it, so a
#: change recomputes them rather than mixing two kinds of overlap
WORD_VECTOR_VERSION = 2
#: the WordPiece vocabulary of all-MiniLM-L6-v2 (bert-base-uncased's; Apache-2.0), copied
#: so the weights stay fixed whichever embedding model is configured. Its whole words are
#: in order of general-English frequency ("the", "of", "and", ...): a word's position
#: is its rarity, fixed and the same for every corpus.
_VOCAB = Path(__file__).parent / "data" / "wordpiece_vocab.txt"
_WORD_TOKEN = re.compile(r"(?u)\b\w\w+\b")  # scikit-learn's default token pattern
_FOLD_KEEP = ("ss", "us", "is")  # "loss", "corpus", "analysis" are not plurals


@functools.lru_cache(maxsize=1)
def _wordpiece() -> tuple[dict[str, int], frozenset[str]]:
    """(rank of each whole word, 1 = most frequent; every vocabulary entry)."""
    entries = _VOCAB.read_text(encoding="utf-8").splitlines()
    start = entries.index("the")  # before it: special tokens and single characters
    ranks: dict[str, int] = {}
    for i, tok in enumerate(entries[start:], start=1):
        if not tok.startswith("##"):
            ranks.setdefault(tok, i)
    return ranks, frozenset(entries)


def _pieces(word: str, vocab: frozenset[str]) -> int:
    """How many WordPiece pieces ``word`` splits into (greedy longest match; 8 when it
    cannot be split)."""
    count, start = 0, 0
    while start < len(word):
        end = len(word)
        prefix = "" if start == 0 else "##"  # a piece inside a word is written "##..."
        while end > start and prefix + word[start:end] not in vocab:
            end -= 1
        if end == start:
            return 8
        count, start = count + 1, end
    return count


@functools.lru_cache(maxsize=1 << 18)
def word_rarity(word: str) -> float:
    """ln(1 + the word's frequency rank in general English): 0.7 for "the", 6.8 for
    "network", 10 for "reinforcement"; a word the vocabulary lacks ranks past all of
    it, once per piece it splits into. Fixed, never counted from a corpus: an IDF that
    does not depend on N (docs/benchmarks.md, "Issue 13, round 6")."""
    ranks, vocab = _wordpiece()
    rank = ranks.get(word)
    if rank is None:
        rank = len(vocab) * _pieces(word, vocab)
    return math.log(1.0 + rank)


def _fold(word: str) -> str:
    """A plural to its singular ("networks" -> "network", "studies" -> "study")."""
    if len(word) <= 3 or word.endswith(_FOLD_KEEP):
        return word
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") else word


def word_grams(text: str) -> list[str]:
    """The word 1-2-grams :func:`word_vectors` counts: this module's analyzer (lower case,
    scikit-learn's tokens and English stop words, bigrams over what is left) with plurals
    folded."""
    words = [_fold(w) for w in _WORD_TOKEN.findall(text.lower())
             if w not in ENGLISH_STOP_WORDS]
    return words + [f"{a} {b}" for a, b in itertools.pairwise(words)]


@functools.lru_cache(maxsize=1 << 18)
def _gram_weight(gram: str) -> float:
    a, _, b = gram.partition(" ")
    return (word_rarity(a) + word_rarity(b)) / 2 if b else word_rarity(a)


def forget_gram_weights() -> None:
    """Let :func:`_gram_weight`'s cache go: after a build's word vectors, up to 2^18
    grams, mostly bigrams seen once (~100 MB at 100k papers), that a one-shot process
    would hold to its end."""
    _gram_weight.cache_clear()


@functools.lru_cache(maxsize=1)
def _hasher() -> Any:
    from sklearn.feature_extraction import FeatureHasher

    return FeatureHasher(n_features=WORD_HASH_FEATURES, input_type="dict", alternate_sign=False)


def _hash_column(gram: str) -> int:
    """The column FeatureHasher gives ``gram``."""
    # MurmurHash3 x86 32-bit, seed 0, signed: scikit-learn's murmurhash3_bytes_s32
    return _hash_column_of(mmh3.hash(gram.encode("utf-8"), 0, signed=True))


def _hash_column_of(h: int) -> int:
    """|h| mod n, with |-2^31| as scikit-learn defines it."""
    if h == -(1 << 31):
        return (2147483647 - (WORD_HASH_FEATURES - 1)) % WORD_HASH_FEATURES
    return abs(h) % WORD_HASH_FEATURES


#: up to this many texts, :func:`word_vectors` hashes in Python rather than import
#: scikit-learn (~1 s): a one-shot add's few texts (~5 µs a gram here)
PY_HASH_MAX_TEXTS = 200


def _hashed(rows: Sequence[Mapping[str, float]]) -> Any:
    """``FeatureHasher(2^24, alternate_sign=False).transform(rows)``: scikit-learn's own
    for many rows (or once it is imported), else the same steps with
    ``mmh3`` (the same MurmurHash3), so the same matrix to the bit."""
    import sys

    if len(rows) > PY_HASH_MAX_TEXTS or "sklearn.feature_extraction" in sys.modules:
        return _hasher().transform(rows)
    return _py_hashed(rows)


def _py_hashed(rows: Sequence[Mapping[str, float]]) -> Any:
    """FeatureHasher's transform in Python (see :func:`_hashed`)."""
    import scipy.sparse as sp

    # FeatureHasher.transform: one entry per (row, gram) in the row's order, zeros
    # skipped; then sum_duplicates (which also sorts each row's columns)
    indices: list[int] = []
    values: list[float] = []
    indptr = [0]
    for row in rows:
        for gram, value in row.items():
            if value != 0:
                indices.append(_hash_column(gram))
                values.append(value)
        indptr.append(len(indices))
    # a csr_matrix, as FeatureHasher hands back under scikit-learn's default config
    m = sp.csr_matrix(
        (np.asarray(values, dtype=np.float64), np.asarray(indices, dtype=np.int32),
         np.asarray(indptr, dtype=np.int32)),
        shape=(len(rows), WORD_HASH_FEATURES), dtype=np.float64,
    )
    m.sum_duplicates()
    return m


def word_vectors(texts: Sequence[str]) -> Any:
    """Each text's word 1-2-gram vector (:func:`word_grams`), weighted by a saturated tf
    (k1 = WORD_TF_K1) x the gram's fixed rarity (:func:`word_rarity`; a bigram: the mean
    of its words'), hashed columns, L2-normalised, as CSR rows. It depends on the text
    alone (no vocabulary learnt, no corpus statistics), so SIMILAR_TO can use it without
    ever depending on N (graph/link.py)."""
    import scipy.sparse as sp

    if not texts:
        return sp.csr_matrix((0, WORD_HASH_FEATURES))
    k1 = WORD_TF_K1
    rows = []
    for text in texts:
        counts: dict[str, int] = {}
        for g in word_grams(text):
            counts[g] = counts.get(g, 0) + 1
        rows.append({g: c * (k1 + 1) / (c + k1) * _gram_weight(g) for g, c in counts.items()})
    m = _hashed(rows).tocsr().astype(np.float64)
    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    # each row times 1 / its norm, in place: the same products as diags(1 / norms) @ m,
    # without the sparse product's 2^24-column scratch (0.24 s a call, even for 10 texts)
    m.data *= np.repeat(1.0 / norms, np.diff(m.indptr))
    m.sort_indices()
    return m


def paper_text(paper: Paper) -> str:
    """What the channel reads of a paper: its title (when it has one) and abstract."""
    return f"{paper.title}. {paper.abstract}" if paper.title else paper.abstract


@dataclass(frozen=True, slots=True)
class LexVector:
    """A sparse L2-normalised TF-IDF vector: sorted gram ids and their weights."""

    ids: np.ndarray
    weights: np.ndarray

    def dot(self, other: LexVector) -> float:
        """Cosine of two normalised vectors."""
        _, a, b = np.intersect1d(self.ids, other.ids, assume_unique=True, return_indices=True)
        return float(np.dot(self.weights[a], other.weights[b]))


class LexicalIndex:
    """Per-paper 1-2-gram counts + document frequencies; TF-IDF computed on read.

    Thread-safe: ``sync`` and the read methods take one lock; reads are short (a sparse
    matrix-vector product over the corpus).
    """

    def __init__(self) -> None:
        self._analyzer: Callable[[str], list[str]] | None = None  # scikit-learn loads on use
        self._lock = threading.Lock()
        self._version: str | None = None
        self._synced_at = 0.0
        self._key: dict[str, tuple[str, str | None]] = {}  # pid -> (text_hash, title)
        self._counts: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # pid -> (gram ids, counts)
        self._vocab: dict[str, int] = {}
        self._words: list[str] = []
        # whether each of _words is a unigram, for a seed's saturated tf: _words only grows
        # (or is replaced whole, which empties this), so the mask grows with it
        self._unigram = np.zeros(0, dtype=bool)
        self._df = np.zeros(1024, dtype=np.int64)
        self._matrix: Any = None  # scipy csr: rows = self._rows, L2-normalised TF-IDF
        self._rows: list[str] = []
        self._row_of: dict[str, int] = {}
        #: papers were read or dropped since the last save/restore
        self.dirty = False

    # ------------------------------------------------------------------ keeping current
    def sync(self, store: GraphStore) -> None:
        """Catch up with the store's papers: tokenise the new or changed, drop the gone."""
        version = store.version()
        now = time.monotonic()
        with self._lock:
            if self._synced_at and (
                version == self._version if version is not None
                else now - self._synced_at < UNVERSIONED_TTL_S
            ):
                return
            seen: set[str] = set()
            offset = 0
            while True:
                page, total = store.list_nodes(NodeKind.PAPER, offset=offset, limit=LIST_PAGE)
                for node in page:
                    if not isinstance(node, Paper):
                        continue
                    seen.add(node.id)
                    key = (node.text_hash, node.title)
                    if self._key.get(node.id) != key:
                        self._drop(node.id)
                        self._add(node.id, paper_text(node), node.title)
                        self._key[node.id] = key
                offset += len(page)
                if not page or offset >= total:
                    break
            for pid in [p for p in self._key if p not in seen]:
                self._drop(pid)
                del self._key[pid]
            self._version = version
            self._synced_at = now

    # ------------------------------------------------------------------ saved between processes
    def save(self, path: Path) -> None:
        """Write the counts to ``path`` (atomically), for :meth:`restore` in another process."""
        with self._lock:
            pids = sorted(self._counts)
            ids = [self._counts[p][0] for p in pids]
            counts = [self._counts[p][1] for p in pids]
            meta = {
                "format": SAVE_FORMAT,
                "words": self._words,
                "papers": [[p, *self._key.get(p, ("", None))] for p in pids],
            }
            arrays: dict[str, np.ndarray] = {
                "meta": np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8),
                "lengths": np.asarray([len(i) for i in ids], dtype=np.int64),
                "ids": np.concatenate(ids) if ids else np.zeros(0, np.int64),
                "counts": np.concatenate(counts) if counts else np.zeros(0),
            }
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            with tmp.open("wb") as fh:
                np.savez(
                    fh, meta=arrays["meta"], lengths=arrays["lengths"], ids=arrays["ids"],
                    counts=arrays["counts"],
                )
            tmp.replace(path)
        finally:
            tmp.unlink(missing_ok=True)
        self.dirty = False

    def restore(self, path: Path, max_bytes: int = 1 << 30) -> bool:
        """Take the counts a :meth:`save` wrote; False (and nothing taken) if it cannot.

        ``sync`` still checks every paper against the store afterwards, so a file from an
        older graph only saves re-reading the papers that did not change. The file is a
        cache anyone with the data dir may have written: it is checked before it is read
        (each member's declared size against ``max_bytes`` and against its array header,
        so a zip bomb is not inflated) and after (types, ranges, counts >= 1, gram ids
        increasing within a paper), and refused whole on any doubt.
        """
        try:
            arrays = _read_saved(path, max_bytes)
            if arrays is None:
                return False
            meta, lengths, ids, counts = arrays
            papers = _saved_papers(meta, len(lengths))
            words = meta.get("words") if isinstance(meta, dict) else None
            if papers is None or not isinstance(words, list) or not all(
                isinstance(w, str) for w in words
            ):
                return False
            if not _saved_arrays_valid(lengths, ids, counts, len(words)):
                return False
        except (OSError, ValueError, KeyError, TypeError, AttributeError, EOFError,
                MemoryError, zipfile.BadZipFile) as exc:
            log.info("word index not restored from %s: %s", path, exc)
            return False
        with self._lock:
            self._words = words
            self._unigram = np.zeros(0, dtype=bool)
            self._vocab = {w: i for i, w in enumerate(words)}
            self._df = np.zeros(max(1024, len(words)), dtype=np.int64)
            self._counts, self._key = {}, {}
            start = 0
            for (pid, text_hash, title), n in zip(papers, lengths.tolist(), strict=True):
                gram_ids = ids[start : start + n].astype(np.int64)
                self._counts[pid] = (gram_ids, counts[start : start + n].astype(np.float64))
                self._key[pid] = (text_hash, title)
                self._df[gram_ids] += 1
                start += n
            self._matrix = None
            self._version = None
            self._synced_at = 0.0
            self.dirty = False
        return True

    def load(self) -> None:
        """Import scikit-learn and scipy now.

        A server calls this before its threads start: importing them in a request thread
        while the warm-up thread imports torch can meet torch half-initialised (a circular
        import between threads), which failed a related() query once in the tests.
        """
        import scipy.sparse  # noqa: F401

        if self._analyzer is None:
            self._analyzer = _analyzer()

    def _analyze(self, text: str) -> list[str]:
        if self._analyzer is None:
            self._analyzer = _analyzer()
        return self._analyzer(text)

    def _add(self, pid: str, text: str, title: str | None = None) -> None:
        grams: dict[int, int] = {}
        # the title's grams count TITLE_WEIGHT times: read once in ``text``, then again
        extra = self._analyze(title) * (TITLE_WEIGHT - 1) if title else []
        for g in itertools.chain(self._analyze(text), extra):
            gid = self._vocab.get(g)
            if gid is None:
                gid = self._vocab[g] = len(self._words)
                self._words.append(g)
            grams[gid] = grams.get(gid, 0) + 1
        ids = np.fromiter(sorted(grams), dtype=np.int64, count=len(grams))
        counts = np.asarray([grams[i] for i in ids.tolist()], dtype=np.float64)
        if len(self._words) > len(self._df):
            self._df = np.concatenate([self._df, np.zeros(len(self._df) + len(self._words),
                                                          dtype=np.int64)])
        self._df[ids] += 1
        self._counts[pid] = (ids, counts)
        self._matrix = None
        self.dirty = True

    def _drop(self, pid: str) -> None:
        old = self._counts.pop(pid, None)
        if old is not None:
            self._df[old[0]] -= 1
            self._matrix = None
            self.dirty = True

    # ------------------------------------------------------------------ weights
    def __len__(self) -> int:
        return len(self._counts)

    def _idf(self, ids: np.ndarray) -> np.ndarray:
        n = len(self._counts)
        df = self._df[ids]
        idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
        return np.where(df >= MIN_DF, idf, 0.0)

    def _unigrams(self) -> np.ndarray:
        """For each gram id: True for a single word (grown here as _words grows)."""
        known, words = len(self._unigram), self._words
        if known < len(words):
            more = np.fromiter((" " not in w for w in words[known:]), dtype=bool,
                               count=len(words) - known)
            self._unigram = np.concatenate([self._unigram, more])
        return self._unigram

    def _weigh(self, ids: np.ndarray, counts: np.ndarray, query: bool = False) -> LexVector:
        tf = 1.0 + np.log(counts)
        if query:
            # a word the seed repeats says what it is about once, not ln(count) times more;
            # its bigrams (how it phrases things) keep their repeats
            unigram = self._unigrams()[ids]
            k1 = QUERY_TF_K1
            tf = np.where(unigram, counts * (k1 + 1.0) / (counts + k1), tf)
        w = tf * self._idf(ids)
        keep = w > 0
        ids, w = ids[keep], w[keep]
        norm = float(np.linalg.norm(w))
        return LexVector(ids, w / norm if norm > 0 else w)

    def _ensure_matrix(self) -> Any:
        if self._matrix is None:
            import scipy.sparse as sp

            self._rows = sorted(self._counts)
            self._row_of = {p: i for i, p in enumerate(self._rows)}
            vecs = [self._weigh(*self._counts[p]) for p in self._rows]
            indptr = np.zeros(len(vecs) + 1, dtype=np.int64)
            indptr[1:] = np.cumsum([len(v.ids) for v in vecs])
            cols = np.concatenate([v.ids for v in vecs]) if vecs else np.zeros(0, np.int64)
            data = np.concatenate([v.weights for v in vecs]) if vecs else np.zeros(0)
            self._matrix = sp.csr_matrix(
                (data, cols, indptr), shape=(len(vecs), max(len(self._words), 1))
            )
        return self._matrix

    # ------------------------------------------------------------------ reads
    def vector_of(self, pid: str, query: bool = False) -> LexVector | None:
        """A paper's TF-IDF vector under the current corpus (None if it is not indexed);
        ``query``: weighed as a seed (:data:`QUERY_TF_K1`), not as a candidate."""
        with self._lock:
            counts = self._counts.get(pid)
            return self._weigh(*counts, query=query) if counts is not None else None

    def vector_for_text(self, text: str, query: bool = False) -> LexVector:
        """A free text's TF-IDF vector against the corpus (grams unknown to it are dropped);
        ``query`` as for :meth:`vector_of`."""
        grams: dict[int, int] = {}
        with self._lock:
            for g in self._analyze(text):
                gid = self._vocab.get(g)
                if gid is not None:
                    grams[gid] = grams.get(gid, 0) + 1
            ids = np.fromiter(sorted(grams), dtype=np.int64, count=len(grams))
            counts = np.asarray([grams[i] for i in ids.tolist()], dtype=np.float64)
            return self._weigh(ids, counts, query=query)

    def scores(self, query: LexVector) -> WordScores:
        """Cosine of ``query`` with every indexed paper that shares a gram with it."""
        with self._lock:
            m = self._ensure_matrix()
            if not len(query.ids) or not m.shape[0]:
                return WordScores.none()
            q = np.zeros(m.shape[1])
            q[query.ids] = query.weights
            # the rows are rebuilt as new objects, never changed in place: safe to keep
            return WordScores(self._rows, self._row_of, m @ q)

    def scores_among(self, queries: Sequence[LexVector], ids: Sequence[str]) -> np.ndarray:
        """Cosine of each query with each of ``ids``: len(queries) x len(ids), 0 where unknown."""
        out = np.zeros((len(queries), len(ids)))
        with self._lock:
            m = self._ensure_matrix()
            at = [(j, self._row_of[p]) for j, p in enumerate(ids) if p in self._row_of]
            if not queries or not at or not m.shape[0]:
                return out
            q = np.zeros((m.shape[1], len(queries)))
            for k, v in enumerate(queries):
                q[v.ids, k] = v.weights
            cols = np.asarray([j for j, _ in at])
            out[:, cols] = np.asarray(m[[r for _, r in at]] @ q).T
        return out

    def shared_words(self, a: LexVector, b: LexVector, top: int = 3) -> list[str]:
        """The grams that contribute most to a . b, strongest first."""
        common, ia, ib = np.intersect1d(a.ids, b.ids, assume_unique=True, return_indices=True)
        if not len(common):
            return []
        contrib = a.weights[ia] * b.weights[ib]
        with self._lock:
            grams = [self._words[int(g)] for g in common]
        # ties by the words themselves, not by gram ids: those depend on the order papers
        # were first read in, which differs between a server and a fresh process (and so
        # does the order of a norm's sum: compare at 9 decimals)
        key = np.round(-contrib, 9).tolist()
        words = [w for _, w in sorted(zip(key, grams, strict=True))]
        kept: list[str] = []
        for w in words:
            if any(overlaps(w, k) for k in kept):
                continue
            kept.append(w)
            if len(kept) == top:
                break
        return kept


class WordScores(Mapping[str, float]):
    """paper id -> cosine with a query, for the papers that share a gram with it (> 0).

    Kept as the index's one array of scores, not as a dict: related() reads a few dozen
    of ~N scores, and building the dict (and sorting it for the best) was a fifth of it.
    """

    def __init__(self, rows: Sequence[str], row_of: Mapping[str, int], got: np.ndarray) -> None:
        self._rows, self._row_of, self._got = rows, row_of, got
        self._hit = np.flatnonzero(got > 0)

    def __getitem__(self, pid: str) -> float:
        i = self._row_of.get(pid)
        if i is None or not self._got[i] > 0:
            raise KeyError(pid)
        return float(self._got[i])

    def __iter__(self) -> Iterator[str]:
        return (self._rows[i] for i in self._hit.tolist())

    def __len__(self) -> int:
        return len(self._hit)

    @classmethod
    def none(cls) -> WordScores:
        """No scores (no query words)."""
        return cls([], {}, np.zeros(0))

    def best(self, n: int, skip: Collection[str] = ()) -> list[str]:
        """The ``n`` best papers not in ``skip``, by (-score, id): as sorting them all."""
        hit = self._hit
        if skip:
            gone = [i for i in (self._row_of.get(p) for p in skip) if i is not None]
            hit = hit[~np.isin(hit, gone)]
        if n <= 0 or not len(hit):
            return []
        scores = self._got[hit]
        if len(hit) > n:
            # everything at least the n-th best score (ties included), then exactly sorted
            nth = np.partition(scores, len(hit) - n)[len(hit) - n]
            keep = scores >= nth
            hit, scores = hit[keep], scores[keep]
        # rows are in id order, so (-score, row) is (-score, id)
        order = np.lexsort((hit, -scores))[:n]
        return [self._rows[i] for i in hit[order].tolist()]


def _read_saved(
    path: Path, max_bytes: int
) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray] | None:
    """The four members of a saved index, or None when a size or a header is not right."""
    with zipfile.ZipFile(path) as z:
        infos = {i.filename: i for i in z.infolist()}
        names = {f"{k}.npy" for k in ("meta", "lengths", "ids", "counts")}
        if set(infos) != names or sum(i.file_size for i in infos.values()) > max_bytes:
            return None
        out: dict[str, np.ndarray] = {}
        for name in sorted(names):
            with z.open(name) as fh:
                version = np.lib.format.read_magic(fh)
                if version == (1, 0):
                    shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
                elif version == (2, 0):
                    shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
                else:
                    return None
                if dtype.hasobject or fortran or len(shape) != 1:
                    return None
                if int(np.prod(shape, dtype=np.int64)) * dtype.itemsize > infos[name].file_size:
                    return None  # the header claims more than the member holds
            with z.open(name) as fh:
                out[name[:-4]] = np.lib.format.read_array(fh, allow_pickle=False)
    meta = json.loads(bytes(out["meta"].astype(np.uint8)).decode("utf-8"))
    return meta, out["lengths"], out["ids"], out["counts"]


def _saved_papers(meta: Any, n: int) -> list[tuple[str, str, str | None]] | None:
    if not isinstance(meta, dict) or meta.get("format") != SAVE_FORMAT:
        return None
    papers = meta.get("papers")
    if not isinstance(papers, list) or len(papers) != n:
        return None
    out: list[tuple[str, str, str | None]] = []
    for entry in papers:
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str)
                and isinstance(entry[1], str) and (entry[2] is None or isinstance(entry[2], str))):
            return None
        out.append((entry[0], entry[1], entry[2]))
    if len({p for p, _, _ in out}) != len(out):
        return None
    return out


def _saved_arrays_valid(
    lengths: np.ndarray, ids: np.ndarray, counts: np.ndarray, n_words: int
) -> bool:
    if lengths.dtype.kind not in "iu" or ids.dtype.kind not in "iu" or counts.dtype.kind != "f":
        return False
    if (lengths < 0).any() or int(lengths.sum()) != len(ids) or len(counts) != len(ids):
        return False
    if len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= n_words):
        return False
    if not np.isfinite(counts).all() or (counts < 1).any() or (counts > MAX_GRAM_COUNT).any():
        return False
    if (counts != np.floor(counts)).any():
        return False
    # gram ids strictly increase within each paper (as _add writes them)
    if len(ids) > 1:
        rising = np.diff(ids.astype(np.int64)) > 0
        starts = np.cumsum(lengths)[:-1]
        starts = starts[(starts > 0) & (starts < len(ids))]
        rising[starts - 1] = True  # a new paper may start lower
        if not rising.all():
            return False
    return True


_WORD_OR_MARK = re.compile(r"\w+|[^\w\s-]")


def spelled(text: str) -> str:
    """``text`` as space-separated words and marks, lower-cased, hyphens as spaces: the
    form :func:`appears` looks in (make it once per text)."""
    return " " + " ".join(_WORD_OR_MARK.findall(text.casefold())) + " "


def appears(gram: str, text: str) -> bool:
    """Whether ``gram`` stands in ``text`` as written (any case; a space may be a hyphen).

    ``text`` is either raw or already :func:`spelled` (starts with a space)."""
    hay = text if text.startswith(" ") and text.endswith(" ") else spelled(text)
    return f" {' '.join(gram.casefold().replace('-', ' ').split())} " in hay


@functools.lru_cache(maxsize=1 << 16)
def overlaps(a: str, b: str) -> bool:
    """Whether two phrases say the same thing: one's words inside the other's.

    Words match when one is a prefix of the other of at least 4 letters ("robust" and
    "robustness", "perturbation" and "perturbations"), so a unigram inside a shown bigram
    or a plural beside its singular is one reason, not two.

    Cached: related() asks it of the same grams and term names thousands of times a call.
    """
    wa, wb = a.casefold().replace("-", " ").split(), b.casefold().replace("-", " ").split()
    if len(wa) > len(wb):
        wa, wb = wb, wa
    for i in range(len(wb) - len(wa) + 1):
        if all(_same_word(x, y) for x, y in zip(wa, wb[i:], strict=False)):
            return True
    return False


def _same_word(x: str, y: str) -> bool:
    if x == y:
        return True
    short, long_ = (x, y) if len(x) <= len(y) else (y, x)
    return len(short) >= 4 and long_.startswith(short)


def mean_vector(vectors: Sequence[LexVector]) -> LexVector | None:
    """The mean of several vectors (for a query of several seed papers), not renormalised."""
    vectors = [v for v in vectors if len(v.ids)]
    if not vectors:
        return None
    if len(vectors) == 1:
        return vectors[0]
    ids = np.concatenate([v.ids for v in vectors])
    w = np.concatenate([v.weights for v in vectors]) / len(vectors)
    uniq, inv = np.unique(ids, return_inverse=True)
    return LexVector(uniq, np.bincount(inv, weights=w))
