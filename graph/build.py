"""The build pipeline: papers -> extraction -> embeddings -> edges -> a diff for the store.

Full and incremental builds share one path: :meth:`Pipeline.compute` turns the
corpus (the set of papers) into a :class:`GraphData`, reusing what it can from the
previous graph and the caches, and :func:`diff` turns old + new into the
:class:`GraphChange` a store applies. Because every step is a deterministic
function of the set of papers, an incremental build equals a full rebuild.

What is recomputed when papers are added or removed:

* extraction: only new texts (cached by text hash);
* embeddings: only new texts (cached by (model, text hash));
* SIMILAR_TO: only the rows of new papers and of papers that lost a neighbour;
  other papers merge their old lists with their scores to the new papers;
* SHARES_TERM: only the partner lists of papers holding a term whose papers or linking
  status changed (graph.link.update_shared_terms); weights depend on each term's df
  alone, never on N, so only edges touching those terms are written;
* RELATED_TO: recomputed from the term index (cheap: pairs within each paper); stored
  counts and the partner order do not depend on N, so only changed pairs are written;
* concepts/datasets: re-resolved corpus-wide (acronym merges can span papers); ones
  no paper mentions any more disappear.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from graph.cache import BlobCache
from graph.embed import (
    Embedder,
    EmbeddingCache,
    SentenceTransformerEmbedder,
    embed_cached,
    text_key,
)
from graph.errors import NotFoundError
from graph.extract import (
    Extraction,
    Extractor,
    RuleExtractor,
    extraction_from_json,
    extraction_to_json,
)
from graph.ingest import InputProblem, read_corpus
from graph.link import (
    Hubs,
    Neighbours,
    citation_edges,
    cooccurrence_edges,
    csls_similar,
    hubness,
    hubs_from_edges,
    mention_edges,
    neighbours_from_edges,
    paper_terms_of,
    shared_term_edges,
    similar_edges,
    top_k_similar,
    update_csls,
    update_shared_terms,
)
from graph.model import (
    Edge,
    GraphChange,
    GraphData,
    GraphStats,
    NodeKind,
    Paper,
    RelType,
    node_to_props,
)
from graph.settings import Settings
from graph.store.base import GraphStore

log = logging.getLogger(__name__)


class Progress(Protocol):
    """Receives progress of long stages (the CLI draws rich bars from it)."""

    def start(self, stage: str, total: int | None) -> None: ...

    def advance(self, n: int) -> None: ...

    def finish(self) -> None: ...

    def message(self, text: str) -> None:
        """Tell the user something about the run (e.g. waiting for another writer)."""


class NoProgress:
    """A Progress that shows nothing."""

    def start(self, stage: str, total: int | None) -> None:
        return None

    def advance(self, n: int) -> None:
        return None

    def finish(self) -> None:
        return None

    def message(self, text: str) -> None:
        return None


@dataclass
class BuildReport:
    """What a build/add/remove did, for the CLI and the API."""

    papers_read: int = 0
    problems: list[InputProblem] = field(default_factory=list)
    duplicates: int = 0
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    updated: int = 0
    embedded: int = 0
    long_texts: int = 0
    nodes_written: int = 0
    edges_written: int = 0
    nodes_deleted: int = 0
    edges_deleted: int = 0
    stage_seconds: dict[str, float] = field(default_factory=dict)
    stats: GraphStats | None = None

    @property
    def partial(self) -> bool:
        return bool(self.problems)

    def as_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["problems"] = [str(p) for p in self.problems]
        out["partial"] = self.partial
        if self.stats is not None:
            out["stats"] = {"nodes": dict(self.stats.nodes), "edges": dict(self.stats.edges)}
        return out


class ExtractionCache:
    """Per-text extraction results by (extractor version, text hash), as JSON.

    The JSON holds field names only (:func:`graph.extract.extraction_to_json`), never a
    module path: moving or renaming the extractor's code leaves the cache readable, and
    a new extractor ``version`` simply finds nothing under its name.
    """

    def __init__(self, path: Path | None, version: str) -> None:
        self._blobs = BlobCache(path, "extraction_v2")
        self.version = version

    def get_many(self, hashes: Sequence[str]) -> dict[str, Extraction]:
        raw = self._blobs.get_many(self.version, hashes)
        return {h: extraction_from_json(v.decode("utf-8")) for h, v in raw.items()}

    def put_many(self, items: Mapping[str, Extraction]) -> None:
        self._blobs.put_many(
            self.version, {h: extraction_to_json(e).encode("utf-8") for h, e in items.items()}
        )

    def close(self) -> None:
        self._blobs.close()


def embedding_text(paper: Paper) -> str:
    """What gets embedded: the title (when there is one) and the abstract."""
    return f"{paper.title}. {paper.abstract}" if paper.title else paper.abstract


class Pipeline:
    """Turns papers into a graph. Owns the caches; the store is passed to each call.

    ``extractor`` (default :class:`~graph.extract.RuleExtractor`) is the only way the
    pipeline reaches concept extraction; its ``version`` keys the extraction cache.
    """

    def __init__(
        self,
        settings: Settings,
        embedder: Embedder | None = None,
        *,
        progress: Progress | None = None,
        cache_dir: Path | None = None,
        extractor: Extractor | None = None,
    ) -> None:
        self.settings = settings
        self.extractor: Extractor = extractor or RuleExtractor()
        self.embedder: Embedder = embedder or SentenceTransformerEmbedder(
            settings.model,
            dtype=settings.embed_dtype,
            batch_size=settings.embed_batch_size,
            long_text=settings.long_text,
        )
        folder = cache_dir if cache_dir is not None else settings.cache_dir
        self.embedding_cache = EmbeddingCache(folder / "embeddings.sqlite")
        self.extraction_cache = ExtractionCache(
            folder / "extractions.sqlite", self.extractor.version
        )
        self.progress: Progress = progress or NoProgress()

    def close(self) -> None:
        self.embedding_cache.close()
        self.extraction_cache.close()

    # ------------------------------------------------------------------ stages
    def _timed(self, report: BuildReport, stage: str) -> _Timer:
        return _Timer(report.stage_seconds, stage)

    def extract_all(self, papers: Sequence[Paper]) -> dict[str, Extraction]:
        """Extraction per paper id, computing only texts not in the cache."""
        hashes = sorted({p.text_hash for p in papers})
        cached = self.extraction_cache.get_many(hashes)
        todo = [p for p in papers if p.text_hash not in cached]
        if todo:
            self.progress.start("extract", len(todo))
            fresh: dict[str, Extraction] = {}
            for p in todo:
                if p.text_hash not in fresh:
                    fresh[p.text_hash] = self.extractor.extract(p.abstract)
                self.progress.advance(1)
            self.progress.finish()
            self.extraction_cache.put_many(fresh)
            cached.update(fresh)
        return {p.id: cached[p.text_hash] for p in papers}

    def embed_all(
        self, papers: Sequence[Paper], previous: GraphData | None, report: BuildReport
    ) -> dict[str, np.ndarray]:
        """Embedding per paper id; cached texts and unchanged stored papers embed nothing."""
        texts = {p.id: embedding_text(p) for p in papers}
        if (
            previous is not None
            and previous.embeddings is not None
            and len(previous.embedding_ids)
            and previous.embedding_model == self.embedder.key
        ):
            # a graph file moved to a machine without the cache still embeds nothing
            old = {pid: i for i, pid in enumerate(previous.embedding_ids)}
            seed = {}
            for p in papers:
                prev = previous.nodes.get(p.id)
                if isinstance(prev, Paper) and p.id in old and embedding_text(prev) == texts[p.id]:
                    seed[text_key(texts[p.id])] = np.asarray(
                        previous.embeddings[old[p.id]], dtype=np.float32
                    )
            if seed:
                self.embedding_cache.put_many(self.embedder.key, seed)
        vectors, n_embedded = embed_cached(
            self.embedder,
            self.embedding_cache,
            texts,
            progress=self.progress.advance,
            on_total=lambda n: self.progress.start("embed", n),
        )
        if n_embedded:
            self.progress.finish()
        report.embedded += n_embedded
        report.long_texts = int(getattr(self.embedder, "truncated", 0) or 0)
        return vectors

    # ------------------------------------------------------------------ compute
    def compute(
        self,
        papers: Sequence[Paper],
        previous: GraphData | None = None,
        report: BuildReport | None = None,
        *,
        full_links: bool = False,
    ) -> GraphData:
        """The whole graph for ``papers``, reusing ``previous`` where that is exact.

        ``full_links``: compute SHARES_TERM for every paper rather than only the papers
        the change touches (``citegraph build``: the settings may have changed since).
        """
        report = report if report is not None else BuildReport()
        papers = sorted(papers, key=lambda p: p.id)
        with self._timed(report, "extract"):
            extractions = self.extract_all(papers)
            papers = [
                p if p.title else dataclasses.replace(p, label=extractions[p.id].label)
                for p in papers
            ]
            resolution = self.extractor.resolve(extractions)
        with self._timed(report, "embed"):
            vectors = self.embed_all(papers, previous, report)
        data = GraphData(embedding_model=self.embedder.key)
        for p in papers:
            data.nodes[p.id] = p
        for c in resolution.concepts.values():
            data.nodes[c.id] = c
        for d in resolution.datasets.values():
            data.nodes[d.id] = d
        for e in mention_edges(resolution.terms):
            data.add_edge(e)
        ids = [p.id for p in papers]
        matrix = (
            np.vstack([vectors[i] for i in ids]).astype(np.float32)
            if ids
            else np.zeros((0, self.embedder.dim), np.float32)
        )
        data.embedding_ids = ids
        data.embeddings = matrix
        with self._timed(report, "link"):
            self.progress.start("link", 2 * len(ids))
            neighbours, hubs = self._similar(ids, matrix, papers, previous, data.embedding_model)
            self.progress.finish()
            for e in similar_edges(neighbours, hubs):
                data.add_edge(e)
            names = {n.id: n.label for n in data.nodes.values()}
            for e in self._shared_terms(resolution.paper_terms, names, previous, full_links):
                data.add_edge(e)
            for e in cooccurrence_edges(resolution.paper_terms, resolution.concepts):
                data.add_edge(e)
            for e in citation_edges(papers, data.nodes):
                data.add_edge(e)
        return data

    def _similar(
        self,
        ids: Sequence[str],
        matrix: np.ndarray,
        papers: Sequence[Paper],
        previous: GraphData | None,
        model: str | None,
    ) -> tuple[Neighbours, Hubs]:
        """SIMILAR_TO lists (CSLS order) and hubs: only the rows that can change when the
        previous graph has its hubs stored, else every row (two passes)."""
        k, floor = self.settings.similar_k, self.settings.similar_min_score
        hubs_prev = None
        if previous is not None and previous.embedding_model == model:
            prev_ids = {pid for pid, n in previous.nodes.items() if n.kind is NodeKind.PAPER}
            hubs_prev = hubs_from_edges(previous.edges.values(), prev_ids, floor)
        if previous is None or hubs_prev is None:
            plain = top_k_similar(ids, matrix, k, floor, progress=self.progress.advance)
            hubs = hubness(plain, k, floor)
            return csls_similar(ids, matrix, hubs, k, floor, progress=self.progress.advance), hubs
        # a paper whose text changed counts as removed and added again
        changed = {
            p.id
            for p in papers
            if p.id in hubs_prev and previous.nodes[p.id].text_hash != p.text_hash  # type: ignore[union-attr]
        }
        removed = (hubs_prev.keys() - set(ids)) | changed
        new = (set(ids) - hubs_prev.keys()) | changed
        at = {pid: i for i, pid in enumerate(previous.embedding_ids)}
        old = previous.embeddings
        gone_rows = [at[p] for p in sorted(removed) if p in at]
        gone = (
            np.asarray(old[gone_rows], dtype=np.float32)
            if old is not None and gone_rows
            else np.zeros((0, matrix.shape[1]), np.float32)
        )
        prev_lists = neighbours_from_edges(previous.edges.values())
        return update_csls(
            {p: v for p, v in prev_lists.items() if p not in removed},
            {p: h for p, h in hubs_prev.items() if p not in removed},
            gone, ids, matrix, new, removed, k, floor,
        )

    def _shared_terms(
        self,
        paper_terms: Mapping[str, Mapping[str, float]],
        names: Mapping[str, str],
        previous: GraphData | None,
        full: bool,
    ) -> list[Edge]:
        """SHARES_TERM edges: only touched papers' lists recomputed when ``previous`` allows."""
        s = self.settings
        params: dict[str, Any] = {
            "max_df": s.shared_term_max_df,
            "min_weight": s.shared_term_min_weight,
            "top_k": s.shared_term_top_k,
        }
        if previous is not None and not full:
            old_terms: dict[str, set[str]] = {
                pid: set() for pid, n in previous.nodes.items() if n.kind is NodeKind.PAPER
            }
            old_terms.update(paper_terms_of(previous.edges.values()))
            updated = update_shared_terms(
                (e for e in previous.edges.values() if e.type is RelType.SHARES_TERM),
                old_terms,
                paper_terms,
                names,
                **params,
            )
            if updated is not None:
                edges, touched = updated
                log.info("SHARES_TERM: %d of %d papers touched", len(touched), len(paper_terms))
                return edges
        return shared_term_edges(paper_terms, names, **params)

    # ------------------------------------------------------------------ commands
    def run(
        self,
        store: GraphStore,
        *,
        add_paths: Sequence[Path | str] = (),
        add_papers: Sequence[Paper] = (),
        remove: Sequence[str] = (),
        replace: bool = False,
    ) -> BuildReport:
        """Read inputs, compute the new graph, and apply the difference to ``store``.

        ``replace``: the inputs become the whole corpus (``citegraph build``);
        otherwise they are added to what the store holds (``citegraph add``).
        """
        report = BuildReport()
        t0 = time.perf_counter()
        new_papers = list(add_papers)
        if add_paths:
            with self._timed(report, "read"):
                result = read_corpus(add_paths, max_file_bytes=self.settings.max_input_file_bytes)
            report.problems.extend(result.problems)
            report.duplicates += result.duplicates
            new_papers.extend(result.papers)
        report.papers_read = len(new_papers)
        if new_papers:
            # the slow part (the model) needs no write lock: done first, so a second writer
            # waits for the graph work only; the vectors land in the cache
            with self._timed(report, "embed"):
                keys = [text_key(embedding_text(p)) for p in new_papers]
                cached = self.embedding_cache.get_many(self.embedder.key, keys)
                if len(cached) < len(set(keys)):
                    # stored vectors of unchanged papers seed the cache (a graph moved to
                    # a machine without the cache embeds nothing)
                    self.embed_all(new_papers, store.snapshot(), report)
        with store.writer(on_wait=self.progress.message):
            self._update(store, report, new_papers, remove, replace)
            report.stats = store.stats()
        report.stage_seconds["total"] = time.perf_counter() - t0
        return report

    def _update(
        self,
        store: GraphStore,
        report: BuildReport,
        new_papers: Sequence[Paper],
        remove: Sequence[str],
        replace: bool,
    ) -> None:
        """Read the graph, compute the new one and apply the difference (write lock held)."""
        with self._timed(report, "load"):
            previous = store.snapshot()
        old_papers = {pid: n for pid, n in previous.nodes.items() if isinstance(n, Paper)}
        missing = [r for r in remove if r not in old_papers]
        if missing:
            raise NotFoundError(f"no paper with id {', '.join(sorted(missing))}")
        corpus: dict[str, Paper] = {} if replace else dict(old_papers)
        for pid in remove:
            corpus.pop(pid, None)
        by_hash = {p.text_hash: pid for pid, p in corpus.items()}
        for p in new_papers:
            same = by_hash.get(p.text_hash)
            if same is not None and same != p.id and not replace:
                report.duplicates += 1  # already in the graph under another id
                continue
            if p.id in corpus and corpus[p.id].text_hash == p.text_hash and not replace:
                report.duplicates += 1
                continue
            corpus[p.id] = p
            by_hash[p.text_hash] = p.id
        graph = self.compute(list(corpus.values()), previous, report, full_links=replace)
        change = diff(previous, graph)
        report.added = sorted(set(corpus) - set(old_papers))
        report.removed = sorted(set(old_papers) - set(corpus))
        report.updated = sum(
            1 for pid in corpus if pid in old_papers and old_papers[pid] != graph.nodes[pid]
        )
        report.nodes_written = len(change.upsert_nodes)
        report.edges_written = len(change.upsert_edges)
        report.nodes_deleted = len(change.delete_nodes)
        report.edges_deleted = len(change.delete_edges)
        with self._timed(report, "write"):
            if not change.empty:
                store.apply(change)


