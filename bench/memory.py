"""How much memory a warm server holds: `citegraph serve`'s resident set, step by step.

    python -m bench memory [--clients 8] [--seconds 20] [--quick]

Serves a copy of a graph built by ``citegraph build`` (ICLR 2021; ``--quick``: the seeds)
with one worker, and reads the server's RSS from /proc: once it is ready and its warm-up
is done (the graph, the model, the indexes, the add path's state), after a round of
bench/load.py's query mix, and after ``addPapers`` of 10 new papers. No goal is set; the
figure is what a user sizing a machine needs.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import httpx

from bench.common import Result, built_graph, copy_graph

KEY = "bench-memory-key"
ADD = "mutation($p: [PaperInput!]!) { addPapers(input: $p) { added } }"


def run(argv: list[str]) -> Result:
    ap = argparse.ArgumentParser(prog="python -m bench memory", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=8, help="clients of the load round (8)")
    ap.add_argument("--seconds", type=float, default=20.0, help="length of the load round (20)")
    ap.add_argument("--quick", action="store_true", help="the seeds, 4 clients for 5 s")
    args = ap.parse_args(argv)
    if args.quick:
        args.clients, args.seconds = 4, 5.0
    corpus = "seeds" if args.quick else "iclr2021"
    from bench.load import query_mix, run_round, start_server, worker_rss
    from graph.settings import Settings
    from graph.store import open_store

    source = built_graph(corpus)
    result = Result("memory", quick=args.quick,
                    corpus="seeds (76 papers)" if args.quick else "ICLR 2021 (2,966 papers)")
    with tempfile.TemporaryDirectory(prefix="citegraph-bench-memory-") as tmp:
        data = copy_graph(source, Path(tmp) / "data")
        store = open_store(Settings(data_dir=data), one_shot=True)
        stats = store.stats()
        store.close()
        server = start_server(data, {"CITEGRAPH_API_KEY": KEY, "CITEGRAPH_WORKERS": "1"})
        try:
            warm = max(worker_rss(server.pid)) / 2**20
            with httpx.Client(base_url=server.url, timeout=600) as c:
                mix = query_mix(c)
                d = run_round(server, mix, args.clients, args.seconds).as_dict()
                loaded = max(worker_rss(server.pid)) / 2**20
                abstracts = [n["node"]["abstract"] for n in c.post("/graphql", json={
                    "query": "{ papers(first: 10) { edges { node { abstract } } } }"}
                ).json()["data"]["papers"]["edges"]]
                papers = [{"id": f"bench-mem-{i}", "abstract": f"{a} We also release tool {i}."}
                          for i, a in enumerate(abstracts)]
                r = c.post("/graphql", json={"query": ADD, "variables": {"p": papers}},
                           headers={"X-API-Key": KEY})
                if r.status_code != 200 or r.json().get("errors"):
                    raise RuntimeError(f"addPapers: {r.status_code} {r.text[:300]}")
                added = max(worker_rss(server.pid)) / 2**20
        finally:
            server.stop()
    n_papers = stats.nodes.get("Paper", 0)
    result.figure(f"server RSS after its warm-up ({n_papers:,} papers)", round(warm), "MiB")
    result.figure(f"after {args.clients} clients x {args.seconds:g} s of the query mix "
                  f"({d['requests']} requests, {d['errors']} errors)", round(loaded), "MiB")
    result.figure("after addPapers of 10", round(added), "MiB")
    return result
