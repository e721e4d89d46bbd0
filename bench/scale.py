# ruff: noqa: E501, B023 - long table rows; the per-sample lambdas run inside their own iteration
"""Scale: linking, storing and querying a synthetic corpus of 10k / 30k / 100k papers.

The generator (:func:`generate`, seeded, deterministic):

* vectors: ``n_topics = N / 100`` topic centroids (unit Gaussian directions pulled 0.5
  toward one shared "corpus" direction, since real abstract embeddings share one: the
  mean pairwise cosine of ICLR 2021 MiniLM vectors is ~0.1-0.2, not 0); each paper
  is ``w * centroid(topic a) + (1 - w) * centroid(topic b) + noise`` with w ~ U(0.6, 1)
  and isotropic noise of norm ~``NOISE``, then L2-normalised. The run prints the top-1 /
  top-10 neighbour cosine and random-pair cosine next to the same figures for the real
  ICLR 2021 embeddings (when bench/.cache holds them), so one can see how close it is.
* terms: each paper mentions Poisson(15)+1 terms (ICLR 2021: median 16 concepts per
  paper); half are drawn from a global Zipf(1.1) vocabulary of N terms, half from its
  topic's own Zipf(1.1) list of 200 terms, so frequent terms are frequent everywhere and
  topic terms cluster as real concepts do.

Each (size, phase) runs in its own subprocess so peak RSS (``ru_maxrss``) belongs to that
phase; "input RSS" is the process's RSS after generating the data, so peak - input is what
the phase itself needed. Phases:

* ``exact``: ``graph.link.top_k_similar`` (k=10, blocked exact, float64), all rows;
* ``usearch``: HNSW (usearch, cosine, f32, default connectivity/expansion) build + k=11
  search of every vector; recall@10 against exact top-10 of 500 sampled rows;
* ``terms``: ``graph.link.shared_term_edges`` with the default settings;
* ``store``: NetworkxStore.apply of the whole graph (papers, concepts, MENTIONS,
  SIMILAR_TO from usearch) + save to a file, then p50 of neighborhood depth 1 / 2,
  shortest_path, keyword and vector search and related() over up to 30 random papers
  (a query type stops taking samples once it has used 10 s; the sample count is shown).

A phase over its time limit is killed and reported as such, and each child caps its own
address space at 6 GiB (MemoryError is reported as such: the machine is shared); exact at 100k is not run by
default (it is O(N^2 d) time) - its time is extrapolated from 10k and 30k (and said so);
the store phase runs up to ``--store-max`` (30k by default: a 100k networkx graph with its
queries does not fit the run's time budget on a shared 2-core machine).
``--quick``: 2k and 5k.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import CACHE_DIR, ROOT, Report, median, table

DIM = 384
NOISE = 0.9
TERMS_PER_PAPER = 15
QUERY_BUDGET_S = 10.0  # per query type and size


# --------------------------------------------------------------------------- generator
def generate(n: int, seed: int = 0) -> tuple[np.ndarray, list[dict[str, float]], np.ndarray]:
    """(unit vectors n x 384 float32, terms per paper {term: weight}, topic per paper)."""
    rng = np.random.default_rng(seed)
    n_topics = max(20, n // 100)
    common_dir = rng.normal(size=DIM)
    common_dir /= np.linalg.norm(common_dir)
    cent = rng.normal(size=(n_topics, DIM))
    cent /= np.linalg.norm(cent, axis=1, keepdims=True)
    cent = cent + 0.5 * common_dir
    cent /= np.linalg.norm(cent, axis=1, keepdims=True)
    a = rng.integers(0, n_topics, n)
    b = rng.integers(0, n_topics, n)
    w = rng.uniform(0.6, 1.0, n)[:, None]
    out = np.empty((n, DIM), dtype=np.float32)
    for s in range(0, n, 10000):
        e = min(n, s + 10000)
        noise = rng.normal(size=(e - s, DIM)) * (NOISE / math.sqrt(DIM))
        v = w[s:e] * cent[a[s:e]] + (1 - w[s:e]) * cent[b[s:e]] + noise
        out[s:e] = v / np.linalg.norm(v, axis=1, keepdims=True)
    # terms: Zipf ranks; global vocabulary of n terms, 200 topic terms per topic
    counts = rng.poisson(TERMS_PER_PAPER, n) + 1
    terms: list[dict[str, float]] = []
    for i in range(n):
        mine: dict[str, float] = {}
        k = int(counts[i])
        g = rng.zipf(1.1, size=k * 2)
        t = rng.zipf(1.1, size=k * 2)
        for j in range(k):
            if j % 2 == 0:
                r = int(g[j]) % n
                mine[f"concept:g{r}"] = 1.0
            else:
                r = int(t[j]) % 200
                mine[f"concept:t{a[i]}-{r}"] = 1.0
        terms.append(mine)
    return out, terms, a


def neighbour_stats(m: np.ndarray, sample: int = 500, seed: int = 0) -> tuple[float, float, float]:
    """(median top-1 cosine, median 10th cosine, mean random-pair cosine) over a sample."""
    rng = np.random.default_rng(seed)
    rows = rng.choice(len(m), size=min(sample, len(m)), replace=False)
    s = m[rows].astype(np.float64) @ m.T.astype(np.float64)
    s[np.arange(len(rows)), rows] = -np.inf
    top = -np.sort(-s, axis=1)[:, :10]
    finite = s[np.isfinite(s)]
    return float(np.median(top[:, 0])), float(np.median(top[:, 9])), float(finite.mean())


# --------------------------------------------------------------------------- phases (child)
def _rss_mib() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def _peak_mib() -> float:
    """VmHWM: this process's own high-water RSS (ru_maxrss would carry the parent's over exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _usearch_lists(m: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, float, float]:
    from usearch.index import Index

    t0 = time.perf_counter()
    index = Index(ndim=m.shape[1], metric="cos", dtype="f32")
    index.add(np.arange(len(m)), m)
    t_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = index.search(m, k + 1)
    t_search = time.perf_counter() - t0
    return np.asarray(res.keys), np.asarray(res.distances), t_build, t_search