def diff(old: GraphData, new: GraphData) -> GraphChange:
    """The change that turns ``old`` into ``new`` (only what differs)."""
    upsert_nodes = [
        n
        for nid, n in sorted(new.nodes.items())
        if nid not in old.nodes
        or node_to_props(old.nodes[nid]) != node_to_props(n)
        or old.nodes[nid].kind is not n.kind
    ]
    delete_nodes = sorted(set(old.nodes) - set(new.nodes))
    gone = set(delete_nodes)
    upsert_edges = [
        e
        for k, e in sorted(new.edges.items(), key=lambda kv: _edge_key(kv[0]))
        if k not in old.edges or old.edges[k] != e
    ]
    delete_edges = sorted(
        (k for k in old.edges if k not in new.edges and k[0] not in gone and k[1] not in gone),
        key=_edge_key,
    )
    old_rows = {pid: i for i, pid in enumerate(old.embedding_ids)}
    emb_ids = []
    rows = []
    same_model = old.embedding_model == new.embedding_model
    for i, pid in enumerate(new.embedding_ids):
        j = old_rows.get(pid)
        if j is None or not same_model or not np.array_equal(old.embeddings[j], new.embeddings[i]):
            emb_ids.append(pid)
            rows.append(i)
    return GraphChange(
        upsert_nodes=tuple(upsert_nodes),
        delete_nodes=tuple(delete_nodes),
        upsert_edges=tuple(upsert_edges),
        delete_edges=tuple(delete_edges),
        embedding_ids=tuple(emb_ids),
        embeddings=new.embeddings[rows] if rows else None,
        embedding_model=new.embedding_model,
    )


