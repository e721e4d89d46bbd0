"""An add or remove computed from the region it touches, not from the whole graph (issue 12).

:class:`CorpusState` is what a long-lived build pipeline (the API's) keeps of the stored
graph between writes: every paper, every paper's
terms and each term's papers (through an incremental resolver), the SIMILAR_TO lists with
their per-source state, the partner lists each paper keeps for SHARES_TERM and each
concept for RELATED_TO, the embedding matrix, and who cites what. It is valid for one
store :meth:`~graph.store.base.GraphStore.version`; any other writer's commit makes the
pipeline fall back to the whole-graph path (snapshot, compute, diff) once.

:func:`region_change` then turns an add or remove into the :class:`GraphChange` the whole
path would give (the same rows, to the bit: ``tests/e2e/test_region_random.py``), reading
from the store only the stored edges and nodes of what the change reaches
(``edges_of(ids, types)``, ``get_nodes``), which every store implements:

* papers, vectors: the added, removed and changed papers;
* concepts, datasets, MENTIONS/USES/INTRODUCES: the papers whose terms the resolver moved
  and the terms whose node it may have changed;
* SIMILAR_TO: :func:`graph.link.update_csls_pools` (the rows an add can change, ranked
  from every row's pool kept in the state: a k x N product of the new vectors against
  all, and a row that lost a pool member found again from all N), or, without kept pools
  (a state read from a snapshot after a whole-path write; a server's warm-up finds them),
  :func:`graph.link.update_csls_rows` (each row it reaches found again from all N);
* SHARES_TERM, RELATED_TO: :func:`graph.link.shared_terms_region`,
  :func:`graph.link.related_region`;
* CITES: the new papers' references, and the papers whose references name an id or a
  title that came or went (graph.citations.cited: to a paper or an outside work); a work
  newly cited is written, one left without citers (read from the store) deleted.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import defaultdict
from collections.abc import (
    Callable,
    Collection,
    Iterable,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graph.citations import WORK_PREFIX, cited, cites_edges
from graph.extract import Extraction, IncrementalResolution
from graph.ids import id_key, odd_spellings, spellings
from graph.link import (
    TERM_RELS,
    ConceptColumns,
    Hubs,
    Kept,
    ListSource,
    Near,
    PaperColumns,
    PaperVectors,
    PoolChange,
    ScoringArrays,
    SimilarPools,
    hubs_from_edges,
    linking_cap,
    mention_edges,
    related_region,
    shared_terms_region,
    similar_edges,
    similar_pools,
    update_csls_pools,
    update_csls_rows,
)
from graph.model import (
    Edge,
    GraphChange,
    GraphData,
    GraphNode,
    Paper,
    RelType,
    Topic,
    Work,
    node_to_props,
)
from graph.overlay import DeltaSet, Overlay
from graph.refs import dependency_keys, name_keys
from graph.settings import Settings
from graph.store.base import GraphStore

log = logging.getLogger(__name__)

_SIMPLE_RANK = frozenset({"score", "words", "rank"})


@dataclass
class CorpusState:
    """The stored graph as an add needs it (module docstring); valid at ``version``."""

    version: str | None
    model: str | None
    papers: dict[str, Paper]
    extractions: dict[str, Extraction]
    pterms: dict[str, Mapping[str, float]]  # paper -> its terms (the resolver's, as stored)
    postings: dict[str, set[str]]  # term -> papers holding it
    similar: dict[str, list[Edge]]  # source -> its stored SIMILAR_TO edges, by rank
    holders: dict[str, set[str]]  # paper -> the sources whose list holds it
    hubs: Hubs
    shared: Kept  # paper -> (weight, partner) its SHARES_TERM list keeps
    related: Kept  # concept -> (count, partner) its RELATED_TO list keeps
    ids: list[str]
    matrix: np.ndarray[Any, Any]
    words: Any  # the papers' word vectors, a CSR matrix with rows aligned with ``ids``
    cites: dict[str, set[str]] = field(default_factory=dict)  # reference key -> citing papers
    # name key (graph.refs.name_keys: a title, a DOI) -> papers
    titles: dict[str, set[str]] = field(default_factory=dict)
    # paper -> partner -> the stored SHARES_TERM edge between them (one object, under both
    # ends): what an add compares its made edges with, without reading ~10-40k of them
    # from the store; brought forward by each commit like the rest
    shares: dict[str, dict[str, Edge]] = field(default_factory=dict)
    # source -> its stored SIMILAR_TO list as Near, made from ``similar`` when first asked
    # and dropped when a commit replaces that list
    near: dict[str, list[Near]] = field(default_factory=dict)
    # each paper's concepts as column numbers, for RELATED_TO's co-mention counts: filled
    # as asked, an entry dropped by each commit that moves that paper's terms
    columns: ConceptColumns = field(default_factory=ConceptColumns)
    # each paper as a number and each term's holders as numbers, for SHARES_TERM's
    # partner products (kept with the very set of ``postings`` they were made from)
    paper_columns: PaperColumns = field(default_factory=PaperColumns)
    # text_hash -> the paper holding that text, when no two papers share one (None: they
    # do; then each add makes it from the papers): what an add checks its records against
    text_holders: dict[str, str] | None = None
    # graph.ids.odd_spellings of the papers' ids (most corpora: empty): what finds a
    # stored id by its key without a pass over every id
    odd_ids: dict[str, str] = field(default_factory=dict)
    # every row's SIMILAR_TO pool, rows as ``ids`` (the build's or the warm-up's, moved
    # by each commit); None (a state made after a whole-path write): each add ranks its
    # rows from all N
    pools: SimilarPools | None = None
    # what SIMILAR_TO's scorer derives from ``matrix`` and ``words`` (float64 rows, the
    # word vectors' keys), grown by each add's commit; None: made at the next write
    arrays: ScoringArrays | None = None


def _cite_keys(p: Paper) -> set[str]:
    keys: set[str] = set()
    for ref in p.references:
        keys.update(dependency_keys(ref))
    return keys


def _kept_related(edges: Iterable[Edge], postings: Mapping[str, set[str]], top_k: int) -> Kept:
    """Each concept's RELATED_TO list: the top k of its stored partners by (-count, the
    partner's df, id) (its list holds its top k; the rest of its edges rank lower)."""
    mine: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for e in edges:
        c = float(e.attrs.get("count", e.weight))
        mine[e.source].append((c, e.target))
        mine[e.target].append((c, e.source))
    return {
        a: sorted(lst, key=lambda cb: (-cb[0], len(postings.get(cb[1], ())), cb[1]))[:top_k]
        for a, lst in mine.items()
    }


