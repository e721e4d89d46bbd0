"""`citegraph build` of N synthetic papers into a new data folder: time and peak memory.

    python -m bench build_scale [--sizes 100000] [--quick]

The corpus is bench/synthetic.py's, written as ``papers.jsonl`` with every paper's
extraction and vector already in the data folder's caches, so the build loads no model and
extracts no text: what is measured is reading, linking (SIMILAR_TO over all pairs,
SHARES_TERM, RELATED_TO) and writing the database. The build is the CLI's, in a process of
its own; its peak RSS is that process's (``wait4``). Issue 12's goal at 100k: link + diff +
write within 120 s, peak RSS within 2 GB.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from bench.common import Result, citegraph, synthetic_sizes

GOAL_LINK_STORE_S = 120.0
GOAL_PEAK_GB = 2.0
STAGES = ("read", "extract", "embed", "link", "write")


def run(argv: list[str]) -> Result:
    ap = argparse.ArgumentParser(prog="python -m bench build_scale", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100000", help="comma-separated paper counts (100000)")
    ap.add_argument("--quick", action="store_true", help="3,000 papers")
    args = ap.parse_args(argv)
    sizes = [3000] if args.quick else [int(s) for s in args.sizes.split(",")]
    result = Result("build_scale", quick=args.quick, corpus=synthetic_sizes(sizes))
    from bench.synthetic import synthetic_corpus

    rows = []
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="citegraph-build-scale-") as tmp:
            data = Path(tmp) / "data"
            papers = synthetic_corpus(n, data)
            corpus = Path(tmp) / "papers.jsonl"
            with corpus.open("w", encoding="utf-8") as f:
                for p in papers:
                    row = {"id": p.id, "title": p.title, "abstract": p.abstract}
                    f.write(json.dumps(row) + "\n")
            del papers
            run_ = citegraph(data, "build", str(corpus), "--json", timeout=7200)
            if run_.rc != 0:
                raise RuntimeError(f"build of {n} failed: {run_.stderr[-2000:]}")
            rep = run_.json()
            stages, steps = rep["stage_seconds"], rep["step_seconds"]
            link_store = stages.get("link", 0.0) + stages.get("write", 0.0) + steps.get("diff", 0.0)
            file_mib = sum(p.stat().st_size for p in data.glob("graph.db*")) / 2**20
            edges = sum(rep["stats"]["edges"].values())
            rows.append([n, edges, round(run_.wall_s, 1), round(link_store, 1),
                         round(run_.peak_rss_mib), round(file_mib),
                         *(round(stages.get(k, 0.0), 1) for k in STAGES)])
            tag = f"{n:,} papers"
            result.figure(f"{tag}: link + diff + write", link_store, "s",
                          f"≤ {GOAL_LINK_STORE_S:.0f} s at 100k", link_store <= GOAL_LINK_STORE_S)
            result.figure(f"{tag}: whole `citegraph build`", run_.wall_s, "s")
            peak_gb = run_.peak_rss_mib * 2**20 / 1e9
            result.figure(f"{tag}: peak RSS", round(run_.peak_rss_mib), "MiB",
                          f"≤ {GOAL_PEAK_GB:g} GB at 100k", peak_gb <= GOAL_PEAK_GB)
    result.table("Builds", ["papers", "edges", "wall s", "link + diff + write s", "peak RSS MiB",
                            "graph.db MiB", "read s", "extract s", "embed s", "link s", "write s"],
                 rows)
    return result
