"""The embedded store at 3k and 100k synthetic papers: write, open, read, and each query.

    python -m bench query_scale [--sizes 3000,100000] [--quick]

Each size runs in a process of its own (its peak RSS is its own). The graph is
bench/synthetic.py's: papers, concepts, MENTIONS and SIMILAR_TO to 10 papers of the same
topic with their real cosines (no SHARES_TERM or RELATED_TO: the store's cost, not the
linking's), written by one ``EmbeddedStore.apply``. Then, over 30 random papers, p50 of
neighbourhoods (depth 1 and 2), shortest paths, k paths (k 3, 3 hops), name lookups and
vector searches, read two ways: as a server reads (the graph in memory, loaded by the first
read; one BLAS thread) and as a one-shot CLI command reads (SQL). Issue 11's goal: each
query's p50 at 100k within 3x of its p50 at 3k, for the server's reads.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, Result, env, median, peak_rss_mib, synthetic_sizes

GOAL_RATIO = 3.0
KINDS = ("neighborhood d1", "neighborhood d2", "shortest path", "k paths", "find by name",
         "vector search")


def _p50_ms(fn: Any, samples: list[Any], budget_s: float = 10.0) -> float:
    times: list[float] = []
    for s in samples:
        if sum(times) > budget_s:
            break
        t = time.perf_counter()
        fn(s)
        times.append(time.perf_counter() - t)
    return median(times) * 1000


def child(n: int) -> dict[str, Any]:
    from threadpoolctl import threadpool_limits

    from bench.synthetic import generate, graph_parts
    from graph.store.embedded import EmbeddedStore

    threadpool_limits(1, user_api="blas")  # as a server runs
    m, terms, topic = generate(n)
    part = graph_parts(m, terms, topic, n)
    ids = [f"p{i:06d}" for i in range(n)]
    out: dict[str, Any] = {"n": n}
    base = part(range(n))
    out["edges"] = len(base.upsert_edges)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "graph.db"
        t = time.perf_counter()
        writer = EmbeddedStore(db)
        writer.apply(base)
        out["write_s"] = time.perf_counter() - t
        writer.close()
        del writer, base
        out["file_mib"] = db.stat().st_size / 2**20
        t = time.perf_counter()
        fresh = EmbeddedStore(db)
        fresh.stats()
        out["open_stats_ms"] = (time.perf_counter() - t) * 1000
        fresh.close()

        rng = random.Random(0)
        picks = [ids[rng.randrange(n)] for _ in range(30)]
        pairs = list(zip(picks, picks[1:] + picks[:1], strict=True))
        names = [f"paper {rng.randrange(n)}" for _ in range(30)]
        vecs = [m[rng.randrange(n)].tolist() for _ in range(31)]

        def queries(store: EmbeddedStore) -> dict[str, float]:
            store.vector_search(vecs[0], limit=10)  # the first reads the vectors
            return {
                "neighborhood d1": _p50_ms(lambda q: store.neighborhood([q], depth=1), picks),
                "neighborhood d2": _p50_ms(lambda q: store.neighborhood([q], depth=2), picks),
                "shortest path": _p50_ms(lambda ab: store.shortest_path(*ab), pairs),
                "k paths": _p50_ms(lambda ab: store.k_paths(*ab, k=3, max_hops=3), pairs),
                "find by name": _p50_ms(store.find_node, names),
                "vector search": _p50_ms(lambda v: store.vector_search(v, limit=10), vecs[1:]),
            }

        sql = EmbeddedStore(db, reads="sql")
        out["sql"] = queries(sql)
        sql.close()
        server = EmbeddedStore(db)
        t = time.perf_counter()
        server.refresh()  # a server's first read loads the whole graph
        out["mirror_load_s"] = time.perf_counter() - t
        out["server"] = queries(server)
        server.close()
    out["peak_rss_mib"] = peak_rss_mib()
    return out


def run(argv: list[str]) -> Result:
    ap = argparse.ArgumentParser(prog="python -m bench query_scale", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="3000,100000", help="paper counts; the first is the base")
    ap.add_argument("--quick", action="store_true", help="3,000 papers")
    args = ap.parse_args(argv)
    sizes = [3000] if args.quick else [int(s) for s in args.sizes.split(",")]
    result = Result("query_scale", quick=args.quick, corpus=synthetic_sizes(sizes))
    got = []
    for n in sizes:
        proc = subprocess.run([sys.executable, "-m", "bench.query_scale", str(n)], cwd=ROOT,
                              env=env(), capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"query_scale at {n}: {proc.stderr[-2000:]}")
        got.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    base = got[0]
    if len(got) == 1:
        for k in KINDS:
            result.figure(f"{base['n']:,} papers, server reads: {k} p50", base["server"][k], "ms")
    for r in got[1:]:
        for k in KINDS:
            a, b = base["server"][k], r["server"][k]
            ratio = b / max(a, 1e-3)
            result.figure(f"{k}: server reads' p50 at {base['n']:,} -> {r['n']:,} papers",
                          f"{a:.2f} -> {b:.2f} ms ({ratio:.1f}x)", "", f"≤ {GOAL_RATIO:g}x",
                          ratio <= GOAL_RATIO)
    result.table("The store", ["papers", "edges", "write s", "graph.db MiB", "open + stats ms",
                               "server's first read (load) s", "peak RSS MiB"],
                 [[r["n"], r["edges"], round(r["write_s"], 1), round(r["file_mib"]),
                   round(r["open_stats_ms"]), round(r["mirror_load_s"], 1),
                   round(r["peak_rss_mib"])] for r in got])
    result.table("Query p50, ms", ["papers", "reads", *KINDS],
                 [[r["n"], mode, *(round(r[mode][k], 2) for k in KINDS)]
                  for r in got for mode in ("server", "sql")])
    return result


if __name__ == "__main__":  # the per-size process
    print(json.dumps(child(int(sys.argv[1]))))
