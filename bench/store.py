# ruff: noqa: E501 - long table rows
"""The embedded database store on a real graph: writes, visibility, concurrency, opening.

    python bench/store.py --data-dir DIR [--trials 3] [--no-report] [--code TREE]

DIR holds a built graph (e.g. ``citegraph --data-dir DIR build ../shared/data/iclr2021/paperlist.tsv``);
the cold build's ``stage_seconds.total`` is read from ``DIR/build.json`` when present (the
``--json`` output of that build) so ratios to it can be given. Every step works on copies.

Measured, side by side in one run:

* ``citegraph stats`` in a fresh process (opening the graph) and ``citegraph neighbors``
  (which loads the graph into memory);
* ``citegraph add`` of 10 new papers (new texts: ICLR abstracts with one sentence added),
  wall time, against the model load measured alone in a fresh process;
* ``addPapers`` of 10 new papers on a running server (model loaded), median of runs;
* the same add in one process, the way the server runs it (one long-lived pipeline, model
  loaded, corpus resolved ahead when the code can), split by stage and step;
* rows written by one add (from the database's commit log), and the time of the same
  change saved the old way (the whole graph rewritten as ``graph.citegraph``);
* how long a running server takes to see a ``citegraph add`` made by another process;
* two ``citegraph add`` at once, ``--trials`` times: papers expected vs found.

``--code TREE`` measures another checkout's citegraph (e.g. ``main`` in a worktree) with
this script, so two versions can be measured side by side in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import ROOT, Report, median, table
from bench.load import start_server
from graph.ingest import read_corpus
from graph.model import GraphChange, NodeKind
from graph.store.embedded import EmbeddedStore
from graph.store.memory import NetworkxStore

API_KEY = "bench-store-key"
#: the checkout whose citegraph is measured (``--code``)
TARGET: dict[str, Path] = {"code": ROOT}

# One add after another in one process, as the API's Services runs them: one pipeline,
# the model loaded first, the stored corpus resolved ahead (Pipeline.prime) when the code
# has it. Prints one JSON line per add.
INPROCESS = r"""
import json, sys, time
from pathlib import Path
from graph.ingest import paper_from_record
from graph.service import Embedding, GraphService
from graph.settings import Settings
from graph.store import open_store
data, rows = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text())
s = Settings(data_dir=data)
store = open_store(s)
emb = Embedding(s)
emb.embedder().encode(["warm up"])
store.stats()
pipe = GraphService(s, store, emb).pipeline()
t0 = time.perf_counter()
if hasattr(pipe, "prime"):
    pipe.prime(store)
print(json.dumps({"prime": time.perf_counter() - t0}), flush=True)
for i, batch in enumerate(rows):
    papers = [paper_from_record(r, source=f"bench:{i}") for r in batch]
    t0, c0 = time.perf_counter(), time.process_time()
    rep = pipe.run(store, add_papers=papers)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(json.dumps({"wall": wall, "cpu": cpu, "added": len(rep.added), "stages": rep.stage_seconds,
                      "steps": getattr(rep, "step_seconds", {}),
                      "edges_written": rep.edges_written}), flush=True)
