"""Topics as plain functions: Leiden communities, c-TF-IDF labels, PageRank, stable ids.

Nothing here reads a store: :mod:`graph.topics.update` gathers the inputs from one and
writes the result back. Every function is deterministic for its inputs (Leiden is seeded,
ties broken by id).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import igraph as ig
import leidenalg
import networkx as nx
import numpy as np
from scipy import sparse
from scipy.optimize import linear_sum_assignment

#: a community whose best match overlaps it less than this (Jaccard) gets a new id
MATCH_MIN_JACCARD = 0.3
#: communities smaller than this are dissolved into their neighbours' topics
MIN_TOPIC_SIZE = 3
#: a subtopic holds this many papers at least (smaller parts join their neighbours')
MIN_SUBTOPIC_SIZE = 10
#: at most this many concepts, papers and datasets are kept on a topic
TOP_N = 10
#: Leiden's passes (leidenalg's default): until stable (-1) took 2.0 s against 0.44 s on
#: ICLR 2021 for a partition 0.4% better in quality
LEIDEN_ITERATIONS = 2


@dataclass(frozen=True, slots=True)
class TopicInputs:
    """What topics are computed from, as ids and weighted pairs."""

    papers: Sequence[str]  # paper ids
    similar: Sequence[tuple[str, str, float]]  # SIMILAR_TO (source, target, score)
    cites: Sequence[tuple[str, str]] = ()  # CITES paper -> paper or outside work
    mentions: Mapping[str, Mapping[str, int]] = field(default_factory=dict)  # paper -> concept -> n
    datasets: Mapping[str, Sequence[str]] = field(default_factory=dict)  # paper -> dataset ids
    years: Mapping[str, int | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Community:
    """A computed topic: its id, members and what describes it."""

    id: str
    members: frozenset[str]
    parent: str | None
    concepts: tuple[str, ...]  # concept ids, most distinctive first
    papers: tuple[str, ...]  # the top members by importance
    datasets: tuple[str, ...]
    years: tuple[tuple[int, int], ...]  # (year, papers), ascending


@dataclass(frozen=True, slots=True)
class TopicResult:
    """Topics and subtopics (parents first) and every paper's importance."""

    topics: tuple[Community, ...]
    importance: Mapping[str, float]


def coupling_pairs(cites: Iterable[tuple[str, str]]) -> list[tuple[str, str, float]]:
    """Bibliographic coupling of citing papers: (a, b, Salton's cosine) for a < b that
    cite a common work."""
    rows: dict[str, int] = {}
    cols: dict[str, int] = {}
    ri, ci = [], []
    for s, t in cites:
        ri.append(rows.setdefault(s, len(rows)))
        ci.append(cols.setdefault(t, len(cols)))
    if not ri:
        return []
    a = sparse.csr_matrix(
        (np.ones(len(ri)), (ri, ci)), shape=(len(rows), len(cols))
    )
    a.data[:] = 1.0  # a duplicate pair counts once
    a.sum_duplicates()
    a.data[:] = 1.0
    deg = np.asarray(a.sum(axis=1)).ravel()
    shared = sparse.triu(a @ a.T, k=1).tocoo()
    names = sorted(rows, key=rows.__getitem__)
    out = []
    for i, j, n in zip(shared.row, shared.col, shared.data, strict=True):
        a_id, b_id = names[i], names[j]
        pair = (a_id, b_id) if a_id < b_id else (b_id, a_id)
        out.append((*pair, float(n / math.sqrt(deg[i] * deg[j]))))
    out.sort()
    return out


def paper_edges(
    inputs: TopicInputs, cites_weight: float, coupling_weight: float
) -> dict[tuple[str, str], float]:
    """The undirected paper-paper weights Leiden clusters: SIMILAR_TO's cosine (a pair
    listed both ways counts once, at its higher score), plus ``cites_weight`` per CITES
    between corpus papers, plus ``coupling_weight`` x the coupling cosine."""
    known = set(inputs.papers)
    w: dict[tuple[str, str], float] = {}
    for s, t, score in inputs.similar:
        if s in known and t in known and s != t and score > 0:
            k = (s, t) if s < t else (t, s)
            w[k] = max(w.get(k, 0.0), score)
    extra: dict[tuple[str, str], float] = defaultdict(float)
    if cites_weight > 0:
        for s, t in inputs.cites:
            if s in known and t in known and s != t:
                extra[(s, t) if s < t else (t, s)] += cites_weight
    if coupling_weight > 0:
        for a, b, cos in coupling_pairs((s, t) for s, t in inputs.cites if s in known):
            extra[(a, b)] += coupling_weight * cos
    for k, v in extra.items():
        w[k] = w.get(k, 0.0) + v
    return w


