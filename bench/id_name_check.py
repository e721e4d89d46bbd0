"""The cost of asking whether a free-text paper id is also another node's name.

    python bench/id_name_check.py --data-dir DIR [--ids TSV] [--rounds 6] [--n 200]

``api.graphql.schema.find`` takes an id argument that names a paper by its free-text id
(an OpenReview id, "LLM") through the service once more, to say when the id is also a
concept's name (``extensions.resolved``). This runs ``neighborhood(id:, depth: 1, limit:
20)`` over the graph in DIR, in one process through the ASGI app, with the check and
without it (ids matched as if generated), in alternating blocks, and prints the CPU and
wall time a request of each.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fastapi.testclient import TestClient

import api.graphql.schema as schema
from api.app import create_app
from graph.model import NodeKind
from graph.settings import Settings
from graph.store import open_store

QUERY = "query($i: ID!) { neighborhood(id: $i, depth: 1, limit: 20) { nodes { id } } }"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--n", type=int, default=200, help="papers (requests) per block")
    args = ap.parse_args()
    settings = Settings(data_dir=args.data_dir)
    store = open_store(settings)
    page, _ = store.list_nodes(NodeKind.PAPER, limit=args.n)
    ids = [p.id for p in page if not schema._GENERATED_ID.fullmatch(p.id)]
    store.close()
    if not ids:
        print("no free-text paper ids in this graph: nothing to measure")
        return 0
    with_check, without = schema._GENERATED_ID, re.compile(r".*", re.S)
    cpu: dict[str, list[float]] = {"check": [], "no check": []}
    with TestClient(create_app(settings)) as client:
        deadline = time.monotonic() + 300
        while client.get("/readyz").status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.5)  # the model loads in the background: not inside a round
        # warm, and let the app's background warm-up finish (it primes the write pipeline
        # and collects the heap once: one request in the first block stalled ~10 s)
        for pid in ids * 2:
            client.post("/graphql", json={"query": QUERY, "variables": {"i": pid}})
        for rnd in range(args.rounds):
            order = [("check", with_check), ("no check", without)]
            for name, pattern in order if rnd % 2 == 0 else order[::-1]:
                schema._GENERATED_ID = pattern
                c0 = time.process_time()
                for pid in ids:
                    r = client.post("/graphql", json={"query": QUERY, "variables": {"i": pid}})
                    assert r.status_code == 200 and "errors" not in r.json(), r.text[:300]
                cpu[name].append((time.process_time() - c0) / len(ids) * 1e3)
        schema._GENERATED_ID = with_check
    for name, values in cpu.items():
        print(f"{name}: CPU ms a request, median {statistics.median(values):.3f}; rounds "
              + " ".join(f"{v:.3f}" for v in values))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
