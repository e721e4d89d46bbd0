# ruff: noqa: E501, B023 - table lines; the closure runs inside its own iteration
"""Why a server gives each BLAS call one thread: vector_search from 4 threads at once.

    python bench/blas_threads.py

A NetworkxStore with 3k and 30k random 384-d papers answers 200 vector searches from 4
threads, with OpenBLAS allowed 2 threads a call and then 1 (alternating, twice), and
prints p50 / p99 per setting. The server's default is 1 (CITEGRAPH_SERVE_THREADS).
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_limits

from graph.model import GraphChange, Paper
from graph.store.memory import NetworkxStore


def main() -> None:
    for n in (3000, 30000):
        rng = np.random.default_rng(0)
        m = rng.standard_normal((n, 384)).astype(np.float32)
        ids = [f"p{i:06d}" for i in range(n)]
        s = NetworkxStore()
        s.apply(GraphChange(
            upsert_nodes=tuple(Paper(i, i, "", i) for i in ids), embedding_ids=tuple(ids),
            embeddings=m, embedding_model="x",
        ))

        def one(i: int) -> float:
            t = time.perf_counter()
            s.vector_search(m[i % n].tolist(), limit=10)
            return time.perf_counter() - t

        for lim in (2, 1, 2, 1):
            with threadpool_limits(lim, user_api="blas"), cf.ThreadPoolExecutor(4) as ex:
                ts = list(ex.map(one, range(200)))
            p99 = statistics.quantiles(ts, n=100)[98]
            print(f"| {n} | {lim} | {1000 * statistics.median(ts):.2f} | {1000 * p99:.2f} | {os.getloadavg()[0]:.1f} |", flush=True)


if __name__ == "__main__":
    print("| papers | BLAS threads a call | p50 ms | p99 ms | load avg |")
    print("|---|---|---|---|---|")
    main()