def leiden(
    nodes: Sequence[str], weights: Mapping[tuple[str, str], float], resolution: float,
    seed: int,
) -> list[list[str]]:
    """Leiden communities (RBConfiguration, seeded), biggest first, members by id."""
    if not nodes:
        return []
    index = {n: i for i, n in enumerate(nodes)}
    pairs = sorted(k for k in weights if k[0] in index and k[1] in index)
    g = ig.Graph(n=len(nodes), edges=[(index[a], index[b]) for a, b in pairs])
    g.es["weight"] = [weights[k] for k in pairs]
    part = leidenalg.find_partition(
        g, leidenalg.RBConfigurationVertexPartition, weights="weight",
        resolution_parameter=resolution, seed=seed, n_iterations=LEIDEN_ITERATIONS,
    )
    groups = [sorted(nodes[i] for i in c) for c in part]
    return sorted((c for c in groups if c), key=lambda c: (-len(c), c[0]))


def dissolve_small(
    groups: list[list[str]], weights: Mapping[tuple[str, str], float], min_size: int
) -> list[list[str]]:
    """Members of groups under ``min_size`` join the big group they weigh most towards
    (a group with no such tie stays as it is)."""
    big = [set(g) for g in groups if len(g) >= min_size]
    if not big:
        return groups
    where = {p: i for i, g in enumerate(big) for p in g}
    adj: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    for (a, b), w in weights.items():
        if b in where:
            adj[a][where[b]] += w
        if a in where:
            adj[b][where[a]] += w
    kept: list[list[str]] = []
    for g in groups:
        if len(g) >= min_size:
            continue
        alone = []
        for p in g:
            ties = adj.get(p)
            if ties:
                best = max(sorted(ties), key=lambda i: ties[i])
                big[best].add(p)
            else:
                alone.append(p)
        if alone:
            kept.append(alone)
    out = [sorted(g) for g in big] + kept
    return sorted(out, key=lambda c: (-len(c), c[0]))


def ctfidf(classes: Mapping[str, Counter[str]]) -> dict[str, list[tuple[str, float]]]:
    """Class-based TF-IDF (BERTopic's): a term's frequency in the class x
    log(1 + average class size / its frequency across all classes); terms best first."""
    if not classes:
        return {}
    total: Counter[str] = Counter()
    for c in classes.values():
        total.update(c)
    avg = sum(total.values()) / len(classes)
    out: dict[str, list[tuple[str, float]]] = {}
    for name, counts in classes.items():
        size = sum(counts.values()) or 1
        scored = [
            (t, (n / size) * math.log(1 + avg / total[t])) for t, n in counts.items() if n > 0
        ]
        scored.sort(key=lambda x: (-x[1], x[0]))
        out[name] = scored
    return out


def pagerank(
    papers: Sequence[str], cites: Sequence[tuple[str, str]],
    coupling: Sequence[tuple[str, str, float]], similar: Sequence[tuple[str, str, float]],
) -> dict[str, float]:
    """Each paper's importance: PageRank over CITES between corpus papers and coupling
    (both ways) where the corpus cites itself, else over SIMILAR_TO (both ways)."""
    g: nx.DiGraph = nx.DiGraph()
    g.add_nodes_from(papers)
    known = set(papers)
    internal = [(s, t) for s, t in cites if s in known and t in known and s != t]
    if internal:
        for s, t in internal:
            g.add_edge(s, t, weight=1.0)
        for a, b, w in coupling:
            for u, v in ((a, b), (b, a)):
                prev = g.get_edge_data(u, v, {}).get("weight", 0.0)
                g.add_edge(u, v, weight=prev + w)
    else:
        for s, t, w in similar:
            if s in known and t in known and s != t:
                for u, v in ((s, t), (t, s)):
                    g.add_edge(u, v, weight=max(w, g.get_edge_data(u, v, {}).get("weight", 0.0)))
    if not g.number_of_nodes():
        return {}
    rank: dict[str, float] = nx.pagerank(g, weight="weight")
    return {p: float(rank[p]) for p in papers}


def match_ids(
    old: Mapping[str, frozenset[str]], new: Sequence[frozenset[str]], prefix: str
) -> list[str]:
    """An id for each of ``new``: the old id it overlaps best (Jaccard, matched one to one
    by linear_sum_assignment) when at least MATCH_MIN_JACCARD, else a fresh
    ``prefix<n>`` after the highest number in use."""
    ids: list[str | None] = [None] * len(new)
    names = sorted(old)
    if names and new:
        cost = np.zeros((len(new), len(names)))
        for i, members in enumerate(new):
            for j, name in enumerate(names):
                o = old[name]
                inter = len(members & o)
                cost[i, j] = -inter / len(members | o) if inter else 0.0
        for i, j in zip(*linear_sum_assignment(cost), strict=True):
            if -cost[i, j] >= MATCH_MIN_JACCARD:
                ids[i] = names[j]
    used = [int(n[len(prefix):]) for n in (*names, *(i for i in ids if i)) if
            n.startswith(prefix) and n[len(prefix):].isdigit()]
    nxt = max(used, default=0) + 1
    out: list[str] = []
    for got in ids:
        if got is None:
            got = f"{prefix}{nxt}"
            nxt += 1
        out.append(got)
    return out