CHILD_MEMORY_GIB = 6  # the machine is shared: a phase that needs more fails, it does not OOM others


def child(n: int, phase: str) -> dict[str, Any]:
    import resource

    cap = CHILD_MEMORY_GIB * 2**30
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    sys.path.insert(0, str(ROOT))
    from graph.link import shared_term_edges, top_k_similar

    m, terms, _ = generate(n)
    ids = [f"p{i:06d}" for i in range(n)]
    base = _rss_mib()
    out: dict[str, Any] = {"n": n, "phase": phase, "input_rss": base}
    t0 = time.perf_counter()
    if phase == "exact":
        top_k_similar(ids, m, 10, -1.0)
        out["seconds"] = time.perf_counter() - t0
    elif phase == "usearch":
        keys, _, tb, ts = _usearch_lists(m, 10)
        out["seconds"] = time.perf_counter() - t0
        out["build_s"], out["search_s"] = tb, ts
        rng = np.random.default_rng(1)
        rows = sorted(rng.choice(n, size=500, replace=False).tolist())
        exact = top_k_similar(ids, m, 10, -1.0, rows=rows)
        rec = []
        for r in rows:
            truth = {int(x[0][1:]) for x in exact[ids[r]]}
            got = [int(x) for x in keys[r] if int(x) != r][:10]
            rec.append(len(truth & set(got)) / 10)
        out["recall"] = float(np.mean(rec))
    elif phase == "terms":
        edges = shared_term_edges(dict(zip(ids, terms, strict=True)), {}, max_df=0.2,
                                  min_weight=1.0, top_k=20)
        out["seconds"] = time.perf_counter() - t0
        out["edges"] = len(edges)
    elif phase == "store":
        out.update(_store_phase(n, m, terms, ids))
    out["peak_rss"] = _peak_mib()
    return out


