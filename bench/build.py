"""`citegraph build` and `citegraph add` on a real corpus, as a user runs them.

    python -m bench build [--rounds 3] [--quick]

On a new data folder (no caches): a cold ``citegraph build`` (every text extracted and
embedded), the same build again (nothing changed), then ``--rounds`` times, each on a fresh
copy of the built folder: the model's load alone in a new process (import, weights, one
encode) and ``citegraph add`` of 10 new papers (corpus abstracts with a sentence added).
Last, ``addPapers`` of 10 other new papers on ``citegraph serve`` with its model loaded.
Full: ICLR 2021 (2,966 papers); ``--quick``: the seeds (76). Issue 12's goals on ICLR 2021:
``citegraph add`` of 10 within the model's load + 2 s, ``addPapers`` of 10 within 0.02 of
the cold build; issue 4's: an unchanged rebuild within 0.05 of the cold build.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.common import ICLR_TSV, ROOT, SEEDS_DIR, Result, citegraph, env, median

LOAD_MODEL = ("from graph.embed import SentenceTransformerEmbedder as E; "
              "E().encode(['warm up'])")
ADD = "mutation($p: [PaperInput!]!) { addPapers(input: $p) { added } }"
KEY = "bench-build-key"


def _batch(path: Path, abstracts: list[str], tag: str) -> list[dict[str, str]]:
    rows = [{"id": f"bench-{tag}-{i}", "abstract": f"{a} We also release the {tag}{i} toolkit."}
            for i, a in enumerate(abstracts)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return rows


def run(argv: list[str]) -> Result:
    ap = argparse.ArgumentParser(prog="python -m bench build", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3, help="model loads and adds (3)")
    ap.add_argument("--quick", action="store_true", help="the seeds instead of ICLR 2021")
    args = ap.parse_args(argv)
    source = SEEDS_DIR if args.quick else ICLR_TSV
    result = Result("build", quick=args.quick,
                    corpus="seeds (76 papers)" if args.quick else "ICLR 2021 (2,966 papers)")
    from graph.ingest import read_corpus

    abstracts = [p.abstract for p in read_corpus([source]).papers[:20]]
    with tempfile.TemporaryDirectory(prefix="citegraph-bench-build-") as tmp_s:
        tmp = Path(tmp_s)
        built = tmp / "built"
        cold = citegraph(built, "build", str(source), "--json")
        if cold.rc not in (0, 3):
            raise RuntimeError(f"cold build failed: {cold.stderr[-2000:]}")
        rep = cold.json()
        again = citegraph(built, "build", str(source), "--json")
        if again.rc not in (0, 3):
            raise RuntimeError(f"rebuild failed: {again.stderr[-2000:]}")
        result.figure("cold `citegraph build`", cold.wall_s, "s")
        result.figure("of which embedding (stage embed)", rep["stage_seconds"].get("embed", 0.0),
                      "s")
        result.figure("peak RSS of the build (or of its model's process)", round(cold.peak_rss_mib),
                      "MiB")
        ratio = again.wall_s / cold.wall_s
        result.figure("the same build again ÷ cold build", round(ratio, 3), "",
                      "≤ 0.05", ratio <= 0.05)

        batch = tmp / "add.jsonl"
        _batch(batch, abstracts[:10], "cli")
        loads, adds = [], []
        for r in range(args.rounds):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", LOAD_MODEL], cwd=ROOT, env=env(), check=True,
                           capture_output=True)
            loads.append(time.perf_counter() - t0)
            copy = tmp / f"add{r}"
            shutil.copytree(built, copy)
            add = citegraph(copy, "add", str(batch), "--json")
            if add.rc != 0:
                raise RuntimeError(f"add failed: {add.stderr[-2000:]}")
            adds.append(add.wall_s)
            shutil.rmtree(copy)
        over = median([a - m for a, m in zip(adds, loads, strict=True)])
        result.figure("model load alone (median)", median(loads), "s")
        result.figure("`citegraph add` of 10 (median)", median(adds), "s")
        result.figure("`citegraph add` of 10 minus the model's load", over, "s", "≤ 2 s",
                      over <= 2.0)

        from bench.load import start_server

        served = tmp / "served"
        shutil.copytree(built, served)
        papers = _batch(tmp / "api.jsonl", abstracts[10:20], "api")
        server = start_server(served, {"CITEGRAPH_API_KEY": KEY})
        try:
            with httpx.Client(base_url=server.url, timeout=600) as c:
                t0 = time.perf_counter()
                r = c.post("/graphql", json={"query": ADD, "variables": {"p": papers}},
                           headers={"X-API-Key": KEY})
                api_s = time.perf_counter() - t0
            body = r.json()
            if r.status_code != 200 or body.get("errors"):
                raise RuntimeError(f"addPapers failed: {r.status_code} {str(body)[:500]}")
        finally:
            server.stop()
        share = api_s / cold.wall_s
        result.figure("`addPapers` of 10 on a warm server", api_s, "s")
        result.figure("`addPapers` of 10 ÷ cold build", round(share, 4), "", "≤ 0.02",
                      share <= 0.02)
        result.table("Runs", ["run", "wall s", "peak RSS MiB"],
                     [["cold build", round(cold.wall_s, 1), round(cold.peak_rss_mib)],
                      ["the same build again", round(again.wall_s, 1), round(again.peak_rss_mib)],
                      *[[f"round {i + 1}: model load / add of 10", f"{m:.2f} / {a:.2f}", ""]
                        for i, (m, a) in enumerate(zip(loads, adds, strict=True))]])
        result.table("Cold build, stage seconds", list(rep["stage_seconds"]),
                     [[round(v, 2) for v in rep["stage_seconds"].values()]])
    return result