def state_from_graph(
    data: GraphData,
    version: str | None,
    resolver: IncrementalResolution,
    extractions: Mapping[str, Extraction],
    settings: Settings,
    words: Callable[[Sequence[Paper]], Any],
    *,
    find_pools: bool = False,
    stop: Callable[[], bool] | None = None,
) -> CorpusState | None:
    """The state of ``data`` (a snapshot, or the graph a whole-path write just stored),
    with ``resolver`` brought to ``extractions`` (every paper's); None when the stored
    graph is not what this code would write for it (another extractor or resolution,
    SIMILAR_TO or SHARES_TERM rows of older code or other settings): then the next write
    goes the whole way, and rewrites what differs.

    ``find_pools``: when ``data`` holds no SIMILAR_TO pools (a graph read from the
    store), find them (:func:`graph.link.similar_pools`, O(N^2): a server's warm-up, not
    a write under the lock; ``stop()`` true ends it early); without pools an add ranks
    each row it reaches from all N."""
    papers = {pid: n for pid, n in data.nodes.items() if isinstance(n, Paper)}
    if set(extractions) != set(papers):
        return None
    resolver.advance(extractions)
    by_type: dict[RelType, list[Edge]] = defaultdict(list)
    for e in data.edges.values():
        by_type[e.type].append(e)
    # the stored terms are the resolver's (same extractor, same resolution code)
    stored_terms: dict[str, list[Edge]] = defaultdict(list)
    for rel in TERM_RELS:
        for e in by_type[rel]:
            stored_terms[e.source].append(e)
    pterms: dict[str, Mapping[str, float]] = {}
    postings: dict[str, set[str]] = defaultdict(set)
    for pid in papers:
        made = mention_edges(resolver.terms_of(pid))
        mine = {(e.source, e.target, e.type): e for e in stored_terms.get(pid, [])}
        if len(made) != len(mine) or any(
            (old := mine.get(e.key)) is None or old != e for e in made
        ):
            log.info("stored terms of %s are not this resolution's: a whole write next", pid)
            return None
        pterms[pid] = resolver.paper_terms(pid)
        for t in pterms[pid]:
            postings[t].add(pid)
    for nid, n in data.nodes.items():
        if isinstance(n, Paper | Work | Topic):  # no term: from the references, the topics
            continue
        want = resolver.term(nid) if postings.get(nid) else None
        if want is None or node_to_props(want) != node_to_props(n):
            return None
    if any(t not in data.nodes for t in postings):
        return None
    k, floor = settings.similar_k, settings.similar_min_score
    marker = PaperVectors([], np.zeros((0, 0), np.float32), words=True)
    hubs = hubs_from_edges(by_type[RelType.SIMILAR_TO], papers, floor, k, marker)
    if hubs is None:
        return None
    similar: dict[str, list[Edge]] = defaultdict(list)
    holders: dict[str, set[str]] = defaultdict(set)
    for e in by_type[RelType.SIMILAR_TO]:
        if e.attrs.get("rank") != 1 and set(e.attrs) != _SIMPLE_RANK:
            return None  # older rows carry more on every edge: recompute them whole
        similar[e.source].append(e)
        holders[e.target].add(e.source)
    for lst in similar.values():
        lst.sort(key=lambda e: int(e.attrs.get("rank", 0)))
    shared: Kept = defaultdict(list)
    shares: dict[str, dict[str, Edge]] = defaultdict(dict)
    for e in by_type[RelType.SHARES_TERM]:
        by = e.attrs.get("kept_by")
        if by not in ("source", "target", "both"):
            return None
        if by != "target":
            shared[e.source].append((e.weight, e.target))
        if by != "source":
            shared[e.target].append((e.weight, e.source))
        shares[e.source][e.target] = shares[e.target][e.source] = e
    related = _kept_related(by_type[RelType.RELATED_TO], postings, 10)
    cites: dict[str, set[str]] = defaultdict(set)
    titles: dict[str, set[str]] = defaultdict(set)
    for pid, p in papers.items():
        for key in _cite_keys(p):
            cites[key].add(pid)
        for key in name_keys(p):
            titles[key].add(pid)
    ids = list(data.embedding_ids)
    matrix = (
        np.asarray(data.embeddings, dtype=np.float32)
        if data.embeddings is not None and len(ids) > 0
        else np.zeros((0, 0), np.float32)
    )
    if set(ids) != set(papers):
        return None
    pools = data.similar_pools
    if not isinstance(pools, SimilarPools) or pools.ids != ids or (
        pools.min_score != floor or pools.pool != marker.pool
    ):
        pools = None
    arrays = ScoringArrays.of(matrix, words([papers[pid] for pid in ids]))
    matrix, word_matrix = arrays.matrix, arrays.words
    if pools is None and find_pools:
        pools = similar_pools(PaperVectors(ids, matrix, word_matrix, arrays=arrays), k, floor,
                              stop)
    text_holders = {p.text_hash: pid for pid, p in papers.items()}
    state = CorpusState(
        version, data.embedding_model, papers, dict(extractions), pterms, dict(postings),
        dict(similar), holders, hubs, dict(shared), related, ids, matrix,
        word_matrix, cites, dict(titles), dict(shares), pools=pools, arrays=arrays,
        text_holders=text_holders if len(text_holders) == len(papers) else None,
        odd_ids=odd_spellings(papers),
    )
    if find_pools:
        # a warm-up also makes what the first add would (~1.6 s of it at 100k papers):
        # every paper's number and concept columns, the concepts' df histogram and
        # k-th counts, the linking terms' holders as numbers
        for pid in sorted(papers):
            state.paper_columns.number(pid)
        state.columns.fill(pterms, state.postings, _is_concept, related)
        cap = linking_cap(len(papers), settings.shared_term_max_df)
        for t, ps in state.postings.items():
            if 2 <= len(ps) <= cap:
                state.paper_columns.holders(t, ps)
    return state


