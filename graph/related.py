"""Related-paper recommendations that explain themselves, on top of any GraphStore.

Written once against the store protocol, so every store recommends the same papers.

Scoring (formula E of bench/ranking.py; docs/benchmarks.md says how the weights were
chosen on one half of Cora and checked on the other half and on ICLR 2021). The query is
the mean embedding of the seed papers minus ``negative`` x the mean of the negative ones
(Rocchio), or the embedded text. Candidates are the nearest papers to it, the papers
with the most word overlap, and every paper joined to a seed by SHARES_TERM or CITES.
Each candidate c scores

    cos(query, c) + lexical * words(query, c) + terms * shared(query, c)
                  - hub * hubness(c) + cite * [a citation joins them]
                  + coupling * coupled(c) + cocited * cocited(c)

* words: TF-IDF cosine over word 1-2-grams (graph/lexical.py), computed from the
  current document frequencies; title words count twice, and the seed's unigrams have a
  saturated tf (a word it repeats counts once, not ln(count) times more);
* shared: the IDF mass of the concepts/datasets shared with the seeds, as a share of
  the seeds' own (the terms SHARES_TERM links by: 2 <= df <= min(max_df x N, 1000));
* coupled, cocited: bibliographic coupling and co-citation with the seeds, Salton's
  cosine over CITES, outside works included, counted when read
  (graph.query.citations); their partners are candidates too;
* hubness: the mean cosine of c's plain top-k (stored on its SIMILAR_TO edges as
  ``hub_cos``; CSLS's r term in cosine units): a paper close to everything is a weaker
  recommendation for any one seed.

Then pseudo-relevance feedback: the three best candidates of that first round stand in
for the seed too, and every candidate gains 0.25 x its mean score against them (the same
score, with each of them as the seed). A real citation shares the seed's nearest papers'
neighbours: this lifts Cora recall@10 and ICLR keyword sharing (docs/benchmarks.md).
Last, a candidate in a seed's stored SIMILAR_TO list gains 0.05 / its rank there (mean
over the seeds): those lists rank by the N-free word overlap and CSLS, which lifts MRR.

All of it is computed when read (the SIMILAR_TO lists were stored by the build, and
depend on no N), so nothing stored depends on N. The reasons (at most
three: the similarity, the shared wording, citations, then the strongest shared
concepts/datasets, none inside another) say why; ``path`` walks seed -> rarest shared
term -> candidate.
"""

from __future__ import annotations

import functools
import math
import threading
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from graph import deadline
from graph.errors import InvalidArgumentError, NotFoundError
from graph.extract.tokens import telling
from graph.lexical import (
    LexicalIndex,
    LexVector,
    WordScores,
    appears,
    mean_vector,
    overlaps,
    paper_text,
    spelled,
)
from graph.model import CitationLink, Edge, GraphPath, Paper, Reason, RelatedPaper, RelType
from graph.query import QueryLayer
from graph.query.citations import reason_text
from graph.query.filters import ANY, PaperFilter
from graph.store.base import GraphStore
from graph.store.memory import NetworkxStore

MAX_REASONS = 3  # a reader reads three; more repeat what the first said
CANDIDATE_FACTOR = 5  # vector and word-overlap candidates: first x this, each
#: a filter admitting at most this many papers makes all of them candidates (related())
FILTER_ALL = 500
TERM_TYPES = (RelType.MENTIONS, RelType.USES, RelType.INTRODUCES)
MAX_DF = 0.2  # as Settings.shared_term_max_df: terms in more papers say nothing
MAX_TERM_PAPERS = 1000  # as graph.link.MAX_TERM_PAPERS


