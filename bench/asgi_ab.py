"""CPU per request of bench/load.py's mix through the whole ASGI app, two checkouts at once.

    python bench/asgi_ab.py --before OLD_CHECKOUT --data-dir DIR [--rounds 7] [--per-round 64]

bench/cpu_ab.py times ``schema.execute``: it leaves out the HTTP framework (routing, the
request context, middleware, JSON) and starts a fresh worker thread per batch. This one
sends each request through the app ``api.app.create_app`` builds, as uvicorn would hand it
over (an ASGI call, no socket), on one event loop (uvloop) that stays up, with 32
requests in flight at once, so the frameworks, the thread hops and their contention are
all counted. Both sides run at once, each in its own process holding the same graph and
model, and alternate kind by kind (``--per-round`` requests of one kind to one side, then
the other; the order flips every round), reading each side's CPU time (all its threads).
It prints the median over the rounds per kind and the mix mean (each kind once).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
KINDS = ["neighborhood", "neighborhood1", "paper", "path", "paths", "related", "related_text",
         "search", "semantic", "stats"]
CONCURRENCY = 32


def _scope(body: bytes) -> dict[str, Any]:
    return {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/graphql", "raw_path": b"/graphql", "query_string": b"",
        "root_path": "", "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80),
        "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode())],
    }


async def _post(app: Any, body: bytes) -> bytes:
    """One request through the ASGI app; the response body (status 200 checked)."""
    sent: list[dict[str, Any]] = []
    given = False

    async def receive() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # no disconnect while the request runs
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(_scope(body), receive, send)
    if sent[0].get("status") != 200:
        raise RuntimeError(f"HTTP {sent[0].get('status')}: {sent[1:]}")
    return b"".join(m.get("body", b"") for m in sent[1:])


def worker(data_dir: Path, code: Path) -> None:
    """One side (the checkout ``code``): read 'KIND N' lines, answer {"kind", "cpu_ms"}."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import load

    sys.path[:] = [str(code)] + [p for p in sys.path if p not in (str(ROOT), str(code))]
    import uvloop

    import graph.store.memory
    from api.app import create_app
    from api.services import limit_blas_threads
    from graph.settings import Settings

    limit_blas_threads()
    app = create_app(Settings(data_dir=data_dir))  # type: ignore[call-arg]
    services = app.state.services
    services.open()
    services.warm_up()  # as the server's start-up does (the heap frozen at its end)

    async def ex(query: str, variables: dict[str, Any]) -> Any:
        body = json.dumps({"query": query, "variables": variables}).encode()
        reply = json.loads(await _post(app, body))
        if reply.get("errors"):
            raise RuntimeError(f"{query}: {reply['errors']}")
        return reply

    async def main() -> None:
        loop = asyncio.get_running_loop()

        class Client:  # the one call query_mix makes, answered in process (in a thread)
            def post(self, _url: str, json: dict[str, Any]) -> Any:
                reply = asyncio.run_coroutine_threadsafe(
                    ex(json["query"], json.get("variables") or {}), loop
                ).result()

                class Reply:
                    def json(self) -> dict[str, Any]:
                        return dict(reply)

                return Reply()

        mix = await loop.run_in_executor(None, load.query_mix, Client())  # type: ignore[arg-type]
        by_kind: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
        for m in mix:
            by_kind.setdefault(m[0], []).append(m)
        at = dict.fromkeys(by_kind, 0)

        async def run(kind: str, n: int) -> None:
            items = by_kind[kind]

            async def client(count: int) -> None:
                for _ in range(count):
                    _, query, variables = items[at[kind] % len(items)]
                    at[kind] += 1
                    await ex(query, variables)

            share = [n // CONCURRENCY + (i < n % CONCURRENCY) for i in range(CONCURRENCY)]
            await asyncio.gather(*(client(c) for c in share if c))

        for kind, items in by_kind.items():
            await run(kind, len(items))
        print(json.dumps({"ready": True, "code": graph.store.memory.__file__}), flush=True)
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line:
                return
            kind, n = line.split()
            c0 = time.process_time()
            await run(kind, int(n))
            cpu = 1000 * (time.process_time() - c0) / int(n)
            print(json.dumps({"kind": kind, "cpu_ms": cpu}), flush=True)

    uvloop.run(main())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, required=True, help="a checkout of the older code")
    ap.add_argument("--data-dir", type=Path, required=True, help="a data dir holding a graph")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--per-round", type=int, default=64)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.data_dir, args.before)
        return 0
    if not 1 <= args.rounds <= 50 or not 1 <= args.per_round <= 1000:
        ap.error("bounded: 1-50 rounds of 1-1000 requests")
    sides = {"before": args.before.resolve(), "after": ROOT}
    procs = {}
    for name, code in sides.items():
        env = {**os.environ, "PYTHONPATH": str(code), "HF_HUB_OFFLINE": "1",
               "TOKENIZERS_PARALLELISM": "false"}
        procs[name] = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker", "--before", str(code),
             "--data-dir", str(args.data_dir.resolve())],
            cwd=code, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
    try:
        for name, p in procs.items():
            assert p.stdout is not None
            while True:
                line = p.stdout.readline()
                if not line:
                    raise SystemExit(f"{name} side exited before it was ready")
                if line.startswith("{") and json.loads(line).get("ready"):
                    where = json.loads(line)["code"]
                    if not where.startswith(str(sides[name])):
                        raise SystemExit(f"{name} side runs {where}, not {sides[name]}")
                    break
        cpu: dict[str, dict[str, list[float]]] = {s: {k: [] for k in KINDS} for s in sides}
        for r in range(args.rounds):
            order = list(sides) if r % 2 == 0 else list(sides)[::-1]
            for kind in KINDS:
                for side in order:
                    p = procs[side]
                    assert p.stdin is not None and p.stdout is not None
                    p.stdin.write(f"{kind} {args.per_round}\n")
                    p.stdin.flush()
                    cpu[side][kind].append(json.loads(p.stdout.readline())["cpu_ms"])
    finally:
        for p in procs.values():
            if p.stdin is not None:
                p.stdin.close()
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
    print(f"median CPU ms a request over {args.rounds} interleaved rounds of {args.per_round},"
          f" {CONCURRENCY} in flight (before: {sides['before']})")
    print(f"{'kind':14} {'before':>8} {'after':>8}")
    total = dict.fromkeys(sides, 0.0)
    for kind in KINDS:
        b, a = (statistics.median(cpu[s][kind]) for s in sides)
        total["before"] += b
        total["after"] += a
        print(f"{kind:14} {b:8.2f} {a:8.2f}   {b / a:4.2f}x")
    b, a = total["before"] / len(KINDS), total["after"] / len(KINDS)
    print(f"{'mix mean':14} {b:8.2f} {a:8.2f}   {b / a:4.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
