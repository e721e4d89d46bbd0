# ruff: noqa: E501 - table lines
"""The embedded database at 3k / 30k / 100k synthetic papers: write, open, read, add, follow.

    python bench/db_scale.py [--sizes 3000,30000,100000] [--limit 900]

Each size runs in its own subprocess (so peak RSS belongs to it), on the synthetic corpus
of bench/scale.py (topic-clustered 384-d vectors, Zipf terms). The graph: papers,
concepts, MENTIONS, and SIMILAR_TO to 10 papers of the same topic (their real cosines);
SHARES_TERM and RELATED_TO are left out (their cost is bench/scale.py's "terms" phase),
so the figures are the store's own, not the linking's. Steps, timed one by one:

* **write**: one ``EmbeddedStore.apply`` of the whole graph into a new ``graph.db``;
* **open + stats**: a fresh process-like store answers ``stats`` from SQL counts;
* **one-shot reads** (``reads="sql"``, what CLI query commands use): p50 of 30 random
  neighbourhoods (depth 1 and 2), shortest paths, k paths (k 3, 3 hops), name lookups
  and vector searches (the first vector search reads the embedding matrix; it is
  reported apart);
* **mirror**: the first read of a server-style store loads the whole graph (time, RSS);
  then the same queries' p50;
* **add 10 papers**: a change of 10 papers with their MENTIONS and SIMILAR_TO edges and
  embeddings, applied by a second store on the same file (the store's share of
  ``citegraph add``; extraction, embedding and linking are not in it), after that store
  has loaded the graph it validates the change against (timed apart: "writer load");
* **seen by the server**: how long the mirror's next read takes to show those papers.

A last table gives each size's query p50s over the first size's (issue 11's goal: keyword,
vector, neighbourhood and path p50 at 30k and 100k within 3x of 3k; keyword search at
scale is bench/keyword_scale.py's, on real text).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _p50(fn: Any, samples: list[Any], budget_s: float = 10.0) -> tuple[float, int]:
    times: list[float] = []
    for s in samples:
        if sum(times) > budget_s:
            break
        t = time.perf_counter()
        fn(s)
        times.append(time.perf_counter() - t)
    return float(np.median(times)) * 1000, len(times)


def synthetic_parts(m: Any, terms: Any, topic: Any, n: int) -> Any:
    """``part(rows)``: the GraphChange of those papers of bench/scale.py's corpus (SIMILAR_TO
    to 10 papers of the same topic among the first ``n``, MENTIONS of their terms), with
    their vectors."""
    from graph.model import Concept, Edge, GraphChange, Paper, RelType

    ids = [f"p{i:06d}" for i in range(len(topic))]
    rng = np.random.default_rng(5)
    by_topic: dict[int, list[int]] = {}
    for i, t in enumerate(topic.tolist()):
        by_topic.setdefault(int(t), []).append(i)

    def part(rows: range) -> GraphChange:
        papers = [Paper(ids[i], f"Paper {i}", f"synthetic abstract {i}", f"h{i}") for i in rows]
        edges: list[Edge] = []
        concepts: set[str] = set()
        for i in rows:
            pool = [j for j in by_topic[int(topic[i])] if j != i and j < n]
            for rank, j in enumerate(rng.choice(pool, size=min(10, len(pool)), replace=False).tolist(), 1):
                s = round(float(m[i] @ m[j]), 6)
                edges.append(Edge(ids[i], ids[j], RelType.SIMILAR_TO, s, {"score": s, "rank": rank}))
            for c in terms[i]:
                concepts.add(c)
                edges.append(Edge(ids[i], c, RelType.MENTIONS, 1.0, {"count": 1, "evidence": ""}))
        nodes: list[Paper | Concept] = [*papers]
        nodes += [Concept(c, c.split(":", 1)[1].replace("-", " ")) for c in sorted(concepts)]
        sel = list(rows)
        return GraphChange(upsert_nodes=tuple(nodes), upsert_edges=tuple(edges),
                           embedding_ids=tuple(ids[i] for i in sel), embeddings=m[sel],
                           embedding_model="synthetic")

    return part


def child(n: int) -> dict[str, Any]:
    from scale import generate
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")  # as a server runs; 2 threads wait on a busy machine

    from graph.store.embedded import EmbeddedStore

    m, terms, topic = generate(n + 10)
    part = synthetic_parts(m, terms, topic, n)
    ids = [f"p{i:06d}" for i in range(n + 10)]

    out: dict[str, Any] = {"n": n}
    base = part(range(n))
    out["edges"] = len(base.upsert_edges)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "graph.db"
        t = time.perf_counter()
        writer = EmbeddedStore(db)
        writer.apply(base)
        out["write_s"] = time.perf_counter() - t
        writer.close()
        del writer, base
        out["file_mib"] = db.stat().st_size / 2**20
        out["rss_after_write"] = _peak_mib()

        t = time.perf_counter()
        fresh = EmbeddedStore(db)
        fresh.stats()
        out["open_stats_ms"] = (time.perf_counter() - t) * 1000
        fresh.close()

        qrng = random.Random(0)
        picks = [ids[qrng.randrange(n)] for _ in range(30)]
        pairs = list(zip(picks, picks[1:] + picks[:1], strict=True))
        names = [f"paper {qrng.randrange(n)}" for _ in range(30)]
        vecs = [m[qrng.randrange(n)].tolist() for _ in range(30)]

        def queries(store: EmbeddedStore) -> dict[str, Any]:
            res: dict[str, Any] = {}
            res["neighborhood d1"] = _p50(lambda q: store.neighborhood([q], depth=1), picks)
            res["neighborhood d2"] = _p50(lambda q: store.neighborhood([q], depth=2), picks)
            res["shortest path"] = _p50(lambda ab: store.shortest_path(*ab), pairs)
            res["k paths"] = _p50(lambda ab: store.k_paths(*ab, k=3, max_hops=3), pairs)
            res["find by name"] = _p50(store.find_node, names)
            t0 = time.perf_counter()
            store.vector_search(vecs[0], limit=10)
            res["first vector search"] = ((time.perf_counter() - t0) * 1000, 1)
            res["vector search"] = _p50(lambda v: store.vector_search(v, limit=10), vecs[1:])
            return res

        sql = EmbeddedStore(db, reads="sql")
        out["sql"] = queries(sql)
        out["sql_loaded_graph"] = sql._mirror is not None
        sql.close()
        out["rss_after_sql"] = _peak_mib()

        server = EmbeddedStore(db)
        t = time.perf_counter()
        server.refresh()  # what a server's first read does: load the whole graph
        out["mirror_load_s"] = time.perf_counter() - t
        out["mirror"] = queries(server)
        out["rss_after_mirror"] = _peak_mib()

        other = EmbeddedStore(db)  # another process's writer (its own connection)
        add = part(range(n, n + 10))
        t = time.perf_counter()
        other.refresh()  # a write validates against the whole graph: it loads it first
        out["writer_load_s"] = time.perf_counter() - t
        t = time.perf_counter()
        other.apply(add)
        out["add10_s"] = time.perf_counter() - t
        out["add10_rows"] = other.history(1)[0]["summary"]
        t = time.perf_counter()
        while True:  # the server's reads check for other writers at most every 0.2 s
            if server.get_nodes([ids[n + 9]]) and server.neighborhood([ids[n + 9]]).nodes:
                break
            time.sleep(0.01)
        out["seen_s"] = time.perf_counter() - t
        other.close()
        server.close()
    out["peak_rss"] = _peak_mib()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="3000,30000,100000")
    ap.add_argument("--limit", type=float, default=900, help="seconds per size before it is killed")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child)))
        return
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    results = []
    for n in (int(x) for x in args.sizes.split(",")):
        try:
            p = subprocess.run([sys.executable, __file__, "--child", str(n)], capture_output=True,
                               text=True, timeout=args.limit, check=False)
        except subprocess.TimeoutExpired:
            print(f"N={n}: over {args.limit:.0f} s, killed")
            continue
        if p.returncode != 0:
            print(f"N={n}: failed: {p.stderr[-800:]}")
            continue
        r = json.loads(p.stdout.strip().splitlines()[-1])
        results.append(r)
        print(f"N={n}: {json.dumps(r)}", flush=True)
    print()
    print("| N | edges | write s | file MiB | open + stats ms | mirror load s | peak RSS MiB | writer load s | add 10: s (rows) | seen by the server s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        rows = r["add10_rows"]
        print(f"| {r['n']} | {r['edges']} | {r['write_s']:.1f} | {r['file_mib']:.0f} | {r['open_stats_ms']:.0f} | "
              f"{r['mirror_load_s']:.1f} | {r['peak_rss']:.0f} | {r['writer_load_s']:.1f} | {r['add10_s']:.3f} ({rows['nodes_upserted']} nodes, "
              f"{rows['edges_upserted']} edges) | {r['seen_s']:.3f} |")
    print()
    kinds = ["neighborhood d1", "neighborhood d2", "shortest path", "k paths", "find by name", "first vector search", "vector search"]
    print("| N | reads | " + " | ".join(f"{k} ms" for k in kinds) + " |")
    print("|---|---|" + "---|" * len(kinds))
    for r in results:
        for mode in ("sql", "mirror"):
            print(f"| {r['n']} | {mode} | " + " | ".join(f"{r[mode][k][0]:.1f}" for k in kinds) + " |")
    if results:  # issue 11's sub-linear goal: each size's p50 over the smallest size's
        base = results[0]
        print("\n| N | reads | " + " | ".join(f"{k} / {base['n']}" for k in kinds) + " |")
        print("|---|---|" + "---|" * len(kinds))
        for r in results[1:]:
            for mode in ("sql", "mirror"):
                print(f"| {r['n']} | {mode} | " + " | ".join(
                    f"{r[mode][k][0] / max(base[mode][k][0], 1e-3):.1f}x" for k in kinds) + " |")
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
