"""Keyword search p50/p99 as the graph grows: ICLR 2021's real text, copied up to N papers.

    python bench/keyword_scale.py --db /work/iclr/data/graph.db --papers 3000,30000 [--queries 100]

Reads the nodes of a built graph (read-only), makes NetworkxStores of N papers (the real
papers, then copies of them with new ids, so word statistics stay those of real
abstracts; every concept and dataset once), and times ``keyword_search`` (limit 10, all
kinds) over real titles and over 1-3 word queries (author keywords), in CPU time. Runs
the code on ``PYTHONPATH``, so the same command measures an older checkout.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import time
from dataclasses import replace
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", type=Path, required=True, help="a graph.db to read (not written)")
    ap.add_argument("--papers", default="3000,30000", help="comma-separated sizes")
    ap.add_argument("--queries", type=int, default=100, help="queries of each kind (default 100)")
    args = ap.parse_args()

    from graph.model import GraphChange, Paper, node_from_props
    from graph.store.memory import NetworkxStore

    db = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    rows = db.execute("SELECT kind, props FROM nodes").fetchall()
    nodes = [node_from_props(k, json.loads(p)) for k, p in rows]
    db.close()
    papers = sorted((n for n in nodes if isinstance(n, Paper)), key=lambda p: p.id)
    others = [n for n in nodes if not isinstance(n, Paper)]
    rng = random.Random(0)
    titles = [p.title or p.label for p in rng.sample(papers, args.queries)]
    keywords = sorted({k for p in papers for k in p.keywords if 1 <= len(k.split()) <= 3})
    words = rng.sample(keywords, min(args.queries, len(keywords)))
    print("| papers | nodes | index build s | query | p50 ms | p99 ms |")
    print("|---|---|---|---|---|---|")
    for n in (int(x) for x in args.papers.split(",")):
        grown = [p if i < len(papers) else replace(p, id=f"{p.id}~{i // len(papers)}")
                 for i, p in ((i, papers[i % len(papers)]) for i in range(n))]
        store = NetworkxStore()
        store.apply(GraphChange(upsert_nodes=tuple(grown + others)))
        t0 = time.process_time()
        store.keyword_search("warm", None, 10)  # builds an index made on first use
        build = time.process_time() - t0
        for name, qs in (("title", titles), ("1-3 words", words)):
            lat = []
            for q in qs:
                t = time.process_time()
                store.keyword_search(q, None, 10)
                lat.append((time.process_time() - t) * 1000)
            lat.sort()
            p99 = lat[min(len(lat) - 1, int(0.99 * len(lat)))]
            print(f"| {n} | {len(grown) + len(others)} | {build:.2f} | {name} | "
                  f"{statistics.median(lat):.2f} | {p99:.2f} |", flush=True)


if __name__ == "__main__":
    main()
