"""Do the topics match what people say the topics are, and do their labels read right?

    python -m bench topics [--resolutions 0.25,0.5,...] [--split-seed 7] [--quick]

**Cora** (built by ``citegraph build`` from Cora's texts with its citations as
references, so topics cluster SIMILAR_TO + CITES + coupling): the top-level topics of
each resolution in the grid against Cora's 7 human labels (group.txt), NMI and ARI
(sklearn.metrics). The papers are split in two seeded halves: the resolution is the one
with the best NMI on the first half, and the figures are that resolution's on the second
half. Baselines in the same run, on the same half: k-means with k = 7 (n_init 10, seed
0) on TF-IDF vectors of the texts and on the graph's MiniLM vectors. Goal: beat both on
NMI.

**ICLR 2021** (untuned: the default settings): the share of papers whose topic's most
common author keyword is theirs (purity), the seconds ``citegraph topics --recompute``
takes (goal ≤ 10 s), and 20 labels beside their top papers' titles with the verdict a
reader gave each (bench/topic_verdicts.json, keyed by label; a label no one read yet
says so). ``--quick``: the seeds' topics and their time.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.common import ROOT, Result, built_graph, copy_graph, load_cora

VERDICTS = ROOT / "bench" / "topic_verdicts.json"
GRID = "0.1,0.25,0.5,0.75,1,1.5,2,3"


def run(argv: list[str]) -> Result:
    ap = argparse.ArgumentParser(prog="python -m bench topics", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--resolutions", default=GRID, help=f"the grid ({GRID})")
    ap.add_argument("--split-seed", type=int, default=7, help="seed of Cora's halves (7)")
    ap.add_argument("--quick", action="store_true", help="the seeds only")
    args = ap.parse_args(argv)
    result = Result("topics", quick=args.quick,
                    corpus="seeds" if args.quick else "Cora (2,277 papers) and ICLR 2021")
    if not args.quick:
        _cora(result, [float(x) for x in args.resolutions.split(",")], args.split_seed)
    _labels(result, "seeds" if args.quick else "iclr2021")
    return result


def _open(corpus: str, tmp: str) -> tuple[Any, Any]:
    from graph.settings import Settings
    from graph.store import open_store

    data = copy_graph(built_graph(corpus), Path(tmp) / corpus)
    settings = Settings(data_dir=data)
    return settings, open_store(settings)


def _cora(result: Result, grid: list[float], split_seed: int) -> None:
    import numpy as np
    from sklearn.cluster import KMeans
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    from graph.topics import compute_topics
    from graph.topics.update import inputs_of

    papers, _, labels = load_cora()
    with tempfile.TemporaryDirectory(prefix="citegraph-bench-topics-") as tmp:
        settings, store = _open("cora", tmp)
        data = store.snapshot()
        inputs = inputs_of(data)
        # the graph's papers: a text that is another's too is one paper (merged on build)
        ids = sorted(inputs.papers)
        vectors = store.embeddings(ids)
        store.close()
    # the graph's papers with a label (66 of Cora's have none) are scored; every paper of
    # the graph is clustered, by the topics and by the baselines alike
    truth = {p.id: lab for p, lab in zip(papers, labels, strict=True)
             if lab is not None and p.id in vectors}
    order = sorted(truth)
    random.Random(split_seed).shuffle(order)
    tune, test = sorted(order[: len(order) // 2]), sorted(order[len(order) // 2:])

    def scores(found: dict[str, int], half: list[str]) -> tuple[float, float]:
        want = [truth[p] for p in half]
        got = [found.get(p, -1) for p in half]
        return (normalized_mutual_info_score(want, got), adjusted_rand_score(want, got))


    def topics_at(r: float, cites: float, coupling: float) -> tuple[dict[str, int], int]:
        res = compute_topics(inputs, resolution=r, seed=settings.topic_seed,
                             subtopic_min=10**9, cites_weight=cites, coupling_weight=coupling)
        tops = [c for c in res.topics if c.parent is None]
        return {p: i for i, c in enumerate(tops) for p in c.members}, len(tops)

    w = (settings.topic_cites_weight, settings.topic_coupling_weight)
    rows, best = [], None
    for r in grid:
        found, n = topics_at(r, *w)
        a, b = scores(found, tune), scores(found, test)
        rows.append([r, n, round(a[0], 3), round(a[1], 3), round(b[0], 3), round(b[1], 3)])
        if best is None or a[0] > best[1]:
            best = (r, a[0], b, n)
    assert best is not None
    result.table("Cora: top-level topics at each resolution (SIMILAR_TO + CITES + coupling)",
                 ["resolution", "topics", "NMI tune half", "ARI tune half", "NMI test half",
                  "ARI test half"], rows)
    r, _, (nmi, ari), n = best
    sim_only, _ = topics_at(r, 0.0, 0.0)
    nmi_sim, ari_sim = scores(sim_only, test)

    texts = {p.id: p.abstract for p in papers}
    tfidf = TfidfVectorizer(sublinear_tf=True, min_df=2).fit_transform([texts[p] for p in ids])
    # the baselines cluster every paper too, and are scored on the same half
    km_t = KMeans(7, n_init=10, random_state=0).fit_predict(tfidf)
    mat = np.asarray([vectors[p] for p in ids], dtype=np.float32)
    km_v = KMeans(7, n_init=10, random_state=0).fit_predict(mat)
    nmi_t, ari_t = scores({p: int(k) for p, k in zip(ids, km_t, strict=True)}, test)
    nmi_v, ari_v = scores({p: int(k) for p, k in zip(ids, km_v, strict=True)}, test)
    result.note(f"Cora: {len(ids)} papers in the graph (of {len(papers)} lines), {len(truth)} "
                f"with a label; halves of {len(tune)} (tune) and {len(test)} (test)")
    result.table("Cora, test half: topics against the baselines",
                 ["clustering", "clusters", "NMI", "ARI"], [
                     [f"topics, resolution {r} (chosen on the tune half)", n, round(nmi, 3),
                      round(ari, 3)],
                     ["topics over SIMILAR_TO alone, same resolution", "", round(nmi_sim, 3),
                      round(ari_sim, 3)],
                     ["k-means k=7, TF-IDF", 7, round(nmi_t, 3), round(ari_t, 3)],
                     ["k-means k=7, MiniLM", 7, round(nmi_v, 3), round(ari_v, 3)],
                 ])
    result.figure("Cora resolution chosen on the tune half", r)
    result.figure("Cora test half: topics NMI / ARI", f"{nmi:.3f} / {ari:.3f}")
    result.figure("Cora test half: k-means TF-IDF NMI / ARI", f"{nmi_t:.3f} / {ari_t:.3f}")
    result.figure("Cora test half: k-means MiniLM NMI / ARI", f"{nmi_v:.3f} / {ari_v:.3f}")
    result.figure("Cora test half: topics NMI over the better baseline's",
                  round(nmi - max(nmi_t, nmi_v), 3), "", "> 0", nmi > max(nmi_t, nmi_v))


def _labels(result: Result, corpus: str) -> None:
    from graph.model import Paper
    from graph.topics import recompute, stored_topics

    with tempfile.TemporaryDirectory(prefix="citegraph-bench-topics-") as tmp:
        settings, store = _open(corpus, tmp)
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            done = recompute(store, settings)
            times.append(time.perf_counter() - t0)
        topics = stored_topics(store)
        data = store.snapshot()
        store.close()
    took = statistics.median(times)
    result.figure(f"{corpus}: topics --recompute (median of 3)", round(took, 2), "s",
                  "≤ 10 s" if corpus == "iclr2021" else "", took <= 10 if corpus == "iclr2021"
                  else None)
    tops = [t for t in topics if t.level == 1]
    subs = [t for t in topics if t.level == 2]
    result.figure(f"{corpus}: topics / subtopics", f"{len(tops)} / {len(subs)}")
    papers = {k: n for k, n in data.nodes.items() if isinstance(n, Paper)}
    members: dict[str, list[str]] = {}
    for e in data.edges.values():
        if e.type.value == "IN_TOPIC":
            members.setdefault(e.target, []).append(e.source)
    if corpus == "iclr2021":
        hit = 0
        for t in tops:
            kws = Counter(k.casefold().strip() for p in members.get(t.id, [])
                          for k in set(papers[p].keywords))
            if kws:
                kw, _ = kws.most_common(1)[0]
                hit += sum(1 for p in members.get(t.id, [])
                           if kw in {k.casefold().strip() for k in papers[p].keywords})
        result.figure("ICLR 2021: author-keyword purity of the topics", hit / len(papers))
    verdicts = json.loads(VERDICTS.read_text()) if VERDICTS.exists() else {}
    read = sorted(topics, key=lambda t: (-t.size, t.id))[:20]
    rows, good, judged = [], 0, 0
    for t in read:
        titles = "; ".join((papers[p].title or papers[p].label)[:60] for p in t.papers[:3])
        verdict = verdicts.get(corpus, {}).get(t.name, "not read yet")
        judged += verdict != "not read yet"
        good += verdict.startswith("good")
        rows.append([t.id, t.size, t.name, titles, verdict])
    result.table(f"{corpus}: the 20 biggest topics' labels against their top 3 papers",
                 ["topic", "papers", "label", "top papers", "verdict"], rows)
    if corpus == "iclr2021":
        result.figure("ICLR 2021: labels read as good", f"{good}/{len(read)}", "",
                      "≥ 17/20", good >= 17 if judged == len(read) else None)
    del done
