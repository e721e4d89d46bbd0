"""What the app holds for its lifetime: the store (re-opened when it comes back),
the embedder (loaded on first semantic query), the pipeline and the write lock.

Built once by :func:`api.app.create_app` from the settings; resolvers reach it
through the request context, never through a module global.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from graph import deadline
from graph.errors import (
    CitegraphError,
    StoreReplacedError,
    StoreUnavailableError,
    WriteLockTimeoutError,
)
from graph.lexical import LexicalIndex
from graph.lookup import ShortNames
from graph.related import TermCounts
from graph.service import Embedding, GraphService
from graph.settings import Settings
from graph.store import GraphStore, open_store

if TYPE_CHECKING:
    from graph.build import BuildReport, Pipeline
    from graph.embed import SentenceTransformerEmbedder
    from graph.model import Paper

log = logging.getLogger(__name__)

T = TypeVar("T")

StoreOpener = Callable[[Settings], GraphStore]

#: what a client is told to wait before trying again after BUSY (HTTP Retry-After)
BUSY_RETRY_AFTER_S = 1


class BusyError(CitegraphError):
    """Every slot for expensive queries stayed taken while this one waited: nothing was
    computed; try again shortly (answered as BUSY, HTTP 503 with Retry-After)."""


def thread_lock_for_progress_bars() -> None:
    """tqdm (run, disabled, by every sentence-transformers encode) takes a multiprocessing
    lock on its first bar: a named semaphore that a uvicorn worker process never frees,
    so every stop of ``serve --workers N`` printed "resource_tracker: There appear to be
    N leaked semaphore objects". No bar here is shared across processes: tqdm's own
    thread lock is enough, and it makes no semaphore."""
    try:
        from tqdm.std import TqdmDefaultWriteLock
    except ImportError:  # no tqdm, no lock
        return
    if not hasattr(TqdmDefaultWriteLock, "mp_lock"):  # tqdm makes it only when absent
        TqdmDefaultWriteLock.mp_lock = None


def limit_blas_threads() -> None:
    """One BLAS thread for this process (see Settings.compute_threads for why)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")


#: objects allocated (less freed) between young collections once the heap is frozen,
#: for 700 by default: a request makes thousands (a neighbourhood's row dicts), so at
#: 700 the young collections ran ~50 times a second under load and kept promoting a
#: request's live objects into the older generations (docs/benchmarks.md, issue 11 round 7)
GC_YOUNG_THRESHOLD = 10_000
#: seconds a result derived from the whole graph is kept on a store with no version
#: (GraphStore.version None), where another process's write cannot be seen coming
UNVERSIONED_CACHE_S = 5.0


def freeze_warm_heap() -> bool:
    """Hand what the warm-up left alive to ``gc.freeze()``, once per process, and make
    the young generation larger; True when this call froze it.

    A warmed server holds ~2 million long-lived objects (the graph mirror, the word
    index, the model, the primed pipeline) that no request frees. The cyclic collector
    rescanned all of them on every full collection: under load on ICLR 2021 each took
    ~2 s with the GIL held, every request waiting on it, and the collector took ~20% of
    the server's CPU (docs/benchmarks.md, issue 11 round 7). Frozen, a full collection
    walks only what was made since. Objects frozen here are still freed when their last
    reference goes (a write replacing graph objects); only a reference cycle among them
    would stay. Garbage is collected first so none is frozen. Once: a later app in the
    same process (tests) leaves the collector as the first one set it.
    """
    if gc.get_freeze_count():
        return False
    t0 = time.perf_counter()
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    log.info("%d objects of the warm heap frozen for the cyclic GC in %.2fs",
             gc.get_freeze_count(), time.perf_counter() - t0)
    return True


def freeze_more(*, collect: bool = True) -> None:
    """Freeze what was made since :func:`freeze_warm_heap` (the model, the primed write
    pipeline). With ``collect``, after one more collection over those objects only."""
    t0 = time.perf_counter()
    before = gc.get_freeze_count()
    found = gc.collect() if collect else 0
    gc.freeze()
    log.info("%d more objects frozen in %.2fs (%d unreachable collected)",
             gc.get_freeze_count() - before, time.perf_counter() - t0, found)


class Readiness(NamedTuple):
    """What /readyz says: ``ok`` once the store answers and the warm-up has read what
    queries need; ``status`` is "ready", "starting" (``warming`` says which step),
    "incomplete" (the graph holds part of a batched write; ``detail`` says what to do) or
    "unavailable" (``store`` says why)."""

    ok: bool
    status: str
    store: str
    warming: str | None = None
    detail: str | None = None


