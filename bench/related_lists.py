# ruff: noqa: E501 - long table rows
"""related() with signals from the stored SIMILAR_TO lists: measured, not shipped (docs/benchmarks.md, round 6).

    python bench/related_lists.py [--data /work/shared/data] [--cache /work/cache/ranking] [--pickle FILE]

On bench/ranking.py's dense channels (formula E: cos + 3 x TF-IDF 1-2-grams + 0.3 x
shared-term share - 0.5 x hub, then feedback: + 0.25 x the mean score against the 3 best;
the hub is the mean cosine of each paper's plain top-10 by b, as ``hub_cos``), candidates
as related() finds them, plus, added after the feedback:

* ``rank``: 1 / the candidate's rank in the seed's SIMILAR_TO list (0 when absent);
* ``rrank``: 1 / the seed's rank in the candidate's list (the reciprocal signal);
* ``sharednb``: |seed's list ∩ candidate's list| / k (shared neighbours);
* ``nwords``: the N-free word overlap SIMILAR_TO ranks by (``graph.lexical.word_vectors``).

The lists are the pipeline's own (``graph.link.full_similar``, k = 10). Every weight is
chosen on the Cora tune half (seed 13), reported on the test half and on ICLR 2021.
``--pickle`` keeps the channels between runs (~0.7 GB).
"""

from __future__ import annotations

import argparse
import itertools
import os
import pickle
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import bench.ranking as rk  # noqa: E402
from graph.lexical import word_vectors  # noqa: E402
from graph.link import PaperVectors, full_similar  # noqa: E402

BASE: dict[str, Any] = {"tfidf12": 3.0, "conc": 0.3}
HUB, BETA, M = 0.5, 0.25, 3


def channels(data: Path, cache: Path, keep: Path | None) -> tuple[Any, Any, Any, Any, Any]:
    if keep is not None and keep.exists():
        with keep.open("rb") as f:
            return pickle.load(f)  # our own file, written below
    iclr = rk.load_iclr(data)
    cora_texts, cites = rk.load_cora(data)
    iclr_lex = [f"{p.title}. {p.abstract}" for p in iclr]
    kws = [{rk.fold(k) for k in p.keywords if rk.fold(k)} for p in iclr]
    kdf = Counter(k for s in kws for k in s)
    rare = {k for k, c in kdf.items() if c <= 0.01 * len(iclr)}
    cora = rk.Channels("cora", cora_texts, cora_texts, rk.embed(cora_texts, cache, "cora"), cache, (25,))
    ic = rk.Channels("iclr", iclr_lex, [p.abstract for p in iclr], rk.embed(iclr_lex, cache, "iclr-title-abstract"), cache, (25,))
    for c, tx, tag in ((cora, cora_texts, "cora"), (ic, iclr_lex, "iclr-title-abstract")):
        ids = [f"x{i:05d}" for i in range(len(tx))]
        vec = PaperVectors(ids, rk.embed(tx, cache, tag), word_vectors(tx))
        lists, hubs = full_similar(vec, 10, 0.3)
        at = {p: i for i, p in enumerate(ids)}
        n = len(tx)
        inl = np.zeros((n, n), np.float32)
        rank = np.zeros((n, n), np.float32)
        for p, lst in lists.items():
            for r, nb in enumerate(lst, 1):
                inl[at[p], at[nb.id]] = 1.0
                rank[at[p], at[nb.id]] = 1.0 / r
        c.m["rank"], c.m["rrank"] = rank, np.ascontiguousarray(rank.T)
        sh = (inl @ inl.T) / 10.0
        np.fill_diagonal(sh, 0.0)
        c.m["sharednb"] = sh.astype(np.float32)
        w = word_vectors(tx)
        nw = np.asarray((w @ w.T).toarray(), dtype=np.float32)
        np.fill_diagonal(nw, 0.0)
        c.m["nwords"] = nw
        c.hub = np.asarray([hubs[i].cos for i in ids], np.float32)  # as related() reads hub_cos
        c.cand = c.candidates("bm25_25", False)
    out = (cora, ic, cites, kws, rare)
    if keep is not None:
        with keep.open("wb") as f:
            pickle.dump(out, f, protocol=4)
    return out


def score(c: Any, post: dict[str, float]) -> np.ndarray:
    s = c.fused({**BASE, "hub": HUB}, None)
    top = rk.row_top_mask(np.where(c.cand, s, rk.NEG), M).astype(np.float32) / M
    s = s + np.float32(BETA) * (top @ s)
    for k, v in post.items():
        s = s + np.float32(v) * c.m[k]
    return np.where(c.cand, s, rk.NEG)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=rk.DEFAULT_DATA)
    ap.add_argument("--cache", type=Path, default=ROOT / "bench" / ".cache" / "ranking")
    ap.add_argument("--pickle", type=Path, default=None)
    args = ap.parse_args()
    t0 = time.perf_counter()
    cora, ic, cites, kws, rare = channels(args.data, args.cache, args.pickle)
    ev = rk.Evaluator(cora, cites, ic, kws, rare)
    print(f"channels in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    print("| rank | rrank | nwords | sharednb | tune R@10 / MRR | tune sum | test R@10 / MRR | all R@10 / MRR | ICLR kw-sharing |")
    print("|---|---|---|---|---|---|---|---|---|")
    for a, b, nw, sn in itertools.product((0, 0.05, 0.1), (0, 0.05, 0.1), (0, 0.5, 1.0), (0, 0.1)):
        post = {k: v for k, v in (("rank", a), ("rrank", b), ("nwords", nw), ("sharednb", sn)) if v}
        r = ev.row("", score(cora, post), score(ic, post))
        print(f"| {a} | {b} | {nw} | {sn} | {r[1]:.3f} / {r[2]:.3f} | {r[1] + r[2]:.3f} | {r[3]:.3f} / {r[4]:.3f} | "
              f"{r[5]:.3f} / {r[6]:.3f} | {r[8]:.3f} |", flush=True)


if __name__ == "__main__":
    main()
