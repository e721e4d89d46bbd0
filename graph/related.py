"""Related-paper recommendations that explain themselves, on top of any GraphStore.

Written once against the store protocol, so every store recommends the same papers.

Scoring (see docs/benchmarks.md for how the weights were chosen): a query vector is
the mean embedding of the seed papers minus ``NEGATIVE_WEIGHT`` x the mean of the
negative ones (Rocchio), or the embedded text. Candidates are the nearest papers
to it plus every paper joined to a seed by SHARES_TERM or CITES. Each candidate's
score is

    cosine(query, candidate) + TERM_WEIGHT * min(shared IDF weight, TERM_CAP)
                             + CITE_WEIGHT * [a citation joins them]

and its reasons (at most three: the similarity, citations, then the strongest shared
concepts/datasets with their IDF weight, none inside another) say why; ``path`` walks
seed -> strongest shared term -> candidate.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence

import numpy as np

from graph.errors import InvalidArgumentError, NotFoundError
from graph.model import Edge, GraphPath, Paper, Reason, RelatedPaper, RelType
from graph.store.base import GraphStore

TERM_WEIGHT = 0.01  # best of 0, .01, .02, .05, .1 on Cora citations and ICLR keywords
TERM_CAP = 10.0
CITE_WEIGHT = 0.1
NEGATIVE_WEIGHT = 0.5
MAX_REASONS = 3  # a reader reads three; more repeat what the first said
CANDIDATE_FACTOR = 5
TERM_TYPES = (RelType.MENTIONS, RelType.USES, RelType.INTRODUCES)


def _mean(store: GraphStore, ids: Sequence[str]) -> np.ndarray | None:
    vecs = store.embeddings(ids)
    if not vecs:
        return None
    m = np.asarray([vecs[i] for i in ids if i in vecs], dtype=np.float64)
    m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
    return np.asarray(m.mean(axis=0))


def related(
    store: GraphStore,
    *,
    paper: str | None = None,
    vector: Sequence[float] | None = None,
    text_terms: Collection[str] = (),
    first: int = 10,
    exclude: Collection[str] = (),
    positive: Collection[str] = (),
    negative: Collection[str] = (),
) -> list[RelatedPaper]:
    """Papers related to ``paper`` (+ ``positive``, - ``negative``) or to a text's ``vector``.

    ``text_terms``: concept/dataset node ids found in a free-text query, used as the
    query's terms when there is no seed paper.
    """
    if first < 1:
        raise InvalidArgumentError("first", "must be at least 1")
    seeds = ([paper] if paper else []) + [p for p in positive if p != paper]
    known = store.get_nodes([*seeds, *negative])
    for pid in [*seeds, *negative]:
        if not isinstance(known.get(pid), Paper):
            raise NotFoundError(f"no paper with id {pid!r}")
    if not seeds and vector is None:
        raise InvalidArgumentError("paper", "give a paper, positive papers or a text")

    query: np.ndarray | None = None
    if seeds:
        query = _mean(store, seeds)
    if vector is not None:
        v = np.asarray(vector, dtype=np.float64)
        v /= max(float(np.linalg.norm(v)), 1e-12)
        query = v if query is None else (query + v) / 2
    if negative and query is not None:
        neg = _mean(store, list(negative))
        if neg is not None:
            query = query - NEGATIVE_WEIGHT * neg
    skip = set(seeds) | set(exclude) | set(negative)

    # candidates: nearest by vector, and papers joined to a seed by shared terms/citations
    candidates: set[str] = set()
    if query is not None:
        hits = store.vector_search(query.tolist(), limit=first * CANDIDATE_FACTOR, exclude=skip)
        for h in hits:
            candidates.add(h.node.id)
    seed_edges = store.edges_of(seeds, [RelType.SHARES_TERM, RelType.CITES, *TERM_TYPES])
    shared: dict[str, Edge] = {}
    cites: dict[str, list[Edge]] = defaultdict(list)
    seed_terms: dict[str, Edge] = {}
    for e in seed_edges:
        if e.type in TERM_TYPES:
            if e.source in seeds:
                seed_terms.setdefault(e.target, e)
            continue
        other = e.target if e.source in seeds else e.source
        if other in skip:
            continue
        if e.type is RelType.SHARES_TERM:
            if other not in shared or e.weight > shared[other].weight:
                shared[other] = e
        else:
            cites[other].append(e)
        candidates.add(other)
    if not candidates:
        return []

    cand_ids = sorted(candidates)
    vecs = store.embeddings(cand_ids)
    nodes = store.get_nodes(cand_ids)
    query_terms = set(text_terms)
    term_edges: dict[str, dict[str, Edge]] = defaultdict(dict)
    if query_terms or seed_terms:
        for e in store.edges_of(cand_ids, TERM_TYPES):
            if e.source in candidates:
                term_edges[e.source][e.target] = e
    term_nodes = store.get_nodes(sorted(query_terms | set(seed_terms)))

    results: list[RelatedPaper] = []
    for cid in cand_ids:
        node = nodes.get(cid)
        if not isinstance(node, Paper):
            continue
        sim = 0.0
        if query is not None and cid in vecs:
            v = np.asarray(vecs[cid], dtype=np.float64)
            sim = float(np.dot(query, v) / max(float(np.linalg.norm(v)), 1e-12))
        reasons: list[Reason] = [Reason("similar", f"abstract similarity {sim:.2f}", round(sim, 4))]
        term_score = 0.0
        edge = shared.get(cid)
        top_term: str | None = None
        if edge is not None:
            names = list(edge.attrs.get("terms", []))
            ids = list(edge.attrs.get("term_ids", names))
            weights = list(edge.attrs.get("term_weights", [1.0] * len(names)))
            for name, tid, w in zip(names, ids, weights, strict=False):
                kind = "dataset" if str(tid).startswith("dataset:") else "concept"
                reasons.append(
                    Reason(
                        kind,
                        f"both {'use' if kind == 'dataset' else 'mention'} {name}",
                        float(w),
                        str(tid),
                    )
                )
            term_score = float(edge.weight)
            top_term = str(ids[0]) if ids else None
        elif query_terms:
            mine = sorted(query_terms & set(term_edges.get(cid, {})))
            for tid in mine:
                t = term_nodes.get(tid)
                label = t.label if t is not None else tid
                kind = "dataset" if tid.startswith("dataset:") else "concept"
                reasons.append(Reason(kind, f"mentions {label}", 1.0, tid))
            term_score = float(len(mine))
            top_term = mine[0] if mine else None
        cite_bonus = 0.0
        for ce in cites.get(cid, []):
            text = "cited by the seed" if ce.source in seeds else "cites the seed"
            reasons.append(Reason("cites" if ce.source in seeds else "cited_by", text, 1.0))
            cite_bonus = CITE_WEIGHT
        score = sim + TERM_WEIGHT * min(term_score, TERM_CAP) + cite_bonus
        results.append(
            RelatedPaper(
                paper=node,
                score=round(score, 6),
                similarity=round(sim, 6),
                reasons=tuple(_readable(reasons)),
                path=_path(store, seeds, seed_terms, term_edges.get(cid, {}), node, top_term),
            )
        )
    results.sort(key=lambda r: (-r.score, r.paper.id))
    return results[:first]


def _readable(reasons: Sequence[Reason]) -> list[Reason]:
    """At most MAX_REASONS, strongest first, none inside another.

    The similarity comes first (it is most of the score), then citations, then the shared
    terms by weight; a term whose words lie inside a stronger kept term's ("diffusion" in
    "diffusion model"), or around them, says the same thing again and is left out.
    """
    similar = [r for r in reasons if r.kind == "similar"]
    cites = [r for r in reasons if r.kind in ("cites", "cited_by")]
    terms = sorted(
        (r for r in reasons if r.kind in ("concept", "dataset")), key=lambda r: (-r.weight, r.text)
    )
    kept_terms: list[Reason] = []
    names: list[str] = []
    for r in terms:
        name = f" {_term_name(r).casefold()} "
        if any(name in other or other in name for other in names):
            continue
        kept_terms.append(r)
        names.append(name)
    return [*similar, *cites, *kept_terms][:MAX_REASONS]


def _term_name(reason: Reason) -> str:
    """The term a "both mention X" / "mentions X" reason names."""
    for prefix in ("both mention ", "both use ", "mentions "):
        if reason.text.startswith(prefix):
            return reason.text[len(prefix):]
    return reason.text


def _path(
    store: GraphStore,
    seeds: Sequence[str],
    seed_terms: dict[str, Edge],
    cand_terms: dict[str, Edge],
    cand: Paper,
    term: str | None,
) -> GraphPath | None:
    """seed -[MENTIONS]-> term <-[MENTIONS]- candidate, through the rarest shared term."""
    if not seeds or term is None or term not in seed_terms or term not in cand_terms:
        return None
    first_edge = seed_terms[term]
    nodes = store.get_nodes([first_edge.source, term])
    if len(nodes) < 2:
        return None
    return GraphPath(
        nodes=(nodes[first_edge.source], nodes[term], cand),
        edges=(first_edge, cand_terms[term]),
    )
