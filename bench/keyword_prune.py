"""Keyword search pruned as MaxScore does (graph/store/fts.py) against the whole query.

    python bench/keyword_prune.py [--db <graph.db>] [--papers 3000,30000,100000]

ICLR 2021's real text copied up to N papers (as bench/keyword_scale.py makes it: word
statistics stay those of real abstracts), in the memory store's FTS5 index. 60 real
titles and 60 author keywords (1-3 words), each searched (limit 10, all kinds) by the
whole query and by the pruned search, two rounds alternating, CPU time; prints each
round's p50 and whether every answer was equal (ids, scores, order).
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import time
from collections.abc import Callable
from dataclasses import replace

from graph.model import Paper, node_from_props
from graph.query.text import query_terms
from graph.store import fts


def _p50(fn: Callable[[list[str]], object], queries: list[list[str]]) -> float:
    lat = []
    for terms in queries:
        t = time.process_time()
        fn(terms)
        lat.append(time.process_time() - t)
    return statistics.median(lat) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--db", default="/work/data/iclr/graph.db",
                    help="a built ICLR 2021 graph.db (read only)")
    ap.add_argument("--papers", default="3000,30000,100000")
    args = ap.parse_args()
    db = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    rows = db.execute("SELECT kind, props FROM nodes").fetchall()
    nodes = [node_from_props(k, json.loads(p)) for k, p in rows]
    db.close()
    papers = sorted((n for n in nodes if isinstance(n, Paper)), key=lambda p: p.id)
    others = [n for n in nodes if not isinstance(n, Paper)]
    rng = random.Random(0)
    titles = [query_terms(p.title or p.label) for p in rng.sample(papers, 60)]
    keywords = sorted({k for p in papers for k in p.keywords if 1 <= len(k.split()) <= 3})
    words = [query_terms(k) for k in rng.sample(keywords, 60)]
    print("| papers | query | whole p50 ms (round 1 / 2) | pruned p50 ms | same answers |")
    print("|---|---|---|---|---|")
    for n in map(int, args.papers.split(",")):
        grown = [p if i < len(papers) else replace(p, id=f"{p.id}~{i // len(papers)}")
                 for i, p in ((i, papers[i % len(papers)]) for i in range(n))]
        index = fts.MemoryIndex([*grown, *others])

        def whole(terms: list[str], index: fts.MemoryIndex = index) -> object:
            return fts.search(index._db, terms, None, 10)

        def pruned(terms: list[str], index: fts.MemoryIndex = index) -> object:
            return index.search(terms, None, 10)

        for name, queries in (("title", titles), ("1-3 words", words)):
            got: dict[str, list[float]] = {"whole": [], "pruned": []}
            for _ in range(2):
                got["whole"].append(_p50(whole, queries))
                got["pruned"].append(_p50(pruned, queries))
            same = all(whole(q) == pruned(q) for q in queries)
            w, p = (" / ".join(f"{x:.1f}" for x in got[k]) for k in ("whole", "pruned"))
            print(f"| {n} | {name} | {w} | {p} | {'yes' if same else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
