"""Does a paper's real title find that paper first? KEYWORD, SEMANTIC and HYBRID.

    python -m bench title_search [--sample 300] [--seed 1] [--quick]

On a copy of a graph built by ``citegraph build`` (ICLR 2021; ``--quick``: the seeds), a
seeded sample of papers; each title (a seed paper's label: the seeds have no titles) is
searched through ``GraphService.search`` in every mode, among papers and among all kinds,
as written and without its last word (a title remembered nearly), and counted when the
paper is the first hit. The misses of
HYBRID are printed. Goal: HYBRID finds every paper first from its title, as written and
nearly, among papers and among all kinds.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from bench.common import Result, built_graph, copy_graph, median, percentile

VARIANTS = {
    "as written": lambda t: t,
    "without its last word": lambda t: " ".join(t.split()[:-1]) if len(t.split()) > 3 else t,
}


def run(argv: list[str]) -> Result:
    ap = argparse.ArgumentParser(prog="python -m bench title_search", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", type=int, default=300, help="papers to try (300)")
    ap.add_argument("--seed", type=int, default=1, help="sampling seed (1)")
    ap.add_argument("--quick", action="store_true", help="the seeds (every titled paper)")
    args = ap.parse_args(argv)
    corpus = "seeds" if args.quick else "iclr2021"
    from graph.model import NodeKind, Paper
    from graph.service import Embedding, GraphService, SearchMode
    from graph.settings import Settings
    from graph.store import open_store

    source = built_graph(corpus)
    with tempfile.TemporaryDirectory(prefix="citegraph-bench-titles-") as tmp:
        data = copy_graph(source, Path(tmp) / "data")
        settings = Settings(data_dir=data)
        store = open_store(settings)
        embedding = Embedding(settings)
        service = GraphService(settings, store, embedding)
        if settings.query_encoder == "onnxruntime":  # as a server encodes queries
            embedding.embedder().enable_fast_queries(settings.compute_threads)
        # a paper without a title (the seeds) is searched by its label, made from its text
        papers = sorted((n for n in store.snapshot().nodes.values()
                         if isinstance(n, Paper) and (n.title or n.label)), key=lambda p: p.id)
        sample = random.Random(args.seed).sample(papers, min(args.sample, len(papers)))
        result = Result("title_search", quick=args.quick,
                        corpus=f"{'seeds' if args.quick else 'ICLR 2021'}, {len(sample)} of "
                               f"{len(papers)} papers (a title, or the label where none), "
                               f"seed {args.seed}")
        rows = []
        for vname, variant in VARIANTS.items():
            for kinds, where in (([NodeKind.PAPER], "papers"), (None, "all kinds")):
                for mode in SearchMode:
                    if mode is SearchMode.SEMANTIC and kinds is None:
                        continue
                    misses = []
                    for p in sample:
                        query = variant(p.title or p.label)
                        hits = service.search(query, mode, kinds, 10)
                        if not hits or hits[0].node.id != p.id:
                            misses.append((query, hits[0].node.label if hits else None))
                    found = len(sample) - len(misses)
                    rows.append([vname, where, mode.value, f"{found}/{len(sample)}"])
                    if mode is SearchMode.HYBRID:
                        result.figure(f"title {vname}, first among {where}: HYBRID",
                                      f"{found}/{len(sample)}", "", "all",
                                      found == len(sample))
                        for title, got in misses[:5]:
                            print(f"    miss: {title[:70]!r} -> {got!r}", flush=True)
        result.table("Papers found first by their title", ["query", "among", "mode", "first"],
                     rows)
        store.keyword_search(sample[0].title or sample[0].label, None, 10)
        times = []
        for p in sample:
            t0 = time.perf_counter()
            store.keyword_search(p.title or p.label, None, 10)
            times.append((time.perf_counter() - t0) * 1000)
        result.figure("keyword search of a title, p50 / p99",
                      f"{median(times):.1f} / {percentile(times, 99):.1f}", "ms")
        store.close()
    return result