@dataclass(frozen=True, slots=True)
class Weights:
    """The weights of the score (chosen on the Cora tune half, docs/benchmarks.md)."""

    lexical: float = 3.0
    terms: float = 0.3
    hub: float = 0.5
    cite: float = 0.1
    #: citation overlap with the seeds (Salton's cosine, 0..1). Co-citation: chosen on
    #: Cora with each test paper's references hidden (python -m bench citations): 2.0 found
    #: 0.49 of them in the top 10 on the test half, 0.42 with 0 and 0.43 with 0.1. Coupling
    #: cannot be measured that way (the paper has no references): left at 0.1, untuned
    coupling: float = 0.1
    cocited: float = 2.0
    negative: float = 0.5
    #: pseudo-relevance feedback: each candidate gains ``feedback`` x its mean score
    #: against the ``feedback_papers`` best of the first round (paper seeds only)
    feedback: float = 0.25
    feedback_papers: int = 3
    #: after the feedback, each candidate gains ``listed`` / its rank in a seed's stored
    #: SIMILAR_TO list (mean over the seeds; 0 where absent): the lists rank the pair by
    #: the N-free word overlap and CSLS, which the score above does not see
    listed: float = 0.05


WEIGHTS = Weights()


def _mean(store: GraphStore, ids: Sequence[str]) -> np.ndarray | None:
    vecs = store.embeddings(ids)
    if not vecs:
        return None
    m = np.asarray([vecs[i] for i in ids if i in vecs], dtype=np.float64)
    m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
    return np.asarray(m.mean(axis=0))


@dataclass(slots=True)
class _Candidate:
    paper: Paper
    sim: float = 0.0
    words: float = 0.0
    shared: float = 0.0
    hub: float = 0.0
    cites: tuple[Edge, ...] = ()
    coupled: CitationLink | None = None
    cocited: CitationLink | None = None
    score: float = 0.0


