"""Readers in other processes while a CLI build stalls between SIMILAR_TO pieces:
sqlite3, `citegraph stats`, `citegraph search`, and a running `citegraph serve` (GraphQL).
Needs /tmp/p13-kill/base (docs/probes/probe13/kill_matrix.py's setup)."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from probe.digest import digest

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
WORK = Path("/tmp/p13-readers")
PORT = 18713
Q = ('{ stats { totalNodes totalEdges edges { kind count } } '
     'search(query: "diffusion", first: 3) { node { id } } }')


def env() -> dict[str, str]:
    e = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", P13_PIECE="40")
    return e


def gql() -> dict:
    req = urllib.request.Request(f"http://127.0.0.1:{PORT}/graphql", data=json.dumps(
        {"query": Q}).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())["data"]


def cli_out(d: Path, *args: str) -> str:
    return subprocess.run([PY, "-m", "citegraph", "--data-dir", str(d), *args],
                          capture_output=True, text=True, env=env(), timeout=120).stdout


def main() -> None:
    shutil.rmtree(WORK, ignore_errors=True)
    d = WORK / "d"
    shutil.copytree("/tmp/p13-kill/base", d, ignore=shutil.ignore_patterns("*.lock"))
    src = "/tmp/p13-kill/b.jsonl"
    log = open(WORK / "serve.log", "w")
    serve = subprocess.Popen([PY, "-m", "citegraph", "--data-dir", str(d), "serve", "--port",
                              str(PORT)], env=env(), stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(300):
            try:
                before = gql()
                break
            except Exception:  # noqa: BLE001
                time.sleep(0.5)
        else:
            raise SystemExit("server did not come up")
        db0 = digest(str(d / "graph.db"))
        st0, se0 = cli_out(d, "stats", "--json"), cli_out(d, "search", "diffusion", "--json")
        w = subprocess.Popen([PY, str(ROOT / "probe" / "killpart.py"), "part", "6", "stop",
                              "--data-dir", str(d), "build", src], env=env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(600):
            time.sleep(0.2)
            if Path(f"/proc/{w.pid}/stat").read_text().split()[2] == "T":
                break
        mid = gql()
        db1 = digest(str(d / "graph.db"))
        st1, se1 = cli_out(d, "stats", "--json"), cli_out(d, "search", "diffusion", "--json")
        print("stalled after part 6: graphql same:", mid == before, "sqlite same:",
              {k: v for k, v in db1.items()} == db0, "stats same:", st1 == st0,
              "search same:", se1 == se0, flush=True)
        w.send_signal(signal.SIGCONT)
        out, err = w.communicate(timeout=240)
        print("writer rc", w.returncode, err.strip().splitlines()[-1:] if err.strip() else "")
        db2 = digest(str(d / "graph.db"))
        after = None
        for _ in range(60):
            after = gql()
            if after != before:
                break
            time.sleep(0.5)
        new_edges = {e["kind"]: e["count"] for e in after["stats"]["edges"]}
        print("after commit: graphql changed:", after != before, "graphql edges:", new_edges,
              "sqlite edges:", db2["edge_types"], "agree:",
              all(new_edges.get(k, 0) == v for k, v in db2["edge_types"].items()), flush=True)
    finally:
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(timeout=30)
        except subprocess.TimeoutExpired:
            serve.kill()
        log.close()


if __name__ == "__main__":
    main()
