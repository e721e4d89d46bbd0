# ruff: noqa: E501 - long table rows
"""Build benchmarks: stage times, pipeline overhead, cached and incremental rebuilds, bf16.

For the seeds (76 abstracts) and ICLR 2021 (2,966), in one process:

* per-stage seconds of ``Pipeline.run`` into a file-backed NetworkxStore with a cold
  cache (read includes cleaning; clean is also timed alone on the raw abstracts);
* pipeline overhead = whole cold build ÷ bare ``SentenceTransformer.encode`` of the same
  texts with the same settings (truncate at the model window, float32, batch 32,
  normalised). The model is loaded before both, so neither pays for loading (its load
  time is shown apart). Seeds: median of 3 alternating pairs; ICLR: one pair;
* cached rebuild of the unchanged corpus (same graph file, warm caches; median of 3)
  ÷ cold build, and an empty store with warm caches ÷ cold build;
* add 10 papers to the ICLR graph (2,956 papers stored; the caches hold everything but
  the 10 new texts, so those are extracted and embedded cold) ÷ the cold full build;
* float32 vs bfloat16 embeddings on a seeded sample of ICLR texts: paired timings
  (median ratio of 3 rounds on 60 texts) and agreement: mean cosine between the two vectors of a
  text, and overlap@10 of the SIMILAR_TO lists computed within a 300-text sample.

``--iclr-n N`` runs the cold/cached/add-10/overhead measurements on the first N ICLR papers
(the embedding of all 2,966 takes 7-15 minutes on a busy 2-core machine, twice over for
the overhead ratio); a last row then builds all 2,966 with the embeddings pre-cached
(bench/.cache, filled by bench/quality.py) and everything else cold, so the non-model
stages are still timed at full size.
``--quick``: seeds plus a 300-paper ICLR subset, 200 texts for bf16.
"""

from __future__ import annotations

import argparse
import csv
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import ICLR_TSV, SEEDS_DIR, Report, load_iclr, load_seeds, median, table

from graph.build import Pipeline, embedding_text
from graph.embed import SentenceTransformerEmbedder, text_key
from graph.ingest import clean_text
from graph.link import top_k_similar
from graph.settings import Settings
from graph.store.memory import NetworkxStore

STAGES = ("read", "load", "extract", "embed", "link", "write", "total")


def raw_abstracts(kind: str, limit: int | None = None) -> list[str]:
    if kind == "iclr":
        csv.field_size_limit(sys.maxsize)
        with ICLR_TSV.open(encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
        return [r["abstract"] for r in rows][:limit]
    out = []
    for p in sorted(SEEDS_DIR.glob("*.txt")):
        out += [b for b in p.read_text(encoding="utf-8").split("\n\n") if b.strip()]
    return out


def forget(db_path: Path, keys: list[str]) -> None:
    """Delete ``keys`` from every table of a cache database (whatever its schema version)."""
    with sqlite3.connect(db_path) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for t in tables:
            cols = {r[1] for r in db.execute(f"PRAGMA table_info({t})")}
            col = "key" if "key" in cols else "hash" if "hash" in cols else None
            if col:
                db.executemany(f"DELETE FROM {t} WHERE {col} = ?", [(k,) for k in keys])


def write_subset_tsv(papers: list[Any], path: Path) -> None:
    """The first ``len(papers)`` ICLR rows as a TSV the reader takes (for --quick)."""
    lines = ICLR_TSV.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines[: len(papers) + 1]) + "\n", encoding="utf-8")


def cold_build(settings: Settings, embedder: SentenceTransformerEmbedder, inputs: list[Path],
               folder: Path) -> dict[str, float]:
    folder.mkdir(parents=True, exist_ok=True)
    store = NetworkxStore(folder / "graph.citegraph")
    pipe = Pipeline(settings, embedder, cache_dir=folder / "cache")
    try:
        rep = pipe.run(store, add_paths=inputs, replace=True)
    finally:
        pipe.close()
    return dict(rep.stage_seconds)


def rebuild(settings: Settings, embedder: SentenceTransformerEmbedder, inputs: list[Path],
            folder: Path, fresh_store: bool) -> dict[str, float]:
    path = folder / ("graph.citegraph" if not fresh_store else "fresh.citegraph")
    if fresh_store and path.exists():
        path.unlink()
    store = NetworkxStore(path)
    pipe = Pipeline(settings, embedder, cache_dir=folder / "cache")
    try:
        t0 = time.perf_counter()
        rep = pipe.run(store, add_paths=inputs, replace=True)
        out = dict(rep.stage_seconds)
        out["total"] = time.perf_counter() - t0
        assert rep.embedded == 0, "a rebuild of an unchanged corpus embedded something"
    finally:
        pipe.close()
    return out


def bare_encode(model: Any, texts: list[str], batch: int) -> float:
    t0 = time.perf_counter()
    model.encode(texts, batch_size=batch, convert_to_numpy=True, normalize_embeddings=True,
                 show_progress_bar=False)
    return time.perf_counter() - t0