pipe.close()
store.close()
"""


def _env() -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(TARGET["code"]), TOKENIZERS_PARALLELISM="false")
    env.pop("CITEGRAPH_STORE", None)
    return env


def cli(data: Path, *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "citegraph", "--data-dir", str(data), *args],
        cwd=TARGET["code"], env=_env(), capture_output=True, text=True, timeout=900, check=False,
    )
    return time.perf_counter() - t0, out


def inprocess_adds(data: Path, batches: list[list[dict[str, Any]]], work: Path) -> list[dict[str, Any]]:
    """Adds one after another in one process with the model loaded (the server's path)."""
    rows = work / "inprocess.json"
    rows.write_text(json.dumps(batches), encoding="utf-8")
    out = subprocess.run([sys.executable, "-c", INPROCESS, str(data), str(rows)], cwd=TARGET["code"],
                         env=_env(), capture_output=True, text=True, timeout=1800, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def model_load_s() -> float:
    code = (
        "import time; t=time.perf_counter();"
        "from graph.embed import SentenceTransformerEmbedder;"
        "e=SentenceTransformerEmbedder('all-MiniLM-L6-v2'); e.encode(['x']);"
        "print(time.perf_counter()-t)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=TARGET["code"], env=_env(), capture_output=True,
                         text=True, timeout=300, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def new_papers(source: Path, tag: str, n: int = 10, offset: int = 0) -> list[dict[str, Any]]:
    papers = read_corpus([source]).papers[offset : offset + n]
    return [
        {"id": f"{tag}-{i}", "title": f"{p.title or p.label} ({tag})",
         "abstract": f"{p.abstract} We also study the {tag} {i} setting."}
        for i, p in enumerate(papers)
    ]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def paper_count(client: httpx.Client) -> int:
    r = client.post("/graphql", json={"query": "{ stats { nodes { kind count } } }"})
    rows = r.json()["data"]["stats"]["nodes"]
    return int(next(x["count"] for x in rows if x["kind"] == NodeKind.PAPER.value))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data-dir", type=Path, required=True, help="a built graph (copied, never changed)")
    beside = [up / "shared" / "data" / "iclr2021" / "paperlist.tsv" for up in (ROOT.parent, ROOT.parent.parent)]
    ap.add_argument("--source", type=Path, default=next((p for p in beside if p.exists()), beside[0]),
                    help="where the new papers' abstracts come from")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--api-runs", type=int, default=3)
    ap.add_argument("--inprocess-runs", type=int, default=5)
    ap.add_argument("--code", type=Path, default=ROOT, help="the checkout whose citegraph is measured")
    ap.add_argument("--no-report", action="store_true")
    args = ap.parse_args()
    TARGET["code"] = args.code.resolve()
    src: Path = args.data_dir
    build = src / "build.json"
    cold = float(json.loads(build.read_text())["stage_seconds"]["total"]) if build.exists() else float("nan")
    work = Path(tempfile.mkdtemp(prefix="citegraph-bench-store-"))
    rep = Report("Embedded database store: writes, visibility, concurrency (bench/store.py)")
    try:
        def copy(name: str) -> Path:
            dst = work / name
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.lock", "build.json"))
            return dst

        base = EmbeddedStore(src / "graph.db")
        n_papers = base.stats().nodes[NodeKind.PAPER.value]
        base.close()

        # ---- opening
        d = copy("open")
        t_stats, out = cli(d, "stats", "--json")
        assert out.returncode == 0, out.stderr
        some = next(iter(json.loads(cli(d, "search", "graph", "--json", "--kind", "paper")[1].stdout)))["id"]
        t_nb, out = cli(d, "neighbors", "--json", "--", some)
        assert out.returncode == 0, out.stderr
        t_py, _ = cli(d, "--help")

        # ---- CLI add of 10 (model loads in the process)
        load_s = model_load_s()
        d = copy("cli-add")
        batch = write_jsonl(work / "cli10.jsonl", new_papers(args.source, "cliadd"))
        t_add, out = cli(d, "add", str(batch), "--json")
        assert out.returncode == 0, out.stderr[-2000:]
        add_report = json.loads(out.stdout)
        db = EmbeddedStore(d / "graph.db")
        summary = db.history(1)[0]["summary"]
        # the same graph saved the old way: the whole file rewritten
        legacy = NetworkxStore(work / "legacy.citegraph")
        legacy.apply(GraphChange(
            upsert_nodes=tuple(db.snapshot().nodes.values()),
            upsert_edges=tuple(db.snapshot().edges.values()),
            embedding_ids=tuple(db.embedding_matrix()[0]),
            embeddings=db.embedding_matrix()[1],
            embedding_model=db.embedding_model(),
        ))
        t0 = time.perf_counter()
        legacy.save()
        t_legacy = time.perf_counter() - t0
        size_legacy = (work / "legacy.citegraph").stat().st_size
        db.close()

        # ---- server: addPapers x runs, then visibility of a CLI add
        d = copy("served")
        server = start_server(d, {"CITEGRAPH_API_KEY": API_KEY, "CITEGRAPH_REQUEST_TIMEOUT_S": "300"},
                              code=TARGET["code"])
        api_times: list[float] = []
        try:
            with httpx.Client(base_url=server.url, timeout=300) as c:
                for run in range(args.api_runs):
                    rows = new_papers(args.source, f"api{run}", offset=20 + 10 * run)
                    t0 = time.perf_counter()
                    r = c.post("/graphql", headers={"X-API-Key": API_KEY}, json={
                        "query": "mutation($p:[PaperInput!]!){ addPapers(input:$p){ added } }",
                        "variables": {"p": rows}})
                    api_times.append(time.perf_counter() - t0)
                    assert len(r.json()["data"]["addPapers"]["added"]) == 10, r.text[:500]
                start = paper_count(c)
                batch = write_jsonl(work / "vis10.jsonl", new_papers(args.source, "vis", offset=80))
                _, out = cli(d, "add", str(batch))
                assert out.returncode == 0, out.stderr[-2000:]
                done = time.perf_counter()
                seen = float("nan")
                while time.perf_counter() - done < 30:
                    if paper_count(c) == start + 10:
                        seen = time.perf_counter() - done
                        break
                    time.sleep(0.01)
        finally:
            server.stop()

        # ---- the server's path in one process, split by stage
        d = copy("inprocess")
        batches = [new_papers(args.source, f"inproc{run}", offset=200 + 10 * run)
                   for run in range(args.inprocess_runs)]
        inproc = inprocess_adds(d, batches, work)
        prime_s = float(inproc[0]["prime"])
        adds = inproc[1:]
        assert all(a["added"] == 10 for a in adds), adds

        # ---- two adds at once
        lost_rows = []
        for trial in range(args.trials):
            d = copy(f"pair{trial}")
            a = write_jsonl(work / f"a{trial}.jsonl", new_papers(args.source, f"a{trial}", offset=100 + 20 * trial))
            b = write_jsonl(work / f"b{trial}.jsonl", new_papers(args.source, f"b{trial}", offset=110 + 20 * trial))
            procs = [subprocess.Popen([sys.executable, "-m", "citegraph", "--data-dir", str(d), "add", str(f)],
                                      cwd=TARGET["code"], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                     for f in (a, b)]
            outs = [p.communicate(timeout=900) for p in procs]
            waited = any(b"waiting for another writer" in e for _, e in outs)
            s = EmbeddedStore(d / "graph.db")
            found = s.stats().nodes[NodeKind.PAPER.value]
            s.close()
            lost_rows.append((trial + 1, n_papers + 20, found, "yes" if waited else "no",
                              ",".join(str(p.returncode) for p in procs)))

        rep.add(f"Graph: {n_papers} papers ({src}); cold build {cold:.1f} s (from build.json).")
        rep.add(table(["what", "seconds", "ratio"], [
            ("python -m citegraph --help (interpreter + imports)", t_py, float("nan")),
            ("citegraph stats (fresh process, SQL counts)", t_stats, float("nan")),
            ("citegraph neighbors (fresh process, loads the graph)", t_nb, float("nan")),
            ("model load + first encode, alone", load_s, float("nan")),
            ("citegraph add, 10 papers (wall)", t_add, t_add / cold),
            ("  of which: stages " + ", ".join(f"{k} {v:.1f}" for k, v in add_report["stage_seconds"].items()), float("nan"), float("nan")),
            (f"addPapers, 10 papers, server with model loaded (median of {args.api_runs})", median(api_times), median(api_times) / cold),
            ("a CLI add seen by the running server, after the CLI exited", seen, float("nan")),
        ]))
        keys = sorted({k for a in adds for k in a["stages"]}, key=lambda k: (k == "total", k))
        steps = sorted({k for a in adds for k in a["steps"]})
        rep.add(
            f"The server's path in one process (`{TARGET['code'].name}`): {len(adds)} adds of 10 papers one "
            f"after another, model loaded, corpus resolved ahead in {prime_s:.1f} s "
            "(0 where the code cannot). Median and each run, seconds:"
        )
        rep.add(table(
            ["stage / step", "median", "runs"],
            [(k, median([a["stages"].get(k, 0.0) for a in adds]),
              " ".join(f"{a['stages'].get(k, 0.0):.2f}" for a in adds)) for k in keys]
            + [(f"  step {k}", median([a["steps"].get(k, 0.0) for a in adds]),
                " ".join(f"{a['steps'].get(k, 0.0):.2f}" for a in adds)) for k in steps]
            + [("edges written", median([float(a["edges_written"]) for a in adds]),
                " ".join(str(a["edges_written"]) for a in adds))],
        ))
        rep.add(
            f"Rows written by that add (one commit): {summary}. The same graph saved the old way "
            f"(whole `graph.citegraph` rewritten): {t_legacy:.2f} s, {size_legacy / 1e6:.1f} MB."
        )
        rep.add(table(["trial", "papers expected", "papers found", "second writer waited", "exit codes"], lost_rows))
        if not args.no_report:
            rep.save()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
