"""An approximate nearest-neighbour index for big graphs: vector search candidates from
HNSW (usearch) instead of a pass over every row.

Below :data:`ANN_FROM` papers every search scores every row (graph.query.vectors: exact,
under ~2 ms at 30k papers); from it on, a server's in-memory store keeps an HNSW index
of the float32 unit rows and asks it for candidates, which are then scored exactly as
before. The answer is then approximate: a paper the index misses is missing from the
answer (recall@10 against the exact pass was measured by bench/vector_search.py, in git
history). The
candidates' scores are still exact, so a hit's score never depends on the index.

The index is built once, in a background thread started by the first vector search
(minutes at 100k papers on one core; searches stay exact meanwhile), and then follows
every change by id: removed and
re-embedded papers leave it, new ones join it, at a cost that follows the change. It
lives in memory only; a new process builds it again.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from graph.query.vectors import UnitMatrix

log = logging.getLogger(__name__)

#: papers from which a server's vector search asks the HNSW index for candidates
ANN_FROM = 50_000
#: candidates asked of the index beyond ``limit`` and the excluded papers: the exact
#: rescoring then orders them, and a few spares make a miss at the edge less likely
ANN_EXTRA = 32
#: the search beam (usearch's ``expansion_search``; its default, 64, gave recall@10
#: 0.97-0.99 on the synthetic corpus, 128 gives >= 0.99 for ~1.5x the time)
EXPANSION_SEARCH = 128
#: rows added per call while building, so that a close or a newer matrix stops a build
#: between chunks (~1 s of work each at 100k papers) instead of after all of it
BUILD_CHUNK = 1_000
#: how long close() waits for a running build to reach the end of its chunk
CLOSE_WAIT_S = 30.0
#: rows compared per step when finding re-embedded papers (a bounded scratch copy)
COMPARE_CHUNK = 10_000


def _new_index(dim: int) -> Any:
    from usearch.index import Index  # imported on first use: only big graphs need it

    return Index(ndim=dim, metric="ip", dtype="f32", expansion_search=EXPANSION_SEARCH)


class ApproximateIndex:
    """The HNSW index of one in-memory store's embeddings, kept in step with them.

    The store calls :meth:`follow` with each new :class:`UnitMatrix` while it holds its
    write lock, and :meth:`ready_for` while it reads; the index is used only for the
    very matrix it holds (``ready_for`` returns None otherwise, and the search is exact).
    """

    def __init__(self, threshold: int | None = None) -> None:
        self.threshold = ANN_FROM if threshold is None else threshold
        self._lock = threading.Lock()
        self._index: Any = None
        self._held: UnitMatrix | None = None  # the matrix the published index holds
        self._key_of: dict[str, int] = {}  # paper id -> its key in the index
        self._id_of: dict[int, str] = {}
        self._next_key = 0
        self._wanted: UnitMatrix | None = None  # the newest matrix (a build catches up to it)
        self._builder: threading.Thread | None = None
        self._failed = False  # a build failed: stay exact, do not try again

    def follow(self, matrix: UnitMatrix) -> None:
        """Keep the index (if built) for ``matrix``, the store's new embeddings."""
        with self._lock:
            self._wanted = matrix
            if len(matrix.ids) < self.threshold or self._failed:
                self._held = None  # exact from now on (cleared first: see ready_for)
                self._index = None
                self._key_of, self._id_of = {}, {}
                return
            if self._index is not None and self._held is not None:
                self._catch_up(self._index, self._held, matrix)
                self._held = matrix

    def ready_for(self, matrix: UnitMatrix) -> Any:
        """The index if it holds exactly ``matrix``, else None (search exactly).

        The first search of a big enough graph starts the build (a process that never
        searches, such as ``citegraph add``, never pays for it). Read without the lock
        (a build publishes from its own thread): ``_index`` is set before ``_held`` and
        ``_held`` cleared before ``_index``, so a reader that sees ``_held is matrix``
        sees that matrix's index.
        """
        index = self._index
        if self._held is matrix and index is not None:
            return index
        if index is None and self._builder is None and len(matrix.ids) >= self.threshold:
            with self._lock:
                if self._wanted is None:  # closed since: the store is in use again
                    self._wanted = matrix
                if self._builder is None and self._index is None and self._still_wanted():
                    self._builder = threading.Thread(
                        target=self._build, args=(self._wanted,), name="citegraph-ann",
                        daemon=True,
                    )
                    # a process must not exit while the build is inside usearch's C++ (it
                    # aborts: "terminate called without an active exception"): atexit
                    # runs before the interpreter stops daemon threads
                    atexit.register(self.close)
                    self._builder.start()
        return None

    def candidates(self, index: Any, unit32: np.ndarray[Any, Any], count: int) -> list[str]:
        """Paper ids of the (about) ``count`` best rows for the float32 unit ``unit32``."""
        id_of = self._id_of  # one dict throughout: close() replaces it, never empties it
        found = index.search(unit32, count, threads=1)  # one query: no pool to wake
        return [id_of[k] for k in map(int, found.keys) if k in id_of]

    def wait(self, timeout_s: float) -> bool:
        """Block until no build runs (tests, benches); True if none runs now."""
        builder = self._builder
        if builder is not None:
            builder.join(timeout_s)
        return self._builder is None or not self._builder.is_alive()

    def close(self) -> None:
        """Stop a running build at the end of its chunk (waiting for it, bounded) and free
        the index (a later search of the same store builds it again)."""
        with self._lock:
            self._wanted = None
            self._held = None
            self._index = None
            self._key_of, self._id_of = {}, {}
            builder = self._builder
        if builder is not None and builder is not threading.current_thread():
            builder.join(CLOSE_WAIT_S)
            if builder.is_alive():
                log.warning("the vector index build did not stop within %.0f s", CLOSE_WAIT_S)

    # ------------------------------------------------------------------ internals
    def _build(self, matrix: UnitMatrix) -> None:
        try:
            index = _new_index(matrix.dim)
            n = len(matrix.ids)
            for start in range(0, n, BUILD_CHUNK):
                if not self._still_wanted():
                    return
                stop = min(n, start + BUILD_CHUNK)
                index.add(np.arange(start, stop, dtype=np.uint64), matrix.unit32[start:stop],
                          threads=1)
            with self._lock:
                wanted = self._wanted
                if wanted is None or not self._still_wanted():
                    return
                self._key_of = {pid: k for k, pid in enumerate(matrix.ids)}
                self._id_of = dict(enumerate(matrix.ids))
                self._next_key = n
                if wanted is not matrix:  # changes made while it was building
                    self._catch_up(index, matrix, wanted)
                self._index = index
                self._held = wanted
                log.info("vector index ready: %d papers", len(wanted.ids))
        except Exception:  # the search stays exact; say why once, and do not try again
            self._failed = True
            log.exception("could not build the vector index; vector search stays exact")
        finally:
            with self._lock:
                self._builder = None
            atexit.unregister(self.close)

    def _still_wanted(self) -> bool:
        wanted = self._wanted
        return not self._failed and wanted is not None and len(wanted.ids) >= self.threshold

    def _catch_up(self, index: Any, old: UnitMatrix, new: UnitMatrix) -> None:
        """Change ``index`` (holding ``old``) to hold ``new``: O(change) index updates,
        plus one bounded pass comparing the rows of the papers both hold."""
        gone = [pid for pid in old.ids if pid not in new.index]
        both = [pid for pid in new.ids if pid in old.index]
        for start in range(0, len(both), COMPARE_CHUNK):
            part = both[start:start + COMPARE_CHUNK]
            a = old.raw[[old.index[p] for p in part]]
            b = new.raw[[new.index[p] for p in part]]
            moved = np.flatnonzero((a != b).any(axis=1))
            gone.extend(part[i] for i in moved.tolist())
        added = [pid for pid in new.ids if pid not in old.index]
        added.extend(pid for pid in gone if pid in new.index)  # re-embedded: a new key
        if gone:
            keys = [self._key_of.pop(pid) for pid in gone]
            for k in keys:
                del self._id_of[k]
            index.remove(np.asarray(keys, dtype=np.uint64))
        if added:
            keys = list(range(self._next_key, self._next_key + len(added)))
            self._next_key += len(added)
            for pid, k in zip(added, keys, strict=True):
                self._key_of[pid] = k
                self._id_of[k] = pid
            rows = new.unit32[[new.index[p] for p in added]]
            index.add(np.asarray(keys, dtype=np.uint64), rows, threads=1)


def ask_count(limit: int, excluded: Sequence[object] | frozenset[str]) -> int:
    """How many candidates to ask the index for: the limit, the excluded, and spares."""
    return limit + len(excluded) + ANN_EXTRA
