"""The Neo4j store beside the embedded one, over HTTP: each query kind's p50, then load.

    python -m bench neo4j [--requests 40] [--clients 32] [--seconds 15] [--workers 2]
                          [--data-dir DIR] [--quick]

Starts a real Neo4j 5.26 on a free loopback port (scripts/neo4j.sh through
tests/support/neo4j.py, 1 GB heap, the full JIT; stopped by its pid at the end) and loads
the graph ``citegraph build`` made (ICLR 2021; ``--quick``: the seeds) into it through
``Neo4jStore`` (one apply, batches of 1,000 rows). Then two real ``citegraph serve``
processes, ``--workers`` each, on free loopback ports: one on a copy of the embedded
graph, one on Neo4j (``CITEGRAPH_STORE=neo4j``), both warmed (the model loaded, every
worker idle) before anything is timed.

1. Each query kind, ``--requests`` times over random papers, the two servers asked in
   turn (the same request to one, then the other, so the machine's load falls on both
   alike): neighbourhoods of depth 1 (limit 100) and 2 (limit 200), shortest path, k paths
   (k 3, 3 hops), keyword and semantic search, a paper with its concepts, a page of
   papers, related papers, a filtered and sorted page of papers (one concept's, by
   citations) and paper counts by year and concept under a filter. p50 of each, and
   Neo4j ÷ embedded. Issue 41's goal: ≤ 2x for every kind; issue 44's: the filtered
   list and the counts ≤ 20 ms p50 on ICLR 2021.
2. Load: ``--clients`` clients on the query mix of ``python -m bench load`` for
   ``--seconds``, against each server in turn: requests a second, errors, p99. Issue 41's
   goal: Neo4j ≥ 0.5x embedded's requests a second, 0 errors, p99 ≤ 1 s.

``--quick``: the seeds, 10 requests a kind, 16 clients for 5 s.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import random
import secrets
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from bench.common import Result, built_graph, copy_graph, median

GOAL_RATIO = 2.0
GOAL_RPS_RATIO = 0.5
GOAL_P99_MS = 1000.0
#: seconds a server may take to answer its first semantic search
READY_S = 600.0
WORDS = ["graph neural network", "contrastive learning", "transformer", "reinforcement learning",
         "diffusion model", "adversarial robustness", "language model", "meta learning"]

#: (kind, GraphQL query, variables from (paper a, paper b, words, i, concept id c))
KINDS: list[tuple[str, str, Callable[[str, str, str, int, str], dict[str, Any]]]] = [
    ("neighborhood depth 1",
     "query($id: ID!) { neighborhood(id: $id, depth: 1, limit: 100) "
     "{ nodes { id label } edges { source target type } } }",
     lambda a, b, w, i, c: {"id": a}),
    ("neighborhood depth 2",
     "query($id: ID!) { neighborhood(id: $id, depth: 2, limit: 200) "
     "{ nodes { id label } edges { source target type } } }",
     lambda a, b, w, i, c: {"id": a}),
    ("shortest path",
     "query($a: ID!, $b: ID!) { shortestPath(from: $a, to: $b) { length nodes { id } } }",
     lambda a, b, w, i, c: {"a": a, "b": b}),
    ("k paths (k 3, 3 hops)",
     "query($a: ID!, $b: ID!) { paths(from: $a, to: $b, k: 3, maxHops: 3) { length } }",
     lambda a, b, w, i, c: {"a": a, "b": b}),
    ("keyword search",
     "query($q: String!) { search(query: $q, first: 10) { score node { id } } }",
     lambda a, b, w, i, c: {"q": w}),
    ("semantic search",
     "query($q: String!) { search(query: $q, mode: SEMANTIC, first: 10) { score node { id } } }",
     lambda a, b, w, i, c: {"q": f"{w} {i}"}),
    ("paper with its concepts",
     "query($id: ID!) { paper(id: $id) { title concepts { weight concept { name } } } }",
     lambda a, b, w, i, c: {"id": a}),
    ("page of papers",
     "query($after: String) { papers(first: 50, after: $after) "
     "{ totalCount edges { node { id title } } } }",
     lambda a, b, w, i, c: {"after": None}),
    ("related papers",
     "query($p: ID!) { related(paper: $p, first: 10) { score paper { id } } }",
     lambda a, b, w, i, c: {"p": a}),
    # issue 44: a where (a concept's papers) and a sort, computed by the store
    ("filtered, sorted papers",
     "query($c: ID!) { papers(first: 20, where: {concept: {eq: $c}, year: {lte: 2100}}, "
     "sort: [{citations: DESC}]) { totalCount edges { node { id title } } } }",
     lambda a, b, w, i, c: {"c": c}),
    ("paper counts by year and concept",
     "query($c: ID!) { papersAggregate(where: {concept: {eq: $c}}) { count "
     "years: countsBy(field: YEAR) { key count } "
     "concepts: countsBy(field: CONCEPT, first: 10) { key count } } }",
     lambda a, b, w, i, c: {"c": c}),
]


def _ask(c: httpx.Client, query: str, variables: dict[str, Any]) -> float:
    """One request's wall time in ms; an error or a GraphQL error raises."""
    t0 = time.perf_counter()
    r = c.post("/graphql", json={"query": query, "variables": variables})
    ms = (time.perf_counter() - t0) * 1000
    body = r.json()
    if r.status_code != 200 or body.get("errors"):
        raise RuntimeError(f"HTTP {r.status_code}: {str(body)[:300]}")
    return ms


