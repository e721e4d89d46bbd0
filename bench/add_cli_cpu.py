# ruff: noqa: E501 - long table rows
"""`citegraph add` of the same 10 papers, two checkouts alternated: wall and CPU.

    python bench/add_cli_cpu.py --data-dir DIR --code TREE_A --code TREE_B [--rounds 4]

bench/add_ab.py reports the command's wall and stages; on a shared 2-core machine the
wall of a command that runs a second process (the model's, graph.embed.EncodeProcess)
beside its own work moves with the load, so this reports their CPU too: the command's
and its child's (``RUSAGE_CHILDREN`` around each run), and the model load alone in a
fresh process, per round. Rounds alternate the checkouts' order. Each add works on a
fresh copy of DIR. Prints its rows; nothing is appended to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import store as bs
from bench.common import ROOT

_LOAD = (
    "import time; t=time.perf_counter(); from graph.embed import SentenceTransformerEmbedder;"
    "e=SentenceTransformerEmbedder('all-MiniLM-L6-v2'); e.encode(['x']); print(time.perf_counter()-t)"
)


def _run(cmd: list[str], tree: Path) -> tuple[float, float, str]:
    """(wall, CPU of the process and the children it waited for, stdout)."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(tree), TOKENIZERS_PARALLELISM="false")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=900, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-2000:])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data-dir", type=Path, required=True, help="a built graph (copied, never changed)")
    beside = [up / "shared" / "data" / "iclr2021" / "paperlist.tsv" for up in (ROOT.parent, ROOT.parent.parent)]
    ap.add_argument("--source", type=Path, default=next((p for p in beside if p.exists()), beside[0]),
                    help="where the new papers' abstracts come from")
    ap.add_argument("--code", type=Path, action="append", required=True, help="a checkout (give two)")
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    trees = [c.resolve() for c in args.code]
    work = Path(tempfile.mkdtemp(prefix="citegraph-bench-add-cli-"))
    rows: dict[Path, list[dict[str, float]]] = {t: [] for t in trees}
    try:
        batch = bs.write_jsonl(work / "add10.jsonl", bs.new_papers(args.source, "abadd", offset=600))
        for r in range(args.rounds):
            for tree in trees if r % 2 == 0 else trees[::-1]:
                _, _, said = _run([sys.executable, "-c", _LOAD], tree)
                d = work / f"graph-{tree.name}"
                shutil.rmtree(d, ignore_errors=True)
                shutil.copytree(args.data_dir, d, ignore=shutil.ignore_patterns("*.lock", "build.json"))
                wall, cpu, out = _run([sys.executable, "-m", "citegraph", "--data-dir", str(d), "add",
                                       str(batch), "--json"], tree)
                stages = json.loads(out)["stage_seconds"]
                row = {"load": float(said.strip()), "wall": wall, "cpu": cpu,
                       "ahead": stages.get("ahead", 0.0), "wait": stages.get("embed", 0.0),
                       "link": stages.get("link", 0.0), "write": stages.get("write", 0.0),
                       "loadavg": os.getloadavg()[0]}
                rows[tree].append(row)
                print(tree.name, " ".join(f"{k} {v:.2f}" for k, v in row.items()), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\n| `citegraph add` of 10, medians | " + " | ".join(t.name for t in trees) + " |")
    print("|---|" + "---|" * len(trees))
    for key, what in (("cpu", "CPU, command + child"), ("wall", "wall"), ("load", "model load alone"),
                      ("ahead", "ahead"), ("wait", "embed wait"), ("link", "link"), ("write", "write")):
        print(f"| {what} | " + " | ".join(f"{statistics.median(r[key] for r in rows[t]):.2f} s" for t in trees) + " |")
    print("| wall - model load (per round, then median) | " + " | ".join(
        f"{statistics.median(r['wall'] - r['load'] for r in rows[t]):.2f} s" for t in trees) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
