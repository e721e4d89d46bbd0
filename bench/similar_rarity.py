# ruff: noqa: E501 - long table rows
"""SIMILAR_TO word overlap: which weighting of the grams, chosen on the Cora tune half.

    python bench/similar_rarity.py [--data /work/shared/data] [--cache /work/cache/ranking] [SPEC ...]

Each SPEC is a comma-separated list of key=value (default: the grid of docs/benchmarks.md,
"Issue 13, round 6"):

* ``rarity``: none | ln | sqrtln | ln2 | ln-c4 — a gram's weight from its words' rank in
  the WordPiece vocabulary (``graph.lexical.word_rarity`` is ``ln``); never counted from
  a corpus, so a pair's score still depends on the two texts alone;
* ``bigram``: mean | max | sum — a bigram's weight from its two words';
* ``fold``: 0 | 1 — plurals folded (``graph.lexical.word_grams``);
* ``tf``: log (1 + ln count) | bin | satK (BM25's saturation, k1 = K; ``sat`` = 1.2);
  ``on``: all | uni | bi, the grams that saturate (the others keep log);
* ``w``: the word weight in b = cos + w x words; ``pool``; ``beta``: the CSLS weight.

Lists come from the pipeline's ``graph.link.full_similar`` (k = 10, min_score 0.3) over
the cached all-MiniLM-L6-v2 embeddings; the vectors are built here from a learnt
vocabulary (the shipped ones hash the same grams, so the figures agree to ~0.001).
``shipped`` as a SPEC runs ``graph.lexical.word_vectors`` itself. Reported: Cora
recall@10 / MRR@10 on bench/ranking.py's tune and test halves (seed 13) and over all,
ICLR 2021 keyword sharing (never used for choosing), the largest in-degree / k.
"""

from __future__ import annotations

import argparse
import math
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import graph.link as link  # noqa: E402
from bench.ranking import (  # noqa: E402
    DEFAULT_DATA,
    cora_eval,
    embed,
    fold,
    in_degree,
    kw_eval,
    load_cora,
    load_iclr,
)
from graph.lexical import _analyzer, word_grams, word_rarity, word_vectors  # noqa: E402

GRID = [
    "rarity=none", "rarity=ln", "rarity=ln-c4", "rarity=sqrtln", "rarity=ln2", "rarity=ln,bigram=max",
    "rarity=ln,bigram=sum", "rarity=none,fold=1", "rarity=ln,fold=1", "rarity=none,tf=bin", "rarity=none,tf=sat",
    "rarity=ln,fold=1,tf=sat0.5", "rarity=ln,fold=1,tf=sat", "rarity=ln,fold=1,tf=sat2", "rarity=ln,fold=1,tf=sat3",
    "rarity=ln,fold=1,tf=sat,w=1.5", "rarity=ln,fold=1,tf=sat,w=2.5", "rarity=ln,fold=1,tf=sat,w=3",
    "rarity=ln,fold=1,tf=sat,w=4", "rarity=ln,fold=1,tf=sat2,w=2.5", "rarity=ln,fold=1,tf=sat2,w=3",
    "rarity=ln,fold=1,tf=sat2,w=4", "rarity=ln,fold=1,tf=sat2,pool=200", "rarity=ln,fold=1,tf=sat2,beta=0.4",
    "shipped",
]
RARITY: dict[str, Callable[[str], float]] = {
    "none": lambda w: 1.0,
    "ln": word_rarity,
    "sqrtln": lambda w: math.sqrt(word_rarity(w)),
    "ln2": lambda w: word_rarity(w) ** 2,
    "ln-c4": lambda w: max(0.0, word_rarity(w) - 4.0),
}
BIGRAM: dict[str, Callable[[float, float], float]] = {"mean": lambda a, b: (a + b) / 2, "max": max, "sum": lambda a, b: a + b}


def variant_vectors(texts: list[str], cfg: dict[str, str]) -> Any:
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import CountVectorizer

    an = word_grams if cfg.get("fold") == "1" else _analyzer()
    cv = CountVectorizer(analyzer=an)
    m = cv.fit_transform(texts).tocsr().astype(np.float64)
    rar, bi = RARITY[cfg.get("rarity", "none")], BIGRAM[cfg.get("bigram", "mean")]
    g = np.asarray([rar(x) if not y else bi(rar(x), rar(y))
                    for x, _, y in (gram.partition(" ") for gram in cv.get_feature_names_out())])
    tf = cfg.get("tf", "log")
    if tf == "log":
        m.data = 1.0 + np.log(m.data)
    elif tf == "bin":
        m.data = np.ones_like(m.data)
    elif tf.startswith("sat"):
        k1 = float(tf[3:] or 1.2)
        sat = m.data * (k1 + 1) / (m.data + k1)
        on = cfg.get("on", "all")  # which grams saturate; the others keep 1 + ln(count)
        bigram = np.asarray([" " in gram for gram in cv.get_feature_names_out()])[m.indices]
        which = {"all": np.ones(len(m.data), bool), "uni": ~bigram, "bi": bigram}[on]
        m.data = np.where(which, sat, 1.0 + np.log(m.data))
    m = m @ sp.diags(g)
    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return (sp.diags(1.0 / norms) @ m).tocsr()