def _papers(c: httpx.Client, pages: int = 5) -> list[str]:
    """The first ``pages`` pages of 100 paper ids."""
    query = ("query($after: String) { papers(first: 100, after: $after) "
             "{ pageInfo { endCursor hasNextPage } edges { node { id } } } }")
    out: list[str] = []
    after = None
    for _ in range(pages):
        body = c.post("/graphql", json={"query": query, "variables": {"after": after}}).json()
        if body.get("errors"):
            raise RuntimeError(f"papers: {body['errors']}")
        page = body["data"]["papers"]
        out += [e["node"]["id"] for e in page["edges"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    return out


def _concepts(c: httpx.Client) -> list[str]:
    """The ids of the 20 concepts most papers mention."""
    body = c.post("/graphql", json={"query": "{ papersAggregate { countsBy(field: CONCEPT, "
                                             "first: 20) { key } } }"}).json()
    if body.get("errors"):
        raise RuntimeError(f"papersAggregate: {body['errors']}")
    return [g["key"] for g in body["data"]["papersAggregate"]["countsBy"]]


def _per_kind(
    servers: dict[str, Any], papers: list[str], concepts: list[str], n: int
) -> dict[str, dict[str, list[float]]]:
    """kind -> store -> ms of each request, the stores asked in turn."""
    rng = random.Random(0)
    picks = [(rng.choice(papers), rng.choice(papers), rng.choice(WORDS), rng.choice(concepts))
             for _ in range(n + 2)]
    out: dict[str, dict[str, list[float]]] = {}
    clients = {name: httpx.Client(base_url=s.url, timeout=60) for name, s in servers.items()}
    try:
        for kind, query, variables in KINDS:
            times: dict[str, list[float]] = {name: [] for name in servers}
            for i, (a, b, w, concept) in enumerate(picks):
                for name, c in clients.items():
                    ms = _ask(c, query, variables(a, b, w, i, concept))
                    if i >= 2:  # the first two warm each worker's plans and caches
                        times[name].append(ms)
            out[kind] = times
            print(f"  {kind}: " + ", ".join(
                f"{name} p50 {median(t):.1f} ms" for name, t in times.items()), flush=True)
    finally:
        for c in clients.values():
            c.close()
    return out


def run(argv: list[str]) -> Result:
    ap = argparse.ArgumentParser(prog="python -m bench neo4j", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=40, help="requests a query kind (40)")
    ap.add_argument("--clients", type=int, default=32, help="clients of the load run (32)")
    ap.add_argument("--seconds", type=float, default=15.0, help="seconds of load a store (15)")
    ap.add_argument("--workers", type=int, default=2, help="server processes a store (2)")
    ap.add_argument("--data-dir", type=Path, default=None,
                    help="a data folder holding a built graph (default: ICLR 2021, built once)")
    ap.add_argument("--quick", action="store_true",
                    help="the seeds, 10 requests a kind, 16 clients for 5 s")
    args = ap.parse_args(argv)
    if args.quick:
        args.requests, args.clients, args.seconds = 10, 16, 5.0
    if not 1 <= args.requests <= 1000 or not 1 <= args.clients <= 256 \
            or not 0 < args.seconds <= 120 or not 1 <= args.workers <= 8:
        ap.error("bounded: 1-1000 requests, 1-256 clients, up to 120 s, 1-8 workers")
    corpus = "seeds" if args.quick else "iclr2021"
    import neo4j

    from bench.load import query_mix, run_round, start_server
    from graph.build import diff
    from graph.model import GraphData
    from graph.settings import Settings
    from graph.store import open_store
    from graph.store.neo4j import Neo4jStore
    from tests.support.neo4j import Neo4jServer

    result = Result("neo4j", quick=args.quick,
                    corpus=str(args.data_dir) if args.data_dir
                    else "seeds (76 papers)" if args.quick else "ICLR 2021 (2,966 papers)")
    source = args.data_dir or built_graph(corpus)
    env = {"CITEGRAPH_WORKERS": str(args.workers)}
    with tempfile.TemporaryDirectory(prefix="citegraph-bench-neo4j-") as tmp:
        emb_dir = copy_graph(source, Path(tmp) / "embedded")
        neo_dir = Path(tmp) / "neo4j-api"
        neo_dir.mkdir()
        if (source / "cache").is_dir():  # the query encoder's cache, as the other has
            shutil.copytree(source / "cache", neo_dir / "cache")
        embedded = open_store(Settings(data_dir=emb_dir))
        change = diff(GraphData(), embedded.snapshot())
        embedded.close()
        rows = len(change.upsert_nodes) + len(change.upsert_edges) + len(change.embedding_ids)
        password = "pw-" + secrets.token_hex(8)
        with Neo4jServer.start(Path(tmp) / "neo4j", heap="1g", java_opts="",
                               password=password) as server:
            driver = neo4j.GraphDatabase.driver(
                server.uri, auth=server.auth,
                notifications_min_severity=neo4j.NotificationMinimumSeverity.OFF)
            try:
                store = Neo4jStore(driver, server.database)
                store.clear()
                t0 = time.perf_counter()
                store.apply(change)
                load_s = time.perf_counter() - t0
            finally:
                driver.close()
            result.figure(f"load {rows:,} rows into Neo4j (one apply, batches of 1,000)",
                          load_s, "s")
            neo_env = {**env, "CITEGRAPH_STORE": "neo4j", "NEO4J_URI": server.uri,
                       "NEO4J_USER": server.user, "NEO4J_PASSWORD": password,
                       "NEO4J_DATABASE": server.database}
            with contextlib.ExitStack() as running, \
                    concurrent.futures.ThreadPoolExecutor(2) as pool:
                # both at once: a loaded 2-core machine takes minutes to warm 4 workers
                starting = {name: pool.submit(start_server, data, e, ready_timeout=READY_S)
                            for name, data, e in (("embedded", emb_dir, env),
                                                  ("Neo4j", neo_dir, neo_env))}
                servers = {}
                failed: list[BaseException] = []
                for name, future in starting.items():  # every one waited for, and stopped
                    try:
                        servers[name] = future.result()
                        running.callback(servers[name].stop)
                    except Exception as exc:
                        failed.append(exc)
                if failed:
                    raise failed[0]
                emb_server = servers["embedded"]
                with httpx.Client(base_url=emb_server.url, timeout=60) as c:
                    papers = _papers(c)
                    concepts = _concepts(c)
                    mix = query_mix(c)
                timings = _per_kind(servers, papers, concepts, args.requests)
                loads: dict[tuple[str, str], dict[str, Any]] = {}
                mixes = {"the mix": mix,
                         "the mix less related": [m for m in mix if "related" not in m[0]]}
                for mix_name, queries in mixes.items():
                    for name, s in servers.items():
                        d = run_round(s, queries, args.clients, args.seconds).as_dict()
                        loads[(mix_name, name)] = d
                        print(f"  load, {mix_name}, {name}: {d['rps']} req/s, {d['errors']} "
                              f"errors, p50 {d['p50_ms']} ms, p99 {d['p99_ms']} ms, server "
                              f"CPU {d['server_cpu_ms_per_request']} ms a request", flush=True)
                        for e in d["first_errors"][:2]:
                            result.note(f"{name} under load ({mix_name}): {e}")
    table = []
    for kind, times in timings.items():
        e, n = median(times["embedded"]), median(times["Neo4j"])
        ratio = n / max(e, 1e-3)
        result.figure(f"HTTP p50 Neo4j ÷ embedded: {kind}", round(ratio, 1), "x",
                      f"≤ {GOAL_RATIO:g}x", ratio <= GOAL_RATIO)
        table.append([kind, round(e, 1), round(n, 1), round(ratio, 1),
                      round(statistics.quantiles(times["Neo4j"], n=10)[-1], 1)
                      if len(times["Neo4j"]) > 1 else None])
    result.table(f"HTTP p50 ms over {args.requests} requests a kind, {args.workers} workers "
                 "a server, the servers asked in turn",
                 ["query", "embedded", "Neo4j", "Neo4j ÷ embedded", "Neo4j p90"], table)
    for mix_name in ("the mix", "the mix less related"):
        emb_l, neo_l = loads[(mix_name, "embedded")], loads[(mix_name, "Neo4j")]
        rps_ratio = neo_l["rps"] / max(emb_l["rps"], 1e-9)
        label = f"{args.clients} clients, {args.seconds:g} s, {mix_name}"
        result.figure(f"load ({label}): Neo4j ÷ embedded requests a second",
                      round(rps_ratio, 2), "x", f"≥ {GOAL_RPS_RATIO:g}x",
                      rps_ratio >= GOAL_RPS_RATIO)
        result.figure(f"load ({mix_name}): Neo4j errors", neo_l["errors"], "", "0",
                      neo_l["errors"] == 0)
        result.figure(f"load ({mix_name}): Neo4j p99", neo_l["p99_ms"], "ms",
                      f"≤ {GOAL_P99_MS:g} ms", neo_l["p99_ms"] <= GOAL_P99_MS)
    result.table(f"Load: {args.clients} clients for {args.seconds:g} s, {args.workers} "
                 "workers a server",
                 ["mix", "store", "requests", "req/s", "errors", "p50 ms", "p99 ms",
                  "server CPU ms a request", "RSS per worker MiB"],
                 [[mix_name, name, d["requests"], d["rps"], d["errors"], d["p50_ms"],
                   d["p99_ms"], d["server_cpu_ms_per_request"],
                   " / ".join(str(x) for x in d["workers_rss_mib"])]
                  for (mix_name, name), d in loads.items()])
    emb_l, neo_l = loads[("the mix", "embedded")], loads[("the mix", "Neo4j")]
    kinds = sorted(set(emb_l["kinds"]) | set(neo_l["kinds"]))
    result.table("Load, the mix: p50 / p99 ms by kind",
                 ["kind", "embedded", "Neo4j"],
                 [[k, "{p50_ms} / {p99_ms}".format(**emb_l["kinds"][k]) if k in emb_l["kinds"]
                   else None,
                   "{p50_ms} / {p99_ms}".format(**neo_l["kinds"][k]) if k in neo_l["kinds"]
                   else None] for k in kinds])
    return result