def related(
    store: GraphStore,
    *,
    paper: str | None = None,
    vector: Sequence[float] | None = None,
    text: str | None = None,
    text_terms: Collection[str] = (),
    first: int = 10,
    exclude: Collection[str] = (),
    positive: Collection[str] = (),
    negative: Collection[str] = (),
    lexical: LexicalIndex | None = None,
    weights: Weights = WEIGHTS,
    term_counts: TermCounts | None = None,
    keep: PaperFilter = ANY,
) -> list[RelatedPaper]:
    """Papers related to ``paper`` (+ ``positive``, - ``negative``) or to a text.

    ``vector`` is the text's embedding, ``text`` the text itself (its word overlap) and
    ``text_terms`` the concept/dataset ids found in it. ``lexical`` is the word-overlap
    index to use (kept across calls by the caller; a fresh one reads every paper), and
    ``term_counts`` the terms' paper counts (likewise; a fresh one counts the seed's).
    ``keep`` (a ``where``): only the candidates it admits are scored (the store checks
    them). A narrow filter, one that admits at most FILTER_ALL papers, adds every paper
    it admits to the candidates, so the list is full whenever enough papers match; a
    broader one filters the usual candidates (vector, words, edges), which at
    ``first`` x CANDIDATE_FACTOR per channel hold enough admitted papers unless the
    filter keeps a small share of a big corpus.
    """
    if first < 1:
        raise InvalidArgumentError("first", "must be at least 1")
    seeds = ([paper] if paper else []) + [p for p in positive if p != paper]
    both = sorted(set(seeds) & set(negative))
    if both:
        raise InvalidArgumentError("negative", f"{both[0]!r} is also a seed or positive paper")
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
            query = query - weights.negative * neg
    skip = set(seeds) | set(exclude) | set(negative)
    pool = first * CANDIDATE_FACTOR

    # each phase below is one unit of work: a request past its time limit stops between
    # them (graph.deadline), not after the whole call
    deadline.check()
    if lexical is None:
        lexical = LexicalIndex()
    lexical.sync(store)
    deadline.check()
    lex_query = mean_vector(
        [v for v in (lexical.vector_of(s, query=True) for s in seeds) if v is not None]
        + ([lexical.vector_for_text(text, query=True)] if text else [])
    )
    words = lexical.scores(lex_query) if lex_query is not None else WordScores.none()

    # candidates: nearest by vector, most word overlap, joined to a seed by terms/citations
    candidates: set[str] = set()
    if query is not None:
        for h in store.vector_search(query.tolist(), limit=pool, exclude=skip):
            candidates.add(h.node.id)
    # the best `pool` of ~N scores by (-score, id), a total order: as sorted(...)[:pool]
    candidates.update(words.best(pool, skip))
    seed_terms: dict[str, Edge] = {}
    cites: dict[str, list[Edge]] = defaultdict(list)
    listed: dict[str, float] = defaultdict(float)  # sum over seeds of 1 / rank in its list
    types = [RelType.SHARES_TERM, RelType.CITES, RelType.SIMILAR_TO, *TERM_TYPES]
    for e in store.edges_of(seeds, types):
        if e.type is RelType.SIMILAR_TO:
            rank = e.attrs.get("rank")
            if e.source in seeds and isinstance(rank, int | float) and rank >= 1:
                listed[e.target] += 1.0 / float(rank)
            continue
        if e.type in TERM_TYPES:
            if e.source in seeds:
                seed_terms.setdefault(e.target, e)
            continue
        other = e.target if e.source in seeds else e.source
        if other in skip:
            continue
        if e.type is RelType.CITES:
            cites[other].append(e)
        candidates.add(other)
    coupled: dict[str, CitationLink] = {}
    cocited: dict[str, CitationLink] = {}
    if seeds and weights.coupling > 0:
        coupled = {x.node.id: x for x in store.coupled(seeds, limit=pool)}
    if seeds and weights.cocited > 0:
        cocited = {x.node.id: x for x in store.cocited(seeds, limit=pool)}
    candidates.update(coupled)
    candidates.update(cocited)
    if not keep.empty:
        narrow, matching = store.papers(keep, limit=FILTER_ALL)
        if matching <= FILTER_ALL:
            candidates.update(p.id for p in narrow)
    candidates -= skip
    if not candidates:
        return []
    deadline.check()

    cand_ids = sorted(candidates)
    vecs = _embeddings(store, cand_ids)
    nodes = store.get_nodes(cand_ids)
    query_terms = set(seed_terms) if seeds else set(text_terms)
    idf = _linking_idf(store, sorted(query_terms), len(lexical), term_counts)
    seed_mass = sum(idf.values())
    profiles = (term_counts or TermCounts()).profiles(store, cand_ids)
    term_edges = {cid: p.terms for cid, p in profiles.items() if p.terms}
    holders = _holders(cand_ids, term_edges)
    shared = _shared_sums(idf, holders, len(cand_ids))
    deadline.check()

    admitted = {n.id for n in store.kept(keep, [n for n in nodes.values()
                                                 if isinstance(n, Paper)])}
    scored: list[_Candidate] = []
    for j, cid in enumerate(cand_ids):
        node = nodes.get(cid)
        if not isinstance(node, Paper) or cid not in admitted:
            continue
        c = _Candidate(node, words=words.get(cid, 0.0), cites=tuple(cites.get(cid, ())),
                       coupled=coupled.get(cid), cocited=cocited.get(cid))
        if query is not None and cid in vecs:
            v = np.asarray(vecs[cid], dtype=np.float64)
            c.sim = float(np.dot(query, v) / max(float(np.linalg.norm(v)), 1e-12))
        if seed_mass > 0:
            c.shared = float(shared[j]) / seed_mass
        c.hub = profiles[cid].hub
        c.score = (
            c.sim + weights.lexical * c.words + weights.terms * c.shared
            - weights.hub * c.hub + (weights.cite if c.cites else 0.0)
            + weights.coupling * (c.coupled.strength if c.coupled else 0.0)
            + weights.cocited * (c.cocited.strength if c.cocited else 0.0)
        )
        scored.append(c)
    scored.sort(key=lambda c: (-round(c.score, 9), c.paper.id))
    deadline.check()
    if seeds and weights.feedback > 0 and weights.feedback_papers > 0:
        _feedback(store, scored, vecs, term_edges, lexical, weights, term_counts, holders,
                  cand_ids)
    if listed and weights.listed > 0:
        for c in scored:
            c.score += weights.listed * listed.get(c.paper.id, 0.0) / len(seeds)
    scored.sort(key=lambda c: (-round(c.score, 9), c.paper.id))
    deadline.check()
    top = scored[:first]
    query_texts = [paper_text(p) for p in known.values() if isinstance(p, Paper) and p.id in seeds]
    return _explain(store, top, seeds, seed_terms, term_edges, idf, lexical, lex_query,
                    [*map(_spelled_paper, query_texts), *([spelled(text)] if text else [])])


