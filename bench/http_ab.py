"""Server CPU per request over HTTP, two or more checkouts served at once, in short slices.

    python bench/http_ab.py --data-dir DIR [--slices 12] [--seconds 4] [--clients 32] \\
        CHECKOUT CHECKOUT [CHECKOUT ...]

bench/load.py and bench/gc_load.py run their sides one after the other, minutes apart; on
a machine shared with other jobs the same code moved 25-40% between two such runs
(docs/benchmarks.md, issue 11 rounds 7 and 8), more than the changes measured. This
starts one ``citegraph serve`` (one process) per checkout, all on the same graph and
warmed up, then sends bench/load.py's 32-client mix to each in turn for ``--seconds``,
for ``--slices`` slices (the order rotating every slice), so every side meets the same
background load. A server that is not being driven is idle. Per side it prints the
requests, errors, the server's CPU per request over all its slices (from /proc: user +
system, all threads), the median of the per-slice figures, and req/s and p50 over all
its slices. Servers listen on 127.0.0.1 only and are stopped by their PIDs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkouts", nargs="+", type=Path, help="2-4 checkouts to compare")
    ap.add_argument("--data-dir", type=Path, required=True, help="the graph (only read)")
    ap.add_argument("--slices", type=int, default=12, help="slices per side (12)")
    ap.add_argument("--seconds", type=float, default=4.0, help="seconds per slice (4)")
    ap.add_argument("--clients", type=int, default=32, help="concurrent clients (32)")
    args = ap.parse_args()
    if not 2 <= len(args.checkouts) <= 4:
        ap.error("2-4 checkouts")
    if not (1 <= args.slices <= 100 and 0 < args.seconds <= 60 and 1 <= args.clients <= 256):
        ap.error("bounded: 1-100 slices of up to 60 s, 1-256 clients")
    env = {"CITEGRAPH_WORKERS": "1"}
    servers: list[load.Server] = []
    try:
        for code in args.checkouts:
            servers.append(load.start_server(args.data_dir.resolve(), env, code=code.resolve()))
        import httpx

        with httpx.Client(base_url=servers[0].url, timeout=30) as c:
            mix = load.query_mix(c)
        for s in servers:  # warm: every query of the mix once, then a short round
            load.run_round(s, mix, args.clients, 3)
        rounds: list[list[load.RoundResult]] = [[] for _ in servers]
        n = len(servers)
        for k in range(args.slices):
            for j in range(n):
                side = (k + j) % n
                rounds[side].append(load.run_round(servers[side], mix, args.clients,
                                                   args.seconds))
        for code, rs in zip(args.checkouts, rounds, strict=True):
            requests = sum(r.requests for r in rs)
            errors = sum(len(r.errors) for r in rs)
            cpu = sum(r.server_cpu for r in rs)
            per_slice = [1000 * r.server_cpu / max(r.requests, 1) for r in rs]
            latencies = [x for r in rs for x in r.latencies]
            wall = sum(r.wall for r in rs)
            print(
                f"{code}: {requests} requests, {errors} errors, server CPU "
                f"{1000 * cpu / max(requests, 1):.2f} ms a request (median of slices "
                f"{statistics.median(per_slice):.2f}, range {min(per_slice):.2f}-"
                f"{max(per_slice):.2f}), {requests / wall:.1f} req/s, p50 "
                f"{1000 * statistics.median(latencies):.0f} ms",
                flush=True,
            )
            for r in rs[:1]:
                for e in r.errors[:3]:
                    print(f"  error: {e}")
    finally:
        for s in servers:
            s.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
