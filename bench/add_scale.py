"""An add of 10 papers to graphs of 3k and 100k papers, the server's way.

    python -m bench add_scale [--sizes 3000,100000] [--adds 15] [--quick]

Each size runs in a process of its own: bench/synthetic.py's corpus (extractions and
vectors in the caches: no model, no text extraction) is built into an embedded database by
one long-lived ``Pipeline``, as a server holds one, its heap frozen for the cyclic
collector as a server's warm-up leaves it (``api.services.freeze_warm_heap``); then
``--adds`` adds of 10 new papers each. The figure is the median of the adds after the first
(the first after a build fills what later adds keep). Issue 12's goal: the add at 100k
within 2x of the add at 3k.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, Result, env, median, peak_rss_mib, synthetic_sizes

GOAL_RATIO = 2.0


def child(n: int, adds: int, work: Path) -> dict[str, Any]:
    """One size, in this process: build, then the adds (printed as one JSON line)."""
    from api.services import freeze_warm_heap
    from bench.synthetic import synthetic_corpus
    from graph.build import Pipeline
    from graph.settings import Settings
    from graph.store.embedded import EmbeddedStore

    data = work / "data"
    papers = synthetic_corpus(n + 10 * adds, data)
    settings = Settings(data_dir=data)
    pipe = Pipeline(settings)
    store = EmbeddedStore(settings.graph_db, reads="sql")
    t = time.perf_counter()
    rep = pipe.run(store, add_papers=papers[:n], replace=True)
    out: dict[str, Any] = {"n": n, "build_s": time.perf_counter() - t,
                           "edges": sum(rep.stats.edges.values()) if rep.stats else 0}
    freeze_warm_heap()
    walls, steps = [], []
    for a in range(adds):
        batch = papers[n + 10 * a: n + 10 * (a + 1)]
        t = time.perf_counter()
        rep = pipe.run(store, add_papers=batch)
        walls.append(time.perf_counter() - t)
        steps.append({**{f"stage {k}": v for k, v in rep.stage_seconds.items()},
                      **rep.step_seconds})
    out["adds"] = walls
    keys = {k for s in steps[1:] for k in s}
    out["steps"] = {k: median([s.get(k, 0.0) for s in steps[1:]]) for k in keys}
    out["peak_rss_mib"] = peak_rss_mib()
    pipe.close()
    store.close()
    return out


def run(argv: list[str]) -> Result:
    ap = argparse.ArgumentParser(prog="python -m bench add_scale", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="3000,100000", help="paper counts; the first is the base")
    ap.add_argument("--adds", type=int, default=15, help="adds of 10 at each size (15)")
    ap.add_argument("--quick", action="store_true", help="3,000 papers, 5 adds")
    args = ap.parse_args(argv)
    sizes = [3000] if args.quick else [int(s) for s in args.sizes.split(",")]
    adds = 5 if args.quick else args.adds
    result = Result("add_scale", quick=args.quick, corpus=synthetic_sizes(sizes))
    got: list[dict[str, Any]] = []
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="citegraph-add-scale-") as tmp:
            proc = subprocess.run(
                [sys.executable, "-m", "bench.add_scale", str(n), str(adds), tmp],
                cwd=ROOT, env=env(), capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"add_scale at {n}: {proc.stderr[-2000:]}")
        got.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    for r in got:
        r["median"] = median(r["adds"][1:])
        result.figure(f"add of 10 at {r['n']:,} papers (median after the first)", r["median"], "s")
    for r in got[1:]:
        ratio = r["median"] / got[0]["median"]
        result.figure(f"add of 10 at {r['n']:,} ÷ at {got[0]['n']:,}", round(ratio, 2), "x",
                      f"≤ {GOAL_RATIO:g}x", ratio <= GOAL_RATIO)
    result.table("Adds of 10", ["papers", "edges", "build s", "first add s", "median after s",
                                "peak RSS MiB"],
                 [[r["n"], r["edges"], round(r["build_s"], 1), round(r["adds"][0], 3),
                   round(r["median"], 3), round(r["peak_rss_mib"])] for r in got])
    steps = sorted({k for r in got for k in r["steps"]})
    result.table("Median seconds by stage and step, the adds after the first",
                 ["stage / step", *(f"{r['n']:,}" for r in got)],
                 [[k, *(round(r["steps"].get(k, 0.0), 3) for r in got)] for k in steps
                  if max(r["steps"].get(k, 0.0) for r in got) >= 0.01])
    return result


if __name__ == "__main__":  # the per-size process
    print(json.dumps(child(int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]))))