def _store_phase(n: int, m: np.ndarray, terms: list[dict[str, float]], ids: list[str]) -> dict[str, Any]:
    from graph import related as related_mod
    from graph.lexical import LexicalIndex
    from graph.model import Concept, Edge, GraphChange, Paper, RelType
    from graph.store.memory import NetworkxStore

    keys, dist, _, _ = _usearch_lists(m, 10)
    t0 = time.perf_counter()
    papers = [Paper(pid, f"Paper {i}", f"synthetic abstract {i} about topic terms", f"h{i}")
              for i, pid in enumerate(ids)]
    concepts = sorted({t for d in terms for t in d})
    nodes: list[Any] = papers + [Concept(c, c.split(":", 1)[1].replace("-", " ")) for c in concepts]
    edges = []
    for i, pid in enumerate(ids):
        rank = 0
        for j, dd in zip(keys[i], dist[i], strict=True):
            j = int(j)
            if j == i or j < 0 or rank >= 10:
                continue
            rank += 1
            s = round(1.0 - float(dd), 6)
            edges.append(Edge(pid, ids[j], RelType.SIMILAR_TO, s, {"score": s, "rank": rank}))
        for t in terms[i]:
            edges.append(Edge(pid, t, RelType.MENTIONS, 1.0, {"weight": 1.0, "evidence": ""}))
    change = GraphChange(upsert_nodes=tuple(nodes), upsert_edges=tuple(edges),
                         embedding_ids=tuple(ids), embeddings=m, embedding_model="synthetic")
    t_prep = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        store = NetworkxStore(Path(tmp) / "g.citegraph")
        t0 = time.perf_counter()
        store.apply(change)
        t_apply = time.perf_counter() - t0
        t0 = time.perf_counter()
        store.save()
        t_save = time.perf_counter() - t0
        size = (Path(tmp) / "g.citegraph").stat().st_size / 2**20
        del change, edges
        rng = random.Random(0)
        qs = [ids[rng.randrange(n)] for _ in range(30)]
        # related() reads every paper's words once (what a server does at start), then keeps
        # the index current; that first read is not part of a query
        lexical = LexicalIndex()
        lexical.sync(store)
        lat: dict[str, list[float]] = {k: [] for k in
                                       ("neighborhood d1", "neighborhood d2", "shortest path",
                                        "keyword search", "vector search", "related")}
        for i, q in enumerate(qs):
            for name, fn in (
                ("neighborhood d1", lambda: store.neighborhood([q], depth=1)),
                ("neighborhood d2", lambda: store.neighborhood([q], depth=2)),
                ("shortest path", lambda: store.shortest_path(q, qs[(i + 1) % len(qs)])),
                ("keyword search", lambda: store.keyword_search(f"paper {i}")),
                ("vector search", lambda: store.vector_search(m[i].tolist(), limit=10)),
                ("related", lambda: related_mod.related(store, paper=q, first=10,
                                                        lexical=lexical)),
            ):
                if sum(lat[name]) > QUERY_BUDGET_S:
                    continue  # a slow query type gets fewer samples, not an unbounded run
                t = time.perf_counter()
                fn()
                lat[name].append(time.perf_counter() - t)
    return {"seconds": t_prep + t_apply + t_save, "prep_s": t_prep, "apply_s": t_apply,
            "save_s": t_save, "file_mib": size,
            "p50_ms": {k: median(v) * 1000 for k, v in lat.items()},
            "samples": {k: len(v) for k, v in lat.items()}}


# --------------------------------------------------------------------------- parent
def run_child(n: int, phase: str, limit: float) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__)), "--child", str(n), phase]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=limit, check=False)
    except subprocess.TimeoutExpired:
        return {"n": n, "phase": phase, "error": f"over the {limit:.0f}s limit"}
    if p.returncode != 0:
        tail = (p.stderr or "").strip().splitlines()[-1:] or [f"exit {p.returncode}"]
        return {"n": n, "phase": phase, "error": tail[0][:120]}
    res = json.loads(p.stdout.strip().splitlines()[-1])
    res["wall_s"] = time.perf_counter() - t0
    return res