def _is_concept(term: str) -> bool:
    return term.startswith("concept:")


class _StateLists(ListSource):
    """The stored SIMILAR_TO lists, from the state: a row's list, and who holds a paper."""

    def __init__(self, state: CorpusState) -> None:
        self._state = state
        self._cache = state.near

    def get(self, pid: str) -> list[Near]:
        got = self._cache.get(pid)
        if got is None:
            got = self._cache[pid] = [
                Near(e.target, float(e.weight), float(e.attrs.get("words", 0.0)))
                for e in self._state.similar.get(pid, [])
            ]
        return got

    def holding(self, ids: Collection[str]) -> set[str]:
        out: set[str] = set()
        for p in ids:
            out |= self._state.holders.get(p, set())
        return out


@dataclass
class RegionResult:
    """The change, and what the state becomes once it is committed."""

    change: GraphChange
    papers: dict[str, Paper]
    added: list[str]
    removed: list[str]
    updated: int
    commit: Callable[[str | None], None]  # bring the state to the committed graph


def region_change(
    state: CorpusState,
    store: GraphStore,
    corpus: dict[str, Paper],
    resolver: IncrementalResolution,
    new_extractions: Mapping[str, Extraction],
    new_vectors: Mapping[str, np.ndarray[Any, Any]],
    words: Callable[[Sequence[Paper]], Mapping[str, tuple[Any, Any]]],
    settings: Settings,
    model: str,
    timer: Callable[[str], Any],
    touched: Collection[str] | None = None,
) -> RegionResult:
    """The change that takes the stored graph (``state``) to ``corpus`` (module docstring).

    ``new_extractions``/``new_vectors``: of the added papers and of those whose text
    changed; ``words``: word vectors (sorted columns, weights) of some papers;
    ``touched``: the ids whose paper in ``corpus`` may not be the state's, the removed
    ones included (None: any).
    """
    old = state.papers
    if touched is None:
        added = sorted(corpus.keys() - old.keys())
        removed = sorted(old.keys() - corpus.keys())
    else:
        # a set difference of the two key sets costs O(N) (~50 ms an add at 100k papers)
        added = sorted(p for p in set(touched) if p in corpus and p not in old)
        removed = sorted(p for p in set(touched) if p in old and p not in corpus)
    changed = sorted(p for p in (corpus if touched is None else touched)
                     if p in old and p in corpus and corpus[p] is not old[p])
    # the abstract as written: text_hash folds case and punctuation, which extraction reads
    re_text = [p for p in changed if corpus[p].abstract != old[p].abstract]
    from graph.build import embedding_text  # build imports this module

    before = {pid: old[pid] for pid in [*removed, *changed]}
    re_embed = [p for p in changed if embedding_text(corpus[p]) != embedding_text(old[p])]

    # ---- resolution: the resolver moves to the new corpus's extractions
    with timer("extract.resolve"):
        extractions = Overlay(state.extractions)
        for pid in removed:
            del extractions[pid]
        for pid in [*added, *re_text]:
            extractions[pid] = new_extractions[pid]
        resolver.advance(extractions, touched=None if touched is None
                         else {*added, *removed, *re_text})
    moved_papers = set(resolver.changed_papers)
    old_terms = {p: state.pterms.get(p, {}) for p in moved_papers}
    pterms = Overlay(state.pterms)
    for p in removed:
        pterms.pop(p, None)
    for p in moved_papers:
        if p in corpus:
            pterms[p] = resolver.paper_terms(p)
    # the state's sets stay as they are until the commit: a term this change moves is
    # read through a view of its set (a DeltaSet), applied to the set in place at the
    # commit (copying a hub term's set and dropping the old one at the commit were ~40
    # ms an add at 100k papers, profiled; and its holders were numbered again)
    postings: Overlay[Any] = Overlay(state.postings)
    views: dict[str, set[str] | DeltaSet] = {}

    def own(t: str) -> set[str] | DeltaSet:
        ps = views.get(t)
        if ps is None or postings.get(t) is not ps:
            had = postings.get(t)
            ps = views[t] = DeltaSet(had) if isinstance(had, set) else set(had or ())
            postings[t] = ps
        return ps

    for p, was in old_terms.items():
        now = pterms.get(p, {})
        for t in set(was) - set(now):
            if t in postings:
                ps = own(t)
                ps.discard(p)
                if not ps:
                    del postings[t]
        for t in set(now) - set(was):
            own(t).add(p)

    upsert_nodes: list[GraphNode] = []
    upsert_edges: list[Edge] = []
    delete_edges: list[tuple[str, str, RelType]] = []

    # ---- papers (an untitled paper is labelled by its extraction)
    papers: dict[str, Paper] = {}
    updated = 0
    for pid in [*added, *changed]:
        paper = corpus[pid]
        if not paper.title:
            paper = dataclasses.replace(paper, label=extractions[pid].label)
        papers[pid] = paper
        prev = old.get(pid)
        if prev is None or (prev != paper and node_to_props(prev) != node_to_props(paper)):
            upsert_nodes.append(paper)
            if prev is not None:
                updated += 1

    # ---- concepts and datasets, MENTIONS / USES / INTRODUCES
    with timer("region.terms"):
        candidates = set(resolver.changed_terms)
        for p in moved_papers:
            candidates.update(old_terms.get(p, {}))
            candidates.update(pterms.get(p, {}))
        stored_nodes = store.get_nodes(sorted(candidates))
        dead_terms = []
        for t in sorted(candidates):
            want = resolver.term(t) if postings.get(t) else None
            have = stored_nodes.get(t)
            if want is None:
                if have is not None:
                    dead_terms.append(t)
            elif have is None or node_to_props(have) != node_to_props(want):
                upsert_nodes.append(want)
        alive_moved = sorted(p for p in moved_papers if p in corpus)
        stored_terms = {
            e.key: e for e in store.edges_of(alive_moved, TERM_RELS) if e.source in moved_papers
        }
        made = [e for p in alive_moved for e in mention_edges(resolver.terms_of(p))]
        for e in made:
            have_e = stored_terms.pop(e.key, None)
            if have_e is None or have_e != e:
                upsert_edges.append(e)
        delete_edges.extend(stored_terms)

    # ---- SHARES_TERM and RELATED_TO
    s = settings
    with timer("link.shares_term"):
        names = {t: (n.label if (n := resolver.term(t)) is not None else t) for t in candidates}
        renamed = {
            t for t in candidates
            if t in stored_nodes and t in names and postings.get(t)
            and stored_nodes[t].label != names[t]
        }
        term_names = _Names(resolver, names)
        shared = shared_terms_region(
            pterms, postings, old_terms, len(old), state.shared,
            lambda ids: _shares_of(state.shares, ids),
            term_names, renamed,
            max_df=s.shared_term_max_df, min_weight=s.shared_term_min_weight,
            top_k=s.shared_term_top_k, numbering=state.paper_columns,
        )
        upsert_edges.extend(shared.upsert)
        delete_edges.extend(shared.delete)
    with timer("link.related_to"):
        related = related_region(
            pterms, postings, old_terms, _is_concept, state.related,
            columns=state.columns,
        )
        upsert_edges.extend(related.upsert)
        delete_edges.extend(related.delete)

    # ---- vectors and SIMILAR_TO
    with timer("link.similar"):
        import scipy.sparse as sp

        gone_ids = set(removed) | set(re_embed)
        fresh_ids = sorted([*added, *re_embed])
        dim = state.matrix.shape[1] if state.matrix.size else len(next(iter(new_vectors.values())))
        fresh_rows = (
            np.vstack([np.asarray(new_vectors[p], np.float32) for p in fresh_ids])
            if fresh_ids else np.zeros((0, dim), np.float32)
        )
        fresh_words = None
        if fresh_ids and state.words is not None:
            got = words([papers[p] for p in fresh_ids])
            cols = [np.asarray(got[p][0], dtype=np.int32) for p in fresh_ids]
            vals = [np.asarray(got[p][1], dtype=np.float64) for p in fresh_ids]
            indptr = np.concatenate(([0], np.cumsum([len(c) for c in cols])))
            fresh_words = sp.csr_matrix(
                (np.concatenate(vals), np.concatenate(cols), indptr),
                shape=(len(fresh_ids), state.words.shape[1]),
            )
        arrays = state.arrays if state.arrays is not None and state.arrays.n == len(state.ids) \
            else None
        gone = np.zeros((0, dim), np.float32)
        if not gone_ids and arrays is not None and (arrays.dim == dim or not fresh_ids):
            # an add: the kept arrays grow by the new rows (no copy of the N old ones)
            arrays = arrays.grown(fresh_rows, fresh_words)
            ids = [*state.ids, *fresh_ids]
        else:
            keep = [i for i, pid in enumerate(state.ids) if pid not in gone_ids]
            parts = [state.matrix[keep]] if keep else []
            if fresh_ids:
                parts.append(fresh_rows)
            ids = [state.ids[i] for i in keep] + fresh_ids
            matrix = np.vstack(parts) if parts else np.zeros((0, dim), np.float32)
            if gone_ids and state.matrix.size:
                at = {pid: i for i, pid in enumerate(state.ids)}
                gone = state.matrix[[at[p] for p in sorted(gone_ids) if p in at]]
            word_matrix = None
            if state.words is not None:
                word_parts = [state.words[keep]] if keep else []
                if fresh_words is not None:
                    word_parts.append(fresh_words)
                word_matrix = (sp.vstack(word_parts, format="csr") if word_parts
                               else state.words[:0])
            arrays = ScoringArrays.of(matrix, word_matrix)
        matrix, word_matrix = arrays.matrix, arrays.words
        vec = PaperVectors(ids, matrix, word_matrix, arrays=arrays)
        k, floor = s.similar_k, s.similar_min_score
        pool_change: PoolChange | None = None
        if state.pools is not None and len(ids) >= 2 and k > 0:
            fresh, hubs, pool_change = update_csls_pools(
                _StateLists(state), state.hubs, state.pools, vec, fresh_ids, gone_ids, k, floor
            )
        else:
            fresh, hubs = update_csls_rows(
                _StateLists(state), state.hubs, gone, vec, fresh_ids, gone_ids, k, floor
            )
        if pool_change is not None:
            rows = set(fresh) | pool_change.hubs_moved
        else:
            rows = set(fresh) | {p for p, h in hubs.items() if state.hubs.get(p) != h}
        lists = _StateLists(state)
        new_similar: dict[str, list[Edge]] = {}
        for pid in sorted(rows):
            if pid not in corpus:
                continue
            lst = fresh[pid] if pid in fresh else lists.get(pid)
            made_s = similar_edges({pid: lst}, hubs, k, floor, vec)
            new_similar[pid] = made_s
            stored_s = {e.target: e for e in state.similar.get(pid, [])}
            for e in made_s:
                have_s = stored_s.pop(e.target, None)
                if have_s is None or have_s != e:
                    upsert_edges.append(e)
            delete_edges.extend(
                (pid, t, RelType.SIMILAR_TO) for t in stored_s if t in corpus
            )

    # ---- CITES
    with timer("link.cites"):
        # the state's sets stay as they are until the commit: a title this change moves
        # gets a copy of its set (copying all of them was O(N))
        titles = Overlay(state.titles)
        owned: set[str] = set()

        def title_set(key: str) -> set[str]:
            if key not in owned:
                owned.add(key)
                titles[key] = set(titles.get(key, ()))
            return titles[key]

        keys: set[str] = set()
        for pid in removed:
            keys.update(spellings(pid))
            for key in name_keys(old[pid]):
                keys.add(key)
                title_set(key).discard(pid)
        for pid in [*changed, *added]:
            prev = old.get(pid)
            keys.update(spellings(pid))
            for key in name_keys(prev) if prev is not None else ():
                keys.add(key)
                title_set(key).discard(pid)
            for key in name_keys(papers[pid]):
                keys.add(key)
                title_set(key).add(pid)
        citing = set(added) | set(changed)
        for key in keys:
            citing |= state.cites.get(key, set())
        citing = {c for c in citing if c in corpus}
        stored_c = {
            e.key: e for e in store.edges_of(sorted(citing), [RelType.CITES]) if e.source in citing
        }
        made_works: dict[str, Work] = {}
        for pid in sorted(citing):
            targets = cited(papers.get(pid) or corpus[pid], corpus, titles)
            made_works.update((t, w) for t, w in targets.items() if w is not None)
            for e in cites_edges(targets, pid):
                if stored_c.pop(e.key, None) is None:
                    upsert_edges.append(e)
        delete_edges.extend(stored_c)
        dead_works = _dead_works(store, removed, citing, stored_c, made_works)
        stored_w = store.get_nodes(sorted(made_works))
        upsert_nodes.extend(w for wid, w in made_works.items() if wid not in stored_w)
        dead = {*dead_terms, *dead_works}

    change = GraphChange(
        upsert_nodes=tuple(sorted(upsert_nodes, key=lambda n: n.id)),
        delete_nodes=tuple(sorted({*removed, *dead})),
        upsert_edges=tuple(sorted(upsert_edges, key=lambda e: (e.source, e.target, e.type.value))),
        delete_edges=tuple(sorted(
            {k3 for k3 in delete_edges if k3[0] not in dead and k3[1] not in dead},
            key=lambda k3: (k3[0], k3[1], k3[2].value),
        )),
        embedding_ids=tuple(fresh_ids),
        embeddings=np.vstack([np.asarray(new_vectors[p], np.float32) for p in fresh_ids])
        if fresh_ids else None,
        embedding_model=model,
    )

    def commit(version: str | None) -> None:
        state.columns.commit([*removed, *moved_papers], related.co)
        for pid in removed:
            del state.papers[pid]
            state.pterms.pop(pid, None)
            state.extractions.pop(pid, None)
            if state.odd_ids.get(key := id_key(pid)) == pid:
                del state.odd_ids[key]
        for key, pid in odd_spellings(added).items():
            state.odd_ids.setdefault(key, pid)
        state.papers.update(papers)
        for pid in [*added, *re_text]:
            state.extractions[pid] = extractions[pid]
        for p in moved_papers:
            if p in corpus:
                state.pterms[p] = pterms[p]
        numbering = state.paper_columns
        for t, ps in postings.mine.items():
            if isinstance(ps, DeltaSet):
                numbering.applied(t, ps)
                postings.mine[t] = ps.apply()  # the very set the state holds, moved
        postings.apply()
        numbering.settled()
        for pid in removed:
            state.near.pop(pid, None)
            for e in state.similar.pop(pid, []):
                state.holders.get(e.target, set()).discard(pid)
            state.holders.pop(pid, None)
        for pid, edges in new_similar.items():
            state.near.pop(pid, None)
            for e in state.similar.get(pid, []):
                state.holders.get(e.target, set()).discard(pid)
            state.similar[pid] = edges
            for e in edges:
                state.holders.setdefault(e.target, set()).add(pid)
        if isinstance(hubs, Overlay) and hubs.base is state.hubs:
            hubs.apply()  # the pools keep state.hubs as the hubs they were moved with
        else:
            state.hubs = hubs if isinstance(hubs, dict) else dict(hubs)
        for pid in removed:
            state.shared.pop(pid, None)
        state.shared.update(shared.lists)
        shares = state.shares
        for pid in removed:
            for q in shares.pop(pid, {}):
                shares.get(q, {}).pop(pid, None)
        for a, b, _ in shared.delete:
            shares.get(a, {}).pop(b, None)
            shares.get(b, {}).pop(a, None)
        for e in shared.upsert:
            shares.setdefault(e.source, {})[e.target] = e
            shares.setdefault(e.target, {})[e.source] = e
        for c in list(related.lists):
            if not postings.get(c):
                related.lists.pop(c)
        # a concept left without papers was held by a paper this change moved
        for c in [t for t in candidates if t in state.related and not postings.get(t)]:
            del state.related[c]
        state.related.update(related.lists)
        state.ids, state.matrix, state.words = ids, matrix, word_matrix
        state.arrays = arrays
        if state.pools is not None:
            if pool_change is None:
                state.pools = None  # too few papers or no lists: nothing kept to move
            else:
                state.pools.apply(pool_change)
        for pid, was in before.items():
            for key in _cite_keys(was):
                state.cites.get(key, set()).discard(pid)
        for pid in [*changed, *added]:
            for key in _cite_keys(papers[pid]):
                state.cites.setdefault(key, set()).add(pid)
        titles.apply()
        state.version = version

    return RegionResult(change, papers, added, removed, updated, commit)


