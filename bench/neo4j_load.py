# ruff: noqa: E501, B023 - long table rows; the per-sample lambdas run inside their own iteration
"""The Neo4j store against a real Neo4j 5.26: load ICLR 2021, batched vs one row per tx.

Starts a throwaway Neo4j (tests/support/neo4j.py over scripts/neo4j.sh, loopback only), builds the
ICLR 2021 graph with ``Pipeline.compute`` (embeddings from bench/.cache when present,
else the model; they are not what is measured here) and:

* loads the whole graph with ``Neo4jStore(batch_size=1000)`` (the default) from an empty
  database: seconds and rows/s;
* loads the same subset of it (the first ``--subset`` papers, their concepts/datasets and the
  edges among those) both batched and with ``batch_size=1, max_tx_rows=0`` (each row its
  own transaction), from an empty database each time: the ratio;
* query p50 / p99 (ms, in-process store calls) for the same query mix as bench/queries.py
  on the loaded full graph, side by side with the embedded NetworkxStore.

``--quick``: 300-paper graph, subset 50.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

import numpy as np
from common import Report, embed_texts, load_iclr, median, percentile, table

from graph import related as related_mod
from graph.build import diff, embedding_text
from graph.lexical import LexicalIndex
from graph.model import GraphChange, GraphData, NodeKind, RelType
from graph.store.memory import NetworkxStore


def iclr_graph(n: int | None) -> tuple[GraphData, list[Any]]:
    from quality import build_graph

    papers = load_iclr()
    if n:
        papers = papers[:n]
    texts = [embedding_text(p) for p in papers]
    m = embed_texts(texts, "truncate")
    return build_graph(papers, m, "all-MiniLM-L6-v2|truncate|float32"), papers


def subset_change(data: GraphData, paper_ids: set[str]) -> GraphChange:
    keep_terms = {e.target for e in data.edges.values()
                  if e.source in paper_ids and e.type in (RelType.MENTIONS, RelType.USES,
                                                            RelType.INTRODUCES)}
    keep = paper_ids | keep_terms
    sub = GraphData(embedding_model=data.embedding_model)
    sub.nodes = {k: v for k, v in data.nodes.items() if k in keep}
    sub.edges = {k: e for k, e in data.edges.items() if e.source in keep and e.target in keep}
    rows = [i for i, pid in enumerate(data.embedding_ids) if pid in paper_ids]
    sub.embedding_ids = [data.embedding_ids[i] for i in rows]
    sub.embeddings = data.embeddings[rows]
    return diff(GraphData(), sub)


def n_rows(change: GraphChange) -> int:
    return len(change.upsert_nodes) + len(change.upsert_edges) + len(change.embedding_ids)


def query_mix(store: Any, papers: list[Any], n: int, seed: int = 0) -> dict[str, list[float]]:
    rng = random.Random(seed)
    qs = [papers[rng.randrange(len(papers))].id for _ in range(n)]
    vecs = store.embeddings(qs)
    lat: dict[str, list[float]] = {k: [] for k in ("neighborhood d1", "neighborhood d2",
                                                   "shortest path", "related", "keyword search",
                                                   "vector search")}
    words = ["graph neural network", "contrastive learning", "transformer", "reinforcement"]
    lexical = LexicalIndex()  # related()'s word index, read once as a server would
    lexical.sync(store)
    for i, q in enumerate(qs):
        other = qs[(i + 1) % len(qs)]
        for name, fn in (
            ("neighborhood d1", lambda: store.neighborhood([q], depth=1)),
            ("neighborhood d2", lambda: store.neighborhood([q], depth=2)),
            ("shortest path", lambda: store.shortest_path(q, other)),
            ("related", lambda: related_mod.related(store, paper=q, first=10, lexical=lexical)),
            ("keyword search", lambda: store.keyword_search(words[i % len(words)])),
            ("vector search", lambda: store.vector_search(vecs[q], limit=10)),
        ):
            t = time.perf_counter()
            fn()
            lat[name].append(time.perf_counter() - t)
    return lat


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--subset", type=int, default=None, help="papers in the batched-vs-1-row subset")
    ap.add_argument("--queries", type=int, default=30)
    args = ap.parse_args()
    import neo4j

    from graph.store.neo4j import Neo4jStore
    from tests.support.neo4j import Neo4jServer

    rep = Report("Neo4j store on Neo4j 5.26 (Bolt): load and queries" + (" (quick)" if args.quick else ""))
    t_all = time.perf_counter()
    data, papers = iclr_graph(300 if args.quick else None)
    full = diff(GraphData(), data)
    subset_n = args.subset or (50 if args.quick else 200)
    sub_ids = {p.id for p in papers[:subset_n]}
    sub = subset_change(data, sub_ids)
    rows_out: list[list[Any]] = []
    with Neo4jServer.start(heap="1g", java_opts="") as server:
        driver = neo4j.GraphDatabase.driver(server.uri, auth=server.auth)
        try:
            def fresh(**kw: Any) -> Any:
                s = Neo4jStore(driver, server.database, **kw)
                s.clear()
                return s

            batched_s, single_s = [], []
            for _ in range(2):  # alternate to share the noise
                s = fresh()
                t0 = time.perf_counter()
                s.apply(sub)
                batched_s.append(time.perf_counter() - t0)
                s = fresh(batch_size=1, max_tx_rows=0)
                t0 = time.perf_counter()
                s.apply(sub)
                single_s.append(time.perf_counter() - t0)
            nr = n_rows(sub)
            rows_out.append([f"subset ({subset_n} papers, {nr} rows), batched 1000, median of 2",
                             median(batched_s), nr / median(batched_s)])
            rows_out.append([f"subset ({subset_n} papers, {nr} rows), one row per transaction, median of 2",
                             median(single_s), nr / median(single_s)])
            s = fresh()
            t0 = time.perf_counter()
            s.apply(full)
            t_full = time.perf_counter() - t0
            nf = n_rows(full)
            rows_out.append([f"full ICLR graph ({len(papers)} papers, {nf} rows), batched", t_full,
                             nf / t_full])
            stats = s.stats()
            rep.add("### Loading (empty database each time)\n\n"
                    + table(["load", "seconds", "rows/s"], rows_out)
                    + f"\n\nOne row per transaction ÷ batched (same subset): "
                    f"**{median(single_s) / median(batched_s):.1f}x** slower. Loaded: "
                    f"{dict(stats.nodes)} nodes, {sum(stats.edges.values())} edges.")
            mem = NetworkxStore()
            mem.apply(full)
            lat_mem = query_mix(mem, papers, args.queries)
            lat_neo = query_mix(s, papers, args.queries)
            qrows = []
            for k in lat_mem:
                a, b = lat_mem[k], lat_neo[k]
                qrows.append([k, median(a) * 1e3, percentile(a, 99) * 1e3, median(b) * 1e3,
                              percentile(b, 99) * 1e3, median(b) / median(a)])
            rep.add(f"### Store calls in-process, {args.queries} random papers each (ms)\n\n"
                    + table(["query", "embedded p50", "embedded p99", "Neo4j p50",
                             "Neo4j p99", "Neo4j ÷ embedded (p50)"], qrows)
                    + "\n\np99 of 30 samples is their maximum.")
        finally:
            driver.close()
    rep.add(f"Run time {time.perf_counter() - t_all:.0f}s.")
    rep.save()
    _ = (np, NodeKind)


if __name__ == "__main__":
    main()
