"""One query at a time: the library call in-process and the same query over HTTP.

    python -m bench queries [--samples 30] [--quick]

On a graph built by ``citegraph build`` (ICLR 2021; ``--quick``: the seeds), each query kind
runs ``--samples`` times with different papers or words: once through ``GraphService`` in
this process (the store read as a server reads it, the graph in memory; one BLAS
thread; queries encoded as a server encodes them)
and once as a GraphQL request over HTTP to ``citegraph serve`` on loopback, one client, the
two alternating. p50 and p99 per kind (p99 of fewer than 100 samples is the maximum).
Issue 11's goal: p50 over HTTP within 10 ms a kind, 20 ms for the kinds that encode the
query (semantic search, related to a text).

``--corpus cora``: Cora with its citations as references (2,262 papers, outside works
none), and the citation reads beside them: prior and derivative works, coupled and
co-cited papers, and related papers (whose candidates and reasons include coupling and
co-citation there). Issue 43's goal for those: p50 over HTTP within 20 ms on a 3k graph.
Its results are written as ``queries.cora``.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from bench.common import Result, built_graph, copy_graph, median, percentile

WORDS = ["graph neural network", "contrastive learning", "transformer", "reinforcement learning",
         "adversarial robustness", "meta-learning", "federated learning", "diffusion"]
ENCODING = {"semantic search", "related to a text"}
CITATION_READS = {"prior works": "priorWorks", "derivative works": "derivativeWorks",
                  "coupled papers": "coupled", "co-cited papers": "cocited"}


def _citation_cases(service: Any, papers: list[str], i: int) -> list[
        tuple[str, Callable[[], Any], str, dict[str, Any]]]:
    from graph.query.citations import Relation

    a = papers[i % len(papers)]
    relations = {"prior works": Relation.PRIOR, "derivative works": Relation.DERIVATIVE,
                 "coupled papers": Relation.COUPLED, "co-cited papers": Relation.COCITED}
    return [
        (kind, lambda r=relations[kind]: service.citations(r, [a], limit=10),
         f"query($p: ID!) {{ {field}(ids: [$p], first: 10) {{ strength count "
         "node { id } reason } }", {"p": a})
        for kind, field in CITATION_READS.items()
    ]


def _cases(service: Any, papers: list[str], i: int) -> list[tuple[str, Callable[[], Any], str,
                                                                   dict[str, Any]]]:
    from graph.service import SearchMode

    a, b = papers[i % len(papers)], papers[(i + 7) % len(papers)]
    w = WORDS[i % len(WORDS)]
    text = f"{w} for {WORDS[(i + 3) % len(WORDS)]} {i}"
    return [
        ("neighborhood depth 1", lambda: service.neighborhood(a, 1, limit=100),
         "query($id: ID!) { neighborhood(id: $id, depth: 1, limit: 100) "
         "{ nodes { id label } edges { source target type } } }", {"id": a}),
        ("neighborhood depth 2", lambda: service.neighborhood(a, 2, limit=100),
         "query($id: ID!) { neighborhood(id: $id, depth: 2, limit: 100) "
         "{ nodes { id label } edges { source target type } } }", {"id": a}),
        ("shortest path", lambda: service.paths(a, b),
         "query($a: ID!, $b: ID!) { shortestPath(from: $a, to: $b) { length nodes { id } } }",
         {"a": a, "b": b}),
        ("k paths (k 3, 3 hops)", lambda: service.paths(a, b, k=3, max_hops=3),
         "query($a: ID!, $b: ID!) { paths(from: $a, to: $b, k: 3, maxHops: 3) { length } }",
         {"a": a, "b": b}),
        ("related papers", lambda: service.related(paper=a, first=5),
         "query($p: ID!) { related(paper: $p, first: 5) { score paper { id } "
         "reasons { kind text } } }", {"p": a}),
        ("keyword search", lambda: service.search(w, SearchMode.KEYWORD, None, 10),
         "query($q: String!) { search(query: $q, first: 10) { score node { id } } }", {"q": w}),
        ("semantic search", lambda: service.search(text, SearchMode.SEMANTIC, None, 5),
         "query($q: String!) { search(query: $q, mode: SEMANTIC, first: 5) { score } }",
         {"q": text}),
        ("related to a text", lambda: service.related(text=text + " x", first=5),
         "query($q: String!) { related(text: $q, first: 5) { score paper { id } } }",
         {"q": text + " y"}),
    ]


def run(argv: list[str]) -> Result:
    ap = argparse.ArgumentParser(prog="python -m bench queries", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=30, help="queries of each kind (30)")
    ap.add_argument("--quick", action="store_true", help="the seeds, 10 samples")
    ap.add_argument("--corpus", choices=("iclr2021", "cora"), default="iclr2021",
                    help="cora: with its citations, and the citation reads (queries.cora)")
    args = ap.parse_args(argv)
    cora = args.corpus == "cora"
    corpus = "seeds" if args.quick else args.corpus
    samples = 10 if args.quick else args.samples
    result = Result("queries.cora" if cora else "queries", quick=args.quick,
                    corpus="seeds (76 papers)" if args.quick else
                    "Cora with its citations (2,262 papers)" if cora else
                    "ICLR 2021 (2,966 papers)")

    def cases(i: int) -> list[tuple[str, Callable[[], Any], str, dict[str, Any]]]:
        both = _cases(service, papers, i)
        return both + _citation_cases(service, papers, i) if cora else both

    from threadpoolctl import threadpool_limits

    from bench.load import start_server
    from graph.model import NodeKind
    from graph.service import Embedding, GraphService
    from graph.settings import Settings
    from graph.store import open_store

    threadpool_limits(1, user_api="blas")  # as a server runs
    source = built_graph(corpus)
    with tempfile.TemporaryDirectory(prefix="citegraph-bench-queries-") as tmp:
        data = copy_graph(source, Path(tmp) / "data")
        settings = Settings(data_dir=data)
        store = open_store(settings)
        embedding = Embedding(settings)
        service = GraphService(settings, store, embedding)
        if settings.query_encoder == "onnxruntime":  # as a server's warm-up does
            embedding.embedder().enable_fast_queries(settings.compute_threads)
        nodes, _ = store.list_nodes(NodeKind.PAPER, limit=10_000)
        papers = [n.id for n in nodes]
        random.Random(0).shuffle(papers)
        for _, call, _, _ in cases(0):  # warm: the model, the word index
            call()
        lib: dict[str, list[float]] = {}
        http: dict[str, list[float]] = {}
        server = start_server(data)
        try:
            with httpx.Client(base_url=server.url, timeout=60) as c:
                for i in range(samples + 1):
                    for kind, call, query, variables in cases(i):
                        t0 = time.perf_counter()
                        call()
                        t1 = time.perf_counter()
                        r = c.post("/graphql", json={"query": query, "variables": variables})
                        t2 = time.perf_counter()
                        body = r.json()
                        if r.status_code != 200 or body.get("errors"):
                            raise RuntimeError(f"{kind}: {r.status_code} {str(body)[:300]}")
                        if i:  # the first round warms the server's paths
                            lib.setdefault(kind, []).append((t1 - t0) * 1000)
                            http.setdefault(kind, []).append((t2 - t1) * 1000)
        finally:
            server.stop()
            store.close()
    rows = []
    for kind, in_process in lib.items():
        goal = 20.0 if kind in ENCODING or (cora and kind in {*CITATION_READS,
                                                               "related papers"}) else 10.0
        p50 = median(http[kind])
        result.figure(f"{kind}: p50 over HTTP", p50, "ms", f"≤ {goal:g} ms", p50 <= goal)
        rows.append([kind, round(median(in_process), 2), round(percentile(in_process, 99), 2),
                     round(p50, 2), round(percentile(http[kind], 99), 2)])
    result.table(f"Latency, ms ({samples} queries a kind, one client)",
                 ["query", "in-process p50", "in-process p99", "HTTP p50", "HTTP p99"], rows)
    return result