def _shares_of(shares: Mapping[str, Mapping[str, Edge]], ids: Iterable[str]) -> list[Edge]:
    """The stored SHARES_TERM edges touching ``ids`` (each once), from the state."""
    found: dict[tuple[str, str], Edge] = {}
    for p in ids:
        for e in shares.get(p, {}).values():
            found[(e.source, e.target)] = e
    return list(found.values())


class _Names(Mapping[str, str]):
    """Term id -> its name now (what a SHARES_TERM edge shows), asked of the resolver."""

    def __init__(self, resolver: IncrementalResolution, known: Mapping[str, str]) -> None:
        self._resolver = resolver
        self._known = dict(known)

    def __getitem__(self, tid: str) -> str:
        got = self._known.get(tid)
        if got is None:
            node = self._resolver.term(tid)
            if node is None:
                raise KeyError(tid)
            got = self._known[tid] = node.label
        return got

    def get(self, tid: str, default: Any = None) -> Any:
        try:
            return self[tid]
        except KeyError:
            return default

    def __iter__(self) -> Any:
        return iter(self._known)

    def __len__(self) -> int:
        return len(self._known)


def _dead_works(
    store: GraphStore,
    removed: Sequence[str],
    citing: Collection[str],
    dropped: Iterable[tuple[str, str, RelType]],
    made: Mapping[str, Work],
) -> list[str]:
    """The stored outside works no paper cites once the change is made: those whose CITES
    were dropped (from ``citing``, or with a ``removed`` paper) and which no other paper,
    nor one of ``made``'s new edges, still cites."""
    gone_from = set(removed)
    works = {t for _, t, _ in dropped if t.startswith(WORK_PREFIX)}
    for e in store.edges_of(sorted(gone_from), [RelType.CITES]):
        if e.source in gone_from and e.target.startswith(WORK_PREFIX):
            works.add(e.target)
    works -= made.keys()
    if not works:
        return []
    kept = {
        e.target for e in store.edges_of(sorted(works), [RelType.CITES])
        if e.target in works and e.source not in gone_from and e.source not in citing
    }
    stored = store.get_nodes(sorted(works))
    return sorted(w for w in works - kept if isinstance(stored.get(w), Work))
