# ruff: noqa: E501 - long table rows
"""The whole pipeline's add of 10 papers at 3k / 30k / 100k synthetic papers (issue 12).

    python bench/add_scale.py [--sizes 3000,30000,100000] [--adds 3] [--code TREE ...]

bench/db_scale.py times the store's share of an add only; this runs ``Pipeline.run``
end to end, the server's way (a long-lived pipeline, its state kept between writes), on
an embedded store read by SQL (no mirror: the store's memory is not the question here).

The corpus is bench/scale.py's generator (topic-mixture vectors, Zipf terms), made into
papers the pipeline reads as it reads real ones, with **pre-made extractions and
vectors**: each paper's text lists its terms, its ``Extraction`` (one mention per term,
all in the lead sentence) goes into the extraction cache under the rule extractor's
version, and its vector into the embedding cache under the model's key. So no model is
loaded and no text is extracted; everything else (resolution, word vectors, SIMILAR_TO,
SHARES_TERM, RELATED_TO, CITES, the diff or the region, the write) is the real code.

Per size, in a subprocess of its own (peak RSS is that size's): the build (``replace``),
then ``--adds`` adds of 10 new papers, each timed with its stages and steps (the
median of all of them, and of those after the first: the first add after a build fills
what later adds keep, such as each paper's concept columns). ``--code``
(repeatable) runs the same on another checkout (PYTHONPATH), e.g. main's whole-graph path.
Between the build and the adds the heap is frozen for the cyclic collector, as the server
freezes it after its warm-up (``--no-freeze``: not; then a full collection walking the
whole built heap lands after some adds, "outside the stages": ~4 s at 30k).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, Report, median, table

EXTRA = 40  # papers beyond N, added 10 at a time (more when --adds asks for more)


def synthetic_corpus(total: int, work: Path, *, incremental: bool = True) -> tuple[Any, list[Any]]:
    """(a Pipeline whose caches under ``work`` hold every paper's extraction and vector,
    the ``total`` papers of bench/scale.py's generator made into papers, seed 0).

    Imports ``graph`` from the first checkout on sys.path (the one under test)."""
    from scale import generate

    import graph.build as gb
    from graph.build import ExtractionCache, Pipeline, embedding_text
    from graph.embed import EmbeddingCache, text_key
    from graph.extract import Extraction, RuleExtractor, TermMention
    from graph.ingest import paper_from_record
    from graph.settings import Settings

    # the extraction cache's key: the abstract as written since probe 10 (session 17), its
    # text_hash before; a miss would extract every text in the measured run
    key = getattr(gb, "abstract_key", None) or (lambda p: p.text_hash)
    vecs, terms, topics = generate(total, seed=0)
    papers = []
    extractions = {}
    for i in range(total):
        names = [f"{t.split(':', 1)[1].replace('-', 'q')}x model" for t in sorted(terms[i])]
        title = f"Synthetic paper {i} on topic {int(topics[i])}"
        lead = f"We study {', '.join(names)}."
        p = paper_from_record({"id": f"s{i:06d}", "title": title, "abstract": lead},
                              source=f"synthetic:{i}")
        papers.append(p)
        extractions[key(p)] = Extraction(
            concepts=tuple(TermMention(nm, nm, 1, lead, "model") for nm in names),
            datasets=(), acronyms=(), label=title,
        )
    settings = Settings(data_dir=work / "data")
    cache = work / "cache"
    pipe = Pipeline(settings, cache_dir=cache, incremental=incremental)
    ExtractionCache(cache / "extractions.sqlite", RuleExtractor().version).put_many(extractions)
    ec = EmbeddingCache(cache / "embeddings.sqlite")
    ec.put_many(pipe.embedder.key, {text_key(embedding_text(p)): vecs[i] for i, p in enumerate(papers)})
    ec.close()
    return pipe, papers


def _child(n: int, adds: int, work: Path, freeze: bool = True) -> dict[str, Any]:
    # the checkout under test first: common.py put this one's root on the path
    sys.path.insert(0, os.environ.get("PYTHONPATH", str(ROOT)))
    from graph.store.embedded import EmbeddedStore

    t0 = time.perf_counter()
    # 40 unless more adds are asked for (then every add has 10 new papers; the corpus of
    # the first N is another draw of the generator)
    extra = max(EXTRA, 10 * adds)
    pipe, papers = synthetic_corpus(n + extra, work)
    out: dict[str, Any] = {"n": n, "generate_s": time.perf_counter() - t0}
    store = EmbeddedStore(work / "data" / "graph.db", reads="sql")
    t = time.perf_counter()
    rep = pipe.run(store, add_papers=papers[:n], replace=True)
    out["build_s"] = time.perf_counter() - t
    out["build_stages"] = rep.stage_seconds
    out["build_steps"] = rep.step_seconds
    out["edges"] = sum(rep.stats.edges.values()) if rep.stats else 0
    if freeze:
        # as the server does once its warm-up is done (api/services.py): the heap the
        # build left is frozen for the cyclic collector, whose full collections otherwise
        # walk all of it after an add (~4 s of each of the first adds at 30k)
        t = time.perf_counter()
        gc.collect()
        gc.freeze()
        out["freeze_s"] = time.perf_counter() - t
    out["adds"] = []
    for a in range(adds):
        batch = papers[n + 10 * a : n + 10 * (a + 1)]
        t = time.perf_counter()
        rep = pipe.run(store, add_papers=batch)
        out["adds"].append({"wall": time.perf_counter() - t, "stages": rep.stage_seconds,
                            "steps": rep.step_seconds, "edges": rep.edges_written,
                            "nodes": rep.nodes_written})
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    pipe.close()
    store.close()
    return out


def run_child(script: Path, tree: Path, n: int, extra: list[str]) -> dict[str, Any] | None:
    """Run ``script --child n --work <tmp> *extra`` in a subprocess on checkout ``tree``
    (its ``graph`` first on the path), print and return its JSON line (None: it failed,
    and its stderr's tail is printed)."""
    work = Path(tempfile.mkdtemp(prefix=f"citegraph-{script.stem}-"))
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(tree))
    try:
        proc = subprocess.run(
            [sys.executable, str(script.resolve()), "--child", str(n), "--work", str(work), *extra],
            cwd=tree, env=env, capture_output=True, text=True, check=False,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if proc.returncode != 0:
        print(f"{tree.name} N={n}: failed\n{proc.stderr[-3000:]}", file=sys.stderr)
        return None
    got: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    print(json.dumps({"code": tree.name, **got}), flush=True)
    return got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="3000,30000,100000")
    ap.add_argument("--adds", type=int, default=3)
    ap.add_argument("--code", type=Path, action="append", help="checkouts to run (default: this one)")
    ap.add_argument("--no-report", action="store_true")
    ap.add_argument("--no-freeze", action="store_true",
                    help="leave the built heap to the cyclic collector (the server freezes it)")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        print(json.dumps(_child(args.child, args.adds, args.work, not args.no_freeze)))
        return 0
    trees = [c.resolve() for c in (args.code or [ROOT])]
    results: list[tuple[str, dict[str, Any]]] = []
    for n in [int(s) for s in args.sizes.split(",")]:
        for tree in trees:
            got = run_child(Path(__file__), tree, n, ["--adds", str(args.adds),
                                                      *(["--no-freeze"] if args.no_freeze else [])])
            if got is not None:
                results.append((tree.name, got))
    rep = Report("The whole pipeline's add of 10 at scale (bench/add_scale.py)")
    rows: list[tuple[object, ...]] = []
    for name, r in results:
        walls = [a["wall"] for a in r["adds"]]
        outside = [a["wall"] - a["stages"]["total"] for a in r["adds"]]
        rows.append((name, r["n"], r["edges"], round(r["build_s"], 1), median(walls),
                     median(walls[1:]) if len(walls) > 1 else "-",
                     " ".join(f"{w:.2f}" for w in walls), " ".join(f"{w:.2f}" for w in outside),
                     " ".join(str(a["edges"]) for a in r["adds"]), round(r["peak_rss_mib"])))
    rep.add(table(["code", "N", "edges", "build s", "add 10: median s", "median s after the first", "runs", "of which outside the stages", "edges written", "peak RSS MiB"], rows))
    steps: list[tuple[object, ...]] = []
    for name, r in results:
        keys = sorted({k for a in r["adds"] for k in a["steps"]} | {f"stage {k}" for a in r["adds"] for k in a["stages"]})
        for key in keys:
            vals = [a["stages"].get(key[6:], 0.0) if key.startswith("stage ") else a["steps"].get(key, 0.0) for a in r["adds"]]
            if max(vals) >= 0.02:
                steps.append((name, r["n"], key, median(vals)))
    rep.add(table(["code", "N", "stage / step", "median s"], steps))
    if not args.no_report:
        rep.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