#: what /readyz says of a graph that holds part of a write (GraphStats.incomplete)
INCOMPLETE_DETAIL = (
    "the graph holds part of a write that commits batch by batch: one under way, or one "
    "cut off (killed, the server gone); the next write, or the same command run again, "
    "completes it"
)


class Services:
    """Store, embedder and pipeline for one app; thread-safe."""

    #: seconds between attempts to re-open a store that could not be reached
    RETRY_S = 1.0
    #: seconds between the pings that look for a store seen down (see :meth:`seen_down`)
    DOWN_PING_S = 1.0
    #: seconds a call waiting for an expensive-query slot sleeps between two looks at
    #: its request's deadline
    SLOT_POLL_S = 0.05
    #: writes running or waiting at once; more answer WRITE_BUSY at once, so waiting
    #: writers never fill the thread pool that reads (and /readyz) need
    MAX_PENDING_WRITES = 4

    def __init__(self, settings: Settings, opener: StoreOpener = open_store) -> None:
        self.settings = settings
        self._opener = opener
        self._store: GraphStore | None = None
        self._store_error: str | None = None
        self._last_try = 0.0
        self._lock = threading.Lock()
        self.write_lock = threading.Lock()
        # a write waits for the lock (this server's, then the data folder's) at most as long
        # as a request may take, then answers WRITE_BUSY; once it holds it, it runs to the
        # end and answers its real outcome (api.middleware never cuts a write short)
        self.write_wait_s = min(settings.write_lock_timeout_s, settings.request_timeout_s)
        self._store_settings = settings.model_copy(
            update={"write_lock_timeout_s": self.write_wait_s}
        )
        self._write_slots = threading.BoundedSemaphore(self.MAX_PENDING_WRITES)
        self.embedding = Embedding(settings)
        self.lexical = LexicalIndex()  # related papers' word overlap, kept current on read
        self.lexical.load()  # its imports before any thread imports torch
        #: a server store that other processes (replicas) write: this process keeps no
        #: copy of the graph and reads nothing whole at start (issue 41); every answer is
        #: read from the server, or from a cache keyed by the store's version
        self.shared_store = settings.store == "neo4j"
        # papers' short names, kept current on read: a set of every paper's label
        # prefixes, so not on a shared store (there a name is looked up in the index)
        self.short_names = None if self.shared_store else ShortNames()
        self.term_counts = TermCounts()  # related papers' term df, likewise
        self._pipeline: Pipeline | None = None
        self._closing = threading.Event()  # set by close(): the warm-up stops between steps
        self._warm_thread: threading.Thread | None = None
        # cleared while the warm-up reads the graph and loads the model: /readyz says
        # "starting" until then (set: no warm-up runs, readiness is the store's alone)
        self._reads_warm = threading.Event()
        self._reads_warm.set()
        self._warm_step = ""
        self._cache: dict[str, Any] = {}
        self._cache_version: str | None = None
        self._cache_at = 0.0  # when the cache was last emptied (for stores with no version)
        # a store seen down: since when and why (None: not known to be down); while set,
        # calls fail at once and one thread pings the store until it answers
        self._down_since: float | None = None
        self._down_lock = threading.Lock()
        self._expensive = threading.BoundedSemaphore(settings.max_expensive_queries)

    # ------------------------------------------------------------------ store
    def open(self) -> None:
        """Try to open the store now; failures are remembered, not raised."""
        with self._lock:
            self._try_open()

    def _try_open(self) -> None:
        self._last_try = time.monotonic()
        try:
            self._store = self._opener(self._store_settings)
            self._store_error = None
            log.info("store opened (%s)", self.settings.store)
        except CitegraphError as exc:
            self._store = None
            self._store_error = str(exc)
            log.warning("store unavailable: %s", exc)

    def store(self) -> GraphStore:
        """The open store; re-opens it when it was down. Raises StoreUnavailableError,
        at once while the store is known to be down (:meth:`seen_down`)."""
        since = self._down_since
        if since is not None:
            raise StoreUnavailableError(
                f"store unavailable: seen down {time.monotonic() - since:.0f} s ago, "
                "not answering since"
            )
        store = self._store
        if store is not None:
            return store
        with self._lock:
            if self._store is None and time.monotonic() - self._last_try >= self.RETRY_S:
                self._try_open()
            if self._store is None:
                raise StoreUnavailableError(
                    f"store unavailable: {self._store_error or 'not opened'}"
                )
            return self._store

    def ready(self) -> Readiness:
        """What /readyz says: opens the store if needed and pings it, then asks whether
        the warm-up still reads what queries need (a query sent before then waited on
        the graph's first read beside the model's import: 10 s and more on ICLR 2021)."""
        try:
            store = self.store()
            self.guarded(store.ping)
            # a graph that holds part of a batched write (under way, or cut off) answers
            # from half a graph: "abstract similarity 0.00" (probe 18, finding 8)
            incomplete = self.guarded(store.stats).incomplete
        except CitegraphError as exc:
            return Readiness(False, "unavailable", str(exc))
        if incomplete:
            return Readiness(False, "incomplete", self.settings.store, warming=None,
                             detail=INCOMPLETE_DETAIL)
        if not self._reads_warm.is_set():
            return Readiness(False, "starting", self.settings.store, self._warm_step)
        return Readiness(True, "ready", self.settings.store)

    def guarded(self, fn: Callable[[], T]) -> T:
        """``fn()`` over the open store; a StoreUnavailableError it raises also marks
        the store down (:meth:`seen_down`)."""
        try:
            return fn()
        except StoreReplacedError:
            raise  # the file, not the server: nothing to wait for
        except StoreUnavailableError as exc:
            self.seen_down(exc)
            raise

    def seen_down(self, exc: BaseException) -> None:
        """The store did not answer: until a ping finds it back, every call fails at once
        (:meth:`store`) instead of each waiting on the driver's connection timeout and
        retries (3-7 s each on a stopped Neo4j). One background thread pings it."""
        with self._down_lock:
            if self._down_since is not None or self._closing.is_set():
                return
            self._down_since = time.monotonic()
        log.warning("graph store unavailable (%s); answering STORE_UNAVAILABLE at once "
                    "until a ping every %.0f s finds it back", exc, self.DOWN_PING_S)
        threading.Thread(target=self._ping_until_back, name="citegraph-store-ping",
                         daemon=True).start()

    def _ping_until_back(self) -> None:
        while not self._closing.wait(self.DOWN_PING_S):
            store = self._store
            try:
                if store is not None:
                    store.ping()
            except CitegraphError as exc:
                log.debug("graph store still unavailable: %s", exc)
                continue
            except Exception:  # never leave the store marked down for good
                log.exception("pinging the graph store failed")
                continue
            since = self._down_since
            self._down_since = None
            if since is not None:
                log.info("graph store answers again after %.1f s", time.monotonic() - since)
            return

    @contextmanager
    def expensive_slot(self) -> Iterator[None]:
        """Hold one of ``max_expensive_queries`` slots for an expensive query (related,
        semantic or hybrid search, paths, neighbourhoods), waiting up to
        ``expensive_wait_s`` for one, then BusyError: a crowd of them answers BUSY at once
        instead of each running a core's share so slowly that all of them time out. The
        wait gives up too when its request's deadline is stopped."""
        give_up = time.monotonic() + self.settings.expensive_wait_s
        while not self._expensive.acquire(timeout=self.SLOT_POLL_S):
            deadline.check()
            if time.monotonic() >= give_up:
                s = self.settings
                raise BusyError(
                    f"the server is busy: {s.max_expensive_queries} expensive queries "
                    "(related, semantic or hybrid search, paths, neighborhoods) are running "
                    f"and none ended within {s.expensive_wait_s:g} s "
                    "(CITEGRAPH_MAX_EXPENSIVE_QUERIES); nothing was computed, try again in "
                    f"{BUSY_RETRY_AFTER_S} s"
                )
        try:
            yield
        finally:
            self._expensive.release()

    def reading(self, fn: Callable[[GraphStore], T], *, expensive: bool = False) -> T:
        """``fn(store)`` (in the caller's thread), in an expensive-query slot if asked;
        a store found down is marked so (:meth:`guarded`)."""
        with self.expensive_slot() if expensive else nullcontext():
            store = self.store()  # not opened (yet): re-opened on its own schedule
            return self.guarded(lambda: fn(store))

    def serving(self, fn: Callable[[GraphService], T], *, expensive: bool = False) -> T:
        """``fn(service)``, as :meth:`reading`."""
        with self.expensive_slot() if expensive else nullcontext():
            service = self.service()
            return self.guarded(lambda: fn(service))

    #: seconds close() waits for the warm-up to notice it and stop (a model load under
    #: way cannot be cut short, and a process exiting with a thread inside torch aborts)
    WARM_UP_JOIN_S = 20.0

    def close(self) -> None:
        """Stop the warm-up, then close the store and the pipeline's caches."""
        self._closing.set()
        thread = self._warm_thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(self.WARM_UP_JOIN_S)
        with self._lock:
            if self._store is not None:
                try:
                    self._store.close()
                finally:
                    self._store = None
            if self._pipeline is not None:
                self._pipeline.close()
                self._pipeline = None

    # ------------------------------------------------------------------ model
    def embedder(self) -> SentenceTransformerEmbedder:
        """The embedding model, created once (its weights load on first encode)."""
        return self.embedding.embedder()

    def service(self) -> GraphService:
        """The use cases over the open store (StoreUnavailableError while it is down)."""
        return GraphService(
            self.settings, self.store(), self.embedding, self.lexical, self.short_names,
            self.term_counts,
        )

    def start_warm_up(self) -> None:
        """Run :meth:`warm_up` in a background thread that :meth:`close` stops."""
        self._reads_warm.clear()
        self._warm_thread = threading.Thread(
            target=self.warm_up, name="citegraph-warm-up", daemon=True
        )
        self._warm_thread.start()

    def wait_warm_up(self, timeout: float | None = None) -> bool:
        """Wait until the background warm-up has ended (True) or ``timeout`` passed."""
        thread = self._warm_thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def warm_up(self) -> None:
        """Read the graph and its word indexes, load the model, then prime the write
        pipeline (in the background at startup), so no request pays for any of them.
        /readyz says "starting" until the model is loaded. Stops between steps once
        :meth:`close` began, and stops quietly when the process exits under it."""
        try:
            self._warm_up()
        except Exception:
            if not self._exiting():
                raise
            # an import or a load cut short by the interpreter's exit ("can't register
            # atexit after shutdown", "cannot schedule new futures"): not a broken install
            log.info("warm-up stopped: the process is exiting")
        finally:
            self._reads_warm.set()  # whatever happened, readiness is the store's again

    def _exiting(self) -> bool:
        """close() began, or the main thread has ended (the interpreter is exiting: its
        executors refuse new work and imports fail in ways that look like a broken
        install)."""
        return self._closing.is_set() or not threading.main_thread().is_alive()

    def _step(self, what: str) -> None:
        self._warm_step = what
        log.debug("warm-up: %s", what)

    def _warm_up(self) -> None:
        """The steps of :meth:`warm_up`, in this order: the graph first, alone. Read
        beside the model's import (a few seconds of the GIL), the first read of ICLR
        2021 took 10 s and more instead of 3.6 s, and the query that waited on it timed
        out."""
        t0 = time.perf_counter()
        read = self._warm_reads()
        t_read = time.perf_counter() - t0
        if not read:
            self._reads_warm.set()  # no graph to read: readiness is the store's (/readyz)
        if self._exiting():
            return
        # frozen before the model's import, not after: each full collection the import
        # set off walked the whole graph (the model took 12.7 s instead of ~9 on ICLR)
        froze = read and freeze_warm_heap()
        self._step("loading the embedding model")
        t1 = time.perf_counter()
        try:
            import torch
        except ImportError:  # the embedder says so on first use
            pass
        else:
            torch.set_num_threads(self.settings.compute_threads)
        try:
            self.embedder().encode(["warm up"])
            if self.settings.query_encoder == "onnxruntime" and not self._exiting():
                self.embedder().enable_fast_queries(
                    self.settings.compute_threads, cache=self.settings.model_cache_dir
                )
        except CitegraphError as exc:
            self._failed("embedding model not loaded", exc)
        if self._exiting() or not read:
            return
        t_model = time.perf_counter() - t1
        if froze:
            self._step("freezing the model")
            freeze_more()  # before ready, not after: it holds the GIL for a while
        self._reads_warm.set()
        log.info("ready for queries in %.1fs (graph and word indexes %.1fs, model %.1fs)",
                 time.perf_counter() - t0, t_read, t_model)
        if self._exiting() or self.shared_store:
            # a shared store's pipeline keeps no state between writes (see pipeline())
            return
        try:
            # the corpus resolved once now: the first addPapers then resolves only what
            # it reaches (~5 s less on ICLR 2021)
            t2 = time.perf_counter()
            with self.write_lock:
                self.pipeline().prime(self.store(), stop=self._closing)
            log.info("write pipeline primed in %.1fs", time.perf_counter() - t2)
        except Exception as exc:
            self._failed("warm-up of the write pipeline failed", exc)
            return
        if froze and not self._exiting():
            # no collection first: this one runs while requests are served, and one over
            # the primed pipeline held the GIL 0.6 s on ICLR 2021 and found nothing
            freeze_more(collect=False)

    def _warm_reads(self) -> bool:
        """The graph read into memory, the word indexes built; False when the store
        could not be read."""
        self._step("reading the graph")
        try:
            store = self.store()
            self.lexical.sync(store)
        except CitegraphError as exc:
            self._failed("word index not read", exc)
            return False
        if self._exiting():
            return True
        self._step("reading the keyword index and the extractor's word lists")
        try:
            # the keyword index and the extractor's word lists (related(text:)) load on
            # first use too: a second or more each on ICLR 2021, in every worker
            store.keyword_search("warm up", limit=1)
            if self.short_names is not None:
                self.short_names.may_name(store, "warm up:")
            self.service().text_terms("warm up")
        except Exception as exc:  # only a head start: a request meets the same error
            self._failed("warm-up of the keyword index and extractor failed", exc)
        return True

    def _failed(self, what: str, exc: Exception) -> None:
        """A warm-up step failed: a warning, or one calm line when the process is exiting
        (the step was cut short, nothing is broken)."""
        if self._exiting():
            log.info("warm-up stopped: the process is exiting (%s)", type(exc).__name__)
        else:
            log.warning("%s: %s", what, exc)

    def embed(self, text: str) -> list[float]:
        """One text as a unit vector."""
        return self.embedding.vector(text)

    def pipeline(self) -> Pipeline:
        """The one pipeline (and its caches under settings.cache_dir) for writes.

        On a shared store it is not incremental: it keeps no resolution or region state
        of the corpus between writes (they would grow with the corpus and go stale on
        another replica's write), so each add reads the graph and resolves the corpus
        when it runs, as ``citegraph add`` does."""
        embedder = self.embedder()
        with self._lock:
            if self._pipeline is None:
                from graph.build import Pipeline

                # a server embeds in this process, where its model is (or is being) loaded
                settings = self.settings.model_copy(update={"embed_in_process_ahead": False})
                self._pipeline = Pipeline(settings, embedder=embedder,
                                          incremental=not self.shared_store)
            return self._pipeline

    def write(self, *, papers: Sequence[Paper] = (), remove: Sequence[str] = ()) -> BuildReport:
        """Add or remove papers through the one pipeline, one write at a time.

        WriteLockTimeoutError (nothing written) when :attr:`MAX_PENDING_WRITES` writes are
        already under way, or the lock stays held for :attr:`write_wait_s`.
        """
        if not self._write_slots.acquire(blocking=False):
            raise WriteLockTimeoutError(
                f"{self.MAX_PENDING_WRITES} writes are already running or waiting in this "
                "server; nothing was written, try again when one has answered"
            )
        try:
            if not self.write_lock.acquire(timeout=self.write_wait_s):
                raise WriteLockTimeoutError(
                    "another write in this server (or its start-up warm-up) held the write "
                    f"lock for more than {self.write_wait_s:g} s; nothing was written, try again"
                )
            try:
                return self.service().write(papers=papers, remove=remove, pipeline=self.pipeline())
            except WriteLockTimeoutError as exc:  # another process holds the data folder
                raise WriteLockTimeoutError(self._lock_wait_said(str(exc))) from exc
            finally:
                self.write_lock.release()
                self.wrote()
        finally:
            self._write_slots.release()

    def _lock_wait_said(self, text: str) -> str:
        """The store's lock timeout message, naming the one setting that bounded the wait
        (probe 17 O3: it named both, and with the defaults raising the lock's changed
        nothing)."""
        s = self.settings
        bound = ("CITEGRAPH_REQUEST_TIMEOUT_S" if s.request_timeout_s < s.write_lock_timeout_s
                 else "CITEGRAPH_WRITE_LOCK_TIMEOUT_S")
        text = text.replace(
            "(CITEGRAPH_WRITE_LOCK_TIMEOUT_S)",
            f"(a server write waits at most {self.write_wait_s:g} s: {bound})",
        )
        return text if "nothing was written" in text else f"{text}; nothing was written"

    def wrote(self) -> None:
        """Forget caches derived from the graph after a write."""
        self._cache.clear()

    def derived_cache(self) -> dict[str, Any]:
        """Results derived from the whole graph (PageRank), kept until the graph changes.

        A change by another process (``citegraph add`` beside the server, another
        replica on the same Neo4j) counts too: at once for stores that can tell
        (:meth:`GraphStore.version`: every store here), within :data:`UNVERSIONED_CACHE_S`
        for a store that cannot.
        """
        version = self.store().version()
        now = time.monotonic()
        if version is None:
            # a store that cannot tell: another process may have written at any
            # time, so results are kept a few seconds only (probe 8: PageRank was kept
            # until this server wrote, whatever a CLI add changed meanwhile)
            if now - self._cache_at > UNVERSIONED_CACHE_S:
                self._cache.clear()
                self._cache_at = now
        elif version != self._cache_version:
            self._cache.clear()
            self._cache_at = now
        self._cache_version = version
        return self._cache
