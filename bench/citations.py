"""Does citation overlap help related()? Cora, with each test paper's references hidden.

    python -m bench citations [--quick]

Cora (2,277 papers, 5,214 citations, ``a b`` in graph.txt: paper a cites paper b). The
papers that cite at least one other are split at random (seed 0) into four folds. For a
fold, the graph is built (the pipeline, as ``citegraph build`` computes it) from every
paper with its references, except the fold's papers, whose reference lists are left
out: what they cite is never an input. Everything else stays: other papers' references,
so a test paper is still cited by others and co-cited with what they also cite.

Each test paper asks for 10 papers, and is scored on how many of its hidden references
are among them (recall@10, and MRR@10: 1 / the rank of the first one):

* related() without citation overlap (``coupling`` and ``cocited`` weights 0);
* related() as shipped;
* related() with the co-citation weight taken from a grid, chosen on folds 1-2 (the tune
  half) by recall@10 + MRR@10, and reported on folds 3-4 (the test half);
* plain co-citation: ``graph.query.citations.overlap`` ranked by Salton's cosine alone.

A test paper has no references in its graph, so bibliographic coupling cannot fire for
it; its weight is not measured here. Hiding a whole fold at once (not one paper at a
time) also hides the other test papers' references, so co-citation sees a little less
than it would for one new paper: the figures err low for it.
``--quick``: two folds of 100 test papers (tune on one, report on the other).
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import time
from typing import Any

from bench.common import CORA_DIR, Result, embed_texts, load_cora
from bench.quality import build_graph, store_of
from graph import related as related_mod
from graph.lexical import LexicalIndex
from graph.query.citations import overlap

FOLDS = 4
COCITED_GRID = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0)
K = 10


def _references(n: int) -> list[list[int]]:
    """What each paper cites, by node id (graph.txt: ``a b`` = a cites b)."""
    refs: list[set[int]] = [set() for _ in range(n)]
    for row in (CORA_DIR / "graph.txt").read_text().split("\n"):
        if row.strip():
            a, b = (int(x) for x in row.split())
            if a != b:
                refs[a].add(b)
    return [sorted(r) for r in refs]


def _score(lists: dict[int, list[int]], refs: list[list[int]]) -> tuple[float, float]:
    """Macro recall@K and MRR@K of ``lists`` against each paper's references."""
    recall = mrr = 0.0
    for i, got in lists.items():
        truth = set(refs[i])
        recall += len(truth & set(got[:K])) / len(truth)
        mrr += next((1.0 / (r + 1) for r, j in enumerate(got[:K]) if j in truth), 0.0)
    return recall / len(lists), mrr / len(lists)


def run(argv: list[str]) -> Result:
    ap = argparse.ArgumentParser(prog="python -m bench citations", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="two folds of 100 test papers")
    args = ap.parse_args(argv)
    rep = Result("citations", args.quick, "Cora, each fold's reference lists hidden"
                 + (" (two folds of 100)" if args.quick else f" ({FOLDS} folds)"))
    papers, _, _ = load_cora()
    n = len(papers)
    refs = _references(n)
    citing = [i for i in range(n) if refs[i]]
    random.Random(0).shuffle(citing)
    if args.quick:
        folds = [sorted(citing[:100]), sorted(citing[100:200])]
    else:
        folds = [sorted(citing[f::FOLDS]) for f in range(FOLDS)]
    half = len(folds) // 2
    matrix = embed_texts([p.abstract for p in papers], "truncate")
    index = {f"cora-{i}": i for i in range(n)}
    shipped = related_mod.WEIGHTS
    as_shipped_name = (
        f"related() as shipped (co-citation {shipped.cocited}, coupling {shipped.coupling})"
    )
    rankers: dict[str, Any] = {
        "related() without citation overlap":
            dataclasses.replace(shipped, coupling=0.0, cocited=0.0),
        as_shipped_name: shipped,
        **{f"related(), co-citation weight {w}": dataclasses.replace(shipped, cocited=w)
           for w in COCITED_GRID},
    }
    # per ranker, per fold: {paper: list}
    lists: dict[str, list[dict[int, list[int]]]] = {name: [] for name in
                                                     [*rankers, "plain co-citation"]}
    lexical = LexicalIndex()
    for f, fold in enumerate(folds):
        t0 = time.perf_counter()
        hidden = set(fold)
        corpus = [
            dataclasses.replace(
                p, references=() if i in hidden else tuple(f"cora-{j}" for j in refs[i])
            )
            for i, p in enumerate(papers)
        ]
        store = store_of(build_graph(corpus, matrix, "bench-lookup|truncate"))
        built = time.perf_counter() - t0
        for name, weights in rankers.items():
            got = {}
            for i in fold:
                answer = related_mod.related(store, paper=f"cora-{i}", first=K,
                                             lexical=lexical, weights=weights)
                got[i] = [index[a.paper.id] for a in answer if a.paper.id in index]
            lists[name].append(got)
        lists["plain co-citation"].append({
            i: [index[link.node.id] for link in
                overlap(store, [f"cora-{i}"], coupling=False, limit=K)
                if link.node.id in index]
            for i in fold
        })
        print(f"  fold {f + 1}/{len(folds)}: {len(fold)} test papers, graph {built:.0f} s, "
              f"all rankers {time.perf_counter() - t0 - built:.0f} s", flush=True)

    def merged(name: str, part: slice) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for got in lists[name][part]:
            out.update(got)
        return out

    tune, test = slice(0, half), slice(half, None)
    grid = [f"related(), co-citation weight {w}" for w in COCITED_GRID]
    # chosen by recall@10 + MRR@10: recall alone keeps rising to the grid's edge while the
    # first hit moves down (co-citation crowds out the closest texts)
    best = max(grid, key=lambda name: (sum(_score(merged(name, tune), refs)), name))
    best_w = COCITED_GRID[grid.index(best)]
    rows = []
    for name in lists:
        r_tune, m_tune = _score(merged(name, tune), refs)
        r_test, m_test = _score(merged(name, test), refs)
        rows.append([name, r_tune, m_tune, r_test, m_test])
    rep.table("Cora, hidden references found in the top 10, by ranker",
              ["ranker", "recall@10 tune half", "MRR@10 tune half",
               "recall@10 test half", "MRR@10 test half"], rows)
    n_test = len(merged("plain co-citation", test))
    without = _score(merged("related() without citation overlap", test), refs)
    chosen = _score(merged(best, test), refs)
    plain = _score(merged("plain co-citation", test), refs)
    as_shipped = _score(merged(as_shipped_name, test), refs)
    rep.figure("co-citation weight chosen on the tune half", best_w)
    rep.figure(f"test half ({n_test} papers): related() without citation overlap, "
               "recall@10 / MRR@10", f"{without[0]:.3f} / {without[1]:.3f}")
    rep.figure("test half: related() as shipped, recall@10 / MRR@10",
               f"{as_shipped[0]:.3f} / {as_shipped[1]:.3f}")
    rep.figure(f"test half: related(), co-citation weight {best_w}, recall@10 / MRR@10",
               f"{chosen[0]:.3f} / {chosen[1]:.3f}", "",
               "recall above related() without it and above plain co-citation",
               chosen[0] > max(without[0], plain[0]))
    rep.figure("test half: plain co-citation ranking, recall@10 / MRR@10",
               f"{plain[0]:.3f} / {plain[1]:.3f}")
    rep.note(f"{len(citing)} Cora papers cite another; folds of "
             + ", ".join(str(len(f)) for f in folds) + " test papers (seed 0)")
    return rep
