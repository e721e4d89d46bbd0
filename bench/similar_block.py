# ruff: noqa: E501 - long table rows
"""SIMILAR_TO's block product by rows per block: BLAS's float32 product and the whole
build pass (``graph.link.full_similar``), block sizes side by side in one run.

    python bench/similar_block.py [--sizes 30000,100000] [--rows 80,320,1024] [--rounds 3]

Part 1: the product ``M[block] @ M.T`` of bench/scale.py's vectors (N x 384 float32)
for each block size, scaled to every row (CPU and wall seconds for N rows), the sizes
interleaved round by round. Part 2 (``--full``): ``full_similar`` over the same vectors
(no word vectors) with ``graph.link.BLOCK_ROWS``/``BLOCK_CELLS`` giving each block size,
its wall time, and whether the lists and hubs are the same (they must be: the product is
a prefilter within a slack, every kept cosine is recomputed in float64).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Report, median, table
from scale import generate


def _digest(lists: dict[str, list[object]], hubs: dict[str, object]) -> str:
    text = repr(sorted((p, [(n.id, n.score) for n in lst]) for p, lst in lists.items()))  # type: ignore[attr-defined]
    return hashlib.sha256((text + repr(sorted(hubs.items()))).encode()).hexdigest()[:12]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="30000,100000")
    ap.add_argument("--rows", default="80,320,1024")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--full", action="store_true", help="also time full_similar at each block size")
    ap.add_argument("--no-report", action="store_true")
    args = ap.parse_args()
    import graph.link as gl

    sizes = [int(s) for s in args.sizes.split(",")]
    block_rows = [int(s) for s in args.rows.split(",")]
    rep = Report("SIMILAR_TO's block product by rows per block (bench/similar_block.py)")
    product: list[tuple[object, ...]] = []
    full: list[tuple[object, ...]] = []
    for n in sizes:
        m, _, _ = generate(n)
        cpu: dict[int, list[float]] = {t: [] for t in block_rows}
        wall: dict[int, list[float]] = {t: [] for t in block_rows}
        for _ in range(args.rounds):
            for t in block_rows:
                reps = max(1, 2048 // t)
                c0, w0 = time.process_time(), time.perf_counter()
                for r in range(reps):
                    start = (r * t) % max(1, n - t)
                    _ = m[start : start + t] @ m.T
                cpu[t].append((time.process_time() - c0) / reps * n / t)
                wall[t].append((time.perf_counter() - w0) / reps * n / t)
        base = median(cpu[block_rows[0]])
        for t in block_rows:
            product.append((n, t, round(t * n * 4 / 2**20), median(cpu[t]), median(wall[t]), round(median(cpu[t]) / base, 2)))
        if args.full:
            vec = gl.PaperVectors([f"s{i:06d}" for i in range(n)], m, None)
            kept = (gl.BLOCK_ROWS, gl.BLOCK_CELLS)
            try:
                for t in block_rows:
                    gl.BLOCK_ROWS, gl.BLOCK_CELLS = t, t * n
                    w0 = time.perf_counter()
                    lists, hubs = gl.full_similar(vec, 10, 0.3)
                    full.append((n, t, time.perf_counter() - w0, _digest(lists, hubs)))  # type: ignore[arg-type]
            finally:
                gl.BLOCK_ROWS, gl.BLOCK_CELLS = kept
        print(f"N={n} done", flush=True)
    rep.add(table(["N", "rows per block", "block MiB", "CPU s for N rows (median)", "wall s for N rows (median)", "CPU against the first"], product))
    if full:
        rep.add(table(["N", "rows per block", "full_similar wall s", "lists + hubs digest"], full))
    if not args.no_report:
        rep.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
