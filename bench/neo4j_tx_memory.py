"""Does one transaction of ``max_tx_rows`` rows fit Neo4j's transaction memory?

Starts a real Neo4j 5.26 (scripts/neo4j.sh: 512 MB heap, dbms.memory.transaction.total.max
256m, as the launcher sets by default) and applies synthetic changes of N papers, each
with a 384-d embedding (2N + 1 rows: the heaviest rows the store writes), in ONE
transaction (max_tx_rows above the row count). Prints rows, seconds and the outcome.

    python bench/neo4j_tx_memory.py 5000 10000 25000
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import neo4j
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graph.errors import StoreError
from graph.model import GraphChange, Paper
from graph.store.neo4j import Neo4jStore
from tests.support.neo4j import Neo4jServer


def change(n: int, dims: int = 384) -> GraphChange:
    rng = np.random.default_rng(n)
    m = rng.standard_normal((n, dims)).astype(np.float32)
    papers = tuple(
        Paper(f"tx{i:06d}", f"Paper {i}", f"Abstract number {i} " * 40, f"h{i}") for i in range(n)
    )
    return GraphChange(upsert_nodes=papers, embedding_ids=tuple(p.id for p in papers),
                       embeddings=m, embedding_model="bench")


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [5000, 10000, 25000]
    with tempfile.TemporaryDirectory() as tmp:
        server = Neo4jServer.start(Path(tmp), java_opts="")
        try:
            driver = neo4j.GraphDatabase.driver(server.uri, auth=server.auth)
            store = Neo4jStore(driver, "neo4j", max_tx_rows=10**9)
            print(f"Neo4j {server.version}, heap 512m, transaction memory 256m")
            print("| papers | rows in one transaction | seconds | outcome |")
            print("|---|---|---|---|")
            for n in sizes:
                store.clear()
                c = change(n)
                t0 = time.perf_counter()
                try:
                    store.apply(c)
                    outcome = "committed"
                except StoreError as exc:
                    outcome = f"failed: {str(exc)[:160]}"
                dt = time.perf_counter() - t0
                print(f"| {n:,} | {2 * n + 1:,} | {dt:.1f} | {outcome} |", flush=True)
            store.clear()
            driver.close()
        finally:
            server.stop()


if __name__ == "__main__":
    main()
