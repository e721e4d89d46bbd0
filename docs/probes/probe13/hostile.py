"""Hostile corpora built with SIMILAR_TO in small pieces vs written whole; then each
rebuilt over another (ids that sort strangely, tiny corpora, exact piece multiples)."""
from __future__ import annotations

import json
import shutil
import sys
import time
import unicodedata
from pathlib import Path

import graph.build as gb
from graph.ingest import read_corpus
from graph.store.embedded import EmbeddedStore
from probe.common import Parts, assert_same_graph, seed_papers, whole
from tests.support.seeds import seed_settings

CACHE = Path("/tmp/p13-seed-cache")
WORK = Path("/tmp/p13-hostile")


def corpus(name: str, records: list[dict]) -> list:
    path = WORK / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    r = read_corpus([path])
    return r.papers, [str(p) for p in r.problems]


def cases() -> dict[str, list[dict]]:
    ps = seed_papers()
    texts = [p.abstract for p in ps]
    strange = ["a", "ab", "abc", "a b", "a'b", 'a"b', "a\tb", "a%b", "a_b", "ä", "a\u0308x",
               "z", "Z", "é", "e\u0301z", "日本", "🙂", "x" * 3000, "x" * 2999, "0", "00",
               "-1", "a;DROP TABLE edges;--", "a\\b", "a/b", "\u00a0lead", "tail\u2003",
               "ǆ", "ß", "SS", "ﬁ", "K", "\u212a", "İ", "i̇"]
    out: dict[str, list[dict]] = {}
    out["strange-ids"] = [{"id": i, "abstract": texts[n]} for n, i in enumerate(strange)]
    for n in (1, 2, 3, 4, 5, 8, 9):
        out[f"n{n}"] = [{"id": f"p{i}", "abstract": texts[i]} for i in range(n)]
    out["dup-texts"] = [{"id": f"d{i}", "abstract": texts[i % 5]} for i in range(15)]
    out["same-abstract-diff-titles"] = [
        {"id": f"t{i}", "title": f"Title number {i}", "abstract": texts[0]} for i in range(12)]
    out["all-identical"] = [{"id": f"s{i}", "abstract": texts[3]} for i in range(10)]
    out["empty-abstracts"] = [{"id": f"e{i}", "abstract": "" if i % 3 == 0 else texts[i]}
                              for i in range(12)]
    out["prefix-chain"] = [{"id": "q" * (i + 1), "abstract": texts[i]} for i in range(20)]
    return out


def main() -> None:
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir()
    allc = cases()
    names = sys.argv[1:] or list(allc)
    orig = gb.SIMILAR_PIECE_EDGES
    prev_db = WORK / "chain.db"
    chain = EmbeddedStore(prev_db, reads="sql")
    for name in names:
        papers, problems = corpus(name, allc[name])
        for size in (1, 13, 40):
            db = WORK / f"{name}-{size}.db"
            store = EmbeddedStore(db, reads="sql")
            pipe = gb.Pipeline(seed_settings(WORK / "s"), cache_dir=CACHE, incremental=False)
            parts = Parts()
            from graph.store.embedded import _SqlParts
            apply = _SqlParts.apply
            parts.install(setattr)
            gb.SIMILAR_PIECE_EDGES = size
            t = time.time()
            try:
                rep = pipe.run(store, add_papers=papers, replace=True)
                # and the same corpus rebuilt over the chain's last graph
                rep2 = pipe.run(chain, add_papers=papers, replace=True)
                err = None
            except Exception as exc:  # noqa: BLE001
                err = f"{type(exc).__name__}: {exc}"
            finally:
                gb.SIMILAR_PIECE_EDGES = orig
                _SqlParts.apply = apply
                pipe.close()
            if err:
                print(f"{name} size={size}: ERROR {err}")
                store.close()
                continue
            full = whole(WORK / "w", papers, CACHE)
            try:
                assert_same_graph(full, store.snapshot())
                assert_same_graph(full, chain.snapshot())
                ok = "ok"
            except AssertionError as exc:
                ok = "DIFF " + str(exc)[:300]
            print(f"{name} size={size}: read={len(papers)} problems={len(problems)} "
                  f"{problems[:2]} parts={parts.n} nodes={len(full.nodes)} "
                  f"edges={len(full.edges)} sim={sum(1 for k in full.edges if k[2].value == 'SIMILAR_TO')} "
                  f"{time.time()-t:.1f}s {ok}", flush=True)
            store.close()
    chain.close()


if __name__ == "__main__":
    main()
