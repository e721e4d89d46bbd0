"""What clients in a burst get when ``citegraph serve`` is stopped under them.

    python bench/stop_burst.py DATA_DIR --workers 2 --signal TERM --runs 3

Copies DATA_DIR (a data folder with a graph) to a scratch folder, serves it on a free
127.0.0.1 port, lets every worker load its model, then runs 10 clients that loop on
heavy queries (depth-3 neighbourhoods, semantic search and related papers for long
texts, a new connection each), stops the server with the signal after 3 s, and prints
the outcomes the clients saw: ``ok``, ``ConnectError`` (refused: never sent) and
``ReadError`` (accepted, then reset: the client cannot tell whether it ran).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import signal
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from bench.load import Server, start_server

QUERIES = (
    "query($id: ID!) { neighborhood(id: $id, depth: 3, limit: 500) "
    "{ nodes { id label } edges { source target reason } } }",
    "query($q: String!) { search(query: $q, mode: SEMANTIC, first: 100) { score node { id } } }",
    "query($t: String!) { related(text: $t, first: 50) { paper { key } reasons { text } } }",
)


def burst(
    server: Server, sig: int, variables: Callable[[int], dict[str, str]]
) -> tuple[dict[str, int], int, float]:
    """Ten looping clients, the signal after 3 s: (outcomes, exit code, stop time)."""
    codes: dict[str, int] = {}
    lock = threading.Lock()
    stop = threading.Event()

    def client() -> None:
        while not stop.is_set():
            i = random.randrange(len(QUERIES))
            try:
                r = httpx.post(
                    f"{server.url}/graphql", timeout=40, headers={"Connection": "close"},
                    json={"query": QUERIES[i], "variables": variables(i)},
                )
                code = "ok" if r.status_code == 200 and "errors" not in r.json() \
                    else str(r.status_code)
            except httpx.HTTPError as exc:
                code = type(exc).__name__
            with lock:
                codes[code] = codes.get(code, 0) + 1
            if code == "ConnectError":
                return

    threads = [threading.Thread(target=client) for _ in range(10)]
    for t in threads:
        t.start()
    time.sleep(3)
    t0 = time.monotonic()
    server.process.send_signal(sig)
    rc = server.process.wait(90)
    took = time.monotonic() - t0
    stop.set()
    for t in threads:
        t.join(60)
    return codes, rc, took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--signal", choices=["TERM", "INT"], default="TERM")
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    sig = {"TERM": signal.SIGTERM, "INT": signal.SIGINT}[args.signal]
    db = sqlite3.connect(f"file:{args.data / 'graph.db'}?mode=ro", uri=True)
    pids = [r[0] for r in db.execute("SELECT id FROM nodes WHERE kind = 'Paper'")]
    words = " ".join(
        json.loads(r[0]).get("abstract", "")
        for r in db.execute("SELECT props FROM nodes WHERE kind = 'Paper' LIMIT 50")
    ).split()
    db.close()

    def variables(i: int) -> dict[str, str]:
        if i == 0:
            return {"id": random.choice(pids)}
        return {"q" if i == 1 else "t": " ".join(random.sample(words, 200 if i == 1 else 300))}

    for run in range(args.runs):
        scratch = Path(tempfile.mkdtemp(prefix="citegraph-stop-")) / "data"
        shutil.copytree(args.data, scratch)
        server = start_server(scratch, {"CITEGRAPH_WORKERS": str(args.workers)})
        time.sleep(15)  # every worker's warm-up done, not only the one that answered
        codes, rc, took = burst(server, sig, variables)
        print(f"[{run}] workers={args.workers} SIG{args.signal} rc={rc} stop={took:.1f}s "
              f"outcomes={dict(sorted(codes.items()))}", flush=True)
        shutil.rmtree(scratch.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