def _describe(
    groups: Mapping[str, frozenset[str]], parent: Mapping[str, str | None],
    inputs: TopicInputs, importance: Mapping[str, float],
) -> list[Community]:
    """Concepts (c-TF-IDF among ``groups``), top papers, datasets and years of each."""
    classes: dict[str, Counter[str]] = {}
    for name, members in groups.items():
        c: Counter[str] = Counter()
        for p in members:
            c.update(dict.fromkeys(inputs.mentions.get(p, {}), 1))
        # a term only one paper of a big topic mentions says nothing of the topic
        if len(members) >= 10:
            c = Counter({t: n for t, n in c.items() if n >= 2})
        classes[name] = c
    scores = ctfidf(classes)
    # a concept is the topic's when its papers mention it more often than the corpus
    # does (a concept every paper mentions scores in every class and labels none)
    everyone = sum(len(m) for m in groups.values()) or 1
    df: Counter[str] = Counter()
    for c in classes.values():
        df.update(c)
    for name, members in groups.items():
        scores[name] = [
            (t, v) for t, v in scores.get(name, [])
            if classes[name][t] / len(members) > df[t] / everyone
        ]
    out = []
    for name, members in groups.items():
        ranked = sorted(members, key=lambda p: (-importance.get(p, 0.0), p))
        ds: Counter[str] = Counter()
        years: Counter[int] = Counter()
        for p in members:
            ds.update(set(inputs.datasets.get(p, ())))
            y = inputs.years.get(p)
            if y is not None:
                years[y] += 1
        out.append(Community(
            id=name, members=members, parent=parent[name],
            concepts=tuple(t for t, _ in scores.get(name, [])[:TOP_N]),
            papers=tuple(ranked[:TOP_N]),
            datasets=tuple(d for d, _ in sorted(ds.items(), key=lambda x: (-x[1], x[0]))[:TOP_N]),
            years=tuple(sorted(years.items())),
        ))
    return out


def compute_topics(
    inputs: TopicInputs, *, resolution: float, seed: int, subtopic_min: int,
    subtopic_resolution: float = 1.0, cites_weight: float = 0.5, coupling_weight: float = 1.0,
    previous: Mapping[str, frozenset[str]] | None = None,
) -> TopicResult:
    """Topics (``topic:<n>``) and subtopics (``topic:<n>.<m>``) of ``inputs.papers``.

    Subtopics: Leiden again on the subgraph of each topic of ``subtopic_min`` papers or
    more, at ``subtopic_resolution`` (a topic is one community at ``resolution`` by
    construction, so splitting it takes a higher one); kept when it gives two parts of
    MIN_SUBTOPIC_SIZE or more. ``previous``: the members of the topics and subtopics
    computed before, whose ids a community keeps when it overlaps them enough
    (:func:`match_ids`)."""
    previous = previous or {}
    papers = sorted(set(inputs.papers))
    weights = paper_edges(inputs, cites_weight, coupling_weight)
    coupling = coupling_pairs((s, t) for s, t in inputs.cites if s in set(papers))
    importance = pagerank(papers, inputs.cites, coupling, inputs.similar)
    top = dissolve_small(leiden(papers, weights, resolution, seed), weights, MIN_TOPIC_SIZE)
    old_top = {k: v for k, v in previous.items() if "." not in k}
    top_sets = [frozenset(g) for g in top]
    top_ids = match_ids(old_top, top_sets, "topic:")
    groups: dict[str, frozenset[str]] = dict(zip(top_ids, top_sets, strict=True))
    parents: dict[str, str | None] = dict.fromkeys(top_ids)
    described = _describe(groups, parents, inputs, importance)
    for tid, members in sorted(groups.items()):
        if len(members) < subtopic_min:
            continue
        nodes = sorted(members)
        sub = {k: v for k, v in weights.items() if k[0] in members and k[1] in members}
        parts = dissolve_small(
            leiden(nodes, sub, subtopic_resolution, seed), sub, MIN_SUBTOPIC_SIZE
        )
        parts = [p for p in parts if len(p) >= MIN_SUBTOPIC_SIZE]
        if len(parts) < 2:
            continue
        old_sub = {k: v for k, v in previous.items() if k.startswith(tid + ".")}
        sets = [frozenset(p) for p in parts]
        sub_ids = match_ids(old_sub, sets, tid + ".")
        described.extend(_describe(
            dict(zip(sub_ids, sets, strict=True)), dict.fromkeys(sub_ids, tid), inputs,
            importance,
        ))
    return TopicResult(tuple(described), importance)


def assign(
    new: Sequence[str], neighbours: Mapping[str, Sequence[tuple[str, float]]],
    topic_of: Mapping[str, str],
) -> dict[str, str]:
    """The topic each new paper joins: the one most of its SIMILAR_TO neighbours are in
    (summed score, ties by id); a paper with no neighbour in a topic joins none."""
    out: dict[str, str] = {}
    for p in sorted(new):
        votes: dict[str, float] = defaultdict(float)
        for q, w in neighbours.get(p, ()):
            t = topic_of.get(q)
            if t is not None:
                votes[t] += w
        if votes:
            out[p] = max(sorted(votes), key=lambda t: votes[t])
    return out