def stage_row(name: str, s: dict[str, float]) -> list[Any]:
    return [name, *(s.get(k, 0.0) for k in STAGES)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="seeds + 300 ICLR papers")
    ap.add_argument("--iclr-n", type=int, default=None, help="ICLR papers for the cold builds")
    args = ap.parse_args()
    rep = Report("Build: stages, overhead, cached and incremental rebuilds, bf16"
                 + (" (quick)" if args.quick else ""))
    settings = Settings()
    t_all = time.perf_counter()
    embedder = SentenceTransformerEmbedder(
        settings.model, dtype=settings.embed_dtype, batch_size=settings.embed_batch_size,
        long_text=settings.long_text,
    )
    t0 = time.perf_counter()
    model = embedder._load()
    load_s = time.perf_counter() - t0
    tmp = Path(tempfile.mkdtemp(prefix="cg-bench-build-"))
    stage_rows, ratio_rows = [], []
    try:
        # ------------------------------------------------------------- seeds
        seeds = load_seeds()
        seed_texts = [embedding_text(p) for p in seeds]
        colds, bares = [], []
        for r in range(3):
            colds.append(cold_build(settings, embedder, [SEEDS_DIR], tmp / f"seeds{r}"))
            bares.append(bare_encode(model, seed_texts, settings.embed_batch_size))
        med = {k: median([c.get(k, 0.0) for c in colds]) for k in STAGES}
        stage_rows.append(stage_row(f"seeds ({len(seeds)}), cold, median of 3", med))
        cached = [rebuild(settings, embedder, [SEEDS_DIR], tmp / "seeds0", False) for _ in range(3)]
        stage_rows.append(stage_row("seeds, rebuild unchanged (same file), median of 3",
                                    {k: median([c.get(k, 0.0) for c in cached]) for k in STAGES}))
        seed_ratios = [c["total"] / b for c, b in zip(colds, bares, strict=True)]
        ratio_rows.append(["seeds: cold build ÷ bare model.encode", median(seed_ratios),
                           "≤ 1.10", f"pairs: {', '.join(f'{x:.2f}' for x in seed_ratios)}; "
                           f"embed stage ÷ encode {median([c['embed'] / b for c, b in zip(colds, bares, strict=True)]):.2f}"])
        ratio_rows.append(["seeds: cached rebuild ÷ cold build",
                           median([c["total"] for c in cached]) / med["total"], "≤ 0.05", ""])

        # ------------------------------------------------------------- ICLR 2021
        papers = load_iclr()
        inputs = [ICLR_TSV]
        all_papers = papers
        n_sub = 300 if args.quick else args.iclr_n
        if n_sub and n_sub < len(papers):
            papers = papers[:n_sub]
            write_subset_tsv(papers, tmp / "iclr_subset.tsv")
            inputs = [tmp / "iclr_subset.tsv"]
        texts = [embedding_text(p) for p in papers]
        name = f"ICLR 2021 ({len(papers)})"
        t_bare = bare_encode(model, texts, settings.embed_batch_size)
        cold = cold_build(settings, embedder, inputs, tmp / "iclr")
        stage_rows.append(stage_row(f"{name}, cold", cold))
        raw = raw_abstracts("iclr", len(papers))
        t0 = time.perf_counter()
        for a in raw:
            clean_text(a)
        t_clean = time.perf_counter() - t0
        ratio_rows.append([f"{name}: cold build ÷ bare model.encode", cold["total"] / t_bare,
                           "≤ 1.10", f"build {cold['total']:.0f}s, encode {t_bare:.0f}s; "
                           f"embed stage ÷ encode {cold['embed'] / t_bare:.2f}"])
        cached = [rebuild(settings, embedder, inputs, tmp / "iclr", False) for _ in range(3)]
        cmed = {k: median([c.get(k, 0.0) for c in cached]) for k in STAGES}
        stage_rows.append(stage_row(f"{name}, rebuild unchanged (same file), median of 3", cmed))
        ratio_rows.append([f"{name}: cached rebuild ÷ cold build", cmed["total"] / cold["total"],
                           "≤ 0.05", ""])
        fresh = rebuild(settings, embedder, inputs, tmp / "iclr", True)
        stage_rows.append(stage_row(f"{name}, empty store + warm caches", fresh))
        ratio_rows.append([f"{name}: empty store + warm caches ÷ cold build",
                           fresh["total"] / cold["total"], "", ""])

        # add 10: base graph of N-10 papers, caches lacking the 10 new texts
        rng = random.Random(0)
        new10 = set(rng.sample([p.id for p in papers], 10))
        base = [p for p in papers if p.id not in new10]
        added = [p for p in papers if p.id in new10]
        inc = tmp / "inc"
        inc.mkdir()
        shutil.copytree(tmp / "iclr" / "cache", inc / "cache")
        forget(inc / "cache" / "embeddings.sqlite", [text_key(embedding_text(p)) for p in added])
        forget(inc / "cache" / "extractions.sqlite", [p.text_hash for p in added])
        store = NetworkxStore(inc / "graph.citegraph")
        pipe = Pipeline(settings, embedder, cache_dir=inc / "cache")
        try:
            r0 = pipe.run(store, add_papers=base, replace=True)
            assert r0.embedded == 0
            t0 = time.perf_counter()
            r1 = pipe.run(store, add_papers=added)
            t_add = time.perf_counter() - t0
            assert r1.embedded == 10, r1.embedded
        finally:
            pipe.close()
        stage_rows.append(stage_row(f"{name}: add 10 to {len(base)}", dict(r1.stage_seconds)))
        ratio_rows.append([f"{name}: add 10 papers ÷ cold full build", t_add / cold["total"],
                           "≤ 0.05", f"add {t_add:.1f}s (embedded {r1.embedded}, "
                           f"{r1.edges_written} edges written)"])
        if len(papers) < len(all_papers):
            from common import CACHE_DIR

            from graph.embed import EmbeddingCache

            folder = tmp / "iclr_full"
            folder.mkdir()
            store = NetworkxStore(folder / "graph.citegraph")
            pipe = Pipeline(settings, embedder, cache_dir=folder / "cache")
            pipe.embedding_cache.close()
            pipe.embedding_cache = EmbeddingCache(CACHE_DIR / "embeddings.sqlite")
            try:
                rf = pipe.run(store, add_paths=[ICLR_TSV], replace=True)
            finally:
                pipe.close()
            stage_rows.append(stage_row(
                f"ICLR 2021 ({len(all_papers)}), embeddings pre-cached, rest cold "
                f"(embedded {rf.embedded})", dict(rf.stage_seconds)))
        rep.add("### Stage seconds (read includes cleaning)\n\n"
                + table(["run", *STAGES], stage_rows)
                + f"\n\nModel load (excluded above, once per process): {load_s:.1f}s. "
                f"clean_text alone on the {len(raw)} raw ICLR abstracts: {t_clean:.2f}s.")
        rep.add("### Ratios (side by side in this run)\n\n"
                + table(["ratio", "value", "goal", "detail"], ratio_rows))

        # ------------------------------------------------------------- fp32 vs bf16
        n_s = 200 if args.quick else 300
        sample = random.Random(1).sample(texts, min(n_s, len(texts)))
        e32 = SentenceTransformerEmbedder(dtype="float32")
        e16 = SentenceTransformerEmbedder(dtype="bfloat16")
        e32._model = model
        e16._load()
        part = sample[: max(50, n_s // 5)]
        pairs = []
        for _ in range(3):
            t0 = time.perf_counter()
            e32.encode(part)
            a = time.perf_counter() - t0
            t0 = time.perf_counter()
            e16.encode(part)
            pairs.append((a, time.perf_counter() - t0))
        v32 = e32.encode(sample)
        v16 = e16.encode(sample)
        cos = (v32 * v16).sum(axis=1)
        ids = [f"{i:04d}" for i in range(len(sample))]
        n32 = top_k_similar(ids, v32, 10, -1.0)
        n16 = top_k_similar(ids, v16, 10, -1.0)
        overlap = [len({a for a, _ in n32[i]} & {a for a, _ in n16[i]}) / 10 for i in ids]
        n32m = top_k_similar(ids, v32, 10, settings.similar_min_score)
        n16m = top_k_similar(ids, v16, 10, settings.similar_min_score)
        ov_m = [len({a for a, _ in n32m[i]} & {a for a, _ in n16m[i]}) / max(len(n32m[i]), 1)
                for i in ids if n32m[i]]
        rep.add(
            f"### float32 vs bfloat16 (CPU, seeded sample of {len(sample)} ICLR texts)\n\n"
            + table(["measure", "value"], [
                [f"bf16 time ÷ fp32 time ({len(part)} texts, median of 3 pairs)",
                 median([b / a for a, b in pairs])],
                ["fp32 seconds per 100 texts (median)", median([a for a, _ in pairs]) / len(part) * 100],
                ["bf16 seconds per 100 texts (median)", median([b for _, b in pairs]) / len(part) * 100],
                ["mean cosine(fp32 vector, bf16 vector)", float(cos.mean())],
                ["min cosine(fp32 vector, bf16 vector)", float(cos.min())],
                ["overlap@10 of neighbour lists (no min_score)", float(np.mean(overlap))],
                ["overlap of lists with min_score", float(np.mean(ov_m))],
                ["lists identical (no min_score)", float(np.mean([o == 1.0 for o in overlap]))],
            ]))
        rep.add(f"Run time {time.perf_counter() - t_all:.0f}s.")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rep.save()


if __name__ == "__main__":
    main()