_SHIPPED: dict[int, Any] = {}


def shipped_vectors(texts: list[str]) -> Any:
    """``graph.lexical.word_vectors`` of ``texts``, kept across specs (the same texts come back)."""
    key = hash(tuple(texts))
    if key not in _SHIPPED:
        _SHIPPED[key] = word_vectors(texts)
    return _SHIPPED[key]


def lists_of(ids: list[str], matrix: np.ndarray, words: Any, w: float, pool: int) -> dict[int, list[int]]:
    vec = link.PaperVectors(ids, matrix, words, pool=pool, word_weight=w)
    lists, _ = link.full_similar(vec, 10, 0.3)
    at = {p: i for i, p in enumerate(ids)}
    return {at[p]: [at[n.id] for n in lst] for p, lst in lists.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--cache", type=Path, default=ROOT / "bench" / ".cache" / "ranking")
    ap.add_argument("specs", nargs="*", default=GRID)
    args = ap.parse_args()
    texts, cites = load_cora(args.data)
    cora_ids = [f"c{i:05d}" for i in range(len(texts))]
    cora_m = embed(texts, args.cache, "cora")
    queries = [i for i in range(len(texts)) if cites[i]]
    shuffled = queries[:]
    random.Random(13).shuffle(shuffled)
    tune, test = sorted(shuffled[: len(shuffled) // 2]), sorted(shuffled[len(shuffled) // 2:])
    iclr = load_iclr(args.data)
    itexts = [f"{p.title}. {p.abstract}" for p in iclr]
    iclr_ids = [f"i{i:05d}" for i in range(len(iclr))]
    iclr_m = embed(itexts, args.cache, "iclr-title-abstract")
    kws = [{fold(k) for k in p.keywords if fold(k)} for p in iclr]
    kdf = Counter(k for s in kws for k in s)
    rare = {k for k, c in kdf.items() if c <= 0.01 * len(iclr)}
    kw_rows = [i for i in range(len(iclr)) if kws[i]]
    default_beta = link.CSLS_WEIGHT
    print("| spec | tune R@10 / MRR | tune sum | test R@10 / MRR | all R@10 / MRR | ICLR kw-sharing | max in-deg / k Cora, ICLR |")
    print("|---|---|---|---|---|---|---|")
    for spec in args.specs:
        t0 = time.perf_counter()
        cfg = dict(kv.split("=", 1) for kv in re.split(r",\s*", spec) if "=" in kv)
        link.CSLS_WEIGHT = float(cfg.get("beta", default_beta))
        w, pool = float(cfg.get("w", 2.0)), int(cfg.get("pool", 100))
        if spec.split(",")[0] == "shipped":  # the shipped vectors; w, pool, beta may be overridden
            cw, iw = shipped_vectors(texts), shipped_vectors(itexts)
            w, pool = float(cfg.get("w", link.WORD_WEIGHT)), int(cfg.get("pool", link.SIMILAR_POOL))
        else:
            cw, iw = variant_vectors(texts, cfg), variant_vectors(itexts, cfg)
        cl = lists_of(cora_ids, cora_m, cw, w, pool)
        il = lists_of(iclr_ids, iclr_m, iw, w, pool)
        tr, tm = cora_eval(cl, cites, tune)
        er, em = cora_eval(cl, cites, test)
        ar, am = cora_eval(cl, cites, queries)
        kw, _ = kw_eval(il, kws, rare, kw_rows)
        print(f"| {spec} | {tr:.3f} / {tm:.3f} | {tr + tm:.3f} | {er:.3f} / {em:.3f} | {ar:.3f} / {am:.3f} | {kw:.3f} | "
              f"{in_degree(cl, len(texts))[1]:.1f}, {in_degree(il, len(iclr))[1]:.1f} |", flush=True)
        print(f"  ({time.perf_counter() - t0:.0f}s)", file=sys.stderr)
    link.CSLS_WEIGHT = default_beta


if __name__ == "__main__":
    main()
