"""Load: `citegraph serve` (uvicorn) on 127.0.0.1, N clients for T seconds, zero errors.

    python -m bench load [--clients 32] [--seconds 30] [--runs 3] [--workers 2] [--quick]

Serves a copy of the ICLR 2021 graph (built once by ``citegraph build``; ``--quick``: the
seeds) on a free loopback port, waits for ``/readyz`` and the model, then runs ``--runs``
rounds, each on a fresh server. In each round ``--clients`` asyncio clients (one httpx
connection each) send a fixed mix of GraphQL queries back to back for ``--seconds``:
keyword and semantic search, neighbourhoods of depth 1 and 2, shortest path, k paths,
related papers (to a paper and to a text), a paper with its concepts, stats. Every request
must answer 200 with no ``errors``. Reported: requests a second, errors, latency, the
server's CPU a request (all workers, from /proc: steadier than latency on a shared
machine) and each worker's RSS. Issue 11's goal: 300 requests a second at 32 clients.

The helpers (``start_server``, ``query_mix``, ``run_round``, ...) are also the test
suite's: tests/hardening starts its servers with them. It only ever talks to 127.0.0.1
and stops each server by its PID.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import concurrent.futures
import os
import random
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.common import Result, built_graph, median

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

HOST = "127.0.0.1"  # never anything else


# --------------------------------------------------------------------------- the server


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def rss_bytes(pid: int) -> int:
    """Resident set size of a process, from /proc (0 if it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _descendants(pid: int) -> list[int]:
    """``pid`` and every process under it (uvicorn's workers), from /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its workers (0 for those gone)."""
    return sum(cpu_seconds_of(p) for p in _descendants(pid))


def workers_of(pid: int) -> list[int]:
    """The server processes under ``pid`` (uvicorn's workers, not multiprocessing's
    resource tracker), or ``pid`` itself when it has none."""
    procs = [
        p for p in _descendants(pid)[1:]
        if b"resource_tracker" not in _cmdline(p)
    ]
    return sorted(procs) or [pid]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def worker_cpu(pid: int) -> dict[int, float]:
    """CPU seconds of each worker process under ``pid`` (just ``pid`` when it has none)."""
    return {p: cpu_seconds_of(p) for p in workers_of(pid)}


def cpu_seconds_of(pid: int) -> float:
    """User + system CPU seconds of one process alone (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def connections_by_worker(pid: int, port: int) -> dict[int, int]:
    """Established client connections each worker holds on ``port``, from /proc.

    uvicorn's workers share one listening socket and each accepts whatever is queued
    when it wakes, so N keep-alive clients need not be split evenly between them.
    """
    established: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if int(cols[1].rsplit(":", 1)[1], 16) == port and cols[3] == "01":
                established.add(cols[9])
    out: dict[int, int] = {}
    for p in workers_of(pid):
        n = 0
        try:
            for fd in Path(f"/proc/{p}/fd").iterdir():
                try:
                    target = str(fd.readlink())
                except OSError:
                    continue
                if target.startswith("socket:[") and target[8:-1] in established:
                    n += 1
        except OSError:
            pass
        out[p] = n
    return out


def worker_rss(pid: int) -> list[int]:
    """RSS of each worker process under ``pid`` (just ``pid`` when it has none)."""
    workers = workers_of(pid)
    return [rss_bytes(p) for p in workers if rss_bytes(p)]


def copy_cache(src: Path, dst: Path) -> None:
    """Copy SQLite caches with the backup API (safe while someone else writes them)."""
    dst.mkdir(parents=True, exist_ok=True)
    for db in sorted(src.glob("*.sqlite")):
        with sqlite3.connect(db) as a, sqlite3.connect(dst / db.name) as b:
            a.backup(b)


def seed_data_dir(where: Path) -> Path:
    """``where`` holding the seed graph and a warm embedding cache."""
    from tests.support.seeds import EMBED_CACHE, build_seed_graph

    where.mkdir(parents=True, exist_ok=True)
    if not (where / "graph.db").exists():
        build_seed_graph(where)
    if EMBED_CACHE.is_dir() and not (where / "cache").exists():
        copy_cache(EMBED_CACHE, where / "cache")
    return where


@dataclass
class Server:
    """A running ``citegraph serve``; stop() ends it by PID."""

    process: subprocess.Popen[bytes]
    port: int
    data_dir: Path
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_tail(self, n: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_server(
    data_dir: Path,
    env: dict[str, str] | None = None,
    *,
    ready_timeout: float = 120.0,
    wait_model: bool = True,
    code: Path = ROOT,
) -> Server:
    """Start ``python -m citegraph --data-dir DATA_DIR serve`` on a free loopback port.

    Waits for /readyz (and, with ``wait_model``, for one semantic search, so the model
    has loaded before anyone measures anything).
    """
    port = free_port()
    full_env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "PYTHONPATH": str(code),
        "CITEGRAPH_SEEDS_DIR": str(code / "seeds"),
        **(env or {}),
    }
    log_path = Path(tempfile.mkstemp(prefix="citegraph-serve-", suffix=".log")[1])
    # read (log_tail) until this process ends, even after stop(); then gone, not left in
    # /tmp by every test session and benchmark (~100 were there after a few CI runs)
    atexit.register(log_path.unlink, missing_ok=True)
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "citegraph",
                "--data-dir",
                str(data_dir),
                "serve",
                "--host",
                HOST,
                "--port",
                str(port),
            ],
            cwd=code,
            env=full_env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    server = Server(proc, port, data_dir, log_path)
    deadline = time.monotonic() + ready_timeout
    try:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"server exited ({proc.returncode}): {server.log_tail()}")
                try:
                    if c.get("/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"server not ready in {ready_timeout:.0f}s: {server.log_tail()}"
                    )
                time.sleep(0.2)
            while wait_model:
                # the model (and the related-papers word index) load in the background
                # after /readyz; on a big graph or a busy machine the first semantic query
                # can run past the request limit, so ask again until it answers
                try:
                    body = c.post(
                        "/graphql",
                        json={
                            "query": '{ search(query: "warm up", mode: SEMANTIC, first: 1) '
                                     "{ score } }"
                        },
                    ).json()
                except httpx.TimeoutException:  # a request limit above this client's 30 s
                    if time.monotonic() > deadline:
                        raise
                    continue
                errors = body.get("errors") or []
                timed_out = errors and all(
                    (e.get("extensions") or {}).get("code") == "TIMEOUT" for e in errors
                )
                if not errors:
                    break
                if not timed_out or time.monotonic() > deadline:
                    raise RuntimeError(f"semantic search failed: {errors}")
        wait_idle(proc.pid, time.monotonic() + 90)
    except BaseException:
        server.stop()
        raise
    return server


def wait_idle(pid: int, deadline: float, busy: float = 0.1) -> None:
    """Until the server (every worker) uses under ``busy`` of a core for a second.

    One answered query says one worker is up; the others may still be loading the model
    and warming their indexes, which would be measured as the first queries' cost.
    """
    last = cpu_seconds(pid)
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now = cpu_seconds(pid)
        if now - last < busy:
            return
        last = now


@contextmanager
def running_server(
    data_dir: Path, env: dict[str, str] | None = None, code: Path = ROOT
) -> Iterator[Server]:
    server = start_server(data_dir, env, code=code)
    try:
        yield server
    finally:
        server.stop()


# --------------------------------------------------------------------------- the load


def query_mix(client: httpx.Client) -> list[tuple[str, str, dict[str, Any]]]:
    """(name, query, variables) for the mix, with ids taken from the served graph."""
    data = client.post(
        "/graphql",
        json={
            "query": """{
        papers(first: 40) { edges { node { key } } }
        concepts(first: 40) { edges { node { key name } } }
    }"""
        },
    ).json()["data"]
    papers = [e["node"]["key"] for e in data["papers"]["edges"]]
    concepts = [e["node"]["name"] for e in data["concepts"]["edges"]]
    words = [
        "diffusion",
        "language model",
        "graph",
        "reinforcement learning",
        "retrieval",
        "benchmark",
        "attention",
        "robustness",
        "image generation",
        "LLM",
    ]
    rng = random.Random(7)
    mix: list[tuple[str, str, dict[str, Any]]] = []
    for i in range(60):
        a, b = rng.sample(papers, 2)
        mix += [
            (
                "search",
                "query($q: String!) { search(query: $q, first: 10) { score node { id } } }",
                {"q": rng.choice(words + concepts)},
            ),
            (
                "semantic",
                "query($q: String!) { search(query: $q, mode: SEMANTIC, first: 5) { score } }",
                {"q": f"{rng.choice(words)} {i}"},
            ),
            (
                "neighborhood",
                "query($id: ID!) { neighborhood(id: $id, depth: 2, limit: 100) "
                "{ nodes { id label } edges { source target type } } }",
                {"id": rng.choice(papers + concepts)},
            ),
            (
                "path",
                "query($a: ID!, $b: ID!) { shortestPath(from: $a, to: $b) "
                "{ length nodes { id } } }",
                {"a": a, "b": b},
            ),
            (
                "paths",
                "query($a: ID!, $b: ID!) { paths(from: $a, to: $b, k: 3, maxHops: 3) { length } }",
                {"a": a, "b": b},
            ),
            (
                "related",
                "query($p: ID!) { related(paper: $p, first: 5) "
                "{ score paper { id } reasons { kind text } } }",
                {"p": a},
            ),
            ("stats", "{ stats { totalNodes totalEdges } }", {}),
            (
                "neighborhood1",
                "query($id: ID!) { neighborhood(id: $id, depth: 1, limit: 100) "
                "{ nodes { id label } edges { source target type } } }",
                {"id": rng.choice(papers)},
            ),
            (
                "paper",
                "query($id: ID!) { paper(id: $id) { title concepts { weight concept { name } } } }",
                {"id": rng.choice(papers)},
            ),
            (
                "related_text",
                "query($q: String!) { related(text: $q, first: 5) { score paper { id } } }",
                {"q": f"{rng.choice(words)} for {rng.choice(words)} {i}"},
            ),
        ]
    rng.shuffle(mix)
    return mix


def _pct(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class RoundResult:
    clients: int
    seconds: float
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    by_kind: dict[str, int] = field(default_factory=dict)
    kind_latencies: dict[str, list[float]] = field(default_factory=dict)
    rss_before: int = 0
    rss_after: int = 0
    wall: float = 0.0
    server_cpu: float = 0.0  # CPU seconds the server (all workers) spent in the round
    workers_rss: list[int] = field(default_factory=list)
    workers_cpu: list[float] = field(default_factory=list)  # CPU seconds each, in the round
    workers_connections: list[int] = field(default_factory=list)  # mid-round, each

    @property
    def requests(self) -> int:
        return len(self.latencies) + len(self.errors)

    def pct(self, q: float) -> float:
        return _pct(self.latencies, q)

    def as_dict(self) -> dict[str, Any]:
        return {
            "clients": self.clients,
            "seconds": self.seconds,
            "requests": self.requests,
            "errors": len(self.errors),
            "rps": round(self.requests / self.wall, 1),
            "p50_ms": round(self.pct(0.50) * 1000, 1),
            "p95_ms": round(self.pct(0.95) * 1000, 1),
            "p99_ms": round(self.pct(0.99) * 1000, 1),
            "max_ms": round(max(self.latencies, default=float("nan")) * 1000, 1),
            "mean_ms": round(statistics.fmean(self.latencies) * 1000, 1)
            if self.latencies
            else None,
            "server_cpu_ms_per_request": round(1000 * self.server_cpu / max(self.requests, 1), 2),
            "workers_rss_mib": [round(r / 2**20, 1) for r in self.workers_rss],
            "workers_cpu_s": [round(c, 1) for c in self.workers_cpu],
            "workers_connections": self.workers_connections,
            "rss_before_mib": round(self.rss_before / 2**20, 1),
            "rss_after_mib": round(self.rss_after / 2**20, 1),
            "by_kind": dict(sorted(self.by_kind.items())),
            "kinds": {
                k: {"p50_ms": round(_pct(v, 0.5) * 1000, 1),
                    "p99_ms": round(_pct(v, 0.99) * 1000, 1)}
                for k, v in sorted(self.kind_latencies.items())
            },
            "first_errors": self.errors[:5],
        }


async def _client(
    url: str,
    mix: Sequence[tuple[str, str, dict[str, Any]]],
    start: int,
    stop_at: float,
    result: RoundResult,
    timeout: float,
) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=timeout) as c:
        i = start
        while time.perf_counter() < stop_at:
            name, query, variables = mix[i % len(mix)]
            i += 1
            t0 = time.perf_counter()
            try:
                r = await c.post("/graphql", json={"query": query, "variables": variables})
                body = r.json()
                ok = r.status_code == 200 and not body.get("errors")
                detail = f"{name}: HTTP {r.status_code} {str(body)[:200]}"
            except (httpx.HTTPError, ValueError) as exc:
                ok, detail = False, f"{name}: {type(exc).__name__}: {exc}"
            dt = time.perf_counter() - t0
            if ok:
                result.latencies.append(dt)
                result.by_kind[name] = result.by_kind.get(name, 0) + 1
                result.kind_latencies.setdefault(name, []).append(dt)
            else:
                result.errors.append(detail)


def run_round(
    server: Server,
    mix: Sequence[tuple[str, str, dict[str, Any]]],
    clients: int,
    seconds: float,
    timeout: float = 30.0,
) -> RoundResult:
    """One round: ``clients`` concurrent clients for ``seconds`` seconds."""
    result = RoundResult(clients, seconds, rss_before=rss_bytes(server.pid))

    async def main() -> None:
        stop_at = time.perf_counter() + seconds
        await asyncio.gather(
            *(_client(server.url, mix, k * 7, stop_at, result, timeout) for k in range(clients))
        )

    cpu0 = cpu_seconds(server.pid)
    each0 = worker_cpu(server.pid)
    t0 = time.perf_counter()
    # its own thread, so it also works where an event loop already runs (e.g. pytest
    # after a Playwright session)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        running = pool.submit(asyncio.run, main())
        try:
            running.result(timeout=seconds / 2)
        except concurrent.futures.TimeoutError:
            split = connections_by_worker(server.pid, server.port)
            result.workers_connections = [split[p] for p in sorted(split)]
            running.result()
    result.wall = time.perf_counter() - t0
    result.server_cpu = cpu_seconds(server.pid) - cpu0
    each1 = worker_cpu(server.pid)
    result.workers_cpu = [each1[p] - each0.get(p, 0.0) for p in sorted(each1)]
    result.rss_after = rss_bytes(server.pid)
    result.workers_rss = worker_rss(server.pid)
    return result


def _print_round(label: str, d: dict[str, Any]) -> None:
    print(
        f"{label}: {d['clients']} clients x {d['seconds']:g}s: "
        f"{d['requests']} requests, {d['errors']} errors, {d['rps']} req/s, "
        f"p50 {d['p50_ms']} ms, p95 {d['p95_ms']} ms, p99 {d['p99_ms']} ms, "
        f"max {d['max_ms']} ms; server CPU {d['server_cpu_ms_per_request']} ms "
        f"a request; RSS per worker {d['workers_rss_mib']} MiB; per worker: "
        f"CPU {d['workers_cpu_s']} s, connections mid-round {d['workers_connections']}",
        flush=True,
    )
    print("  " + ", ".join(
        f"{k} {v['p50_ms']}/{v['p99_ms']}" for k, v in d["kinds"].items()
    ) + " ms (p50/p99)", flush=True)
    for e in d["first_errors"]:
        print(f"  error: {e}")


def run(argv: list[str]) -> Result:
    """``python -m bench load``: rounds of the mix on a fresh server each, as a Result."""
    parser = argparse.ArgumentParser(
        prog="python -m bench load", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--clients", type=int, default=32, help="concurrent clients (32)")
    parser.add_argument("--seconds", type=float, default=30.0, help="seconds per round (30)")
    parser.add_argument("--runs", type=int, default=3, help="rounds, a fresh server each (3)")
    parser.add_argument("--workers", type=int, default=2, help="server processes (2)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="a data folder holding a graph (default: ICLR 2021, built once)")
    parser.add_argument("--quick", action="store_true",
                        help="the seeds, 8 clients for 5 s, one round, one worker")
    args = parser.parse_args(argv)
    if args.quick:
        args.clients, args.seconds, args.runs, args.workers = 8, 5.0, 1, 1
    if not 1 <= args.clients <= 512 or not 0 < args.seconds <= 600 or not 1 <= args.runs <= 10:
        parser.error("bounded: 1-512 clients, up to 600 s, 1-10 runs")
    corpus = "seeds" if args.quick else "iclr2021"
    source = args.data_dir or built_graph(corpus)
    result = Result("load", quick=args.quick,
                    corpus=str(args.data_dir) if args.data_dir
                    else "seeds (76 papers)" if args.quick else "ICLR 2021 (2,966 papers)")
    rounds: list[dict[str, Any]] = []
    env = {"CITEGRAPH_WORKERS": str(args.workers)}
    with tempfile.TemporaryDirectory(prefix="citegraph-load-") as tmp:
        data = Path(tmp) / "data"
        shutil.copytree(source, data)
        for n in range(1, args.runs + 1):
            with running_server(data, env) as server, httpx.Client(
                base_url=server.url, timeout=30
            ) as c:
                mix = query_mix(c)
                d = run_round(server, mix, args.clients, args.seconds).as_dict()
                _print_round(f"run {n}", d)
                if server.process.poll() is not None:
                    raise RuntimeError(f"server died: {server.log_tail()}")
                rounds.append(d)
    rps = median([d["rps"] for d in rounds])
    errors = sum(d["errors"] for d in rounds)
    label = f"{args.clients} clients, {args.workers} worker{'s' if args.workers > 1 else ''}"
    result.figure(f"requests a second, {label} (median of {args.runs})", rps, "",
                  "≥ 300 at 32 clients", rps >= 300)
    result.figure("errors (non-200 or GraphQL errors)", errors, "", "0", errors == 0)
    result.figure("latency p50 / p99 under load (median of rounds)",
                  f"{median([d['p50_ms'] for d in rounds]):.0f} / "
                  f"{median([d['p99_ms'] for d in rounds]):.0f}", "ms")
    result.figure("server CPU a request", median([d["server_cpu_ms_per_request"] for d in rounds]),
                  "ms")
    result.table("Rounds", ["round", "requests", "errors", "req/s", "p50 ms", "p99 ms", "max ms",
                            "server CPU ms a request", "RSS per worker MiB"],
                 [[i + 1, d["requests"], d["errors"], d["rps"], d["p50_ms"], d["p99_ms"],
                   d["max_ms"], d["server_cpu_ms_per_request"],
                   " / ".join(str(x) for x in d["workers_rss_mib"])]
                  for i, d in enumerate(rounds)])
    kinds = sorted({k for d in rounds for k in d["kinds"]})
    result.table("p50 / p99 ms by kind in the mix (first round)", ["kind", "p50", "p99"],
                 [[k, rounds[0]["kinds"][k]["p50_ms"], rounds[0]["kinds"][k]["p99_ms"]]
                  for k in kinds if k in rounds[0]["kinds"]])
    for e in rounds[0]["first_errors"]:
        result.note(f"first error: {e}")
    return result