def _edge_key(key: tuple[str, str, RelType]) -> tuple[str, str, str]:
    return (key[0], key[1], key[2].value)


def graphs_equal(a: GraphData, b: GraphData, tol: float = 1e-6) -> list[str]:
    """Differences between two graphs (empty when equal up to ``tol`` on weights)."""
    problems: list[str] = []
    if set(a.nodes) != set(b.nodes):
        problems.append(f"nodes differ: {sorted(set(a.nodes) ^ set(b.nodes))[:10]}")
    for nid in set(a.nodes) & set(b.nodes):
        if node_to_props(a.nodes[nid]) != node_to_props(b.nodes[nid]):
            problems.append(f"node {nid} differs")
    if set(a.edges) != set(b.edges):
        problems.append(f"edges differ: {sorted(set(a.edges) ^ set(b.edges), key=_edge_key)[:10]}")
    for k in set(a.edges) & set(b.edges):
        ea, eb = a.edges[k], b.edges[k]
        if abs(ea.weight - eb.weight) > tol:
            problems.append(f"edge {k} weight {ea.weight} != {eb.weight}")
    return problems


class _Timer:
    def __init__(self, sink: dict[str, float], stage: str) -> None:
        self.sink, self.stage = sink, stage

    def __enter__(self) -> None:
        self.t0 = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        self.sink[self.stage] = self.sink.get(self.stage, 0.0) + time.perf_counter() - self.t0
