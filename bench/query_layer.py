# ruff: noqa: E501 - long table rows
"""The query layer against the code before it, side by side in one run, same graph, same queries.

    python bench/query_layer.py --before DIR [--papers 3000] [--samples 40] [--rounds 2] [--store neo4j]

DIR is a checkout of the code to compare with (e.g. ``git archive <commit> | tar -x -C DIR``).
A synthetic graph shaped like ICLR 2021 (``--papers`` papers, bench/scale.py's generator:
~16 MENTIONS per paper, 10 SIMILAR_TO from exact cosine, a few CITES) is written once as a
graph file; then each round runs, in fresh processes, the "before" code and this checkout
on it (NetworkxStore, in-process): neighbourhood depth 1 (limit 100) and depth 2 (limit
200), shortest path, k paths (k=3), keyword search, vector search, find_node and related,
over the same random papers (in memory: CPU time, each query 5 times; Neo4j: wall time).
Prints p50 and p99 per query (the best round of each side), the ratio
after / before, and whether both sides gave the same answers (a digest of every result).
``--only "keyword search"`` runs just the named queries.

``--store neo4j``: the same graph loaded once into a real Neo4j 5.26 (scripts/neo4j.sh,
1 GiB heap, loopback only, stopped at the end) and both sides query it through their
Neo4jStore (``--papers 1000 --samples 15`` keeps it to a few minutes).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def build(path: Path, n: int) -> None:
    sys.path.insert(0, str(ROOT))
    import numpy as np

    from bench.scale import generate
    from graph.model import Concept, Edge, GraphChange, Paper, RelType
    from graph.store.memory import NetworkxStore

    m, terms, _ = generate(n)
    ids = [f"p{i:05d}" for i in range(n)]
    papers = [Paper(pid, f"Paper {i} on {sorted(terms[i])[0].split(':')[1]}", f"synthetic abstract {i} about graph learning and topic {i % 37}", f"h{i}")
              for i, pid in enumerate(ids)]
    concepts = sorted({t for d in terms for t in d})
    edges = []
    sims = m @ m.T
    np.fill_diagonal(sims, -1)
    rng = random.Random(1)
    for i, pid in enumerate(ids):
        for rank, j in enumerate(np.argsort(-sims[i])[:10], start=1):
            s = round(float(sims[i, j]), 6)
            if pid < ids[j]:
                edges.append(Edge(pid, ids[j], RelType.SIMILAR_TO, s, {"score": s, "rank": rank}))
        for t in terms[i]:
            edges.append(Edge(pid, t, RelType.MENTIONS, 1.0, {"weight": 1.0, "evidence": ""}))
        for _ in range(2):
            j = rng.randrange(n)
            if j != i:
                edges.append(Edge(pid, ids[j], RelType.CITES, 1.0, {}))
    store = NetworkxStore(path)
    store.apply(GraphChange(upsert_nodes=tuple(papers + [Concept(c, c.split(":", 1)[1].replace("-", " ")) for c in concepts]),
                            upsert_edges=tuple(edges), embedding_ids=tuple(ids), embeddings=m, embedding_model="synthetic"))
    store.save()


def load_neo4j(stack: contextlib.ExitStack, graph: Path) -> list[str]:
    """A Neo4j server for the run, holding the graph; [uri, password] for the children."""
    import neo4j

    from graph.build import diff
    from graph.model import GraphData
    from graph.store.memory import NetworkxStore
    from graph.store.neo4j import Neo4jStore
    from tests.support.neo4j import Neo4jServer

    server = stack.enter_context(Neo4jServer.start(heap="1g", java_opts=""))
    driver = neo4j.GraphDatabase.driver(
        server.uri, auth=server.auth, notifications_min_severity=neo4j.NotificationMinimumSeverity.OFF
    )
    stack.callback(driver.close)
    store = Neo4jStore(driver, server.database)
    store.apply(diff(GraphData(), NetworkxStore(graph).snapshot()))
    return [server.uri, server.password]


def child(code: Path, graph: Path, samples: int, bolt: list[str]) -> dict[str, Any]:
    sys.path.insert(0, str(code))
    from graph import related as related_mod
    from graph.model import NodeKind
    from graph.store.memory import NetworkxStore

    store: Any = NetworkxStore(graph)
    ids = sorted(n for n, a in store.g.nodes(data=True) if a["node"].kind.value == "Paper")
    if bolt:
        import neo4j

        from graph.store.neo4j import Neo4jStore

        driver = neo4j.GraphDatabase.driver(
            bolt[0], auth=("neo4j", bolt[1]), notifications_min_severity=neo4j.NotificationMinimumSeverity.OFF
        )
        store = Neo4jStore(driver, "neo4j")
        assert store.stats().nodes[NodeKind.PAPER.value] == len(ids)
    rng = random.Random(7)
    qs = [ids[rng.randrange(len(ids))] for _ in range(samples)]
    words = ["graph learning", "topic 3", "paper 12", "abstract", "g1 g2", "t5"]
    vecs = store.embeddings(qs)
    calls = {
        "neighborhood d1": lambda i, q: store.neighborhood([q], depth=1, limit=100),
        "neighborhood d2": lambda i, q: store.neighborhood([q], depth=2, limit=200),
        "shortest path": lambda i, q: store.shortest_path(q, qs[(i + 1) % len(qs)]),
        "k paths (k=3)": lambda i, q: store.k_paths(q, qs[(i + 1) % len(qs)], k=3),
        "keyword search": lambda i, q: store.keyword_search(words[i % len(words)]),
        "vector search": lambda i, q: store.vector_search(vecs[q], limit=10, exclude=[q]),
        "find_node": lambda i, q: store.find_node(store.get_nodes([q])[q].label),
        "related": lambda i, q: related_mod.related(store, paper=q, first=10),
    }
    # in-process queries are timed in CPU seconds: the machine is shared, and wall time
    # there measures the neighbours as much as the code; a server store needs wall time
    clock = time.perf_counter if bolt else time.process_time
    out: dict[str, Any] = {}
    only = [n for n in os.environ.get("BENCH_ONLY", "").split(",") if n]
    for name, fn in calls.items():
        if only and name not in only:
            continue
        fn(0, qs[0])  # warm caches (alias index, search text)
        lat, digest = [], hashlib.sha256()
        for i, q in enumerate(qs):
            t = clock()
            for _ in range(1 if bolt else 5):
                res = fn(i, q)
            lat.append((clock() - t) / (1 if bolt else 5))
            digest.update(repr(res).encode())
        lat.sort()
        out[name] = {"p50_ms": statistics.median(lat) * 1000,
                     "p99_ms": lat[min(len(lat) - 1, int(0.99 * len(lat)))] * 1000,
                     "digest": digest.hexdigest()[:12]}
    return out


def run(code: Path, graph: Path, samples: int, bolt: list[str], only: str = "") -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__)), "--child", str(code), str(graph), str(samples), *bolt]
    # one BLAS thread: on a shared machine its spinning threads made one 3,000 x 384
    # product take 0.3 ms or 8 ms at random, on either side
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               BENCH_ONLY=only)
    res = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=900, env=env)
    return dict(json.loads(res.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", type=Path)
    ap.add_argument("--papers", type=int, default=3000)
    ap.add_argument("--samples", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--store", choices=("memory", "neo4j"), default="memory")
    ap.add_argument("--only", default="", help="comma-separated query names to run (default all)")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        code, graph, samples, *bolt = args.child
        print(json.dumps(child(Path(code), Path(graph), int(samples), bolt)))
        return
    if args.before is None:
        ap.error("--before DIR is required")
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        graph = Path(tmp) / "g.citegraph"
        build(graph, args.papers)
        bolt: list[str] = []
        if args.store == "neo4j":
            bolt = load_neo4j(stack, graph)
        best: dict[str, dict[str, Any]] = {"before": {}, "after": {}}
        for _ in range(args.rounds):
            for side, code in (("before", args.before.resolve()), ("after", ROOT)):
                for name, r in run(code, graph, args.samples, bolt, args.only).items():
                    old = best[side].get(name)
                    if old is None or r["p50_ms"] < old["p50_ms"]:
                        best[side][name] = r
    print(f"{args.store}: {args.papers} papers, {args.samples} samples, best p50 of {args.rounds} rounds\n")
    print("| query | before p50 ms | after p50 ms | after / before | before p99 ms | after p99 ms | same answers |")
    print("|---|---|---|---|---|---|---|")
    for name, b in best["before"].items():
        a = best["after"][name]
        print(f"| {name} | {b['p50_ms']:.2f} | {a['p50_ms']:.2f} | {a['p50_ms'] / b['p50_ms']:.2f} | {b.get('p99_ms', float('nan')):.2f} | {a.get('p99_ms', float('nan')):.2f} | {'yes' if a['digest'] == b['digest'] else 'NO'} |")


if __name__ == "__main__":
    main()
