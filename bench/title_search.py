"""Does a paper's real title find that paper first? KEYWORD, SEMANTIC and HYBRID, measured.

    python bench/title_search.py --data-dir DIR [--sample 200] [--seed 0] [--time]
        [--variant exact|period|drop-last]

Opens the graph in DIR (a copy: opening upgrades an older graph.db), samples papers that
have a title (seeded), searches each title through ``GraphService.search`` in every
mode, papers only and all kinds, and prints how often the paper is the first hit, with
the misses of HYBRID. ``--time`` also prints the keyword search p50/p99 over the
sampled titles. ``--variant`` searches a near-exact title instead: with a trailing
period, or without its last word (titles of more than 3 words). Runs on the checkout it
is run from (``PYTHONPATH``), so the same command measures an older checkout too.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = {
    "exact": lambda t: t,
    "period": lambda t: t + ".",
    "drop-last": lambda t: " ".join(t.split()[:-1]) if len(t.split()) > 3 else t,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", type=Path, required=True, help="graph data folder (a copy)")
    ap.add_argument("--sample", type=int, default=200, help="papers to try (default 200)")
    ap.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    ap.add_argument("--time", action="store_true", help="also time keyword search")
    ap.add_argument("--runs", default="",
                    help="only these, e.g. 'papers:HYBRID,all:KEYWORD' (default every mode)")
    ap.add_argument("--variant", choices=tuple(VARIANTS), default="exact",
                    help="the query made from a title (default: the title as written)")
    args = ap.parse_args()
    variant = VARIANTS[args.variant]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.path.insert(0, os.environ.get("PYTHONPATH", str(ROOT)).split(":")[0])

    from graph.model import NodeKind, Paper
    from graph.service import Embedding, GraphService, SearchMode
    from graph.settings import Settings
    from graph.store import open_store

    settings = Settings(data_dir=args.data_dir)  # type: ignore[call-arg]
    store = open_store(settings)
    service = GraphService(settings, store, Embedding(settings))
    papers = sorted((n for n in store.snapshot().nodes.values()
                     if isinstance(n, Paper) and n.title), key=lambda p: p.id)
    sample = random.Random(args.seed).sample(papers, min(args.sample, len(papers)))
    print(f"{len(sample)} of {len(papers)} titled papers (seed {args.seed}), "
          f"query = {args.variant} title")
    runs = {r.strip() for r in args.runs.split(",") if r.strip()}
    for kinds, name in (([NodeKind.PAPER], "papers"), (None, "all")):
        for mode in SearchMode:
            if mode is SearchMode.SEMANTIC and kinds is None:
                continue
            if runs and f"{name}:{mode.value}" not in runs:
                continue
            misses = []
            for p in sample:
                query = variant(p.title or "")
                hits = service.search(query, mode, kinds, 10)
                if not hits or hits[0].node.id != p.id:
                    misses.append((query, hits[0].node.label if hits else None))
            print(f"{name:7} {mode.value:9} {len(sample) - len(misses)}/{len(sample)}", flush=True)
            if mode is SearchMode.HYBRID:
                for title, got in misses[:5]:
                    print(f"    miss: {title[:70]!r} -> {got!r}", flush=True)
    if args.time:
        store.keyword_search(sample[0].title or "", None, 10)  # builds any lazy index
        times = []
        for p in sample:
            t0 = time.perf_counter()
            store.keyword_search(p.title or "", None, 10)
            times.append((time.perf_counter() - t0) * 1000)
        times.sort()
        p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
        print(f"keyword search (titles, limit 10): p50 {statistics.median(times):.2f} ms, "
              f"p99 {p99:.2f} ms over {len(times)}")
    store.close()


if __name__ == "__main__":
    main()
