# ruff: noqa: E501 - long table rows
"""related()'s word channel: a title field weight and where the tf saturates, measured on the cached channels (docs/benchmarks.md, round 7).

    python bench/related_fields.py [--data /work/shared/data] [--cache /work/cache/ranking] [--pickle FILE] [SPEC ...]

The channels are bench/related_lists.py's (formula E + feedback, as related() scores,
the hub as ``hub_cos`` from the pipeline's own SIMILAR_TO lists); only the TF-IDF 1-2-gram
cosine is rebuilt, here from counts, per SPEC (comma-separated key=value):

* ``title``: the title's grams count this many times (1 = today: the title is read once, as
  part of "title. abstract"); Cora has no titles, so only ICLR 2021 moves;
* ``tf``: log (1 + ln count, today) | satK (count x (K + 1) / (count + K), BM25's k1 = K);
* ``on``: which grams the saturation applies to: all | uni | bi (the others keep log);
* ``side``: both | doc | query: saturate the candidates' vectors, the seeds', or both;
* ``rank``: + this x 1 / the candidate's rank in the seed's stored SIMILAR_TO list
  (round 6's tune argmax was 0.05).

Reported: Cora recall@10 / MRR@10 on bench/ranking.py's halves (seed 13) and over all, and
ICLR 2021 keyword sharing (a gate, never the objective).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import bench.ranking as rk  # noqa: E402
import bench.related_lists as rl  # noqa: E402
from graph.lexical import _analyzer  # noqa: E402

GRID = [  # the order of docs/benchmarks.md, round 7
    "tf=log", "title=2", "tf=sat1.2", "tf=sat1.2,on=uni", "tf=sat1.2,on=bi", "tf=sat3", "tf=sat3,on=uni",
    "tf=sat3,on=bi", "tf=sat1.2,side=doc", "tf=sat1.2,side=query", "rank=0.05", "rank=0.05,title=2",
    "tf=sat0.5,side=query", "tf=sat2,side=query", "tf=sat3,side=query", "tf=sat1.2,side=query,on=uni",
    "tf=sat0.5,side=query,on=uni", "tf=sat1.2,side=query,rank=0.05", "tf=sat1.2,side=query,title=2",
    "title=3", "tf=sat0.01,side=query,on=uni", "tf=sat0.25,side=query,on=uni", "tf=sat0.8,side=query,on=uni",
    "tf=sat0.5,side=query,on=bi", "tf=sat0.5,side=query,on=uni,title=2",
    "tf=sat0.5,side=query,on=uni,rank=0.05", "tf=sat0.25,side=query,on=uni,title=2",
    "tf=sat0.5,side=query,on=uni,rank=0.03", "tf=sat0.5,side=query,on=uni,rank=0.08",
    "tf=sat0.5,side=query,on=uni,rank=0.1", "tf=sat0.25,side=query,on=uni,rank=0.05",
    "tf=sat0.8,side=query,on=uni,rank=0.05", "tf=sat1.2,side=query,on=uni,rank=0.05",
    "tf=sat0.5,side=query,on=uni,rank=0.05,title=2",
]


def _weighted(counts: Any, idf: np.ndarray, bigram: np.ndarray, tf: str, on: str) -> Any:
    import scipy.sparse as sp

    m = counts.tocsr(copy=True)
    log = 1.0 + np.log(m.data)
    if tf == "log":
        m.data = log
    else:
        k1 = float(tf[3:] or 1.2)
        sat = m.data * (k1 + 1) / (m.data + k1)
        which = {"all": np.ones(len(m.data), bool), "bi": bigram[m.indices], "uni": ~bigram[m.indices]}[on]
        m.data = np.where(which, sat, log)
    m = m @ sp.diags(idf)
    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return (sp.diags(1.0 / norms) @ m).tocsr()


def lexical(texts: list[str], titles: list[str] | None, cfg: dict[str, str]) -> np.ndarray:
    """The TF-IDF 1-2-gram cosine of every pair (row = seed), as related()'s LexicalIndex
    computes it (smooth IDF, grams in one paper only weigh 0), under ``cfg``."""
    from sklearn.feature_extraction.text import CountVectorizer

    cv = CountVectorizer(analyzer=_analyzer(), min_df=2)
    c = cv.fit_transform(texts).astype(np.float64)
    t = float(cfg.get("title", 1))
    if titles is not None and t != 1:
        c = c + (t - 1) * cv.transform(titles).astype(np.float64)
    n = c.shape[0]
    df = np.asarray((c > 0).sum(axis=0)).ravel()
    idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
    bigram = np.asarray([" " in g for g in cv.get_feature_names_out()])
    tf, on, side = cfg.get("tf", "log"), cfg.get("on", "all"), cfg.get("side", "both")
    sat = _weighted(c, idf, bigram, tf, on)
    log = sat if tf == "log" else _weighted(c, idf, bigram, "log", on)
    q = sat if side in ("both", "query") else log
    d = sat if side in ("both", "doc") else log
    return np.asarray((q @ d.T).toarray(), dtype=np.float32)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=rk.DEFAULT_DATA)
    ap.add_argument("--cache", type=Path, default=ROOT / "bench" / ".cache" / "ranking")
    ap.add_argument("--pickle", type=Path, default=None)
    ap.add_argument("specs", nargs="*", default=GRID)
    args = ap.parse_args()
    t0 = time.perf_counter()
    cora, ic, cites, kws, rare = rl.channels(args.data, args.cache, args.pickle)
    ev = rk.Evaluator(cora, cites, ic, kws, rare)
    cora_texts, _ = rk.load_cora(args.data)
    iclr = rk.load_iclr(args.data)
    iclr_texts = [f"{p.title}. {p.abstract}" for p in iclr]
    titles = [p.title or "" for p in iclr]
    print(f"channels in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    print("| spec | tune R@10 / MRR | tune sum | test R@10 / MRR | all R@10 / MRR | ICLR kw-sharing |")
    print("|---|---|---|---|---|---|")
    for spec in args.specs:
        t1 = time.perf_counter()
        cfg = dict(kv.split("=", 1) for kv in re.split(r",\s*", spec) if "=" in kv)
        post = {"rank": float(cfg["rank"])} if "rank" in cfg else {}
        cora.m["tfidf12"] = lexical(cora_texts, None, cfg)
        ic.m["tfidf12"] = lexical(iclr_texts, titles, cfg)
        r = ev.row(spec, rl.score(cora, post), rl.score(ic, post))
        print(f"| {spec} | {r[1]:.3f} / {r[2]:.3f} | {r[1] + r[2]:.4f} | {r[3]:.3f} / {r[4]:.3f} | "
              f"{r[5]:.3f} / {r[6]:.3f} | {r[8]:.4f} |", flush=True)
        print(f"  ({time.perf_counter() - t1:.0f}s)", file=sys.stderr)


if __name__ == "__main__":
    main()
