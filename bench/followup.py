"""Follow-up timings after the fixes the first benchmark run asked for.

* SHARES_TERM linking on a synthetic Zipf term corpus (10k and 30k papers): time and
  peak RSS (the first run hit MemoryError at 30k with pair dictionaries).
* Path queries on a built graph file (e.g. ICLR 2021): shortest_path, k_paths (k=3),
  neighborhood depth 2, p50 / max over random paper pairs.

    python bench/followup.py --graph .citegraph/graph.citegraph

Prints a table and appends it to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import Report  # noqa: E402


def _terms_child(n: int) -> None:
    from graph.link import shared_term_edges

    rng = np.random.default_rng(0)
    vocab = 30_000
    p = 1 / np.arange(1, vocab + 1)
    p /= p.sum()
    terms = {
        f"p{i:06d}": {f"t{t}": 1.0 for t in rng.choice(vocab, rng.integers(8, 25), False, p)}
        for i in range(n)
    }
    t0 = time.perf_counter()
    edges = shared_term_edges(terms, {}, max_df=0.2, min_weight=1.0, top_k=20)
    took = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{n}\t{len(edges)}\t{took:.1f}\t{rss:.0f}")


def _paths(graph: Path, pairs: int) -> list[list[str]]:
    from graph.model import NodeKind
    from graph.store.memory import NetworkxStore

    store = NetworkxStore(graph)
    ids = sorted(n for n, a in store.g.nodes(data=True) if a["node"].kind is NodeKind.PAPER)
    rng = random.Random(1)
    rows = []
    calls = {
        "shortest_path (max 6 hops)": lambda a, b: store.shortest_path(a, b, max_hops=6),
        "k_paths (k=3, max 4 hops)": lambda a, b: store.k_paths(a, b, 3, max_hops=4),
        "neighborhood depth 2 (200 nodes)": lambda a, b: store.neighborhood([a], 2, limit=200),
    }
    for name, call in calls.items():
        times = []
        for _ in range(pairs):
            a, b = rng.choice(ids), rng.choice(ids)
            t0 = time.perf_counter()
            call(a, b)
            times.append(time.perf_counter() - t0)
        rows.append([name, f"{np.median(times) * 1000:.1f}", f"{max(times) * 1000:.1f}"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graph", type=Path, help="a built graph file for the path timings")
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 30_000])
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _terms_child(args.child)
        return
    report = Report("Follow-up: shared-term linking and path queries after the fixes")
    lines = ["| papers | SHARES_TERM edges | seconds | peak RSS MiB |", "|---|---|---|---|"]
    for n in args.sizes:
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(n)], capture_output=True, text=True,
            check=True,
        ).stdout.split()
        lines.append("| " + " | ".join(out) + " |")
    report.add("### SHARES_TERM linking, synthetic Zipf terms (one subprocess each)\n\n"
               + "\n".join(lines))
    if args.graph:
        rows = _paths(args.graph, args.pairs)
        report.add(
            f"### Path queries on {args.graph} ({args.pairs} random paper pairs)\n\n"
            "| query | p50 ms | max ms |\n|---|---|---|\n"
            + "\n".join("| " + " | ".join(r) + " |" for r in rows)
        )
    report.save()


if __name__ == "__main__":
    main()