def _feedback(
    store: GraphStore,
    scored: Sequence[_Candidate],
    vecs: Mapping[str, Sequence[float]],
    term_edges: Mapping[str, Mapping[str, Edge]],
    lexical: LexicalIndex,
    weights: Weights,
    counts: TermCounts | None,
    holders: Mapping[str, Sequence[int]],
    cand_ids: Sequence[str],
) -> None:
    """Pseudo-relevance feedback over the first round's best (in place, on ``scored``).

    The ``feedback_papers`` best candidates F stand in for what the seed is about: every
    candidate c gains ``feedback`` x mean over n in F of score(n, c), the same four-part
    score with n as the seed (a paper in F scores itself as a seed would: 1 on each part).
    Citations share their nearest papers' neighbours: on the Cora tune half this lifts
    recall@10 by 0.008, and ICLR 2021 keyword sharing by 0.006 (docs/benchmarks.md).
    """
    fb = [c for c in scored[: weights.feedback_papers] if c.paper.id in vecs]
    if not fb:
        return
    ids = [c.paper.id for c in scored]
    dim = len(next(iter(vecs.values())))
    mat = np.asarray([vecs.get(i, [0.0] * dim) for i in ids], dtype=np.float64)
    mat /= np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-12)
    at = {pid: j for j, pid in enumerate(ids)}
    part = mat[[at[c.paper.id] for c in fb]] @ mat.T
    queries = [lexical.vector_of(c.paper.id, query=True) for c in fb]
    empty = LexVector(np.zeros(0, np.int64), np.zeros(0))
    part += weights.lexical * lexical.scores_among([q or empty for q in queries], ids)
    # ``holders`` indexes cand_ids; ``scored`` holds the papers among them, in score order
    col = np.asarray([at.get(cid, -1) for cid in cand_ids])
    for k, c in enumerate(fb):
        deadline.check()
        idf = _linking_idf(store, sorted(term_edges.get(c.paper.id, {})), len(lexical), counts)
        mass = sum(idf.values())
        if mass <= 0:
            continue
        sums = _shared_sums(idf, holders, len(cand_ids))
        inside = col >= 0
        part[k, col[inside]] += weights.terms * sums[inside] / mass
    hub = np.asarray([c.hub for c in scored])
    gain = weights.feedback * (part - weights.hub * hub[None, :]).mean(axis=0)
    for c, g in zip(scored, gain.tolist(), strict=True):
        c.score += g


def _holders(
    ids: Sequence[str], term_edges: Mapping[str, Mapping[str, Edge]]
) -> dict[str, list[int]]:
    """term id -> the positions in ``ids`` of the papers linked to it."""
    out: dict[str, list[int]] = defaultdict(list)
    for j, pid in enumerate(ids):
        for t in term_edges.get(pid, ()):
            out[t].append(j)
    return out


def _shared_sums(
    idf: Mapping[str, float], holders: Mapping[str, Sequence[int]], n: int
) -> np.ndarray:
    """For each of n papers, the sum of the idf of the terms it shares with ``idf``.

    Each paper's weights are added in ``idf``'s order, one at a time from 0, as
    ``sum(w for t, w in idf.items() if t in its terms)`` adds them: the same float sums,
    bit for bit, with one pass over the terms instead of one per paper.
    """
    out = np.zeros(n)
    for t, w in idf.items():
        js = holders.get(t)
        if js:
            out[js] += w  # each paper once per term (holders lists a paper once per term)
    return out


