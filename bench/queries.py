# ruff: noqa: E501 - long table rows
"""Query latency and throughput on the ICLR 2021 graph: store vs GraphQL vs HTTP.

Builds the ICLR 2021 graph (embeddings from bench/.cache when present, else the model)
into a temporary data folder, then for each query kind - neighborhood depth 1 and 2,
shortest path, related, keyword search, semantic search - over the same random papers:

* the store call in-process (NetworkxStore; for related, ``graph.related.related``),
* the GraphQL query executed in-process (``schema.execute`` with a fresh Context),
* the same query over HTTP to ``citegraph serve`` (uvicorn) on 127.0.0.1, one client,

p50 / p99 in ms and the ratios GraphQL ÷ store and HTTP ÷ GraphQL (medians, same papers,
same run). Then throughput with 1, 8 and 32 concurrent clients (asyncio + httpx, one
connection each) sending the mix back to back for ``--seconds`` each: requests/s, p50 /
p99, and errors (non-200 or a GraphQL ``errors`` field). The server is started with
bench/load.py's ``start_server`` (loopback only, stopped by PID).

``--store neo4j`` serves from a real Neo4j 5.26 (scripts/neo4j.sh) loaded with the same graph instead.
``--quick``: 10 samples per kind, 2 s per throughput step.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from common import Report, median, percentile, table

from graph.build import diff
from graph.model import GraphData
from graph.settings import Settings
from graph.store.memory import NetworkxStore

NEIGHBORHOOD = """query($id: ID!) { neighborhood(id: $id, depth: DEPTH, limit: 200) {
  truncated nodes { id label kind } edges { source target type weight } } }"""
SHORTEST = """query($a: ID!, $b: ID!) { shortestPath(from: $a, to: $b) {
  length nodes { id label kind } hops { from to type weight reason } } }"""
RELATED = """query($a: ID!) { related(paper: $a, first: 10) { score
  paper { key label } reasons { kind text weight } path { hops { reason } } } }"""
SEARCH = """query($q: String!) { search(query: $q, first: 10) { score
  node { id ... on Paper { label } ... on Concept { name } } } }"""
SEMANTIC = """query($q: String!) { search(query: $q, mode: SEMANTIC, first: 10) { score
  node { id ... on Paper { label } } } }"""
WORDS = ["graph neural network", "contrastive learning", "transformer", "reinforcement learning",
         "adversarial robustness", "meta-learning", "federated learning", "diffusion"]


def cases(store: Any, services: Any, papers: list[str], i: int) -> list[tuple[str, str, dict[str, Any], Callable[[], Any]]]:
    """(kind, GraphQL query, variables, the store call behind it) for sample i."""
    from graph.related import related

    a, b = papers[i], papers[(i + 1) % len(papers)]
    w = WORDS[i % len(WORDS)]
    return [
        ("neighborhood d1", NEIGHBORHOOD.replace("DEPTH", "1"), {"id": a},
         lambda: store.neighborhood([a], 1, limit=200)),
        ("neighborhood d2", NEIGHBORHOOD.replace("DEPTH", "2"), {"id": a},
         lambda: store.neighborhood([a], 2, limit=200)),
        ("shortest path", SHORTEST, {"a": a, "b": b}, lambda: store.shortest_path(a, b)),
        ("related", RELATED, {"a": a}, lambda: related(store, paper=a, first=10)),
        ("keyword search", SEARCH, {"q": w}, lambda: store.keyword_search(w, None, 10)),
        ("semantic search (embeds the query)", SEMANTIC, {"q": w},
         lambda: store.vector_search(services.embed(w), 10)),
    ]


def build_iclr(data_dir: Path) -> list[str]:
    from neo4j_load import iclr_graph

    data, papers = iclr_graph(None)
    store = NetworkxStore(data_dir / "graph.citegraph")
    store.apply(diff(GraphData(), data))
    store.save()
    return [p.id for p in papers]


async def throughput(url: str, queries: list[tuple[str, dict[str, Any]]], clients: int,
                     seconds: float) -> tuple[int, int, float, list[float], str]:
    stop = time.perf_counter() + seconds
    lat: list[float] = []
    errors = 0
    first_error = ""
    count = 0

    async def client(cid: int) -> None:
        nonlocal errors, count, first_error
        rng = random.Random(cid)
        async with httpx.AsyncClient(base_url=url, timeout=60) as c:
            while time.perf_counter() < stop:
                q, v = queries[rng.randrange(len(queries))]
                t0 = time.perf_counter()
                try:
                    r = await c.post("/graphql", json={"query": q, "variables": v})
                    ok = r.status_code == 200 and not r.json().get("errors")
                    if not ok and not first_error:
                        first_error = f"{r.status_code} {r.text[:150]}"
                except httpx.HTTPError as exc:
                    ok = False
                    first_error = first_error or repr(exc)[:150]
                lat.append(time.perf_counter() - t0)
                count += 1
                errors += not ok

    t0 = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(clients)))
    return count, errors, time.perf_counter() - t0, lat, first_error


async def run(args: argparse.Namespace) -> None:
    from load import start_server  # bench/load.py: loopback server started and stopped by PID

    from api.graphql.context import Context
    from api.graphql.schema import build_schema
    from api.services import Services

    rep = Report(f"Queries: store vs GraphQL vs HTTP, {args.store} store, ICLR 2021"
                 + (" (quick)" if args.quick else ""))
    tmp = Path(tempfile.mkdtemp(prefix="cg-bench-q-"))
    t_all = time.perf_counter()
    arcade = None
    try:
        paper_ids = build_iclr(tmp)
        env: dict[str, str] = {}
        settings = Settings(data_dir=tmp)
        if args.store == "neo4j":
            import neo4j

            from graph.store.neo4j import Neo4jStore
            from tests.support.neo4j import Neo4jServer

            arcade = Neo4jServer.start(tmp / "neo4j", heap="1g", java_opts="")
            driver = neo4j.GraphDatabase.driver(arcade.uri, auth=arcade.auth)
            store: Any = Neo4jStore(driver, arcade.database)
            store.clear()
            store.apply(diff(GraphData(), NetworkxStore(tmp / "graph.citegraph").snapshot()))
            env = {"CITEGRAPH_STORE": "neo4j", "NEO4J_URI": arcade.uri,
                   "NEO4J_USER": arcade.user, "NEO4J_PASSWORD": arcade.password,
                   "NEO4J_DATABASE": arcade.database}
            settings = Settings(data_dir=tmp, store="neo4j", neo4j_uri=arcade.uri,
                                neo4j_user=arcade.user, neo4j_password=arcade.password,
                                neo4j_database=arcade.database)
        else:
            store = NetworkxStore(tmp / "graph.citegraph")
        services = Services(settings, opener=lambda _s: store)
        services.open()
        schema = build_schema(settings)
        services.embed("warm up")
        rng = random.Random(0)
        sample = [paper_ids[rng.randrange(len(paper_ids))] for _ in range(args.samples + 1)]

        async def gql(q: str, v: dict[str, Any]) -> None:
            r = await schema.execute(q, variable_values=v, context_value=Context(services))
            assert not r.errors, r.errors

        server = start_server(tmp, env)
        try:
            res: dict[str, dict[str, list[float]]] = {}
            with httpx.Client(base_url=server.url, timeout=60) as c:
                for i in range(args.samples):
                    for kind, q, v, call in cases(store, services, sample, i):
                        d = res.setdefault(kind, {"store": [], "gql": [], "http": []})
                        t0 = time.perf_counter()
                        call()
                        d["store"].append(time.perf_counter() - t0)
                        t0 = time.perf_counter()
                        await gql(q, v)
                        d["gql"].append(time.perf_counter() - t0)
                        t0 = time.perf_counter()
                        r = c.post("/graphql", json={"query": q, "variables": v})
                        d["http"].append(time.perf_counter() - t0)
                        assert r.status_code == 200 and not r.json().get("errors"), r.text[:300]
            rows = []
            for kind, d in res.items():
                s, g, h = (median(d[k]) * 1e3 for k in ("store", "gql", "http"))
                rows.append([kind, s, percentile(d["store"], 99) * 1e3, g,
                             percentile(d["gql"], 99) * 1e3, h, percentile(d["http"], 99) * 1e3,
                             g / s, h / g])
            rep.add(f"### Latency, ms ({args.samples} random papers per kind; p99 of fewer than "
                    "100 samples is the max)\n\n"
                    + table(["query", "store p50", "store p99", "GraphQL p50", "GraphQL p99",
                             "HTTP p50", "HTTP p99", "GraphQL ÷ store", "HTTP ÷ GraphQL"], rows))
            mix = [(q, v) for i in range(20) for _, q, v, _ in cases(store, services, sample, i % args.samples)]
            trows = []
            for n in (1, 8, 32):
                count, errors, wall, lat, first = await throughput(server.url, mix, n, args.seconds)
                trows.append([n, count, count / wall, median(lat) * 1e3, percentile(lat, 99) * 1e3,
                              errors, first])
                print(f"  {n} clients: {count} requests, {errors} errors", flush=True)
            rep.add(f"### Throughput over HTTP (uvicorn, loopback, {args.seconds:.0f} s per step, "
                    "the query mix above)\n\n"
                    + table(["clients", "requests", "requests/s", "p50 ms", "p99 ms", "errors",
                             "first error"], trows))
        finally:
            server.stop()
    finally:
        if arcade is not None:
            arcade.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    rep.add(f"Run time {time.perf_counter() - t_all:.0f}s.")
    rep.save()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--store", choices=("embedded", "neo4j"), default="embedded")
    ap.add_argument("--samples", type=int, default=None)
    ap.add_argument("--seconds", type=float, default=None)
    args = ap.parse_args()
    args.samples = args.samples or (10 if args.quick else 30)
    args.seconds = args.seconds or (2.0 if args.quick else 5.0)
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
