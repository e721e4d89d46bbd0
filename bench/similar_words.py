# ruff: noqa: E501 - long table rows
"""SIMILAR_TO with word overlap: how the weight and the pool were chosen, with the pipeline's own code.

    python bench/similar_words.py [--data /work/shared/data] [--cache /work/cache/ranking]

SIMILAR_TO lists (k = 10, min_score 0.3) from ``graph.link.full_similar`` (what the
pipeline runs) over all-MiniLM-L6-v2 embeddings of the texts and
``graph.lexical.word_vectors`` (word 1-2-grams, plurals folded, saturated tf x a fixed
rarity, no IDF: a pair's score depends on the two texts alone, never on N), for b = cos + w x words ranked by CSLS
(b - 0.5 r_j) among each paper's P nearest by cosine:

* Cora (2,277 abstracts, 5,214 citations): recall@10 / MRR@10 of the citations, on the
  tune and test halves of bench/ranking.py's split (the 2,205 papers with a citation,
  shuffled with seed 13) and over all; w and P are chosen on the tune half only;
* ICLR 2021 (2,966 title + abstract texts): the share of the 10 neighbours sharing an
  author keyword (bench/ranking.py's folding), never used for choosing;
* the largest in-degree / k (hubness; goal <= 5).

Embeddings are cached by bench/ranking.py's ``embed`` (``--cache``).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.ranking import (  # noqa: E402
    DEFAULT_DATA,
    cora_eval,
    embed,
    fold,
    in_degree,
    kw_eval,
    load_cora,
    load_iclr,
    table,
)
from graph.lexical import word_vectors  # noqa: E402
from graph.link import PaperVectors, full_similar  # noqa: E402

K, MIN_SCORE = 10, 0.3
WEIGHTS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
POOLS = (50, 100, 200)


def lists_of(ids: list[str], matrix: np.ndarray, words: object, w: float, pool: int) -> dict[int, list[int]]:
    vec = PaperVectors(ids, matrix, words if w > 0 else None, pool=pool, word_weight=w)
    lists, _ = full_similar(vec, K, MIN_SCORE)
    at = {p: i for i, p in enumerate(ids)}
    return {at[p]: [at[n.id] for n in lst] for p, lst in lists.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--cache", type=Path, default=ROOT / "bench" / ".cache" / "ranking")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)

    texts, cites = load_cora(args.data)
    cora_ids = [f"c{i:05d}" for i in range(len(texts))]
    cora_m = embed(texts, args.cache, "cora")
    cora_w = word_vectors(texts)
    queries = [i for i in range(len(texts)) if cites[i]]
    shuffled = queries[:]
    random.Random(13).shuffle(shuffled)
    tune, test = sorted(shuffled[: len(shuffled) // 2]), sorted(shuffled[len(shuffled) // 2:])

    iclr = load_iclr(args.data)
    iclr_texts = [f"{p.title}. {p.abstract}" for p in iclr]
    iclr_ids = [f"i{i:05d}" for i in range(len(iclr))]
    iclr_m = embed(iclr_texts, args.cache, "iclr-title-abstract")
    iclr_w = word_vectors(iclr_texts)
    kws = [{fold(k) for k in p.keywords if fold(k)} for p in iclr]
    kdf = Counter(k for s in kws for k in s)
    rare = {k for k, c in kdf.items() if c <= 0.01 * len(iclr)}
    kw_rows = [i for i in range(len(iclr)) if kws[i]]

    rows, best = [], None
    for pool in POOLS:
        for w in WEIGHTS:
            if w == 0.0 and pool != POOLS[1]:
                continue
            t0 = time.perf_counter()
            cl = lists_of(cora_ids, cora_m, cora_w, w, pool)
            il = lists_of(iclr_ids, iclr_m, iclr_w, w, pool)
            tr, tm = cora_eval(cl, cites, tune)
            er, em = cora_eval(cl, cites, test)
            ar, am = cora_eval(cl, cites, queries)
            kw, _ = kw_eval(il, kws, rare, kw_rows)
            row = [pool, w, tr, tm, er, em, ar, am, in_degree(cl, len(texts))[1], kw,
                   in_degree(il, len(iclr))[1], time.perf_counter() - t0]
            rows.append(row)
            print(" ".join(f"{x:.3f}" if isinstance(x, float) else str(x) for x in row), flush=True)
            if best is None or tr + tm > best[2] + best[3] + 1e-9:
                best = row
    print(table(["pool", "w", "Cora tune R@10", "tune MRR", "test R@10", "test MRR", "all R@10", "all MRR",
                 "Cora max in-deg / k", "ICLR kw-sharing", "ICLR max in-deg / k", "seconds (both)"], rows))
    assert best is not None
    print(f"\nbest on the tune half (recall + MRR): pool {best[0]}, w {best[1]}")


if __name__ == "__main__":
    main()