def _embeddings(store: GraphStore, ids: Sequence[str]) -> Mapping[str, Sequence[float]]:
    """``store.embeddings(ids)``, as float64 rows straight from the in-memory matrix where
    the backend has one: the same values without a Python list of 384 floats per paper."""
    if isinstance(store, QueryLayer):
        rows = getattr(store.read_backend(), "embedding_rows", None)
        if rows is not None:
            found: Mapping[str, Sequence[float]] = rows(ids)
            return found
    return store.embeddings(ids)


def _incident(store: GraphStore, ids: Sequence[str], types: Collection[RelType]) -> list[Edge]:
    """Edges touching ``ids``, in any order, repeats allowed.

    Straight from the store's backend where it has one: the sorted, de-duplicated list
    of ``edges_of`` cost about half of related() on ICLR 2021 (a seed's terms reach
    thousands of edges), and the callers here need neither.
    """
    if isinstance(store, QueryLayer):
        b = store.read_backend()
        with b.reading():
            return b.incident_edges(list(dict.fromkeys(ids)), frozenset(types))
    return store.edges_of(ids, types)


def _edges_leaving(edges: Iterable[Edge], ids: Collection[str]) -> list[Edge]:
    """The ``edges`` that leave ``ids``, each once, by (source, target, type).

    The order ``edges_of`` gives them (the last edge per (source, target) is the one a
    path shows), without sorting the edges that arrive at ``ids`` from elsewhere.
    """
    found = {(e.source, e.target, e.type): e for e in edges if e.source in ids}
    # the keys are edge_sort_key's own tuples, and unique: sorting them needs no key calls
    return [found[k] for k in sorted(found)]


@dataclass(frozen=True, slots=True)
class PaperProfile:
    """What related() reads of a candidate paper's own edges (shared, never changed)."""

    #: term id -> the paper's edge to it (of two to one dataset, USES over INTRODUCES)
    terms: Mapping[str, Edge]
    #: its hubness: the mean cosine of its plain top-k as stored on its SIMILAR_TO edges,
    #: else the mean of their weights, else 0
    hub: float


def _profiles(edges: Iterable[Edge], ids: Collection[str]) -> dict[str, PaperProfile]:
    """PaperProfile of each of ``ids`` from edges touching them (any order, repeats too)."""
    term_edges: dict[str, dict[str, Edge]] = defaultdict(dict)
    hub_scores: dict[str, list[float]] = defaultdict(list)
    stored_hub: dict[str, float] = {}
    for e in _edges_leaving(edges, set(ids)):
        if e.type is RelType.SIMILAR_TO:
            hub_scores[e.source].append(float(e.weight))
            if "hub_cos" in e.attrs:  # the mean cosine of its plain top-k, as stored
                stored_hub[e.source] = float(e.attrs["hub_cos"])
        else:
            term_edges[e.source][e.target] = e
    out: dict[str, PaperProfile] = {}
    for pid in ids:
        hubs = hub_scores.get(pid)
        hub = stored_hub.get(pid, float(np.mean(hubs)) if hubs else 0.0)
        out[pid] = PaperProfile(term_edges.get(pid, {}), hub)
    return out


PROFILE_TYPES = frozenset([*TERM_TYPES, RelType.SIMILAR_TO])


