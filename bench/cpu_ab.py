"""CPU per query of bench/load.py's mix, old code against this checkout, interleaved.

    python bench/cpu_ab.py --before OLD_CHECKOUT --data-dir DIR [--rounds 7] [--per-round 20]

On a shared machine the HTTP load test's figures move with whatever else runs (the
server's CPU per request doubles when the cores are oversubscribed), and its two sides
run minutes apart. This runs both sides at once, each in its own process holding the
same graph and model, and alternates them kind by kind: each round sends ``--per-round``
queries of one kind to one side, then to the other (the order flips every round), through
``schema.execute`` (GraphQL parse/validate/execute and the query layer, no HTTP), and
reads each side's CPU time (all its threads). It prints the median over the rounds per
kind, and the mix mean (each kind once, as in the load mix). Both sides warm up first:
every query of the mix once, as a server's first minutes would.
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


def worker(data_dir: Path, code: Path) -> None:
    """One side (the checkout ``code``): read 'KIND N' lines, answer {"kind", "cpu_ms"}."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import load

    # load.py puts this checkout first on the path: the side's own code must come first,
    # for the modules imported now and for those imported on first use
    sys.path[:] = [str(code)] + [p for p in sys.path if p not in (str(ROOT), str(code))]
    import graph.store.memory
    from api.graphql.context import Context
    from api.graphql.schema import build_schema
    from api.services import Services, limit_blas_threads
    from graph.settings import Settings

    limit_blas_threads()
    settings = Settings(data_dir=data_dir)  # type: ignore[call-arg]
    services = Services(settings)
    services.open()
    services.warm_up()
    schema = build_schema(settings)
    loop = asyncio.new_event_loop()

    async def ex(query: str, variables: dict[str, Any]) -> Any:
        r = await schema.execute(query, variable_values=variables, context_value=Context(services))
        if r.errors:
            raise RuntimeError(f"{query}: {r.errors}")
        return r

    class Client:  # the one call query_mix makes, answered in process
        def post(self, _url: str, json: dict[str, Any]) -> Any:
            data = loop.run_until_complete(ex(json["query"], json.get("variables") or {})).data

            class Reply:
                def json(self) -> dict[str, Any]:
                    return {"data": data}

            return Reply()

    mix = load.query_mix(Client())  # type: ignore[arg-type]
    by_kind: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for m in mix:
        by_kind.setdefault(m[0], []).append(m)
    at = dict.fromkeys(by_kind, 0)

    async def run(kind: str, n: int) -> None:
        items = by_kind[kind]
        for _ in range(n):
            _, query, variables = items[at[kind] % len(items)]
            at[kind] += 1
            await ex(query, variables)

    for kind, items in by_kind.items():
        loop.run_until_complete(run(kind, len(items)))
    print(json.dumps({"ready": True, "code": graph.store.memory.__file__}), flush=True)
    for line in sys.stdin:
        kind, n = line.split()
        c0 = time.process_time()
        loop.run_until_complete(run(kind, int(n)))
        cpu = 1000 * (time.process_time() - c0) / int(n)
        print(json.dumps({"kind": kind, "cpu_ms": cpu}), flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, required=True, help="a checkout of the older code")
    ap.add_argument("--data-dir", type=Path, required=True, help="a data dir holding a graph")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--per-round", type=int, default=20)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.data_dir, args.before)
        return 0
    if not 1 <= args.rounds <= 50 or not 1 <= args.per_round <= 500:
        ap.error("bounded: 1-50 rounds of 1-500 queries")
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
    print(f"median CPU ms a query over {args.rounds} interleaved rounds of {args.per_round}"
          f" (before: {sides['before']})")
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
