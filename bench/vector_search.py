# ruff: noqa: E501 - table lines
"""Vector search: the float32 pass with exact float64 rescoring, against float64 alone.

    python bench/vector_search.py [--sizes 3000,30000,100000] [--runs 50]

Random 384-d float32 embeddings (seeded); each size times ``--runs`` searches (limit 10)
both ways in one process, alternating, with one BLAS thread, and checks that both give
the same answers. Prints p50 ms, the ratio, and the bytes each holds per paper.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_limits

from graph.query.vectors import UnitMatrix, cosine, top_rows, unit_rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="3000,30000,100000")
    ap.add_argument("--runs", type=int, default=50)
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    print("| papers | float64 p50 ms | float32 + rescoring p50 ms | ratio | same answers | bytes per paper held (before, after) |")
    print("|---|---|---|---|---|---|")
    for n in (int(x) for x in args.sizes.split(",")):
        rng = np.random.default_rng(n)
        matrix = rng.standard_normal((n, 384)).astype(np.float32)
        ids = [f"p{i:07d}" for i in range(n)]
        unit64 = unit_rows(matrix)
        vectors = UnitMatrix(ids, matrix)
        old_t, new_t, same = [], [], True
        with threadpool_limits(1, user_api="blas"):
            for r in range(args.runs):
                q = unit64[(r * 7919) % n]
                t = time.perf_counter()
                scores = cosine(unit64, q)
                old = sorted((ids[i], float(scores[i])) for i in top_rows(scores, 10))
                old_t.append(time.perf_counter() - t)
                t = time.perf_counter()
                new = sorted(vectors.top(q, 10, frozenset()))
                new_t.append(time.perf_counter() - t)
                same = same and old == new
        a, b = statistics.median(old_t) * 1000, statistics.median(new_t) * 1000
        print(f"| {n} | {a:.2f} | {b:.2f} | {b / a:.2f} | {'yes' if same else 'NO'} | {384 * 8 + 384 * 4}, {384 * 4 * 2} |")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