class TermCounts:
    """How many papers mention / use / introduce each term (its df), counted when first
    asked and kept until the store changes.

    A seed's terms reach thousands of edges (a common concept is in hundreds of papers);
    counting them again for every related() call was a quarter of its time on ICLR 2021.
    A store that cannot say when it changed (version None) is counted every time.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version: str | None = None
        self._df: dict[str, int] = {}
        # papers' profiles, for the in-memory backend they were read from, at its version
        self._read_from: NetworkxStore | None = None
        self._profiles_at: str | None = None
        self._profiles: dict[str, PaperProfile] = {}

    def profiles(self, store: GraphStore, ids: Sequence[str]) -> dict[str, PaperProfile]:
        """The PaperProfile of each of ``ids``, kept until the graph changes.

        A candidate's terms and SIMILAR_TO edges were most of related()'s edge reads, and
        the same papers come back query after query. Kept only for an in-memory backend
        (the server's mirror): read under its lock together with its version, so what is
        kept is exactly the graph of that version; other stores read them every time.
        """
        b = store.read_backend() if isinstance(store, QueryLayer) else None
        if not isinstance(b, NetworkxStore):
            return _profiles(_incident(store, ids, PROFILE_TYPES), ids)
        with b.reading():
            version = b.version()
            with self._lock:
                if self._read_from is not b or self._profiles_at != version:
                    self._read_from, self._profiles_at, self._profiles = b, version, {}
                kept = self._profiles
            missing = [i for i in dict.fromkeys(ids) if i not in kept]
            if missing:
                # a dict replaced on a change, never emptied in place: safe to fill here
                kept.update(_profiles(b.incident_edges(missing, PROFILE_TYPES), missing))
            return {i: kept[i] for i in ids}

    def of(self, store: GraphStore, terms: Sequence[str]) -> dict[str, int]:
        """df of each of ``terms`` (0 for one no paper links to)."""
        version = store.version()
        if version is None:
            return _count_papers(store, terms)
        with self._lock:
            if version != self._version:
                self._df, self._version = {}, version
            missing = [t for t in terms if t not in self._df]
        if missing:
            counted = _count_papers(store, missing)
            with self._lock:
                if version == self._version:
                    self._df.update(counted)
        else:
            counted = {}
        with self._lock:
            return {t: self._df.get(t, counted.get(t, 0)) for t in terms}


def _count_papers(store: GraphStore, terms: Sequence[str]) -> dict[str, int]:
    papers: dict[str, set[str]] = defaultdict(set)
    # a set per term, so the edges' order does not matter: skip the store's sort
    for e in _incident(store, terms, TERM_TYPES):
        papers[e.target].add(e.source)
    return {t: len(papers.get(t, ())) for t in terms}


def _linking_idf(
    store: GraphStore, terms: Sequence[str], n: int, counts: TermCounts | None = None
) -> dict[str, float]:
    """ln(N / df) of the terms that link papers (2 <= df <= min(MAX_DF x N, 1000))."""
    if not terms or n < 2:
        return {}
    df = (counts or TermCounts()).of(store, terms)
    most = max(2, min(int(MAX_DF * n), MAX_TERM_PAPERS))
    return {t: math.log(n / df[t]) for t in terms if 2 <= df[t] <= most}


@functools.lru_cache(maxsize=4096)
def _spelled_paper(text: str) -> str:
    """:func:`spelled` of a paper's text: the same papers are explained query after query
    (a pure function of the text, so nothing goes stale; ~8 MB when full)."""
    return spelled(text)


def _explain(
    store: GraphStore,
    top: Sequence[_Candidate],
    seeds: Sequence[str],
    seed_terms: dict[str, Edge],
    term_edges: Mapping[str, Mapping[str, Edge]],
    idf: dict[str, float],
    lexical: LexicalIndex,
    lex_query: LexVector | None,
    query_texts: Sequence[str],
) -> list[RelatedPaper]:
    """The reasons and the path of each kept candidate.

    A shared gram is quoted only when it stands, as written, in the candidate and in a
    seed (or the query text): the analyzer drops stop words before it pairs words, so
    "generation of images" also counts as "generation images", which no reader would find.
    Nor is a gram of only generic words, adverbs or verb forms quoted ("novel",
    "effectively"): the score counts them, a reader would not take them as a reason.
    """
    shared_ids = sorted({t for c in top for t in term_edges.get(c.paper.id, {}) if t in idf})
    names = store.get_nodes(shared_ids)
    out: list[RelatedPaper] = []
    for c in top:
        deadline.check()
        cid = c.paper.id
        reasons = [Reason("similar", f"abstract similarity {c.sim:.2f}", round(c.sim, 4))]
        grams: list[str] = []
        if lex_query is not None and c.words > 0:
            vec = lexical.vector_of(cid)
            grams = lexical.shared_words(lex_query, vec, top=12) if vec is not None else []
            own = _spelled_paper(paper_text(c.paper))
            grams = [
                g
                for g in grams
                if telling(g) and appears(g, own) and any(appears(g, t) for t in query_texts)
            ]
            if grams:
                reasons.append(
                    Reason("words", f"shared wording {c.words:.2f}: " + ", ".join(grams),
                           round(c.words, 4))
                )
        for ce in c.cites:
            text = "cited by the seed" if ce.source in seeds else "cites the seed"
            reasons.append(Reason("cites" if ce.source in seeds else "cited_by", text, 1.0))
        for link, kind, coupling in ((c.coupled, "coupled", True),
                                     (c.cocited, "co_cited", False)):
            if link is not None:
                reasons.append(Reason(kind, reason_text(link, coupling), link.strength,
                                      link.shared[0].id if link.shared else None))
        mine = sorted(
            (t for t in term_edges.get(cid, {}) if t in idf), key=lambda t: (-idf[t], t)
        )
        for tid in mine:
            node = names.get(tid)
            label = node.label if node is not None else tid
            kind = "dataset" if tid.startswith("dataset:") else "concept"
            verb = ("use" if kind == "dataset" else "mention") if seeds else None
            text = f"both {verb} {label}" if verb else f"mentions {label}"
            reasons.append(Reason(kind, text, round(idf[tid], 4), tid))
        out.append(
            RelatedPaper(
                paper=c.paper,
                score=round(c.score, 6),
                similarity=round(c.sim, 6),
                reasons=tuple(_readable(reasons, grams)),
                path=_path(store, seeds, seed_terms, term_edges.get(cid, {}), c.paper,
                           mine[0] if mine else None),
            )
        )
    return out


def _readable(reasons: Sequence[Reason], grams: Sequence[str] = ()) -> list[Reason]:
    """At most MAX_REASONS, strongest first, none inside another.

    The similarity comes first (it is most of the score), then citations (direct,
    coupled, co-cited), the shared wording, then the shared terms by weight. A term
    whose words lie inside a stronger kept term's ("diffusion" in "diffusion model"), or
    around them, says the same thing again and is left out; so is a shared word or
    bigram inside or around a kept term.
    """
    similar = [r for r in reasons if r.kind == "similar"]
    cites = [r for r in reasons if r.kind in ("cites", "cited_by", "coupled", "co_cited")]
    wording = [r for r in reasons if r.kind == "words"]
    terms = sorted(
        (r for r in reasons if r.kind in ("concept", "dataset")), key=lambda r: (-r.weight, r.text)
    )
    kept_terms: list[Reason] = []
    names: list[str] = []
    for r in terms:
        name = _term_name(r)
        if any(overlaps(name, other) for other in names):
            continue
        kept_terms.append(r)
        names.append(name)
    room = MAX_REASONS - len(similar) - len(cites)
    if wording and room > 0:
        shown = names[: max(room - 1, 0)]
        left = [g for g in grams if not any(overlaps(g, n) for n in shown)][:3]
        if left:
            w = wording[0]
            head = w.text.split(":", 1)[0]
            wording = [Reason("words", f"{head}: " + ", ".join(f"'{g}'" for g in left), w.weight)]
        else:
            wording = []
    return [*similar, *cites, *wording, *kept_terms][:MAX_REASONS]


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
    cand_terms: Mapping[str, Edge],
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
