# ruff: noqa: E501 - long table rows
"""`citegraph build` of N synthetic papers into a new embedded database: time and peak
memory by stage (issue 12's "build link + store <= 120 s, peak RSS <= 2 GB" at 100k).

    python bench/build_scale.py [--sizes 30000,100000] [--code TREE ...] [--rounds 1] [--over]

The corpus is bench/add_scale.py's (bench/scale.py's generator, pre-made extractions and
vectors in the caches, so no model is loaded and no text is extracted), made by a
subprocess of its own into a ``papers.jsonl`` and the caches. The build is the CLI's: a
one-shot pipeline (``incremental=False``) reading that file and writing to an empty
``graph.db`` through a ``reads="sql"`` store, ``replace=True`` (``--over``: into a folder
that a build of the same papers, in the making subprocess, filled: the rebuild a user runs
after changing a setting, here with nothing changed). Each (size, checkout,
round) runs in a subprocess of its own, so its peak RSS is its own.

A thread samples the process's RSS every 20 ms; each sample's value counts toward the
step or stage the pipeline's timers (``graph.build._Timer``) are in, so "peak in" is the
highest RSS seen while that step ran and "RSS at start" what it started from. "input" is
the RSS before the build starts (the imports and the pipeline; the papers are read by the
build, in its ``read`` stage). Until session 17 the papers were generated in the measured
process, whose "input" then held the generator's leftovers too (~1 GB at 100k). The
issue's "build link + store" is ``link`` + ``write`` (+ ``diff``, the part of the write
that finds what to write).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from add_scale import run_child
from common import ROOT, Report, median, table

SAMPLE_S = 0.02


def _rss_mib() -> float:
    with Path("/proc/self/statm").open() as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _make(n: int, work: Path, over: bool) -> None:
    """The corpus of N papers into ``work``: the caches and ``papers.jsonl``; ``over``:
    built into ``work/data`` too, for the measured build to rebuild."""
    sys.path.insert(0, os.environ.get("PYTHONPATH", str(ROOT)))
    from add_scale import synthetic_corpus

    pipe, papers = synthetic_corpus(n, work, incremental=False)
    with (work / "papers.jsonl").open("w", encoding="utf-8") as f:
        for p in papers:
            f.write(json.dumps({"id": p.id, "title": p.title, "abstract": p.abstract}) + "\n")
    if over:
        from graph.store.embedded import EmbeddedStore

        store = EmbeddedStore(work / "data" / "graph.db", reads="sql")
        pipe.run(store, add_paths=[work / "papers.jsonl"], replace=True)
        store.close()
    pipe.close()


def _child(n: int, work: Path, over: bool) -> dict[str, Any]:
    sys.path.insert(0, os.environ.get("PYTHONPATH", str(ROOT)))
    import graph.build as gb
    from graph.settings import Settings
    from graph.store.embedded import EmbeddedStore

    t0 = time.perf_counter()
    subprocess.run([sys.executable, __file__, "--make", str(n), "--work", str(work),
                    *(["--over"] if over else [])], check=True)
    pipe = gb.Pipeline(Settings(data_dir=work / "data"), cache_dir=work / "cache", incremental=False)
    out: dict[str, Any] = {"n": n, "generate_s": time.perf_counter() - t0, "input_mib": _rss_mib()}
    stack: list[str] = []
    peaks: dict[str, float] = {}
    starts: dict[str, float] = {}
    peak = {"all": 0.0}
    lock = threading.Lock()
    done = threading.Event()

    def sample() -> None:
        while not done.wait(SAMPLE_S):
            r = _rss_mib()
            with lock:
                peak["all"] = max(peak["all"], r)
                for name in stack:
                    peaks[name] = max(peaks.get(name, 0.0), r)

    enter, leave = gb._Timer.__enter__, gb._Timer.__exit__

    def timed_enter(self: Any) -> None:
        r = _rss_mib()
        with lock:
            stack.append(self.stage)
            starts.setdefault(self.stage, r)
            peaks[self.stage] = max(peaks.get(self.stage, 0.0), r)
        enter(self)

    def timed_exit(self: Any, *exc: object) -> None:
        leave(self, *exc)
        with lock:
            stack.remove(self.stage)

    gb._Timer.__enter__, gb._Timer.__exit__ = timed_enter, timed_exit  # type: ignore[method-assign]
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    store = EmbeddedStore(work / "data" / "graph.db", reads="sql")
    t = time.perf_counter()
    rep = pipe.run(store, add_paths=[work / "papers.jsonl"], replace=True)
    if rep.papers_read != n or rep.problems:
        raise SystemExit(f"read {rep.papers_read} of {n} papers: {rep.problems[:3]}")
    out["build_s"] = time.perf_counter() - t
    done.set()
    sampler.join()
    out["stages"] = rep.stage_seconds
    out["steps"] = rep.step_seconds
    out["edges"] = sum(rep.stats.edges.values()) if rep.stats else 0
    out["peak_in"] = peaks
    out["start_rss"] = starts
    out["peak_mib"] = max(peak["all"], _rss_mib())
    out["file_mib"] = sum(p.stat().st_size for p in (work / "data").glob("graph.db*")) / 2**20
    pipe.close()
    store.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="30000,100000")
    ap.add_argument("--code", type=Path, action="append", help="checkouts to run side by side (default: this one)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--no-report", action="store_true")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--over", action="store_true",
                    help="rebuild over a folder that holds the graph of the same papers")
    ap.add_argument("--make", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.make is not None:
        _make(args.make, args.work, args.over)
        return 0
    if args.child is not None:
        print(json.dumps(_child(args.child, args.work, args.over)))
        return 0
    trees = [c.resolve() for c in (args.code or [ROOT])]
    results: list[tuple[str, dict[str, Any]]] = []
    for n in [int(s) for s in args.sizes.split(",")]:
        for _ in range(args.rounds):
            for tree in trees:
                got = run_child(Path(__file__), tree, n, ["--over"] if args.over else [])
                if got is not None:
                    results.append((tree.name, got))
    rep = Report("`citegraph build` at scale: time and memory by stage (bench/build_scale.py)"
                 + (", over a folder holding the same graph" if args.over else ""))
    rows: list[tuple[object, ...]] = []
    for name, r in results:
        st = r["stages"]
        link_store = st.get("link", 0.0) + st.get("write", 0.0) + r["steps"].get("diff", 0.0)
        rows.append((name, r["n"], r["edges"], round(r["build_s"], 1), round(link_store, 1),
                     round(r["input_mib"]), round(r["peak_mib"]), round(r["peak_mib"] - r["input_mib"]),
                     round(r["file_mib"])))
    rep.add(table(["code", "N", "edges", "build s", "link + diff + write s", "input RSS MiB",
                   "peak RSS MiB", "peak - input MiB", "file MiB"], rows))
    parts: list[tuple[object, ...]] = []
    for name, r in results:
        timed = {**{f"stage {k}": v for k, v in r["stages"].items() if k != "total"}, **r["steps"]}
        for key in sorted(timed, key=lambda k: -timed[k]):
            raw = key[6:] if key.startswith("stage ") else key
            if timed[key] >= 0.05 * r["build_s"] or r["peak_in"].get(raw, 0.0) >= 0.8 * r["peak_mib"]:
                parts.append((name, r["n"], key, round(timed[key], 1),
                              round(r["start_rss"].get(raw, 0.0)), round(r["peak_in"].get(raw, 0.0))))
    rep.add(table(["code", "N", "stage / step", "s", "RSS at start MiB", "peak in MiB"], parts))
    if len(trees) > 1:
        ratio: list[tuple[object, ...]] = []
        for n in sorted({r["n"] for _, r in results}):
            by = {name: [r for nm, r in results if nm == name and r["n"] == n] for name in (t.name for t in trees)}
            if all(by.values()):
                base = median([r["build_s"] for r in by[trees[0].name]])
                for name, rs in by.items():
                    ratio.append((n, name, median([r["build_s"] for r in rs]), round(median([r["build_s"] for r in rs]) / base, 2),
                                  median([r["peak_mib"] for r in rs])))
        rep.add(table(["N", "code", "build s (median)", "against the first", "peak RSS MiB (median)"], ratio))
    if not args.no_report:
        rep.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
