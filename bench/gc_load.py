"""The cyclic GC's share of a server's CPU under bench/load.py's 32-client mix.

    python bench/gc_load.py --data-dir DIR [--seconds 30] [--clients 32] CHECKOUT [CHECKOUT ...]

For each checkout in turn (repeat one to alternate them): serve it on 127.0.0.1 (one
process, ``create_app`` under uvicorn, as ``citegraph serve`` does) with a
``gc.callbacks`` recorder installed, wait for its warm-up to end, run the mix for 5 s
to warm it, then for ``--seconds``. Prints requests, req/s, p50/p99/max latency, the
server's CPU per request, the collections per generation during the round, the GC's CPU
(the collecting thread's time) and its share of the process's CPU, and the longest
single collection. The server is stopped by its PID; only the data dir is read.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))


def serve(data_dir: Path, port: int, out: Path) -> None:
    """The server side: the app with a GC recorder; SIGUSR1 writes the totals to ``out``."""
    stats: dict[str, Any] = {"n": [0, 0, 0], "cpu": [0.0, 0.0, 0.0], "longest": 0.0, "seq": 0}
    start: dict[str, float] = {}

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            start["wall"], start["cpu"] = time.perf_counter(), time.thread_time()
            return
        g = info["generation"]
        stats["n"][g] += 1
        stats["cpu"][g] += time.thread_time() - start["cpu"]
        stats["longest"] = max(stats["longest"], time.perf_counter() - start["wall"])

    def dump(*_: object) -> None:
        stats["seq"] += 1
        out.write_text(json.dumps({**stats, "process_cpu": time.process_time(),
                                   "frozen": gc.get_freeze_count()}))
        stats["longest"] = 0.0  # the longest since the last dump

    gc.callbacks.append(record)
    signal.signal(signal.SIGUSR1, dump)
    import uvicorn

    from api.app import create_app
    from graph.settings import Settings

    app = create_app(Settings(data_dir=data_dir))  # type: ignore[call-arg]
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def measure(code: Path, data_dir: Path, clients: int, seconds: float) -> str:
    import load

    port = load.free_port()
    out = Path(tempfile.mkstemp(suffix=".json")[1])
    log_path = Path(tempfile.mkstemp(prefix="citegraph-gc-", suffix=".log")[1])
    env = {**os.environ, "PYTHONPATH": str(code), "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--serve", str(port), str(out),
             "--data-dir", str(data_dir)],
            cwd=code, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
    server = load.Server(proc, port, data_dir, log_path)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            deadline = time.monotonic() + 300
            while True:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"server not ready: {server.log_tail()}")
                try:
                    semantic = '{ search(query: "warm up", mode: SEMANTIC, first: 1) { score } }'
                    if (c.get("/readyz").status_code == 200
                            and not c.post("/graphql", json={"query": semantic}).json().get(
                                "errors")):
                        break
                except (httpx.TransportError, ValueError):
                    pass
                time.sleep(0.5)
            load.wait_idle(proc.pid, time.monotonic() + 120)  # the warm-up has ended
            mix = load.query_mix(c)
            load.run_round(server, mix, clients, 5)

            def snapshot(seq: int) -> dict[str, Any]:
                os.kill(proc.pid, signal.SIGUSR1)
                until = time.monotonic() + 60
                while time.monotonic() < until:  # the handler runs between two requests
                    time.sleep(0.2)
                    try:
                        got = dict(json.loads(out.read_text()))
                    except ValueError:
                        continue
                    if got["seq"] == seq:
                        return got
                raise RuntimeError("the server wrote no GC totals")

            a = snapshot(1)
            r = load.run_round(server, mix, clients, seconds).as_dict()
            b = snapshot(2)
    finally:
        server.stop()
        out.unlink(missing_ok=True)
    cpu = b["process_cpu"] - a["process_cpu"]
    n = [y - x for x, y in zip(a["n"], b["n"], strict=True)]
    gcc = [y - x for x, y in zip(a["cpu"], b["cpu"], strict=True)]
    return (
        f"{code}: {r['requests']} requests ({r['errors']} errors), {r['rps']} req/s, p50 "
        f"{r['p50_ms']} p99 {r['p99_ms']} max {r['max_ms']} ms, server CPU "
        f"{1000 * cpu / max(r['requests'], 1):.2f} ms a request; collections {n}, GC CPU "
        f"{sum(gcc):.2f} s of {cpu:.2f} s ({100 * sum(gcc) / cpu:.1f}%; by generation "
        f"{[round(x, 2) for x in gcc]}), longest {b['longest']:.2f} s, frozen {b['frozen']}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkouts", nargs="*", type=Path)
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--serve", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.data_dir, int(args.serve[0]), Path(args.serve[1]))
        return 0
    if not args.checkouts or len(args.checkouts) > 8:
        ap.error("1-8 checkouts")
    if not 1 <= args.clients <= 512 or not 0 < args.seconds <= 600:
        ap.error("bounded: 1-512 clients, up to 600 s")
    for code in args.checkouts:
        print(measure(code.resolve(), args.data_dir.resolve(), args.clients, args.seconds),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
