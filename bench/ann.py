# ruff: noqa: E501 - table lines
"""Vector search on a server's in-memory store: the exact pass against the HNSW index.

    python bench/ann.py [--sizes 3000,30000,100000] [--queries 200]

For each size, in its own subprocess: bench/scale.py's synthetic corpus (topic-clustered
384-d vectors, calibrated against ICLR 2021's MiniLM embeddings) goes into a
``NetworkxStore`` as papers with embeddings. Queries are paper vectors with noise (a text
near a paper, as semantic search gets), each searched for its top 10 with
``vector_search``, first exactly (the index not built), then through the HNSW index
(graph/query/ann.py) with the threshold set to the size, so every size uses it.
Reported: p50 of each (one BLAS thread, as a server runs), the index's build time and
memory, and recall@10 of the index against the exact answer (share of the exact top 10
found), plus the share of whole answers equal, order included.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def child(n: int, queries: int) -> dict[str, Any]:
    from scale import generate
    from threadpoolctl import threadpool_limits

    import graph.query.ann as ann
    from graph.model import GraphChange, Paper
    from graph.store.memory import NetworkxStore

    threadpool_limits(1, user_api="blas")
    m, _, _ = generate(n)
    ids = [f"p{i:06d}" for i in range(n)]
    ann.ANN_FROM = n + 1  # exact first
    store = NetworkxStore()
    store.apply(GraphChange(
        upsert_nodes=tuple(Paper(i, i, "x", i) for i in ids),
        embedding_ids=tuple(ids), embeddings=m, embedding_model="synthetic",
    ))
    rng = np.random.default_rng(7)
    picks = rng.integers(0, n, queries)
    qs = [(m[i] + rng.normal(size=m.shape[1]) * (0.5 / np.sqrt(m.shape[1]))).tolist() for i in picks]

    def run() -> tuple[list[list[tuple[str, float]]], float]:
        out, times = [], []
        for q in qs:
            t = time.perf_counter()
            hits = store.vector_search(q, 10)
            times.append(time.perf_counter() - t)
            out.append([(h.node.id, h.score) for h in hits])
        return out, statistics.median(times) * 1000

    exact, exact_ms = run()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    store._ann.threshold = n  # now the index
    t = time.perf_counter()
    store._ann.ready_for(store._vectors)  # what the first search does: start the build
    store._ann.wait(3600)
    build_s = time.perf_counter() - t
    assert store._ann.ready_for(store._vectors) is not None, "the index was not built"
    approx, ann_ms = run()
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    found = sum(len({i for i, _ in a} & {i for i, _ in e}) for a, e in zip(approx, exact, strict=True))
    equal = sum(a == e for a, e in zip(approx, exact, strict=True))
    store.close()
    return {"n": n, "exact_ms": exact_ms, "ann_ms": ann_ms, "build_s": build_s,
            "recall": found / (10 * len(qs)), "equal": equal / len(qs),
            "rss_mib": rss0, "rss_after_mib": rss1}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="3000,30000,100000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.queries)))
        return
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    rows = []
    for n in (int(x) for x in args.sizes.split(",")):
        p = subprocess.run([sys.executable, __file__, "--child", str(n), "--queries", str(args.queries)],
                           capture_output=True, text=True, check=False)
        if p.returncode != 0:
            print(f"N={n}: failed: {p.stderr[-800:]}")
            continue
        rows.append(json.loads(p.stdout.strip().splitlines()[-1]))
        print(f"N={n}: {json.dumps(rows[-1])}", flush=True)
    print()
    print("| papers | exact p50 ms | HNSW p50 ms | exact / HNSW | recall@10 | whole answers equal | build s (one thread) | peak RSS MiB (exact, with the index) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['n']} | {r['exact_ms']:.2f} | {r['ann_ms']:.2f} | {r['exact_ms'] / r['ann_ms']:.1f}x | "
              f"{r['recall']:.4f} | {r['equal']:.3f} | {r['build_s']:.1f} | {r['rss_mib']:.0f}, {r['rss_after_mib']:.0f} |")
    if rows:
        base = rows[0]
        print(f"\nHNSW p50 over the {base['n']}-paper exact p50 (issue 11: within 3x): " + ", ".join(
            f"{r['n']}: {r['ann_ms'] / base['exact_ms']:.1f}x" for r in rows[1:]))
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
