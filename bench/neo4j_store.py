"""The Neo4j store against the embedded one: loading a graph, then the same queries on both.

    python -m bench neo4j [--queries 30] [--quick]

Starts a real Neo4j 5.26 on a free loopback port (scripts/neo4j.sh through
tests/support/neo4j.py, 1 GB heap, the full JIT; stopped by its pid at the end), loads the
graph ``citegraph build`` made (ICLR 2021; ``--quick``: the seeds) through ``Neo4jStore``
(batches of 1,000 rows), then runs the same queries over ``--queries`` random papers
through ``GraphService`` on each store: neighbourhoods of depth 1 and 2, shortest path, k
paths, related papers, keyword search, semantic search (the query's vector made once,
outside the timing). p50 each and Neo4j ÷ embedded. Issue 10's goal: each within 3x.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import Result, built_graph, copy_graph, median

GOAL_RATIO = 3.0
WORDS = ["graph neural network", "contrastive learning", "transformer", "reinforcement learning"]


def _kinds(service: Any, store: Any, papers: list[str], vecs: list[list[float]],
           i: int) -> list[tuple[str, Callable[[], Any]]]:
    from graph.service import SearchMode

    a, b = papers[i % len(papers)], papers[(i + 7) % len(papers)]
    return [
        ("neighborhood depth 1", lambda: service.neighborhood(a, 1)),
        ("neighborhood depth 2", lambda: service.neighborhood(a, 2)),
        ("shortest path", lambda: service.paths(a, b)),
        ("k paths (k 3, 3 hops)", lambda: service.paths(a, b, k=3, max_hops=3)),
        ("related papers", lambda: service.related(paper=a, first=10)),
        ("keyword search", lambda: service.search(WORDS[i % len(WORDS)], SearchMode.KEYWORD)),
        ("vector search", lambda: store.vector_search(vecs[i % len(vecs)], limit=10)),
    ]


def _time(service: Any, store: Any, papers: list[str], vecs: list[list[float]],
          n: int) -> dict[str, list[float]]:
    for _, call in _kinds(service, store, papers, vecs, 0):  # warm
        call()
    out: dict[str, list[float]] = {}
    for i in range(1, n + 1):
        for kind, call in _kinds(service, store, papers, vecs, i):
            t0 = time.perf_counter()
            call()
            out.setdefault(kind, []).append((time.perf_counter() - t0) * 1000)
    return out


def run(argv: list[str]) -> Result:
    ap = argparse.ArgumentParser(prog="python -m bench neo4j", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=30, help="papers queried (30)")
    ap.add_argument("--quick", action="store_true", help="the seeds, 10 papers")
    args = ap.parse_args(argv)
    corpus = "seeds" if args.quick else "iclr2021"
    n = 10 if args.quick else args.queries
    import neo4j

    from graph.build import diff
    from graph.model import GraphData, NodeKind
    from graph.service import Embedding, GraphService
    from graph.settings import Settings
    from graph.store import open_store
    from graph.store.neo4j import Neo4jStore
    from tests.support.neo4j import Neo4jServer

    result = Result("neo4j", quick=args.quick,
                    corpus="seeds (76 papers)" if args.quick else "ICLR 2021 (2,966 papers)")
    source = built_graph(corpus)
    with tempfile.TemporaryDirectory(prefix="citegraph-bench-neo4j-") as tmp:
        data = copy_graph(source, Path(tmp) / "data")
        settings = Settings(data_dir=data)
        embedded = open_store(settings)
        snapshot = embedded.snapshot()
        change = diff(GraphData(), snapshot)
        rows = len(change.upsert_nodes) + len(change.upsert_edges) + len(change.embedding_ids)
        nodes, _ = embedded.list_nodes(NodeKind.PAPER, limit=10_000)
        papers = [p.id for p in nodes]
        random.Random(0).shuffle(papers)
        vecs = list(embedded.embeddings(papers[: n + 1]).values())
        embedding = Embedding(settings)
        with Neo4jServer.start(Path(tmp) / "neo4j", heap="1g", java_opts="") as server:
            driver = neo4j.GraphDatabase.driver(
                server.uri, auth=server.auth,
                notifications_min_severity=neo4j.NotificationMinimumSeverity.OFF)
            try:
                store = Neo4jStore(driver, server.database)
                store.clear()
                t0 = time.perf_counter()
                store.apply(change)
                load_s = time.perf_counter() - t0
                result.figure(f"load {rows:,} rows (one apply, batches of 1,000)", load_s, "s")
                result.figure("rows a second", round(rows / load_s), "")
                neo = _time(GraphService(settings, store, embedding), store, papers, vecs, n)
                emb = _time(GraphService(settings, embedded, embedding), embedded, papers, vecs, n)
            finally:
                driver.close()
        embedded.close()
    table = []
    for kind, e_ms in emb.items():
        ratio = median(neo[kind]) / max(median(e_ms), 1e-3)
        result.figure(f"Neo4j ÷ embedded p50: {kind}", round(ratio, 1), "x", f"≤ {GOAL_RATIO:g}x",
                      ratio <= GOAL_RATIO)
        table.append([kind, round(median(e_ms), 2), round(median(neo[kind]), 2), round(ratio, 1)])
    result.table(f"p50 ms over {n} papers, in-process", ["query", "embedded", "Neo4j",
                                                        "Neo4j ÷ embedded"], table)
    return result
