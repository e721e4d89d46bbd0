"""How soon is a Neo4j-backed worker ready, how much memory does it hold, and what does
its first add cost? This checkout against another (``--baseline``), side by side.

    python -m bench.neo4j_start [--quick | --synthetic N] [--baseline /other/checkout]

Loads the graph ``citegraph build`` made (ICLR 2021; ``--quick``: the seeds;
``--synthetic N``: bench/synthetic.py's N papers written straight into the store, no
model, and no add measured: its vectors are not the model's) into a real
Neo4j 5.26 (tests/support/neo4j.py, stopped by its pid at the end), then for each
checkout starts ``citegraph serve`` (one worker, ``CITEGRAPH_STORE=neo4j``) and reads:
the seconds from the process start to /readyz 200, the worker's RSS then, its peak RSS
over the next ``--settle`` seconds (what the warm-up's background part reads), and the
seconds of one ``addPapers`` of one paper (then removed, so each checkout sees the same
graph). Not registered in ``python -m bench``: a measurement for issue 41's item 2.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import httpx

from bench.common import ROOT, built_graph, copy_graph

KEY = "bench-neo4j-start"
ADD = "mutation($p: [PaperInput!]!) { addPapers(input: $p) { added } }"
ABSTRACT = ("We study retrieval-augmented generation with large language models and show "
            "that diffusion-based rerankers improve answer accuracy on open-domain question "
            "answering benchmarks while reducing hallucination.")


def _one(code: Path, data: Path, env: dict[str, str], settle: float, add: bool
         ) -> dict[str, float]:
    from bench.load import start_server, worker_rss

    t0 = time.monotonic()
    server = start_server(data, env, code=code, wait_model=False, ready_timeout=600)
    ready_s = time.monotonic() - t0
    try:
        at_ready = max(worker_rss(server.pid)) / 2**20
        peak = at_ready
        end = time.monotonic() + settle
        while time.monotonic() < end:
            peak = max(peak, max(worker_rss(server.pid)) / 2**20)
            time.sleep(0.5)
        with httpx.Client(base_url=server.url, timeout=600) as c:
            if not add:
                return {"ready_s": ready_s, "rss_ready": at_ready, "rss_peak": peak}
            t1 = time.monotonic()
            r = c.post("/graphql", headers={"X-API-Key": KEY}, json={
                "query": ADD, "variables": {"p": [{"id": "bench-start-1", "abstract": ABSTRACT}]}})
            add_s = time.monotonic() - t1
            if r.status_code != 200 or r.json().get("errors"):
                raise RuntimeError(f"addPapers: {r.status_code} {r.text[:300]}")
            after_add = max(worker_rss(server.pid)) / 2**20
            r = c.post("/graphql", headers={"X-API-Key": KEY}, json={
                "query": 'mutation { removePaper(id: "bench-start-1") { removed } }'})
            if r.status_code != 200 or r.json().get("errors"):
                raise RuntimeError(f"removePaper: {r.status_code} {r.text[:300]}")
    finally:
        server.stop()
    return {"ready_s": ready_s, "rss_ready": at_ready, "rss_peak": peak, "add_s": add_s,
            "rss_add": after_add}


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.neo4j_start", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="the seeds instead of ICLR 2021")
    ap.add_argument("--synthetic", type=int, help="N synthetic papers instead")
    ap.add_argument("--baseline", type=Path, help="another checkout to run the same way first")
    ap.add_argument("--settle", type=float, default=60.0,
                    help="seconds after ready over which the peak RSS is read (60)")
    args = ap.parse_args()
    import neo4j

    from graph.build import diff
    from graph.model import GraphData
    from graph.settings import Settings
    from graph.store import open_store
    from graph.store.neo4j import Neo4jStore
    from tests.support.neo4j import Neo4jServer

    with tempfile.TemporaryDirectory(prefix="citegraph-bench-neo4j-start-") as tmp:
        if args.synthetic:
            from bench.synthetic import generate, graph_parts

            m, terms, topic = generate(args.synthetic)
            change = graph_parts(m, terms, topic, args.synthetic)(range(args.synthetic))
            data = Path(tmp) / "data"
            data.mkdir()
        else:
            source = built_graph("seeds" if args.quick else "iclr2021")
            data = copy_graph(source, Path(tmp) / "data")
            embedded = open_store(Settings(data_dir=data))
            change = diff(GraphData(), embedded.snapshot())
            embedded.close()
        with Neo4jServer.start(Path(tmp) / "neo4j", heap="1g", java_opts="") as server:
            driver = neo4j.GraphDatabase.driver(
                server.uri, auth=server.auth,
                notifications_min_severity=neo4j.NotificationMinimumSeverity.OFF)
            try:
                store = Neo4jStore(driver, server.database)
                store.clear()
                store.apply(change)
            finally:
                driver.close()
            env = {"CITEGRAPH_STORE": "neo4j", "NEO4J_URI": server.uri,
                   "NEO4J_USER": server.user, "NEO4J_PASSWORD": server.password,
                   "NEO4J_DATABASE": server.database, "CITEGRAPH_WORKERS": "1",
                   "CITEGRAPH_API_KEY": KEY, "CITEGRAPH_REQUEST_TIMEOUT_S": "600"}
            codes = ([("baseline", args.baseline)] if args.baseline else []) + [("this", ROOT)]
            rows = [(name, _one(code, data, env, args.settle, not args.synthetic))
                    for name, code in codes]
    print(f"\n{len(change.embedding_ids):,} papers")
    for name, r in rows:
        print(name + ": " + ", ".join(f"{k} {v:.1f}" for k, v in r.items()))


if __name__ == "__main__":
    main()
