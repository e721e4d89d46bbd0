"""Time the two requests of issue 15 that froze the API: a fragment fan-out and nested ``similar``.

    python bench/graphql_limits.py 14 16 18 40

Builds the seed graph once (into ``--data``, default /tmp/citegraph-bench-limits), serves it
in process (``TestClient``, 10 s request limit) and prints, for each request, the status,
the time, the RSS it added and the error code. Fan-out sizes are the arguments; leave out
40 on code without linear-time limits (it never answers there).
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

from fastapi.testclient import TestClient

from api.app import create_app
from tests.support.seeds import build_seed_graph, seed_settings


def rss_mb() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096 // 2**20


def hops(n: int) -> str:
    return ("query($p: ID!) { paper(id: $p) { " + "similar(first: 100) { paper { " * n + "key"
            + " } }" * n + " } }")


def fan_out(n: int) -> str:
    frags = " ".join(f"fragment F{i} on Paper {{ key ...F{i + 1} ...F{i + 1} }}" for i in range(n))
    head = "query($p: ID!) { paper(id: $p) { ...F0 } }"
    return f"{head} {frags} fragment F{n} on Paper {{ key }}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fan_out", nargs="*", type=int, default=[14, 16, 18])
    ap.add_argument("--data", type=Path, default=Path("/tmp/citegraph-bench-limits"))
    args = ap.parse_args()
    logging.disable(logging.CRITICAL)
    if not (args.data / "graph.citegraph").exists():
        args.data.mkdir(parents=True, exist_ok=True)
        build_seed_graph(args.data)
    with TestClient(create_app(seed_settings(args.data, request_timeout_s=10.0))) as c:
        query = "{ papers(first: 1) { edges { node { key } } } }"
        first = c.post("/graphql", json={"query": query})
        pid = first.json()["data"]["papers"]["edges"][0]["node"]["key"]
        c.post("/graphql", json={"query": '{ search(query: "graph", mode: SEMANTIC) { score } }'})
        cases = [(f"similar x{n} hops", hops(n)) for n in (2, 3, 5)]
        cases += [(f"fan-out n={n}", fan_out(n)) for n in args.fan_out]
        for name, query in cases:
            before, t0 = rss_mb(), time.perf_counter()
            r = c.post("/graphql", json={"query": query, "variables": {"p": pid}})
            took = time.perf_counter() - t0
            errors = r.json().get("errors") or [{}]
            code = (errors[0].get("extensions") or {}).get("code", "-")
            print(f"{name:18} {len(query):5} B  HTTP {r.status_code}  {took:7.3f} s  "
                  f"+{rss_mb() - before} MB  {code}")


if __name__ == "__main__":
    main()
