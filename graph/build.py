"""The build pipeline: papers -> extraction -> embeddings -> edges -> a change for the store.

Two paths give the same :class:`GraphChange` (``tests/e2e/test_region_random.py``):

* **by region** (an add or remove by a long-lived pipeline, the API's, once it holds a
  :class:`graph.region.CorpusState` of the stored graph at the store's current version:
  from :meth:`Pipeline.prime` and after each of its writes):
  :func:`graph.region.region_change` reads only the stored rows the change reaches and
  returns the change; no snapshot, no whole graph, no diff;
* **whole** (``citegraph build``, a one-shot ``citegraph add``/``remove``, a first
  write, a graph another writer changed since the state was taken, or one written by
  other code or settings): :meth:`Pipeline.compute`
  turns the corpus into a :class:`GraphData`, reusing what it can from the previous graph
  and the caches, and :func:`diff` turns old + new into the change. Because every step
  is a deterministic function of the set of papers, an incremental build equals a full
  rebuild.

What the whole path recomputes when papers are added or removed (the region path
computes the same rows from what they depend on):

* extraction: only new texts (cached by text hash);
* embeddings: only new texts (cached by (model, text hash));
* SIMILAR_TO: only the rows of new papers and of papers that lost a neighbour;
  other papers merge their old lists with their scores to the new papers;
* SHARES_TERM: only the partner lists of papers holding a term whose papers or linking
  status changed (graph.link.update_shared_terms); weights depend on each term's df
  alone, never on N, so only edges touching those terms are written;
* RELATED_TO: recomputed from the term index (cheap: pairs within each paper); stored
  counts and the partner order do not depend on N, so only changed pairs are written;
* concepts/datasets: a one-shot pipeline (the CLI) resolves the corpus whole; a
  long-lived one (the API's) keeps a :class:`graph.extract.incremental.Resolver` and
  recomputes only the steps of the papers whose corpus-wide inputs moved (an acronym a
  new paper defines re-resolves the old papers that write it alone). Either way ones no
  paper mentions any more disappear.

An add's time is split in ``BuildReport.stage_seconds`` (read, embed, load, extract,
link, write) and, finer, ``step_seconds`` (``extract.resolve``, ``link.shares_term``,
``diff``, ...). The cyclic garbage collector is paused during a write: a full collection
walks every object of the loaded graph.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import hashlib
import json
import logging
import threading
import time
from collections import defaultdict
from collections.abc import (
    Collection,
    Generator,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
    Sequence,
)
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from graph.cache import BlobCache
from graph.citations import citation_edges, outside_works
from graph.embed import (
    Embedder,
    EmbeddingCache,
    SentenceTransformerEmbedder,
    embed_cached,
    text_key,
)
from graph.errors import InputError, NotFoundError, WriteLockLostError
from graph.extract import (
    Extraction,
    Extractor,
    IncrementalResolution,
    RuleExtractor,
    extraction_from_json,
    extraction_to_json,
)
from graph.ids import find_id, id_key, odd_spellings, stored_spelling
from graph.ingest import InputProblem, read_corpus
from graph.ingest.collect import record_order
from graph.lexical import (
    WORD_HASH_FEATURES,
    WORD_VECTOR_VERSION,
    forget_gram_weights,
    paper_text,
    word_vectors,
)
from graph.link import (
    Hubs,
    Near,
    Neighbours,
    PaperVectors,
    SimilarPools,
    cooccurrence_edges,
    full_similar,
    hubs_from_edges,
    mention_edges,
    neighbours_from_edges,
    paper_terms_of,
    ranked_by,
    shared_term_edges,
    similar_edges,
    update_csls,
    update_shared_terms,
)
from graph.model import (
    Edge,
    GraphChange,
    GraphData,
    GraphNode,
    GraphStats,
    NodeKind,
    Paper,
    RelType,
    node_to_props,
)
from graph.overlay import Overlay
from graph.refs import count_references, names_of
from graph.region import CorpusState, region_change, state_from_graph
from graph.schema import TOPIC_TYPES
from graph.settings import Settings
from graph.store.base import GraphStore
from graph.store.rows import in_key_order

log = logging.getLogger(__name__)


class Stopped(Exception):  # noqa: N818 - a signal, not a failure
    """A long step gave up because its ``stop`` event was set (the app is closing)."""


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
    #: the references of the papers read: naming a paper of the graph as written (CITES),
    #: well-formed but naming none (an outside work, cited), dropped as unreadable (graph.refs)
    references_resolved: int = 0
    references_outside: int = 0
    references_unparseable: int = 0
    #: the graph held part of an earlier write that was cut off, and this write made it
    #: whole (every link and vector recomputed)
    completed_cut_off: bool = False
    stage_seconds: dict[str, float] = field(default_factory=dict)
    #: finer timers inside the stages (``extract.resolve``, ``link.shares_term``, ``diff``…),
    #: to say where an add's time goes; not summed into ``stage_seconds``
    step_seconds: dict[str, float] = field(default_factory=dict)
    stats: GraphStats | None = None
    #: what the write's topic step did (graph.topics.TopicsUpdate as a dict): recomputed,
    #: or the new papers joined their neighbours' topics; None: no topics computed yet
    topics: dict[str, Any] | None = None

    @property
    def partial(self) -> bool:
        return bool(self.problems)

    def as_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["problems"] = [str(p) for p in self.problems]
        out["partial"] = self.partial
        if self.stats is not None:
            out["stats"] = {"nodes": dict(self.stats.nodes), "edges": dict(self.stats.edges),
                            "incomplete": self.stats.incomplete}
        return out


#: a write whose lock was taken over by another writer is computed again this often in all
LOCK_LOST_TRIES = 2
#: cached extractions read and decoded per part (ExtractionCache.get_many)
_DECODE_PART = 2_000
#: texts whose word vectors are computed and cached at a time (Pipeline._word_vectors)
_WORD_PART = 2_000


class ExtractionCache:
    """Per-text extraction results by (extractor version, :func:`abstract_key`), as JSON.

    Keyed by the abstract as written, not by ``Paper.text_hash`` (the casefolded words
    only): extraction reads case and punctuation ("(QZX)" defines an acronym, "QZX"
    alone does not), so two abstracts with one text_hash can extract differently (probe
    10: a re-added paper took its earlier text's concepts and label from this cache).
    The table is new with that key (``extraction_v3``): ``extraction_v2``'s rows were
    keyed by text_hash and are not read.

    The JSON holds field names only (:func:`graph.extract.extraction_to_json`), never a
    module path: moving or renaming the extractor's code leaves the cache readable, and
    a new extractor ``version`` simply finds nothing under its name.
    """

    def __init__(self, path: Path | None, version: str) -> None:
        self._blobs = BlobCache(path, "extraction_v3")
        self.version = version

    def get_many(self, hashes: Sequence[str]) -> dict[str, Extraction]:
        # read and decoded a part at a time: a build's whole JSON at once (~0.5 GB at 100k
        # papers, each text over pymalloc's size) left the C heap that large after it
        out: dict[str, Extraction] = {}
        for start in range(0, len(hashes), _DECODE_PART):
            raw = self._blobs.get_many(self.version, hashes[start:start + _DECODE_PART])
            out.update((h, extraction_from_json(v.decode("utf-8"))) for h, v in raw.items())
        return out

    def put_many(self, items: Mapping[str, Extraction]) -> None:
        self._blobs.put_many(
            self.version, {h: extraction_to_json(e).encode("utf-8") for h, e in items.items()}
        )

    def close(self) -> None:
        self._blobs.close()


class WordVectorCache:
    """Word vectors (graph.lexical.word_vectors) by text hash: int32 columns then float64
    weights, in a BlobCache; the namespace names the vectoriser, so a change to it simply
    finds nothing."""

    NAMESPACE = f"hashed-1-2-grams-2^24|words-v{WORD_VECTOR_VERSION}|l2"

    def __init__(self, path: Path | None) -> None:
        self._blobs = BlobCache(path, "words_v1")

    def get_many(self, hashes: Sequence[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        out = {}
        for h, v in self._blobs.get_many(self.NAMESPACE, hashes).items():
            n = len(v) // 12
            if len(v) != 12 * n:
                continue  # not one of ours: recompute it
            cols = np.frombuffer(v[: 4 * n], dtype="<i4")
            out[h] = (cols, np.frombuffer(v[4 * n :], dtype="<f8"))
        return out

    def put_many(self, items: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> None:
        self._blobs.put_many(self.NAMESPACE, {
            h: np.asarray(c, dtype="<i4").tobytes() + np.asarray(w, dtype="<f8").tobytes()
            for h, (c, w) in items.items()
        })

    def close(self) -> None:
        self._blobs.close()


def _text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def abstract_key(paper: Paper) -> str:
    """What an extraction is a function of: the abstract as written (its sha256).

    Not ``text_hash``, which folds case and drops punctuation (it finds duplicates)."""
    return _text_key(paper.abstract)


def embedding_text(paper: Paper) -> str:
    """What gets embedded: the title (when there is one) and the abstract."""
    return f"{paper.title}. {paper.abstract}" if paper.title else paper.abstract


class Pipeline:
    """Turns papers into a graph. Owns the caches; the store is passed to each call.

    ``extractor`` (default :class:`~graph.extract.RuleExtractor`) is the only way the
    pipeline reaches concept extraction; its ``version`` keys the extraction cache.
    ``incremental``: keep the corpus's resolution between calls, so that the next add
    resolves only what it reaches (a long-lived pipeline, the API's); a one-shot run
    (the CLI) resolves once, whole, which is faster than filling that state.
    """

    def __init__(
        self,
        settings: Settings,
        embedder: Embedder | None = None,
        *,
        progress: Progress | None = None,
        cache_dir: Path | None = None,
        extractor: Extractor | None = None,
        incremental: bool = True,
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
        self.word_cache = WordVectorCache(folder / "words.sqlite")
        self.extraction_cache = ExtractionCache(
            folder / "extractions.sqlite", self.extractor.version
        )
        self.progress: Progress = progress or NoProgress()
        # a long-lived pipeline (the API's) keeps the last corpus's extractions and their
        # resolution, so the next add resolves only what it can reach
        make = getattr(self.extractor, "resolver", None) if incremental else None
        self._resolver: IncrementalResolution | None = make() if callable(make) else None
        self._extracted: dict[str, Extraction] = {}
        self._ahead: _Ahead | None = None  # what one run read while its model loaded
        # the stored graph as an add needs it (graph.region), at one store version: kept
        # between writes by a long-lived pipeline
        self._state: _State | None = None
        # title + abstract -> its word vector's (columns, weights)
        self._words: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def close(self) -> None:
        self.embedding_cache.close()
        self.extraction_cache.close()
        self.word_cache.close()

    # ------------------------------------------------------------------ stages
    def _timed(self, report: BuildReport, stage: str) -> _Timer:
        return _Timer(report.stage_seconds, stage)

    def _step(self, report: BuildReport, step: str) -> _Timer:
        return _Timer(report.step_seconds, step)

    def extract_all(
        self, papers: Sequence[Paper], *, stop: threading.Event | None = None,
        keep: bool = False,
    ) -> dict[str, Extraction]:
        """Extraction per paper id, computing only texts not in the cache.

        ``stop`` set: :class:`Stopped` before the next text (what was done is cached).
        ``keep``: add to the texts kept from the last call rather than replace them (an
        add's own papers, beside the corpus they join).
        """
        known = self._extracted
        keys = {p.id: abstract_key(p) for p in papers}
        hashes = sorted({k for k in keys.values() if k not in known})
        cached = self.extraction_cache.get_many(hashes)
        todo = [p for p in papers if keys[p.id] not in cached and keys[p.id] not in known]
        if todo:
            self.progress.start("extract", len(todo))
            fresh: dict[str, Extraction] = {}
            for p in todo:
                if stop is not None and stop.is_set():
                    self.extraction_cache.put_many(fresh)
                    raise Stopped("extraction stopped")
                if keys[p.id] not in fresh:
                    fresh[keys[p.id]] = self.extractor.extract(p.abstract)
                self.progress.advance(1)
            self.progress.finish()
            self.extraction_cache.put_many(fresh)
            cached.update(fresh)
        # the same objects next time: the resolver tells unchanged papers by identity
        mine = {k: known.get(k) or cached[k] for k in keys.values()}
        if self._resolver is None:
            # one-shot: no later call to recognise them in (~0.8 GB at 100k papers)
            self._extracted = {}
        elif keep:
            self._extracted.update(mine)
        else:
            self._extracted = mine
        return {p.id: mine[keys[p.id]] for p in papers}

    def embed_all(
        self, papers: Sequence[Paper], previous: GraphData | None, report: BuildReport
    ) -> dict[str, np.ndarray]:
        """Embedding per paper id; cached texts and unchanged stored papers embed nothing."""
        texts = {p.id: embedding_text(p) for p in papers}
        reused: dict[str, np.ndarray] = {}
        if (
            previous is not None
            and previous.embeddings is not None
            and previous.embedding_model == self.embedder.key
            and not previous.incomplete  # a vector may be older than its paper's text
        ):
            # a stored paper whose text did not change keeps its stored vector: no hashing,
            # no cache round trip for the whole corpus on every add, and a graph moved to
            # a machine without the cache embeds nothing
            row = {pid: i for i, pid in enumerate(previous.embedding_ids)}
            for p in papers:
                prev = previous.nodes.get(p.id)
                i = row.get(p.id)
                if i is not None and isinstance(prev, Paper) and (
                    prev is p or embedding_text(prev) == texts[p.id]
                ):
                    reused[p.id] = np.asarray(previous.embeddings[i], dtype=np.float32)
            texts = {pid: t for pid, t in texts.items() if pid not in reused}
        if not texts:
            return reused
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
        if n_embedded:  # else the texts were embedded before (perhaps in another process)
            report.long_texts = int(getattr(self.embedder, "truncated", 0) or 0)
        vectors.update(reused)
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
        pieces = list(self._pieces(papers, previous, report, full_links))
        data = pieces[0].graph  # the nodes
        similar = [p for p in pieces if RelType.SIMILAR_TO in p.types]
        vectors = similar[0].graph  # the first of SIMILAR_TO's pieces holds the vectors
        data.embedding_ids = vectors.embedding_ids
        data.embeddings = vectors.embeddings
        data.similar_pools = vectors.similar_pools
        # in the order the edges were always added (SIMILAR_TO's first)
        for piece in (*similar, *(p for p in pieces if RelType.SIMILAR_TO not in p.types)):
            for e in piece.edges:
                data.add_edge(e)
        return data

    def _pieces(
        self,
        papers: Sequence[Paper],
        previous: GraphData | None,
        report: BuildReport | None,
        full_links: bool,
    ) -> Iterator[_Piece]:
        """:meth:`compute`'s graph in pieces, each made after the one before was taken:
        the nodes with their MENTIONS, USES and INTRODUCES; SHARES_TERM; RELATED_TO; the
        vectors and SIMILAR_TO, its sources a block at a time; CITES. A one-shot write
        takes each as it comes (:meth:`_write_in_parts`), so a build holds one type's
        edges at a time, not every edge (4.4M at 100k papers).

        SIMILAR_TO's lists are computed first, before the extraction and the resolution,
        while the process holds little (their working set, ~0.4 GB at 100k papers, came
        on top of what the resolution leaves in the allocator), and held compact until
        their pieces are made (:class:`_SimilarLists`)."""
        report = report if report is not None else BuildReport()
        papers = sorted(papers, key=lambda p: p.id)
        if previous is not None and previous.incomplete:
            full_links = True  # the stored lists may be half written: reuse none of them
        ahead = self._ahead.lexical if self._ahead is not None else None
        lexical: _Lexical | None = None
        if ahead is not None and ahead.key == (_text_set(papers), full_links):
            # computed while the model loaded, from this same graph; handed out one at
            # a time (self._ahead holds the same list)
            lexical = ahead
            while lexical.pieces:
                yield lexical.pieces.pop(0)
            words, lexical.words = lexical.words, None
        else:
            with self._timed(report, "link"), self._step(report, "link.words"):
                words = self._word_vectors(papers)
        _return_free_memory()  # the word vectors' part rows
        similar = self._similar_lists(papers, words, previous, report)
        del words
        _return_free_memory()  # the pools, the block products
        if lexical is None:
            lexical = yield from self._lexical_pieces(papers, previous, report, full_links)
        yield from self._similar_pieces(similar, papers, previous, report)
        del similar
        with self._timed(report, "link"), self._step(report, "link.cites"):
            cites = citation_edges(lexical.papers, lexical.nodes)
        yield _Piece(GraphData(embedding_model=self.embedder.key), frozenset(RelType) - (
            MENTION_TYPES | {RelType.SHARES_TERM, RelType.RELATED_TO, RelType.SIMILAR_TO}
        ) - TOPIC_TYPES, cites)

    def _matrix(
        self, papers: Sequence[Paper], previous: GraphData | None, report: BuildReport
    ) -> np.ndarray:
        """The papers' vectors (in their order) as one float32 matrix."""
        vectors = self.embed_all(papers, previous, report)
        if not papers:
            return np.zeros((0, self.embedder.dim), np.float32)
        return np.vstack([vectors[p.id] for p in papers]).astype(np.float32, copy=False)

    def _similar_lists(
        self,
        papers: Sequence[Paper],
        words: Any,
        previous: GraphData | None,
        report: BuildReport,
    ) -> _SimilarLists:
        """SIMILAR_TO's lists and hubs (:meth:`_similar`), held compact. A one-shot
        pipeline lets the vectors go (150 MB at 100k papers) and reads them again for
        their piece; a long-lived one keeps them, and the pools for its region state."""
        with self._timed(report, "embed"), self._step(report, "embed.corpus"):
            matrix = self._matrix(papers, previous, report)
        with self._timed(report, "link"), self._step(report, "link.similar"):
            ids = [p.id for p in papers]
            self.progress.start("link", 2 * len(ids))
            # the pools are kept for the region state of a long-lived pipeline alone
            pools: list[SimilarPools] | None = [] if self._resolver is not None else None
            neighbours, hubs, vec, kept = self._similar(
                ids, matrix, papers, words, previous, self.embedder.key, pools
            )
            self.progress.finish()
            ranked = ranked_by(vec)
            del vec
            return _SimilarLists.of(
                ids, neighbours, hubs, kept, ranked,
                pools=pools[0] if pools else None,
                matrix=matrix if self._resolver is not None else None,
            )

    def _similar_pieces(
        self,
        similar: _SimilarLists,
        papers: Sequence[Paper],
        previous: GraphData | None,
        report: BuildReport,
    ) -> Iterator[_Piece]:
        """SIMILAR_TO's pieces: the vectors with the first, then its edges
        :data:`SIMILAR_PIECE_EDGES` at a time, each piece naming its sources (the old
        edges of those alone are the ones it replaces)."""
        data = GraphData(embedding_model=self.embedder.key)
        if similar.matrix is None:
            with self._timed(report, "embed"), self._step(report, "embed.corpus"):
                similar.matrix = self._matrix(papers, previous, report)
        data.embedding_ids, data.embeddings = similar.ids, similar.matrix
        data.similar_pools = similar.pools
        similar.matrix = similar.pools = None
        k, floor = self.settings.similar_k, self.settings.similar_min_score
        per = max(1, SIMILAR_PIECE_EDGES // max(k, 1))
        n = len(similar.ids)
        for lo in range(0, max(n, 1), per):
            hi = min(n, lo + per)
            with self._timed(report, "link"), self._step(report, "link.similar"):
                edges = similar.edges(lo, hi, k, floor)
            yield _Piece(data, frozenset({RelType.SIMILAR_TO}), edges,
                         sources=frozenset(similar.ids[lo:hi]))
            del edges
            data = GraphData()  # the vectors go with the first piece alone

    def _notice(self, text: str) -> None:
        """Tell the user about a write that costs more than asked for: through the
        progress, or, with none (the server's pipeline), as a logged warning (probe 11: a
        server's recompute under other CITEGRAPH_SHARED_TERM_* values said nothing)."""
        if isinstance(self.progress, NoProgress):
            log.warning("%s", text)
        else:
            self.progress.message(text)

    def link_settings(self) -> str:
        """What this pipeline's links are computed with beyond what their rows record
        (GraphData.link_settings): SHARES_TERM's gate and list length."""
        s = self.settings
        return json.dumps({"shares_term": {
            "max_df": s.shared_term_max_df,
            "min_weight": s.shared_term_min_weight,
            "top_k": s.shared_term_top_k,
        }}, sort_keys=True)

    def _full_links(self, previous: GraphData, replace: bool) -> bool:
        """Whether SHARES_TERM is computed for every paper: a build, or a graph whose
        lists were made with other settings (an add would keep their partners; a graph
        that recorded none is taken to match)."""
        return replace or (
            previous.link_settings is not None and previous.link_settings != self.link_settings()
        )

    def _lexical(
        self,
        papers: Sequence[Paper],
        previous: GraphData | None,
        report: BuildReport,
        full_links: bool,
    ) -> _Lexical:
        """:meth:`_lexical_pieces` all at once (ahead of the lock, while the model loads)."""
        pieces: list[_Piece] = []
        made = self._lexical_pieces(papers, previous, report, full_links)
        while True:
            try:
                pieces.append(next(made))
            except StopIteration as done:
                lexical: _Lexical = done.value
                break
        lexical.pieces = pieces
        with self._step(report, "link.words"):
            lexical.words = self._word_vectors(lexical.papers)
        return lexical

    def _lexical_pieces(
        self,
        papers: Sequence[Paper],
        previous: GraphData | None,
        report: BuildReport,
        full_links: bool,
    ) -> Generator[_Piece, None, _Lexical]:
        """The pieces of :meth:`_pieces` that need no embedding (extraction, resolution,
        the nodes with MENTIONS/USES/INTRODUCES, SHARES_TERM, RELATED_TO), then what the
        rest needs: the papers with their labels, and the nodes."""
        key = (_text_set(papers), full_links)
        with self._timed(report, "extract"):
            with self._step(report, "extract.cache"):
                extractions = self.extract_all(papers)
                papers = [
                    p if p.title else dataclasses.replace(p, label=extractions[p.id].label)
                    for p in papers
                ]
            with self._step(report, "extract.resolve"):
                if self._resolver is not None:
                    resolution = self._resolver.update(extractions)
                else:
                    resolution = self.extractor.resolve(extractions)
        with self._step(report, "assemble"):
            first = GraphData(embedding_model=self.embedder.key,
                              link_settings=self.link_settings())
            for p in papers:
                first.nodes[p.id] = p
            # a term no paper kept (dropped by a paper's cap or a filter after grouping)
            # is no node: it would be found by search with no paper behind it (probe3 F6)
            held = {t.term for t in resolution.terms}
            first.nodes.update(
                (c.id, c) for c in resolution.concepts.values() if c.id in held
            )
            first.nodes.update(
                (d.id, d) for d in resolution.datasets.values() if d.id in held
            )
            # the outside works the papers cite (their CITES come in the last piece)
            first.nodes.update(outside_works(papers, first.nodes))
            mentions = mention_edges(resolution.terms)
            # the resolution itself is not kept, nor the extractions (~0.3 GB at 100k
            # papers): what the links need of them is each paper's terms and the concepts
            paper_terms, concepts = resolution.paper_terms, resolution.concepts
            del resolution, extractions, held
        nodes = first.nodes
        names = {nid: n.label for nid, n in nodes.items()}
        yield _Piece(first, MENTION_TYPES, mentions)
        del first, mentions
        with self._timed(report, "link"), self._step(report, "link.shares_term"):
            shared = self._shared_terms(paper_terms, names, previous, full_links)
        yield _Piece(GraphData(), frozenset({RelType.SHARES_TERM}), shared)
        del shared
        with self._timed(report, "link"), self._step(report, "link.related_to"):
            related = cooccurrence_edges(paper_terms, concepts)
        yield _Piece(GraphData(), frozenset({RelType.RELATED_TO}), related)
        return _Lexical(key, papers, nodes, None, [])

    def _similar(
        self,
        ids: Sequence[str],
        matrix: np.ndarray,
        papers: Sequence[Paper],
        words: Any,
        previous: GraphData | None,
        model: str | None,
        pools: list[SimilarPools] | None = None,
    ) -> tuple[Neighbours, Hubs, PaperVectors, dict[str, list[Edge]]]:
        """SIMILAR_TO lists (CSLS order), hubs and the vectors they were ranked by: only
        the rows that can change when the previous graph has its hubs stored, else every
        row (two passes). Also the stored edges of each row whose list and hub did not
        change (its edges would be written the same)."""
        k, floor = self.settings.similar_k, self.settings.similar_min_score
        vec = PaperVectors(ids, matrix, words)
        hubs_prev = None
        pre = None
        if previous is not None and previous.embedding_model == model and not (
            previous.incomplete
        ):
            ahead = self._ahead.similar if self._ahead is not None else None
            if ahead is not None and ahead.graph is previous and ahead.ranked_by == (
                ranked_by(vec)
            ):
                pre = ahead  # read from this same graph while the model loaded
            else:
                pre = _stored_similar(previous, self.settings, vec)
            hubs_prev = pre.hubs
        if previous is None or pre is None or hubs_prev is None:
            lists, hubs = full_similar(vec, k, floor, progress=self.progress.advance, keep=pools)
            return lists, hubs, vec, {}
        # a paper whose text changed (its title too: both are embedded) counts as removed
        # and added again
        changed = set()
        for p in papers:
            prev = previous.nodes.get(p.id)
            if p.id in hubs_prev and isinstance(prev, Paper) and prev is not p and (
                embedding_text(prev) != embedding_text(p)
            ):
                changed.add(p.id)
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
        prev_lists, by_source = pre.lists, pre.by_source
        lists, hubs = update_csls(
            {p: v for p, v in prev_lists.items() if p not in removed},
            {p: h for p, h in hubs_prev.items() if p not in removed},
            gone, vec, new, removed, k, floor,
        )
        kept = {
            p: by_source[p] for p, lst in lists.items()
            if p not in removed and p in by_source and hubs_prev.get(p) == hubs.get(p)
            and prev_lists.get(p) == lst
        }
        return lists, hubs, vec, kept

    def _word_vectors(self, papers: Sequence[Paper]) -> Any:
        """The papers' word vectors (graph.lexical.word_vectors) as one CSR matrix: kept
        by text between writes and cached on disk, so an add computes only its own."""
        import scipy.sparse as sp

        known = self._words
        texts = [paper_text(p) for p in papers]
        missing = sorted(set(texts) - known.keys())
        if missing:
            by_hash = {_text_key(t): t for t in missing}
            for h, row in self.word_cache.get_many(sorted(by_hash)).items():
                known[by_hash[h]] = row
            todo = [t for t in missing if t not in known]
            # a part at a time: each text's grams (~150 strings) are held only while its
            # part is hashed (all at once, 100k texts' grams took ~0.6 GB that the
            # process kept after them)
            for start in range(0, len(todo), _WORD_PART):
                part = todo[start:start + _WORD_PART]
                fresh = word_vectors(part)
                rows = {t: (fresh.indices[fresh.indptr[i]:fresh.indptr[i + 1]].copy(),
                            fresh.data[fresh.indptr[i]:fresh.indptr[i + 1]].copy())
                        for i, t in enumerate(part)}
                known.update(rows)
                self.word_cache.put_many({_text_key(t): r for t, r in rows.items()})
                del fresh, rows
        # one-shot: the rows live on in the matrix alone
        self._words = {t: known[t] for t in texts} if self._resolver is not None else {}
        if self._resolver is None and missing:
            forget_gram_weights()
        if not texts:
            return word_vectors([])
        lengths = np.fromiter((len(known[t][0]) for t in texts), dtype=np.int64, count=len(texts))
        indptr = np.concatenate(([0], np.cumsum(lengths)))
        indices = np.concatenate([known[t][0] for t in texts]).astype(np.int32)
        data = np.concatenate([known[t][1] for t in texts]).astype(np.float64)
        del known
        return sp.csr_matrix((data, indices, indptr), shape=(len(texts), WORD_HASH_FEATURES))

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
            # a stored edge's term names are its terms' labels when it was written (every
            # term a paper holds is a node: see assemble)
            renamed = {
                t for t, name in names.items()
                if (old := previous.nodes.get(t)) is not None and old.label != name
            }
            updated = update_shared_terms(
                (e for e in previous.edges.values() if e.type is RelType.SHARES_TERM),
                old_terms,
                paper_terms,
                names,
                renamed=renamed,
                **params,
            )
            if updated is not None:
                edges, touched = updated
                log.info("SHARES_TERM: %d of %d papers touched", len(touched), len(paper_terms))
                return edges
        return shared_term_edges(paper_terms, names, **params)

    def topics_written(self, before: str | None, after: str | None) -> None:
        """The store moved from ``before`` to ``after`` by a topic write alone (Topic
        nodes, IN_TOPIC, SUBTOPIC_OF, papers' importance: nothing the region state holds),
        so a state valid at ``before`` is valid at ``after``, and the next add stays cheap."""
        held = self._state
        if held is not None and before is not None and held.state.version == before:
            held.state.version = after

    def prime(self, store: GraphStore, *, stop: threading.Event | None = None) -> None:
        """Resolve the stored corpus now, so that the first add pays only for itself.

        For a long-lived pipeline (the API warms it up at start); without it the first
        add resolves the whole corpus. Harmless when the store changes afterwards: the
        resolver works from whatever set of papers the next add hands it. ``stop`` set
        (the app is closing): returns early, priming nothing.
        """
        if self._resolver is None:
            return
        with _gc_paused():
            read = getattr(store, "versioned_snapshot", None)
            data, version = read() if callable(read) else (store.snapshot(), None)
            try:
                self._state = self._state_of(data, version, self._resolver, stop=stop,
                                             find_pools=True)
            except Stopped:
                return

    def _state_of(
        self,
        data: GraphData,
        version: str | None,
        resolver: IncrementalResolution,
        *,
        stop: threading.Event | None = None,
        find_pools: bool = False,
    ) -> _State | None:
        """The region state of a stored graph (None: the next write goes the whole way);
        ``find_pools``: SIMILAR_TO's pools too, if the graph holds none (O(N^2))."""
        papers = sorted((n for n in data.nodes.values() if isinstance(n, Paper)),
                        key=lambda p: p.id)
        extracted = self.extract_all(papers, stop=stop)
        if stop is not None and stop.is_set():
            return None
        other_model = data.embedding_model not in (None, self.embedder.key)
        if other_model or self._full_links(data, False):
            # other vectors, or SHARES_TERM lists made with other settings: the region
            # path would keep them; the whole path recomputes them
            resolver.advance(extracted)
            return None
        state = state_from_graph(
            data, version, resolver, extracted, self.settings, self._word_vectors,
            find_pools=find_pools, stop=None if stop is None else stop.is_set,
        )
        return None if state is None else _State(state, resolver)

    def _word_rows(self, papers: Sequence[Paper]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """The word vectors (columns, weights) of some papers, by id: kept by text between
        writes, else from the cache, else computed (and cached)."""
        known = self._words
        texts = {p.id: paper_text(p) for p in papers}
        missing = sorted(set(texts.values()) - known.keys())
        if missing:
            by_hash = {_text_key(t): t for t in missing}
            for h, row in self.word_cache.get_many(sorted(by_hash)).items():
                known[by_hash[h]] = row
            todo = [t for t in missing if t not in known]
            # a part at a time: each text's grams (~150 strings) are held only while its
            # part is hashed (all at once, 100k texts' grams took ~0.6 GB that the
            # process kept after them)
            for start in range(0, len(todo), _WORD_PART):
                part = todo[start:start + _WORD_PART]
                fresh = word_vectors(part)
                rows = {t: (fresh.indices[fresh.indptr[i]:fresh.indptr[i + 1]].copy(),
                            fresh.data[fresh.indptr[i]:fresh.indptr[i + 1]].copy())
                        for i, t in enumerate(part)}
                known.update(rows)
                self.word_cache.put_many({_text_key(t): r for t, r in rows.items()})
                del fresh, rows
        return {pid: known[t] for pid, t in texts.items()}

    def _region_update(
        self,
        store: GraphStore,
        report: BuildReport,
        new_papers: Sequence[Paper],
        remove: Sequence[str],
    ) -> None:
        """An add or remove from the region it touches (graph.region), write lock held."""
        held = self._state
        assert held is not None
        state = held.state
        remove = _found_ids(remove, state.papers, state.odd_ids)
        missing = [r for r in remove if r not in state.papers]
        if missing:
            raise NotFoundError(f"no paper with id {', '.join(sorted(missing))}")
        with self._timed(report, "extract"):
            written: set[str] = set()  # the ids whose paper may differ from the state's
            # the state's text holders moved as the corpus moves, applied at the commit
            holder = (Overlay(state.text_holders) if state.text_holders is not None
                      else None)
            corpus = _next_corpus(state.papers, new_papers, remove, False, report, written,
                                  holder, state.odd_ids)
            old = state.papers
            mine = [(pid, corpus[pid]) for pid in sorted(written) if pid in corpus]
            fresh = [p for pid, p in mine
                     if pid not in old or (p is not old[pid] and p.abstract != old[pid].abstract)]
            with self._step(report, "extract.cache"):
                extractions = self.extract_all(fresh, keep=True)
        to_embed = [p for pid, p in mine if pid not in old or (
            p is not old[pid] and embedding_text(p) != embedding_text(old[pid]))]
        with self._timed(report, "embed"), self._step(report, "embed.corpus"):
            vectors = self.embed_all(to_embed, None, report) if to_embed else {}
        t0 = time.perf_counter()
        try:
            result = region_change(
                state, store, corpus, held.resolver, extractions, vectors, self._word_rows,
                self.settings, self.embedder.key, lambda step: self._step(report, step),
                touched=written | set(remove),
            )
        except BaseException:
            self._state = None  # the resolver moved: the next write reads the graph again
            raise
        report.stage_seconds["link"] = report.stage_seconds.get("link", 0.0) + (
            time.perf_counter() - t0
        )
        change = result.change
        report.added, report.removed, report.updated = result.added, result.removed, result.updated
        report.nodes_written = len(change.upsert_nodes)
        report.edges_written = len(change.upsert_edges)
        report.nodes_deleted = len(change.delete_nodes)
        report.edges_deleted = len(change.delete_edges)
        with self._timed(report, "write"):
            try:
                if not change.empty:
                    store.apply(change)
                result.commit(store.version())
                if holder is not None:
                    holder.apply()
            except BaseException:
                self._state = None
                raise
        _count_references(report, new_papers, state.papers, state.titles)
        if self._resolver is None:
            self._state = None  # a one-shot pipeline writes once

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
        with _gc_paused():
            return self._run(store, add_paths, add_papers, remove, replace)

    def _run(
        self,
        store: GraphStore,
        add_paths: Sequence[Path | str],
        add_papers: Sequence[Paper],
        remove: Sequence[str],
        replace: bool,
    ) -> BuildReport:
        report = BuildReport()
        t0 = time.perf_counter()
        new_papers = list(add_papers)
        if add_paths:
            with self._timed(report, "read"):
                result = read_corpus(add_paths, max_file_bytes=self.settings.max_input_file_bytes)
            report.problems.extend(result.problems)
            report.duplicates += result.duplicates
            report.references_unparseable += result.unparseable_references
            new_papers.extend(result.papers)
        report.papers_read = len(new_papers)
        if replace and not new_papers:
            # a build replaces the whole graph with what it read: a mistyped path, an
            # empty folder or a file of rejected rows would otherwise delete every paper
            said = "; ".join(str(p) for p in report.problems[:3])
            more = len(report.problems) - 3
            raise InputError(
                "no papers read, so the graph is left as it was (a build replaces the "
                "whole graph with what it reads)"
                + (f": {said}" if said else "")
                + (f" (and {more} more problems)" if more > 0 else "")
            )
        try:
            if new_papers:
                # the slow part (the model) needs no write lock: done first, so a second
                # writer waits for the graph work only; the vectors land in the cache
                self._embed_new(store, report, new_papers, remove, replace)
            for attempt in range(1, LOCK_LOST_TRIES + 1):
                try:
                    with store.writer(on_wait=self.progress.message):
                        self._update(store, report, new_papers, remove, replace)
                        with self._step(report, "stats"):
                            report.stats = store.stats()
                    break
                except WriteLockLostError:
                    # the server ended this writer's lock and another writer took it: what
                    # was computed is stale; read the graph again (nothing of this attempt
                    # was committed, or a cut-off batched write left it marked incomplete)
                    if attempt == LOCK_LOST_TRIES:
                        raise
                    self._state = None
                    self._ahead = None
                    report.nodes_written = report.edges_written = 0
                    report.nodes_deleted = report.edges_deleted = 0
                    self._notice(
                        "another writer took the write lock before this write committed "
                        "(the server ended its lock): reading the graph again and retrying"
                    )
        finally:
            self._ahead = None
            _stop_elsewhere(self.embedder)
        report.stage_seconds["total"] = time.perf_counter() - t0
        return report

    def _embed_new(
        self,
        store: GraphStore,
        report: BuildReport,
        new_papers: Sequence[Paper],
        remove: Sequence[str],
        replace: bool,
    ) -> None:
        """Embed what the cache and the stored vectors lack. If the model is not loaded
        yet, in a second process, while this one reads and resolves the graph ahead."""
        with self._timed(report, "embed"):
            keys = [text_key(embedding_text(p)) for p in new_papers]
            cached = self.embedding_cache.get_many(self.embedder.key, keys)
            if len(cached) == len(set(keys)):
                _stop_elsewhere(self.embedder)
                return
            # stored vectors of unchanged papers seed the cache (a graph moved to a
            # machine without the cache embeds nothing); only the papers read are looked
            # up, not the whole graph
            with self._step(report, "embed.stored"):
                stored = _stored_papers(store, [p.id for p in new_papers])
            todo = self._texts_to_embed(new_papers, stored, cached.keys())
            embedder = self.embedder
            if not (
                self.settings.embed_in_process_ahead
                and self._resolver is None  # one-shot: a long-lived pipeline keeps its model
                and isinstance(embedder, SentenceTransformerEmbedder)
                and not embedder.loaded
                and todo
            ):
                _stop_elsewhere(embedder)
                with self._step(report, "embed.new"):
                    self.embed_all(new_papers, stored, report)
                return
            background = embedder.encode_elsewhere(list(todo.values()))
        try:
            with self._timed(report, "ahead"):
                self.progress.message(
                    f"embedding {len(todo)} texts in a second process; reading the graph "
                    "meanwhile"
                )
                self._read_ahead(store, new_papers, remove, replace)
            with self._timed(report, "embed"), self._step(report, "embed.new"):
                self.progress.start("embed", len(todo))
                vectors, long_texts = background.result(self.progress.advance)
                self.progress.finish()
        finally:
            background.close()
        self.embedding_cache.put_many(embedder.key, dict(zip(todo, vectors, strict=True)))
        report.embedded += len(todo)
        report.long_texts = long_texts

    def _texts_to_embed(
        self, papers: Sequence[Paper], stored: GraphData, cached: Collection[str]
    ) -> dict[str, str]:
        """{text key: text} that :meth:`embed_all` would hand the model, in its order."""
        reusable = stored.embeddings is not None and (
            stored.embedding_model == self.embedder.key
        )
        rows = set(stored.embedding_ids) if reusable else set()
        todo: dict[str, str] = {}
        for p in papers:
            text = embedding_text(p)
            prev = stored.nodes.get(p.id)
            if p.id in rows and isinstance(prev, Paper) and embedding_text(prev) == text:
                continue
            key = text_key(text)
            if key not in cached:
                todo[key] = text
        return dict(sorted(todo.items()))

    def _read_ahead(
        self,
        store: GraphStore,
        new_papers: Sequence[Paper],
        remove: Sequence[str],
        replace: bool,
    ) -> None:
        """Read the graph and compute the model-free part of the write (:meth:`_lexical`:
        extraction, resolution, SHARES_TERM, RELATED_TO) for the corpus it will make,
        without the lock.

        Kept for :meth:`_update` only if the store has not changed by the time it holds
        the lock, and only for the same texts (what it is a function of): otherwise it
        is done again there, so this changes no answer.
        """
        # the graph and its version read together: a commit between two separate reads
        # would pair an old graph with the new version, and it would be kept
        read = getattr(store, "versioned_snapshot", None)
        previous, version = read() if callable(read) else (store.snapshot(), None)
        old = {pid: n for pid, n in previous.nodes.items() if isinstance(n, Paper)}
        if any(r not in old for r in remove):
            return  # _update says which
        # A one-shot write keeps the whole-graph path: the region state (a resolver filled
        # from every paper, the lists, the verification) costs more ahead of the lock than
        # the lexical part it replaces, and the region work under the lock more than the
        # diff it saves (docs/benchmarks.md, "Issue 12, round 5")
        corpus = _next_corpus(old, new_papers, remove, replace, BuildReport())
        papers = sorted(corpus.values(), key=lambda p: p.id)
        # timed into a report of its own: the run's stages count only what it waited for
        full = self._full_links(previous, replace)
        lexical = self._lexical(papers, previous, BuildReport(), full)
        _reuse_stored(lexical, previous)
        # the stored SIMILAR_TO lists and hubs, which need no new vector: read here rather
        # than under the lock (what _similar ranks by is checked there again)
        similar = _stored_similar(
            previous, self.settings,
            PaperVectors(previous.embedding_ids, previous.embeddings
                         if previous.embeddings is not None else np.zeros((0, 0), np.float32),
                         lexical.words),
        ) if not replace and previous.embedding_model == self.embedder.key else None
        self._ahead = _Ahead(version, previous, lexical, similar)

    def _update(
        self,
        store: GraphStore,
        report: BuildReport,
        new_papers: Sequence[Paper],
        remove: Sequence[str],
        replace: bool,
    ) -> None:
        """Read the graph, compute the new one and apply the difference (write lock held)."""
        held = self._state
        if held is not None and not replace and held.state.papers and (
            held.state.version is not None and held.state.version == store.version()
        ) and held.state.model == self.embedder.key and (
            len(held.state.papers) + len(new_papers) - len(remove) >= 2
        ):
            self._ahead = None
            self._region_update(store, report, new_papers, remove)
            return
        self._state = None
        with self._timed(report, "load"):
            ahead = self._ahead
            if ahead is not None and ahead.version is not None and (
                ahead.version == store.version()
            ):
                previous = ahead.previous
                ahead.previous = GraphData()  # not held through the write
            else:
                if ahead is not None:
                    log.info("the graph changed since it was read ahead: reading it again")
                    self._ahead = None  # what was computed from it is stale too
                previous = store.snapshot()
        if previous.incomplete:
            report.completed_cut_off = True
            self._notice(
                "the graph holds part of an earlier write that was cut off: recomputing "
                "every link and vector of this corpus"
            )
        old_papers = {pid: n for pid, n in previous.nodes.items() if isinstance(n, Paper)}
        remove = _found_ids(remove, old_papers)
        missing = [r for r in remove if r not in old_papers]
        if missing:
            raise NotFoundError(f"no paper with id {', '.join(sorted(missing))}")
        corpus = _next_corpus(old_papers, new_papers, remove, replace, report)
        _count_references(report, new_papers, corpus, names_of(corpus.values()))
        full = self._full_links(previous, replace)
        if full and not replace:
            self._notice(
                "the graph's SHARES_TERM links were made with other CITEGRAPH_SHARED_TERM_* "
                "settings: recomputing them for every paper"
            )
        report.added = sorted(set(corpus) - set(old_papers))
        report.removed = sorted(set(old_papers) - set(corpus))
        if self._resolver is None:
            # (what was read ahead, if still current, is used by the pieces: its lexical
            # pieces are handed out and let go one at a time)
            self._write_in_parts(store, report, previous, list(corpus.values()), full)
            self._ahead = None
            return
        graph = self.compute(list(corpus.values()), previous, report, full_links=full)
        with self._step(report, "diff"):
            change = diff(previous, graph)
        report.updated = sum(
            1 for pid in corpus
            if pid in old_papers and _content_changed(old_papers[pid], graph.nodes[pid])
        )
        _count_written(report, change)
        # the old graph is not held through the write (the new one is: the region state
        # is made from what was written)
        del previous, corpus, old_papers
        self._ahead = None
        with self._timed(report, "write"):
            if not change.empty:
                store.apply(change)
        with self._step(report, "state"):
            self._state = self._state_of(graph, store.version(), self._resolver)

    def _write_in_parts(
        self,
        store: GraphStore,
        report: BuildReport,
        previous: GraphData,
        papers: Sequence[Paper],
        full: bool,
    ) -> None:
        """A one-shot write: :meth:`_pieces` diffed and written one at a time, in one
        transaction (GraphStore.write_in_parts). A piece's edges are let go once written,
        before the next is made: a build of 100k papers holds the 3.4M edges made from
        the text or SIMILAR_TO's 1M, not all 4.4M."""
        nodes: Collection[str] | None = None
        # the old edges of types written in several pieces, by source (found once, not
        # once a piece)
        by_source: dict[frozenset[RelType], dict[str, list[EdgeKey]]] = {}
        with store.write_in_parts() as write:
            for piece in self._pieces(papers, previous, report, full):
                with self._step(report, "diff"):
                    replaces = None
                    if piece.sources is not None:
                        if piece.types not in by_source:
                            found: dict[str, list[EdgeKey]] = defaultdict(list)
                            for key in previous.edges:
                                if key[2] in piece.types:
                                    found[key[0]].append(key)
                            by_source[piece.types] = found
                        from_source = by_source[piece.types]
                        replaces = [key for s in sorted(piece.sources)
                                    for key in from_source.get(s, ())]
                    change = diff(previous, piece.graph, types=piece.types, nodes=nodes,
                                  edges=piece.edges, replaces=replaces)
                if nodes is None:  # the first piece: every node
                    made = piece.graph.nodes
                    nodes = made.keys()
                    report.updated = sum(
                        1 for p in papers
                        if isinstance(old := previous.nodes.get(p.id), Paper)
                        and _content_changed(old, made[p.id])
                    )
                    del made
                del piece
                _count_written(report, change)
                if not change.empty:  # nothing changed: no commit (probe 12 F2)
                    with self._timed(report, "write"):
                        write.apply(change)
                del change
                _return_free_memory()
            with self._timed(report, "write"):
                write.commit()


def _count_written(report: BuildReport, change: GraphChange) -> None:
    report.nodes_written += len(change.upsert_nodes)
    report.edges_written += len(change.upsert_edges)
    report.nodes_deleted += len(change.delete_nodes)
    report.edges_deleted += len(change.delete_edges)


def _content_changed(old: GraphNode, new: GraphNode) -> bool:
    """Whether a write's report counts ``old`` -> ``new`` as an update: more changed than
    where the paper was read from. A build of the same papers from a renamed or reordered
    file moves every paper's ``source`` (``path:line``) and rewrites those rows, but
    "updated 2,755" for 5 changed abstracts misled (probe 17 O4)."""
    if old == new:
        return False
    if isinstance(old, Paper) and isinstance(new, Paper) and old.source != new.source:
        return dataclasses.replace(new, source=old.source) != old
    return True


def _stop_elsewhere(embedder: Embedder) -> None:
    """A model loading in a second process for this write (load_elsewhere) is not needed."""
    if isinstance(embedder, SentenceTransformerEmbedder):
        embedder.stop_elsewhere()


@dataclass
class _State:
    """A :class:`graph.region.CorpusState` and the resolver it goes with."""

    state: CorpusState
    resolver: IncrementalResolution


def _count_references(
    report: BuildReport, papers: Sequence[Paper], corpus: Mapping[str, Paper],
    names: Mapping[str, Collection[str]],
) -> None:
    counts = count_references(papers, corpus, names)
    report.references_resolved = counts.resolved
    report.references_outside = counts.outside


def _next_corpus(
    old_papers: Mapping[str, Paper],
    new_papers: Sequence[Paper],
    remove: Sequence[str],
    replace: bool,
    report: BuildReport,
    written: set[str] | None = None,
    holder: MutableMapping[str, str] | None = None,
    odd: Mapping[str, str] | None = None,
) -> dict[str, Paper]:
    """The papers a write leaves: ``old_papers`` with ``new_papers`` merged in (or instead,
    ``replace``) and ``remove`` taken out; ``written`` (when given) gets the ids whose
    paper is not ``old_papers``' own object any more, removed ones aside. ``holder``:
    text_hash -> paper of ``old_papers``, no text held twice (kept by the caller, moved
    here as the corpus moves); else made from the corpus. ``odd``:
    :func:`graph.ids.odd_spellings` of ``old_papers`` (kept by the caller; else made
    when a new id asks)."""
    corpus: dict[str, Paper] = {} if replace else dict(old_papers)
    for pid in remove:
        gone = corpus.pop(pid, None)
        if holder is not None and gone is not None and holder.get(gone.text_hash) == pid:
            del holder[gone.text_hash]
    if replace:
        corpus.update((p.id, p) for p in new_papers)
        if written is not None:
            written.update(corpus)
    else:
        _merge_into(corpus, new_papers, report, written, holder, odd)
    return corpus


def _reuse_stored(lexical: _Lexical, previous: GraphData) -> None:
    """Put the stored objects in place of the computed nodes and edges equal to them (in
    place): :func:`diff` then passes them by identity, and the comparing is done here, while
    the model loads, instead of after it."""
    nodes = lexical.nodes
    for nid, n in list(nodes.items()):
        o = previous.nodes.get(nid)
        if n.kind is not NodeKind.PAPER and o is not None and o is not n and (
            o.kind is n.kind and (o == n or node_to_props(o) == node_to_props(n))
        ):
            nodes[nid] = o
    for piece in lexical.pieces:
        edges = piece.edges
        for i, e in enumerate(edges):
            oe = previous.edges.get(e.key)
            if oe is not None and oe is not e and _same_edge(oe, e):
                edges[i] = oe


def _text_set(papers: Sequence[Paper]) -> tuple[tuple[str, str], ...]:
    """What a resolution is a function of: each paper's id and text (the abstract as
    written: text_hash folds case and punctuation, which extraction reads)."""
    return tuple(sorted((p.id, p.abstract) for p in papers))


EdgeKey = tuple[str, str, RelType]

#: the edge types of a build's first piece (Pipeline._pieces), with every node
MENTION_TYPES = frozenset({RelType.MENTIONS, RelType.USES, RelType.INTRODUCES})


@dataclass
class _Piece:
    """One piece of a graph (Pipeline._pieces): ``edges``, all of the graph's edges of
    ``types``; ``graph``, in the first piece every node, in SIMILAR_TO's the vectors.

    The edges are a list, not a dict by key as in GraphData (~110 bytes an edge less,
    ~140 MB for SHARES_TERM's at 100k papers); each builder makes one edge per key."""

    graph: GraphData
    types: frozenset[RelType]
    edges: list[Edge]
    # the sources of the edges of ``types`` that it holds, where it does not hold them
    # all (SIMILAR_TO's pieces): only the old edges from these are replaced
    sources: frozenset[str] | None = None


#: SIMILAR_TO's edges in one piece (Pipeline._similar_pieces): its sources in blocks
#: of this over k (25,000 at k = 10; ~60 MB of edges)
SIMILAR_PIECE_EDGES = 250_000


@dataclass
class _SimilarLists:
    """SIMILAR_TO computed ahead of the rest of a graph (Pipeline._similar_lists), until
    its pieces are made: each paper's list as rows of three arrays (~21 MB at 100k
    papers, where its Near tuples were ~130 MB), or the stored edges it keeps."""

    ids: list[str]  # every paper, in order: the sources, and what ``cols`` index
    at: np.ndarray  # paper i's list: rows at[i]:at[i + 1] (none where it keeps edges)
    cols: np.ndarray  # int32: the neighbour, an index into ids
    cos: np.ndarray  # float64: its score (to the bit: a float64 round trip is exact)
    words: np.ndarray  # float64: its word overlap
    hubs: Hubs
    kept: dict[str, list[Edge]]  # the stored edges of each list and hub that did not change
    ranked: dict[str, float]  # ranked_by() of the vectors the lists were ranked by
    pools: SimilarPools | None  # a long-lived pipeline's, for its region state
    matrix: np.ndarray | None  # the vectors, where kept (a long-lived pipeline)

    @classmethod
    def of(
        cls,
        ids: list[str],
        lists: Neighbours,
        hubs: Hubs,
        kept: dict[str, list[Edge]],
        ranked: dict[str, float],
        *,
        pools: SimilarPools | None,
        matrix: np.ndarray | None,
    ) -> _SimilarLists:
        index = {pid: i for i, pid in enumerate(ids)}
        made = [[] if pid in kept else lists.get(pid, []) for pid in ids]
        at = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum([len(lst) for lst in made], out=at[1:])
        total = int(at[-1])
        cols = np.fromiter((index[nb.id] for lst in made for nb in lst), np.int32, total)
        cos = np.fromiter((nb.score for lst in made for nb in lst), np.float64, total)
        words = np.fromiter((nb.words for lst in made for nb in lst), np.float64, total)
        return cls(ids, at, cols, cos, words, hubs, kept, ranked, pools, matrix)

    def edges(self, lo: int, hi: int, k: int, floor: float) -> list[Edge]:
        """The SIMILAR_TO edges from papers ``ids[lo:hi]``, source by source."""
        ids, at = self.ids, self.at
        fresh: Neighbours = {}
        for i in range(lo, hi):
            pid = ids[i]
            if pid not in self.kept:
                a, b = int(at[i]), int(at[i + 1])
                fresh[pid] = [Near(ids[c], s, w) for c, s, w in zip(
                    self.cols[a:b].tolist(), self.cos[a:b].tolist(),
                    self.words[a:b].tolist(), strict=True)]
        made = iter(similar_edges(fresh, self.hubs, k, floor, ranked=self.ranked))
        out: list[Edge] = []
        for i in range(lo, hi):
            pid = ids[i]
            if pid in self.kept:
                out.extend(self.kept[pid])
            else:  # similar_edges gives one edge per Near, source by source in id order
                out.extend(next(made) for _ in fresh[pid])
        return out


@dataclass
class _Lexical:
    """What :meth:`Pipeline._lexical_pieces` computes: a function of ``key`` (the texts,
    and ``full_links``) and of the previous graph it was given."""

    key: tuple[tuple[tuple[str, str], ...], bool]
    papers: list[Paper]  # with their labels
    nodes: dict[str, GraphNode]  # every node: the papers, and the terms some paper holds
    # made ahead (Pipeline._lexical): the papers' word vectors (CSR) and its pieces,
    # until they are used
    words: Any
    pieces: list[_Piece]


@dataclass
class _Ahead:
    """What :meth:`Pipeline._read_ahead` found: the graph at ``version``, and what the
    model-free part of the write it predicted computes from it."""

    version: str | None
    previous: GraphData
    lexical: _Lexical | None
    similar: _StoredSimilar | None = None


@dataclass
class _StoredSimilar:
    """The stored SIMILAR_TO state of ``graph`` that :meth:`Pipeline._similar` updates:
    its edges by source, their lists, and every paper's hub (None: recompute them all),
    read for vectors ranked by ``ranked_by``."""

    graph: GraphData
    ranked_by: dict[str, float]
    hubs: Hubs | None
    lists: Neighbours
    by_source: dict[str, list[Edge]]


def _stored_similar(graph: GraphData, settings: Settings, vec: PaperVectors) -> _StoredSimilar:
    """:class:`_StoredSimilar` of ``graph`` (``vec``: what the new lists will rank by)."""
    paper_ids = {pid for pid, n in graph.nodes.items() if n.kind is NodeKind.PAPER}
    stored = [e for e in graph.edges.values() if e.type is RelType.SIMILAR_TO]
    hubs = hubs_from_edges(stored, paper_ids, settings.similar_min_score, settings.similar_k, vec)
    by_source: dict[str, list[Edge]] = defaultdict(list)
    for e in stored:
        by_source[e.source].append(e)
    lists = neighbours_from_edges(stored) if hubs is not None else {}
    return _StoredSimilar(graph, ranked_by(vec), hubs, lists, dict(by_source))


_RECORD_FIELDS = ("text_hash", "title", "venue", "year", "authors", "keywords", "urls",
                  "references", "doi")


def _with_stored_fields(p: Paper, old: Paper) -> Paper:
    """``p`` (an update of the stored ``old``) with ``old``'s value of every field its
    record gave none for: a record with only an id and a new abstract changes the text,
    not the title, venue or year (which an update used to erase in silence)."""
    if p.given is None:
        return p
    kept: dict[str, Any] = {
        f: getattr(old, f) for f in _RECORD_FIELDS if f != "text_hash" and f not in p.given
    }
    if "title" in kept and old.title:
        kept["label"] = old.label
    return dataclasses.replace(p, **kept) if kept else p


def _merge_into(
    corpus: dict[str, Paper], new: Sequence[Paper], report: BuildReport,
    written: set[str] | None = None, holder: MutableMapping[str, str] | None = None,
    odd: Mapping[str, str] | None = None,
) -> None:
    """Add ``new`` to ``corpus`` (in place): updates of stored ids first, then new ids;
    the ids it sets go into ``written`` (when given). ``holder``: text_hash -> the paper
    of ``corpus`` holding it, no text held twice (moved here as the corpus moves); else
    made from ``corpus`` (O(N): ~30 ms at 100k papers). ``odd``: as :func:`_next_corpus`
    takes it.

    The outcome is the same in any order of ``new`` (issue 39, finding 12: A taking B's
    text while B took C's was refused in one order and applied in the other):

    * a record equal to the stored one in every field the input gives (not where it was
      read from) changes nothing: a duplicate;
    * an update applies whatever changed among the fields its record gives (title, year,
      references, the text ...; the others keep their stored values), unless its new
      text is another paper's once every update of the batch is done (a paper that
      moves to a new text frees its old one, for any update of the batch); such an
      update is reported, not applied, and so is every update of one new text;
    * a new id whose text a paper already has (after this batch's updates: a text moved
      to a new id in one add goes in) is a duplicate and said so; of new ids of one
      text, the first by id goes in;
    * an id given twice in one batch: with one text, the first by
      :func:`graph.ingest.collect.record_order` counts and the others are reported;
      with different texts, none counts;
    * an id that is another spelling of a stored one (:func:`graph.ids.id_key`: café NFC
      and NFD, a Kelvin sign and K) is that paper, under the stored spelling.
    """
    ordered = sorted(new, key=record_order)
    texts: dict[str, set[str]] = {}
    for p in ordered:
        texts.setdefault(id_key(p.id), set()).add(p.text_hash)
    seen: set[str] = set()
    updates: list[Paper] = []
    fresh: list[Paper] = []
    for p in ordered:
        key = id_key(p.id)
        if len(texts[key]) > 1:
            report.problems.append(_problem(
                p, f"id {p.id!r} given twice in one input with different texts; none applied"))
            continue
        if key in seen:
            if p.given is not None and "id" not in p.given:
                # the id was made from the text: the record never named it
                said = f"the same text as an earlier record without an id (both {p.id!r})"
            else:
                said = f"id {p.id!r} given twice"
            report.problems.append(_problem(p, f"{said} in one input; the first is kept"))
            continue
        seen.add(key)
        stored = p.id if p.id in corpus else None
        if stored is None:
            # a stored id that is not its own key (NFD, or a Kelvin sign whose NFC is an
            # ASCII "K") is found by key, an ASCII new id's too (made when first asked:
            # O(N), unless the caller keeps it)
            if odd is None:
                odd = odd_spellings(corpus)
            stored = key if key in corpus else odd.get(key)
            if stored is not None and stored not in corpus:
                stored = None
        if stored is not None and stored != p.id:
            p = dataclasses.replace(p, id=stored)
        (updates if stored is not None else fresh).append(p)
    if holder is None:
        holder = {q.text_hash: pid for pid, q in corpus.items()}
        if len(holder) != len(corpus):  # a text twice: the last id in id order holds it
            holder = {q.text_hash: pid for pid, q in sorted(corpus.items())}
    moving: dict[str, Paper] = {}  # id -> its update
    for p in updates:
        old = corpus[p.id]
        p = _with_stored_fields(p, old)
        # the abstract too: one that differs from the stored one only in case or
        # punctuation has its text_hash, but extraction and the model read it (probe 10)
        if old.abstract == p.abstract and all(
            getattr(old, f) == getattr(p, f) for f in _RECORD_FIELDS
        ):
            report.duplicates += 1
            continue
        moving[p.id] = p
    for p, reason in _refused_updates(corpus, holder, moving):
        del moving[p.id]
        report.problems.append(_problem(p, reason))
    for p in moving.values():  # each old text first: a text may pass from one to another
        old_hash = corpus[p.id].text_hash
        if holder.get(old_hash) == p.id:
            del holder[old_hash]
    for p in moving.values():
        corpus[p.id] = p
        holder[p.text_hash] = p.id
        if written is not None:
            written.add(p.id)
    for p in fresh:
        other = holder.get(p.text_hash)
        if other is not None:
            report.duplicates += 1
            report.problems.append(_problem(
                p, f"paper {p.id!r}: same text as paper {other!r}, already in the graph; "
                   "not added"))
            continue
        corpus[p.id] = p
        holder[p.text_hash] = p.id
        if written is not None:
            written.add(p.id)


def _refused_updates(
    corpus: Mapping[str, Paper], holder: Mapping[str, str], moving: Mapping[str, Paper]
) -> list[tuple[Paper, str]]:
    """The updates of ``moving`` (id -> its update) refused for their new text, with why.

    Decided on the texts every paper holds once the batch is done, never one update after
    another: an update is refused when a paper that keeps its stored text holds its new
    one, or when another update takes that text too. A refused update keeps its paper's
    old text, which can refuse another in turn, so this repeats until nothing changes; at
    most len(moving) rounds, each over the updates still on.
    """
    on = dict(moving)
    refused: list[tuple[Paper, str]] = []
    while True:
        taking: dict[str, list[str]] = {}
        for pid, p in on.items():
            taking.setdefault(p.text_hash, []).append(pid)
        out: list[tuple[Paper, str]] = []
        for text, pids in taking.items():
            keeper = holder.get(text)  # the paper holding it, if it keeps it
            if keeper is not None and keeper in on and on[keeper].text_hash != text:
                keeper = None  # moves on to another text: this one is free
            if keeper is not None:
                out += [(on[pid], f"paper {pid!r}: its new text is paper {keeper!r}'s; "
                                  "not applied") for pid in pids if pid != keeper]
            elif len(pids) > 1:
                for pid in pids:
                    others = ", ".join(repr(x) for x in sorted(pids) if x != pid)
                    out.append((on[pid], f"paper {pid!r}: its new text is also the new text "
                                         f"of {others} in this input; not applied"))
        if not out:
            return sorted(refused, key=lambda r: id_key(r[0].id))
        for p, reason in out:
            del on[p.id]
            refused.append((p, reason))


def _problem(p: Paper, reason: str) -> InputProblem:
    path, _, line = (p.source or "input").rpartition(":")
    if path and line.isdigit():
        return InputProblem(path, int(line), reason)
    return InputProblem(p.source or "input", None, reason)


def _stored_papers(store: GraphStore, ids: Sequence[str]) -> GraphData:
    """The stored papers among ``ids`` with their vectors, as a small GraphData."""
    nodes = {pid: n for pid, n in store.get_nodes(sorted(set(ids))).items()
             if isinstance(n, Paper)}
    vectors = store.embeddings(sorted(nodes)) if nodes else {}
    data = GraphData(nodes=dict(nodes), embedding_model=store.embedding_model())
    data.embedding_ids = sorted(vectors)
    data.embeddings = (
        np.asarray([vectors[i] for i in data.embedding_ids], dtype=np.float32)
        if vectors else np.zeros((0, 0), np.float32)
    )
    return data


def diff(
    old: GraphData,
    new: GraphData,
    *,
    types: Collection[RelType] | None = None,
    nodes: Collection[str] | None = None,
    edges: Sequence[Edge] | None = None,
    replaces: Iterable[EdgeKey] | None = None,
) -> GraphChange:
    """The change that turns ``old`` into ``new`` (only what differs).

    For one piece of a graph written in parts (:meth:`Pipeline._pieces`): ``types``, the
    edge types the piece holds (only old edges of those are deleted); ``nodes``, the ids
    of the whole new graph, for a piece that holds no node (none is written or deleted);
    ``edges``, the piece's edges (in place of ``new.edges``); ``replaces``, the keys of
    the old edges it replaces where not every old edge of ``types`` (a piece of one
    type's edges).
    """
    # only what differs is sorted; an object carried over from ``old`` is equal by identity
    upsert_nodes = []
    if nodes is None:
        for nid, n in new.nodes.items():
            o = old.nodes.get(nid)
            # a node read back from the database is an equal object, not the same one: the
            # dataclass comparison answers for most before the props are built
            if o is None or (
                o is not n and (o.kind is not n.kind or (
                    o != n and node_to_props(o) != node_to_props(n)
                ))
            ):
                upsert_nodes.append(n)
        upsert_nodes.sort(key=lambda n: n.id)
        # topics are not the pipeline's (graph.topics writes them): left as they are
        delete_nodes = sorted(
            nid for nid in set(old.nodes) - set(new.nodes)
            if old.nodes[nid].kind is not NodeKind.TOPIC
        )
        gone = set(delete_nodes)
    else:
        delete_nodes = []
        gone = {nid for nid in old.nodes if nid not in nodes}
    made: Collection[Edge] = new.edges.values() if edges is None else edges
    if old.edges:
        upsert_edges = []
        for e in made:
            oe = old.edges.get(e.key)
            if oe is None or (oe is not e and not _same_edge(oe, e)):
                upsert_edges.append(e)
        upsert_edges = in_key_order(upsert_edges)
        made_keys = new.edges.keys() if edges is None else {e.key for e in edges}
        candidates = replaces if replaces is not None else (
            k for k in old.edges
            if (k[2] in types if types is not None else k[2] not in TOPIC_TYPES)
        )
        delete_edges = sorted(
            (k for k in candidates
             if k not in made_keys and k[0] not in gone and k[1] not in gone),
            key=_edge_key,
        )
    else:  # a first build: every edge is new, none goes
        upsert_edges, delete_edges = in_key_order(list(made)), []
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
        # every row (a build): the matrix itself, not a copy of it (150 MB at 100k papers)
        embeddings=(
            None if not rows else new.embeddings if len(rows) == len(new.embedding_ids)
            else new.embeddings[rows]
        ),
        embedding_model=new.embedding_model,
        link_settings=(
            new.link_settings if new.link_settings != old.link_settings else None
        ),
    )


def _same_edge(a: Edge, b: Edge) -> bool:
    """``a == b`` for two edges of one key, without Edge.__eq__'s copies (~100k per add)."""
    if abs(a.weight - b.weight) >= 1e-9:
        return False
    return a.attrs == b.attrs or dict(a.attrs) == dict(b.attrs)


def _edge_key(key: tuple[str, str, RelType]) -> tuple[str, str, str]:
    return (key[0], key[1], key[2].value)


def graphs_equal(a: GraphData, b: GraphData, tol: float = 1e-6) -> list[str]:
    """Differences between two graphs (empty when equal up to ``tol`` on weights).

    Topics (Topic nodes, IN_TOPIC and SUBTOPIC_OF, papers' ``importance``) are left out:
    they are a clustering of the whole corpus that an add joins cheaply and recomputes
    only past a threshold (graph.topics), so a graph grown by adds may hold other topics
    than a fresh build until the next recomputation, by design."""
    a, b = without_topics(a), without_topics(b)
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


def without_topics(g: GraphData) -> GraphData:
    """``g`` less what the topic computation writes (Topic nodes, IN_TOPIC, SUBTOPIC_OF,
    papers' ``importance``): what a graph grown by adds shares with a fresh build."""
    nodes: dict[str, GraphNode] = {
        nid: dataclasses.replace(n, importance=None) if isinstance(n, Paper) else n
        for nid, n in g.nodes.items() if n.kind is not NodeKind.TOPIC
    }
    edges = {k: e for k, e in g.edges.items() if k[2] not in TOPIC_TYPES}
    return dataclasses.replace(g, nodes=nodes, edges=edges)


def _found_ids(
    remove: Sequence[str], papers: Mapping[str, Paper], odd: Mapping[str, str] | None = None
) -> list[str]:
    """Each id to remove as the graph spells it (graph.ids: a trimmed, NFC or NFD
    spelling, or any with the same key, is that paper, for a remove as for a lookup or
    an add), or as given where no paper has it. ``odd``: :func:`graph.ids.odd_spellings`
    of ``papers`` (made here when needed)."""
    out = []
    for r in remove:
        got = stored_spelling(r, papers)
        if got is None:
            if odd is None:
                odd = odd_spellings(papers)
            got = find_id(r, papers, odd)
        out.append(got if got is not None else r)
    return out


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection during a write.

    A full collection walks every object the process holds, and a loaded graph is
    millions of them: on the ICLR 2021 graph the collector took 1-2 s of a 5-10 s add
    (bench/store.py, in git history). A write makes little cyclic garbage; it is collected after.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _return_free_memory() -> None:
    """Give the C heap's free pages back to the system (glibc's ``malloc_trim``; nothing
    elsewhere). Between two pieces of a one-shot write the heap holds the freed rows of
    the piece just written, in chunks too scattered for malloc to reuse or release by
    itself: at 100k papers ~0.4 GB of the peak (docs/benchmarks.md)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        return getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
    except OSError:
        return None


class _Timer:
    def __init__(self, sink: dict[str, float], stage: str) -> None:
        self.sink, self.stage = sink, stage

    def __enter__(self) -> None:
        self.t0 = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        self.sink[self.stage] = self.sink.get(self.stage, 0.0) + time.perf_counter() - self.t0
