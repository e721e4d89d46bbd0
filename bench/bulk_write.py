# ruff: noqa: E501 - table lines
"""A whole graph written into a new embedded database, checkouts side by side.

    python bench/bulk_write.py [--sizes 20000,100000] [--code DIR ...] [--rounds 2]

The store's share of ``citegraph build`` at scale: one ``EmbeddedStore.apply`` of a whole
synthetic graph (bench/scale.py's corpus: papers, concepts, MENTIONS and 10 same-topic
SIMILAR_TO per paper, 384-d embeddings) into an empty ``graph.db``, in a fresh subprocess
per (size, checkout, round), the checkouts interleaved. Reported per run: wall seconds of
the apply and of its parts (``prepare`` = checking and serialising the rows,
``write_rows`` = the SQL inserts, ``fts.write`` = the keyword index), peak RSS of the
process (the generated change included) and its RSS before the apply.

``--code DIR`` (repeatable): a checkout of citegraph to time; default this one. A checkout
made with ``git worktree add DIR <commit>`` or ``git archive <commit> | tar -x -C DIR``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(n: int, code: str) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    import numpy as np
    from scale import generate

    sys.path.insert(0, code)  # after scale, which puts this checkout first
    import graph.store.embedded as embedded
    import graph.store.fts as fts
    from graph.model import Concept, Edge, GraphChange, Paper, RelType

    assert Path(embedded.__file__).resolve().is_relative_to(Path(code).resolve()), embedded.__file__
    m, terms, topic = generate(n)
    ids = [f"p{i:06d}" for i in range(n)]
    rng = np.random.default_rng(5)
    by_topic: dict[int, list[int]] = {}
    for i, t in enumerate(topic.tolist()):
        by_topic.setdefault(int(t), []).append(i)
    papers = [Paper(ids[i], f"Paper {i}", f"synthetic abstract {i} about its terms", f"h{i}")
              for i in range(n)]
    edges: list[Edge] = []
    concepts: set[str] = set()
    for i in range(n):
        pool = [j for j in by_topic[int(topic[i])] if j != i]
        picks = rng.choice(pool, size=min(10, len(pool)), replace=False).tolist()
        for rank, j in enumerate(picks, 1):
            s = round(float(m[i] @ m[j]), 6)
            edges.append(Edge(ids[i], ids[j], RelType.SIMILAR_TO, s, {"score": s, "rank": rank}))
        for c in terms[i]:
            concepts.add(c)
            edges.append(Edge(ids[i], c, RelType.MENTIONS, 1.0, {"count": 1, "evidence": ""}))
    nodes = [*papers, *(Concept(c, c.split(":", 1)[1].replace("-", " ")) for c in sorted(concepts))]
    change = GraphChange(upsert_nodes=tuple(nodes), upsert_edges=tuple(edges),
                         embedding_ids=tuple(ids), embeddings=m, embedding_model="synthetic")
    del edges, nodes, papers
    parts: dict[str, float] = {}

    def timed(owner: Any, name: str, key: str) -> None:
        inner = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                parts[key] = parts.get(key, 0.0) + time.perf_counter() - t

        setattr(owner, name, wrapper)

    timed(embedded, "prepare", "prepare")
    timed(fts, "write", "fts.write")
    timed(embedded.EmbeddedStore, "_write_rows", "write_rows")
    out: dict[str, Any] = {"n": n, "edges": len(change.upsert_edges),
                           "nodes": len(change.upsert_nodes), "rss_before": _rss_mib()}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "graph.db"
        store = embedded.EmbeddedStore(path, reads="sql")  # a CLI build's store
        t = time.perf_counter()
        cpu = time.process_time()
        store.apply(change)
        out["apply"] = time.perf_counter() - t
        out["apply_cpu"] = time.process_time() - cpu
        store.close()
        out["file_mib"] = sum(p.stat().st_size for p in Path(tmp).iterdir()) / 2**20
    out.update(parts)
    out["peak_rss"] = _rss_mib()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="20000,100000")
    ap.add_argument("--code", action="append", default=[])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(int(args.child[0]), args.child[1])))
        return
    codes = args.code or [str(ROOT)]
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    results: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for n in (int(s) for s in args.sizes.split(",")):
        for r in range(args.rounds):
            for code in codes:
                proc = subprocess.run(
                    [sys.executable, __file__, "--child", str(n), code],
                    capture_output=True, text=True, check=False,
                )
                if proc.returncode != 0:
                    print(proc.stderr[-2000:], file=sys.stderr)
                    raise SystemExit(f"child failed: n={n} code={code}")
                row = json.loads(proc.stdout.strip().splitlines()[-1])
                results.setdefault((n, code), []).append(row)
                print(f"  n={n} round {r + 1} {code}: apply {row['apply']:.1f} s", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}\n")
    print("| N | checkout | edges | apply s (median) | apply CPU s | prepare s | write_rows s | fts.write s | peak RSS MiB | RSS before MiB | file MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (n, code), rows in results.items():
        def med(key: str, rows: list[dict[str, Any]] = rows) -> float:
            return statistics.median(r.get(key, float("nan")) for r in rows)
        runs = " ".join(f"{r['apply']:.1f}" for r in rows)
        print(f"| {n:,} | {Path(code).name} | {rows[0]['edges']:,} | {med('apply'):.1f} ({runs}) | {med('apply_cpu'):.1f} | "
              f"{med('prepare'):.1f} | {med('write_rows'):.1f} | {med('fts.write'):.1f} | {med('peak_rss'):.0f} | "
              f"{med('rss_before'):.0f} | {med('file_mib'):.0f} |")


if __name__ == "__main__":
    main()