def real_stats() -> tuple[float, float, float] | None:
    """The same neighbour statistics for real ICLR 2021 embeddings, if cached."""
    if not (CACHE_DIR / "embeddings.sqlite").exists():
        return None
    try:
        from common import embed_texts, load_iclr

        from graph.build import embedding_text
        from graph.embed import EmbeddingCache, SentenceTransformerEmbedder, text_key

        texts = [embedding_text(p) for p in load_iclr()]
        cache = EmbeddingCache(CACHE_DIR / "embeddings.sqlite")
        key = SentenceTransformerEmbedder().key
        got = cache.get_many(key, [text_key(t) for t in texts])
        cache.close()
        if len(got) < len(set(texts)) * 0.95:
            return None
        m = np.vstack(list(got.values())).astype(np.float32)
        del embed_texts
        return neighbour_stats(m)
    except Exception:
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="2k and 5k papers")
    ap.add_argument("--sizes", default=None, help="comma-separated sizes (default 10000,30000,100000)")
    ap.add_argument("--exact-max", type=int, default=30000, help="largest N to run exact at")
    ap.add_argument("--store-max", type=int, default=30000, help="largest N to run the store phase at")
    ap.add_argument("--limit", type=float, default=300, help="seconds per phase before it is killed")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(int(args.child[0]), args.child[1])))
        return
    sizes = [int(x) for x in (args.sizes or ("2000,5000" if args.quick else "10000,30000,100000")).split(",")]
    rep = Report("Scale: synthetic corpus, linking / storing / querying" + (" (quick)" if args.quick else ""))
    t_all = time.perf_counter()
    # how realistic are the vectors?
    srows = []
    real = real_stats()
    if real:
        srows.append(["ICLR 2021 real (MiniLM, truncate)", *real])
    for n in sizes[:1]:
        m, terms, _ = generate(n)
        srows.append([f"synthetic N={n}", *neighbour_stats(m)])
        tp = [len(t) for t in terms]
        df: dict[str, int] = {}
        for t in terms:
            for x in t:
                df[x] = df.get(x, 0) + 1
        top = sorted(df.values(), reverse=True)
        term_note = (f"synthetic N={n}: terms per paper median {median(tp):.0f}, "
                     f"{len(df)} distinct terms, largest df {top[0]} ({top[0] / n:.1%}), "
                     f"terms in >= 2 papers {sum(1 for v in top if v >= 2)}")
        del m, terms
    rep.add("### Generator vs real neighbour statistics (500 sampled rows)\n\n"
            + table(["vectors", "median top-1 cosine", "median 10th cosine", "mean pair cosine"], srows)
            + "\n\n" + term_note)
    results: list[dict[str, Any]] = []
    for n in sizes:
        for phase in ("exact", "usearch", "terms", "store"):
            if (phase == "exact" and n > args.exact_max) or (phase == "store" and n > args.store_max):
                continue
            r = run_child(n, phase, args.limit)
            print(f"  N={n} {phase}: {r}", flush=True)
            results.append(r)
    rows = []
    for r in results:
        if "error" in r:
            rows.append([r["n"], r["phase"], r["error"], "", "", ""])
            continue
        extra = ""
        if r["phase"] == "usearch":
            extra = f"recall@10 {r['recall']:.3f}; build {r['build_s']:.1f}s, search {r['search_s']:.1f}s"
        elif r["phase"] == "terms":
            extra = f"{r['edges']} edges"
        elif r["phase"] == "store":
            extra = (f"apply {r['apply_s']:.1f}s, save {r['save_s']:.1f}s, file {r['file_mib']:.0f} MiB; p50 ms: "
                     + ", ".join(f"{k} {v:.1f} (n={r['samples'][k]})" for k, v in r["p50_ms"].items()))
        rows.append([r["n"], r["phase"], r["seconds"], r["peak_rss"], r["peak_rss"] - r["input_rss"], extra])
    # growth exponents between consecutive sizes: time ~ N^a
    grow = []
    for phase in ("exact", "usearch", "terms", "store"):
        pts = [(r["n"], r["seconds"], r["peak_rss"] - r["input_rss"]) for r in results
               if r["phase"] == phase and "error" not in r]
        for (n1, t1, m1), (n2, t2, m2) in itertools.pairwise(pts):
            grow.append([phase, f"{n1} -> {n2}", math.log(t2 / t1) / math.log(n2 / n1),
                         math.log(max(m2, 1) / max(m1, 1)) / math.log(n2 / n1)])
    ex = [(r["n"], r["seconds"]) for r in results if r["phase"] == "exact" and "error" not in r]
    note = ""
    if len(ex) >= 2 and max(sizes) > ex[-1][0]:
        (n1, t1), (n2, t2) = ex[-2], ex[-1]
        a = math.log(t2 / t1) / math.log(n2 / n1)
        for big in [s for s in sizes if s > n2]:
            note += (f"\n\nExact at N={big} not run; extrapolated from {n1}/{n2} with the measured "
                     f"exponent {a:.2f}: about {t2 * (big / n2) ** a:.0f}s "
                     f"(quadratic: {t2 * (big / n2) ** 2:.0f}s).")
    rep.add("### Time and peak RSS per phase (one subprocess each)\n\n"
            + table(["N", "phase", "seconds", "peak RSS MiB", "peak - input RSS MiB", "detail"], rows)
            + note)
    if grow:
        rep.add("### Growth: exponent a in cost ~ N^a between consecutive sizes\n\n"
                + table(["phase", "sizes", "time exponent", "memory exponent (peak - input)"], grow))
    rep.add(f"Run time {time.perf_counter() - t_all:.0f}s.")
    rep.save()


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", str(os.cpu_count() or 1))
    main()
