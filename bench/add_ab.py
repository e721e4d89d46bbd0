# ruff: noqa: E501 - long table rows
"""The cost of an add, two checkouts interleaved: `citegraph add` and the server's path.

    python bench/add_ab.py --data-dir DIR [--data-dir DIR_B] --code TREE_A --code TREE_B [--rounds 3] [--inprocess-rounds 2]

``--rounds 0``: the server's path alone.

DIR holds a built graph that each checkout can open without rewriting it (run one add on
it first: the first add after a copy of an older graph re-extracts and rewrites once).
When the two checkouts store edges differently, give each its own DIR (the same corpus,
warmed by that checkout), in the order of ``--code``.
Every measurement works on a fresh copy of DIR. Per round, for each checkout in turn:

* the model load alone in a fresh process (import + weights + one encode), wall;
* ``citegraph add`` of the same 10 new papers, wall, with its stages and steps;

then ``--inprocess-rounds`` times, for each checkout in turn, four adds of 10 in one
process, the server's way (bench/store.py's INPROCESS: model loaded, corpus primed).
Interleaving the checkouts round by round keeps a shared machine's load drift out of
the comparison (bench/store.py measures one checkout per run).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import store as bs
from bench.common import ROOT, Report, median, table


def _copy(src: Path, dst: Path) -> Path:
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.lock", "build.json"))
    return dst


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data-dir", type=Path, action="append", required=True,
                    help="a built graph (copied, never changed); twice: one per --code")
    beside = [up / "shared" / "data" / "iclr2021" / "paperlist.tsv" for up in (ROOT.parent, ROOT.parent.parent)]
    ap.add_argument("--source", type=Path, default=next((p for p in beside if p.exists()), beside[0]),
                    help="where the new papers' abstracts come from")
    ap.add_argument("--code", type=Path, action="append", required=True, help="a checkout (give two)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--inprocess-rounds", type=int, default=2)
    ap.add_argument("--no-report", action="store_true")
    args = ap.parse_args()
    trees = [c.resolve() for c in args.code]
    names = [t.name for t in trees]
    if len(args.data_dir) not in (1, len(trees)):
        ap.error("give one --data-dir, or one per --code")
    dirs = dict(zip(names, args.data_dir * len(trees) if len(args.data_dir) == 1 else args.data_dir,
                    strict=True))
    work = Path(tempfile.mkdtemp(prefix="citegraph-bench-add-ab-"))
    rep = Report("The cost of an add, checkouts interleaved (bench/add_ab.py)")
    cli: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    load: dict[str, list[float]] = {n: [] for n in names}
    inproc: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    try:
        batch = bs.write_jsonl(work / "add10.jsonl", bs.new_papers(args.source, "abadd", offset=600))
        for _ in range(args.rounds):
            for tree, name in zip(trees, names, strict=True):
                bs.TARGET["code"] = tree
                load[name].append(bs.model_load_s())
                d = _copy(dirs[name], work / f"cli-{name}")
                wall, out = bs.cli(d, "add", str(batch), "--json")
                assert out.returncode == 0, out.stderr[-2000:]
                got = json.loads(out.stdout)
                cli[name].append({"wall": wall, "stages": got["stage_seconds"],
                                  "steps": got.get("step_seconds", {}),
                                  "edges": got["edges_written"], "nodes": got["nodes_written"]})
        batches = [bs.new_papers(args.source, f"abin{i}", offset=700 + 10 * i) for i in range(4)]
        for r in range(args.inprocess_rounds):
            # each round in the other order: a load that drifts over a round falls on both
            for tree, name in list(zip(trees, names, strict=True))[:: 1 if r % 2 == 0 else -1]:
                bs.TARGET["code"] = tree
                d = _copy(dirs[name], work / f"inproc-{name}")
                inproc[name].extend(bs.inprocess_adds(d, batches, work)[1:])

        rep.add(f"Graph: {', '.join(map(str, args.data_dir))}; each add: the same 10 new papers. Checkouts: "
                + ", ".join(f"`{n}` ({t})" for n, t in zip(names, trees, strict=True)) + ".")
        rows: list[tuple[object, ...]] = []
        for name in names:
            runs = cli[name]
            walls = [r["wall"] for r in runs]
            rows.append((f"`{name}`: model load alone (fresh process)", median(load[name]),
                         " ".join(f"{x:.2f}" for x in load[name])))
            rows.append((f"`{name}`: citegraph add of 10, wall", median(walls), " ".join(f"{x:.2f}" for x in walls)))
            rows.append((f"`{name}`: wall - model load (median of the per-round differences)",
                         median([w - m for w, m in zip(walls, load[name], strict=True)]), ""))
            for key in sorted({k for r in runs for k in r["stages"]}, key=lambda k: (k == "total", k)):
                vals = [r["stages"].get(key, 0.0) for r in runs]
                rows.append((f"    stage {key}", median(vals), " ".join(f"{x:.2f}" for x in vals)))
            for key in sorted({k for r in runs for k in r["steps"]}):
                vals = [r["steps"].get(key, 0.0) for r in runs]
                if max(vals) >= 0.05:
                    rows.append((f"      step {key}", median(vals), " ".join(f"{x:.2f}" for x in vals)))
            rows.append(("    rows written (edges, nodes)", float("nan"),
                         " ".join(f"{r['edges']},{r['nodes']}" for r in runs)))
        if args.rounds:
            rep.add(table(["citegraph add", "median s", "runs"], rows))
        rows = []
        for name in names:
            adds = inproc[name]
            for key in sorted({k for a in adds for k in a["stages"]}, key=lambda k: (k == "total", k)):
                vals = [a["stages"].get(key, 0.0) for a in adds]
                rows.append((f"`{name}` stage {key}", median(vals), " ".join(f"{x:.2f}" for x in vals)))
            for key in sorted({k for a in adds for k in a["steps"]}):
                vals = [a["steps"].get(key, 0.0) for a in adds]
                if max(vals) >= 0.05:
                    rows.append((f"`{name}`   step {key}", median(vals), " ".join(f"{x:.2f}" for x in vals)))
            walls = [a["wall"] for a in adds]
            rows.append((f"`{name}` wall of Pipeline.run", median(walls), " ".join(f"{x:.2f}" for x in walls)))
            cpus = [a.get("cpu", float("nan")) for a in adds]
            rows.append((f"`{name}` CPU of Pipeline.run (process, all threads)", median(cpus),
                         " ".join(f"{x:.2f}" for x in cpus)))
            rows.append((f"`{name}` edges written", float("nan"), " ".join(str(a["edges_written"]) for a in adds)))
        rep.add(f"The server's path in one process: {args.inprocess_rounds} x 4 adds of 10 per checkout "
                "(model loaded, corpus primed first).")
        rep.add(table(["server path", "median s", "runs"], rows))
        if len(names) == 2:
            a, b = ([x["wall"] for x in inproc[n]] for n in names)
            ca, cb = ([x.get("cpu", float("nan")) for x in inproc[n]] for n in names)
            rep.add(f"Server path, `{names[1]}` / `{names[0]}`: wall {median(b) / median(a):.2f}, "
                    f"CPU {median(cb) / median(ca):.2f} (medians of {len(b)} adds each).")
        if not args.no_report:
            rep.save()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
