"""CLI query commands in a fresh process: this checkout against another, side by side.

    python bench/cli_open.py --data-dir DIR --before /path/to/old/checkout [--runs 5]

Each command runs ``--runs`` times in each checkout, alternating, so both see the same
machine load; the table gives the median wall seconds, their ratio, and whether the two
printed the same thing. Each checkout gets its own copy of the data dir (a newer one
may bring the file to a format the older one refuses), opened once before timing so a
one-time upgrade is not counted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS = [
    ["stats"],
    ["neighbors", "graph neural network"],
    ["path", "transformer", "graph neural network"],
    ["search", "graph attention"],
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--before", type=Path, required=True, help="the other checkout")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    trees = {"before": args.before.resolve(), "after": Path(__file__).resolve().parents[1]}
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    scratch = Path(tempfile.mkdtemp(prefix="cli-open-"))
    dirs = {}
    for name, tree in trees.items():
        dirs[name] = scratch / name
        shutil.copytree(args.data_dir, dirs[name])
        subprocess.run(
            [sys.executable, "-m", "citegraph", "--data-dir", str(dirs[name]), "stats"],
            cwd=tree, env=dict(env, PYTHONPATH=str(tree)), capture_output=True, timeout=600,
            check=True,
        )
    with sqlite3.connect(dirs["after"] / "graph.db") as db:
        first = db.execute("SELECT MIN(id) FROM nodes WHERE kind = 'Paper'").fetchone()[0]
    commands = [*COMMANDS, ["related", "--", first]]
    try:
        _table(trees, dirs, env, args.runs, commands)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _table(
    trees: dict[str, Path], dirs: dict[str, Path], env: dict[str, str], runs: int,
    commands: list[list[str]],
) -> None:
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    print("| command | before s | after s | after / before | same output |")
    print("|---|---|---|---|---|")
    for cmd in commands:
        times: dict[str, list[float]] = {k: [] for k in trees}
        outs: dict[str, str] = {}
        for _ in range(runs):
            for name, tree in trees.items():
                t0 = time.perf_counter()
                p = subprocess.run(
                    [sys.executable, "-m", "citegraph", "--data-dir", str(dirs[name]), *cmd],
                    cwd=tree, env=dict(env, PYTHONPATH=str(tree)), capture_output=True,
                    text=True, timeout=600, check=False,
                )
                times[name].append(time.perf_counter() - t0)
                if p.returncode != 0:
                    raise SystemExit(f"{name}: citegraph {' '.join(cmd)} failed: {p.stderr[-500:]}")
                outs[name] = p.stdout
        b, a = statistics.median(times["before"]), statistics.median(times["after"])
        same = "yes" if outs["before"] == outs["after"] else "no"
        print(f"| citegraph {' '.join(cmd)} | {b:.2f} | {a:.2f} | {a / b:.2f} | {same} |")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
