"""Random build/add/remove/edit/rebuild sequences with SIMILAR_TO in small pieces,
each step compared to a fresh whole build (default piece size).

    python docs/probes/probe13/random_seq.py SEED STEPS [iclr N]
"""
from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import graph.build as gb
from graph.store.embedded import EmbeddedStore, _SqlParts
from probe.common import Parts, assert_same_graph, iclr_papers, paper, seed_papers, whole
from tests.support.seeds import EMBED_CACHE, seed_settings
from tests.support.updates import updated

import os
SIZES = [1, 7, 13, 40, 99, 250_000]
FORCE = os.environ.get("P13_FORCE_SIZE")
VARY_K = os.environ.get("P13_VARY_K")


def explain(full, got) -> None:
    from graph.model import node_to_props
    import numpy as np
    fn, gn = set(full.nodes), set(got.nodes)
    print("nodes only fresh:", sorted(fn - gn)[:10], "only stored:", sorted(gn - fn)[:10])
    for n in sorted(fn & gn):
        if node_to_props(full.nodes[n]) != node_to_props(got.nodes[n]):
            print("node props differ", n, node_to_props(full.nodes[n]), node_to_props(got.nodes[n]))
            break
    fe, ge = set(full.edges), set(got.edges)
    print("edges only fresh:", len(fe - ge), sorted(fe - ge, key=str)[:8])
    print("edges only stored:", len(ge - fe), sorted(ge - fe, key=str)[:8])
    nd = 0
    for k in sorted(fe & ge, key=str):
        a, b = full.edges[k], got.edges[k]
        if a.weight != b.weight or dict(a.attrs) != dict(b.attrs):
            nd += 1
            if nd <= 4:
                print("edge differs", k, a.weight, dict(a.attrs), "|", b.weight, dict(b.attrs))
    print("edges differing:", nd)
    rows = {p: i for i, p in enumerate(got.embedding_ids)}
    bad = [p for i, p in enumerate(full.embedding_ids) if p not in rows or not np.array_equal(full.embeddings[i], got.embeddings[rows[p]])]
    print("vectors differing:", len(bad), bad[:5], "extra stored vectors:", len(set(rows) - set(full.embedding_ids)))


def main() -> None:
    seed = int(sys.argv[1])
    steps = int(sys.argv[2])
    rng = random.Random(seed)
    if len(sys.argv) > 3 and sys.argv[3] == "iclr":
        pool = iclr_papers(int(sys.argv[4]))
        cache = Path("/tmp/p13-iclr-cache")
    else:
        pool = seed_papers()
        cache = Path("/tmp/p13-seed-cache")
    tmp = Path(f"/tmp/p13-rand-{seed}")
    import shutil
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    store = EmbeddedStore(tmp / "graph.db", reads="sql")
    corpus: dict = {}
    INCR = bool(os.environ.get("P13_INCREMENTAL"))
    pipe = gb.Pipeline(seed_settings(tmp), cache_dir=cache, incremental=INCR)
    orig = gb.SIMILAR_PIECE_EDGES
    try:
        for step in range(steps):
            size = rng.choice(SIZES)
            if FORCE:
                size = int(FORCE)
            op = rng.choice(["build", "add", "remove", "edit", "rebuild"]) if corpus else "build"
            kw: dict = {}
            if op == "build":
                new = rng.sample(pool, rng.randint(1, len(pool)))
                kw = dict(add_papers=new, replace=True)
                nxt = {p.id: p for p in new}
            elif op == "rebuild":
                keep = [p for p in corpus.values() if rng.random() < 0.7]
                more = rng.sample(pool, rng.randint(0, len(pool) // 4))
                new = list({p.id: p for p in keep + more}.values())
                kw = dict(add_papers=new, replace=True)
                nxt = {p.id: p for p in new}
            elif op == "add":
                new = rng.sample(pool, rng.randint(1, max(1, len(pool) // 5)))
                kw = dict(add_papers=new)
                nxt = dict(corpus)
                for p in new:
                    nxt[p.id] = updated(nxt[p.id], p) if p.id in nxt else p
            elif op == "remove":
                gone = rng.sample(sorted(corpus), rng.randint(1, max(1, len(corpus) // 5)))
                kw = dict(remove=gone)
                nxt = {k: v for k, v in corpus.items() if k not in gone}
            else:  # edit: new title, or swap abstract with another paper's
                pid = rng.choice(sorted(corpus))
                old = corpus[pid]
                if rng.random() < 0.5:
                    ed = paper(pid, old.abstract, "Edited %d: %s" % (step, old.title or ""))
                else:
                    other = rng.choice(pool)
                    ed = paper(pid, other.abstract, old.title)
                kw = dict(add_papers=[ed])
                nxt = dict(corpus)
                nxt[pid] = updated(old, ed)
            if VARY_K:
                k = rng.choice([1, 2, 3, 10, 10, 25])
                pipe.close()
                pipe = gb.Pipeline(seed_settings(tmp, similar_k=k), cache_dir=cache,
                                   incremental=INCR)
            parts = Parts()
            gb.SIMILAR_PIECE_EDGES = size
            _apply = _SqlParts.apply
            parts.install(setattr)
            t = time.time()
            try:
                pipe.run(store, **kw)
            finally:
                gb.SIMILAR_PIECE_EDGES = orig
                _SqlParts.apply = _apply
            got = store.snapshot()
            from graph.model import Paper as _P
            stored = {k: v for k, v in got.nodes.items() if isinstance(v, _P)}
            if set(stored) != set(nxt):
                print("  (ids differ from the naive model: rejected duplicates?)",
                      sorted(set(stored) ^ set(nxt))[:5])
            corpus = stored
            full = whole(tmp / "whole", list(corpus.values()), cache,
                         **({"similar_k": k} if VARY_K else {}))
            try:
                assert_same_graph(full, got)
                ok = "ok"
            except AssertionError as exc:
                ok = "DIFF " + str(exc)[:500]
                explain(full, got)
            print(f"step {step} {op} k={k if VARY_K else 10} size={size} papers={len(corpus)} parts={parts.n} "
                  f"nodes={len(got.nodes)} edges={len(got.edges)} {time.time()-t:.1f}s {ok}",
                  flush=True)
            if ok != "ok":
                sys.exit(1)
    finally:
        pipe.close()
        store.close()


if __name__ == "__main__":
    main()
