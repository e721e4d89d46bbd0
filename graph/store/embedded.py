"""The embedded store: a SQLite database (WAL) that changes in place, read through memory.

The database file (``graph.db`` in the data folder; schema in ``docs/format.md``) is
the truth. Every change is one SQLite transaction that writes only the rows it
touches, each stamped with the commit's sequence number (``seq``); deletions leave a
tombstone with theirs. Reads are answered by an in-memory
:class:`~graph.store.memory.NetworkxStore` mirror, loaded on first use and kept
current from the database: after this process's own commits directly, and after
other processes' commits by reading the rows and tombstones newer than the mirror's
``seq`` (checked at most every ``SYNC_INTERVAL_S`` on a read, through SQLite's
``PRAGMA data_version``).

Guarantees:

* A change is validated (endpoints, embedding ids, storable text) before anything is
  written; a change that fails, at any step, leaves the database and the mirror as
  they were, and says why. The mirror is only changed after the commit, from what
  was committed, and a mirror that cannot follow is reloaded from the database:
  memory and disk never disagree.
* SIGKILL at any moment leaves the previous or the new state (SQLite's atomic commit).
* Writers serialise on an OS file lock (``graph.db.lock``, :meth:`EmbeddedStore.writer`)
  held from reading the graph to committing the change, so two processes never
  compute changes from the same old graph and lose one (the lost-update the old
  whole-file snapshot had). A writer that has to wait is told who holds the lock.
* Counts (``stats``) and node lookups by id are answered by SQL without loading the
  graph, so ``citegraph stats`` stays fast however large the graph grows.
* A ``reads="sql"`` store (a one-shot CLI process) that has no mirror writes without
  one: its snapshot is read from the rows, and a change is checked against the rows it
  names, so a CLI write never builds the networkx graph.

The old single-file format (``graph.citegraph``, a ZIP) is migrated on first open.
"""

from __future__ import annotations

import contextlib
import json
import logging
import operator
import os
import re
import shutil
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from graph.errors import StoreError, StoreReplacedError, StoreWriteError
from graph.model import (
    Edge,
    GraphChange,
    GraphData,
    GraphNode,
    GraphStats,
    NodeKind,
    RelType,
    node_from_props,
)
from graph.query import QueryLayer
from graph.store import fts, walowner
from graph.store.base import Backend, CollectedParts, PartsWrite
from graph.store.filelock import WriterLock
from graph.store.memory import NetworkxStore
from graph.store.rows import (
    NAMES_VERSION,
    MirrorCurrent,
    Rows,
    chunks,
    edge_key,
    embedding_rows,
    loads,
    name_rows,
    normalised,
    prepare,
    stored_attrs,
    vector_rows,
)
from graph.store.sqlreads import SqlBackend

log = logging.getLogger(__name__)

FORMAT = "citegraph-db"
#: 2 added the ``names`` table, 3 the keyword index (``search_names``, ``search_body``,
#: ``search_ids``), 4 the node and edge counts (meta ``counts``): a citegraph that does
#: not keep them must not write here
FORMAT_VERSION = 4
#: meta key of the node counts by kind and edge counts by type, kept by every commit
COUNTS_KEY = "counts"
#: meta key of GraphData.link_settings (what SHARES_TERM was computed with)
LINK_SETTINGS_KEY = "link_settings"
#: a read checks for other processes' commits at most this often (seconds)
SYNC_INTERVAL_S = 0.2
#: a change of at least this many node and edge rows is written with a page cache of
#: BIG_CHANGE_CACHE_KIB (then SQLite's default of 2 MB again): a build, not an add
BIG_CHANGE_ROWS = 20_000
#: edge rows serialised and inserted at a time (a whole graph's rows are never all held)
EDGE_ROWS_PER_PART = 50_000
BIG_CHANGE_CACHE_KIB = 256 * 1024
#: the page cache of the connection that writes (and answers SQL reads) otherwise: an
#: add's few thousand rows land all over the edge B-trees, and with SQLite's default 2 MB
#: the inner pages of a large graph's trees were read again for each of them
CACHE_KIB = 64 * 1024
#: how long a statement waits for another connection's lock (SQLite's busy timeout)
BUSY_TIMEOUT_S = 30.0
#: the write-ahead log kept on disk after a checkpoint empties it: a build's commit grew it
#: to the size of the graph (1.7 GB at 100k papers), and SQLite keeps a WAL file at its
#: largest until the last connection closes (a server's: for good)
WAL_KEEP_BYTES = 64 * 1024 * 1024
#: how long a writer waits for readers before it truncates the WAL after a big commit
#: (then the next write truncates it: journal_size_limit)
WAL_TRUNCATE_WAIT_MS = 200

#: the edge table's secondary indexes: (name, statement)
EDGE_INDEXES = (
    ("edges_target", "CREATE INDEX IF NOT EXISTS edges_target ON edges (target)"),
    ("edges_seq", "CREATE INDEX IF NOT EXISTS edges_seq ON edges (seq)"),
)

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS nodes (id TEXT PRIMARY KEY, kind TEXT NOT NULL,"
    " props TEXT NOT NULL, seq INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS nodes_seq ON nodes (seq)",
    "CREATE INDEX IF NOT EXISTS nodes_kind ON nodes (kind, id)",
    "CREATE TABLE IF NOT EXISTS edges (source TEXT NOT NULL, target TEXT NOT NULL,"
    " type TEXT NOT NULL, weight REAL NOT NULL, attrs TEXT NOT NULL, seq INTEGER NOT NULL,"
    " PRIMARY KEY (source, target, type)) WITHOUT ROWID",
    *(create for _, create in EDGE_INDEXES),
    "CREATE TABLE IF NOT EXISTS embeddings (id TEXT PRIMARY KEY, dim INTEGER NOT NULL,"
    " vector BLOB NOT NULL, seq INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS embeddings_seq ON embeddings (seq)",
    # each write checks that every vector has one dimension: MIN and MAX from this index,
    # not a scan of every vector (~40 ms an add at 100k papers)
    "CREATE INDEX IF NOT EXISTS embeddings_dim ON embeddings (dim)",
    # what: 'node' | 'edge'; key: the id, or [source, target, type] as JSON for an edge (a
    # deleted node takes its edges and embedding with it)
    "CREATE TABLE IF NOT EXISTS tombstones (seq INTEGER NOT NULL, what TEXT NOT NULL,"
    " key TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS tombstones_seq ON tombstones (seq)",
    # name lookups without loading the graph (graph.store.sqlreads): every folded
    # label/name, title and alias of a node; filled on open when NAMES_VERSION moves
    "CREATE TABLE IF NOT EXISTS names (key TEXT NOT NULL, id TEXT NOT NULL,"
    " PRIMARY KEY (key, id)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS names_id ON names (id)",
    # one row per committed change: the history, and the source of every seq
    "CREATE TABLE IF NOT EXISTS commits (seq INTEGER PRIMARY KEY, at REAL NOT NULL,"
    " pid INTEGER NOT NULL, summary TEXT NOT NULL)",
    # the keyword index (graph/store/fts.py): FTS5 over every node's name, title, abstract
    *fts.SCHEMA,
)

#: every table and index SCHEMA makes (a file missing one is set up on open)
_SCHEMA_NAMES = frozenset(
    m.group(1) for stmt in SCHEMA if (m := re.search(r"IF NOT EXISTS (\w+)", stmt))
)


class EmbeddedStore(QueryLayer):
    """GraphStore over a SQLite database file, answered from an in-memory mirror."""

    def __init__(
        self,
        path: Path,
        *,
        legacy_file: Path | None = None,
        lock_timeout_s: float = 600.0,
        reads: Literal["memory", "sql"] = "memory",
    ) -> None:
        """``reads="sql"``: answer queries from the database (graph.store.sqlreads), not
        from a mirror of the whole graph, for one-shot processes such as a CLI query; a
        write or a snapshot still loads the mirror it needs."""
        self.path = path
        self.reads = reads
        self.lock_timeout_s = lock_timeout_s
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot create the data folder {path.parent}: {exc.strerror}"
            ) from exc
        self._writer = WriterLock(path.with_name(path.name + ".lock"))
        if not path.exists() and legacy_file is not None and legacy_file.exists():
            with self._writer.hold(lock_timeout_s):
                if not path.exists():
                    _migrate(legacy_file, path)
        self._conn: sqlite3.Connection | None = self._connect(path)
        self._file = _file_id(path)  # which file the connection holds (see _check_file)
        self._said_replaced = False
        self._db_lock = threading.RLock()
        self._search_lock = threading.Lock()
        self._search_conn: sqlite3.Connection | None = None
        # what keyword search prunes by (graph/store/fts.py), per state of graph.db
        self._term_counts = fts.TermCounts()
        self._mirror: NetworkxStore | None = None
        self._seq = 0  # the commit the mirror reflects
        self._data_version = -1
        self._next_check = 0.0
        self._sql = SqlBackend(lambda: self._db, self._db_lock)

    # ------------------------------------------------------------------ plumbing
    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        walowner.check(path)  # before SQLite reads a WAL left by a file graph.db replaced
        try:
            db = sqlite3.connect(
                str(path), check_same_thread=False, isolation_level=None,
                timeout=BUSY_TIMEOUT_S,
            )
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=OFF")
            db.execute(f"PRAGMA cache_size = {-CACHE_KIB}")
            db.execute(f"PRAGMA journal_size_limit = {WAL_KEEP_BYTES}")
            if EmbeddedStore._ready(db):
                _own_wal(db, path)
                return db
            with db:
                db.execute("BEGIN IMMEDIATE")
                for stmt in SCHEMA:
                    db.execute(stmt)
                _give_id(db)
                row = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
                if row is None:
                    db.executemany(
                        "INSERT INTO meta VALUES (?, ?)",
                        [("format", FORMAT), ("version", str(FORMAT_VERSION))],
                    )
                elif row[0] != FORMAT:
                    raise StoreError(f"{path}: not a citegraph database")
                else:
                    version = db.execute(
                        "SELECT value FROM meta WHERE key = 'version'"
                    ).fetchone()
                    if version is not None and int(version[0]) > FORMAT_VERSION:
                        raise StoreError(
                            f"{path}: written by a newer citegraph (format {version[0]})"
                        )
                    if version is not None and int(version[0]) < FORMAT_VERSION:
                        db.execute(
                            "UPDATE meta SET value = ? WHERE key = 'version'",
                            (str(FORMAT_VERSION),),
                        )
                _fill_names(db)
                EmbeddedStore._index_if_needed(db)
                if db.execute("SELECT 1 FROM meta WHERE key = ?", (COUNTS_KEY,)).fetchone() is None:
                    _store_counts(db, _counted(db))  # a database made before format 4
        except (ValueError, TypeError, KeyError) as exc:  # a node row not written by citegraph
            raise StoreError(f"the graph database {path} has a damaged row: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"cannot open the graph database {path}: {exc}{_cause(path)}"
            ) from exc
        except OSError as exc:
            raise StoreError(
                f"cannot open the graph database {path}: {exc.strerror}{_cause(path)}"
            ) from exc
        _own_wal(db, path)
        return db

    @staticmethod
    def _ready(db: sqlite3.Connection) -> bool:
        """Whether the file opens without a write: every table and index of this format
        there, and the rows the open fills (names, keyword index, counts) current.

        Read in a snapshot, not under the write lock: a writer stalled in its commit (a
        stopped process, a slow disk) made every new process, readers too, wait 30 s and
        fail with "database is locked" (docs/reliability.md, probe 6). A file that is
        not ready (new, older, damaged) takes the write path, which says what is wrong.
        """
        try:
            db.execute("BEGIN")
            try:
                have = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
                if not _SCHEMA_NAMES.issubset(have):
                    return False
                meta = dict(db.execute(
                    "SELECT key, value FROM meta WHERE key IN (?, ?, ?, ?, ?)",
                    ("format", "version", "names", fts.META_KEY, COUNTS_KEY),
                ).fetchall())
            finally:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
        except sqlite3.DatabaseError:
            return False
        return (
            meta.get("format") == FORMAT
            and meta.get("version") == str(FORMAT_VERSION)
            and meta.get("names") == NAMES_VERSION
            and meta.get(fts.META_KEY) == fts.INDEX_VERSION
            and COUNTS_KEY in meta
        )

    @staticmethod
    def _index_if_needed(db: sqlite3.Connection) -> None:
        """Fill the keyword index of a database made before it (or with another version of
        it), in the open's transaction: a crash leaves the file as it was."""
        row = db.execute("SELECT value FROM meta WHERE key = ?", (fts.META_KEY,)).fetchone()
        if row is not None and row[0] == fts.INDEX_VERSION:
            return
        t0 = time.perf_counter()
        nodes = [
            node_from_props(kind, json.loads(props))
            for kind, props in db.execute("SELECT kind, props FROM nodes").fetchall()
        ]
        fts.refill(db, nodes)
        db.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)",
            [(fts.META_KEY, fts.INDEX_VERSION), ("version", str(FORMAT_VERSION))],
        )
        if nodes:
            log.info("indexed %d nodes for keyword search in %.2fs", len(nodes),
                     time.perf_counter() - t0)

    def _keyword_hits(
        self, terms: Sequence[str], kinds: frozenset[NodeKind] | None, limit: int
    ) -> list[tuple[str, float]]:
        """BM25 hits from graph.db's index, on a connection of their own: a search holds
        neither the store's lock nor the mirror's, so it cannot wait on a sync of them."""
        with self._search_lock:
            if self._search_conn is None:
                self._check_file()  # a new file's index would not match the mirror's nodes
                try:
                    self._search_conn = sqlite3.connect(
                        str(self.path), check_same_thread=False, isolation_level=None,
                        timeout=BUSY_TIMEOUT_S,
                    )
                    self._search_conn.execute("PRAGMA query_only = ON")
                    # a new connection counts data_version afresh: forget the old counts
                    self._term_counts = fts.TermCounts()
                    # the index's pages stay in this connection's cache (default 2 MB)
                    self._search_conn.execute("PRAGMA cache_size = -32768")
                except sqlite3.Error as exc:
                    raise StoreError(f"cannot open the graph database {self.path}: {exc}") from exc
            conn = self._search_conn
            # one read transaction: the term counts and the scores are of one state; its
            # snapshot is taken first, then data_version names that state
            try:
                conn.execute("BEGIN")
                try:
                    conn.execute("SELECT 1 FROM search_ids LIMIT 1").fetchall()
                    version = conn.execute("PRAGMA data_version").fetchone()[0]
                    counts = self._term_counts.for_version(version)
                    return fts.search(conn, terms, kinds, limit, counts)
                finally:
                    if conn.in_transaction:
                        conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise StoreError(f"keyword search failed: {exc}") from exc

    @property
    def _db(self) -> sqlite3.Connection:
        """The connection; a closed store opens it again on use (close is not the end)."""
        if self._conn is None:
            self._conn = self._connect(self.path)
            self._data_version = -1
            opened = _file_id(self.path)
            if opened != self._file:  # another file under the same name: read it afresh
                self._file, self._mirror, self._seq = opened, None, 0
        return self._conn

    def _check_file(self) -> None:
        """StoreReplacedError when ``path`` is no longer the file the connection holds.

        A data folder deleted and copied back (``rm -rf data && cp -r backup data``)
        under a running server leaves its connection on the unlinked file: writes would be
        acknowledged and lost, and reads would never see the new file. One stat call.
        """
        if self._conn is None:
            return  # the next use opens whatever file the path names now
        now = _file_id(self.path)
        if now != self._file:
            what = "deleted" if now is None else "replaced by another file"
            message = (
                f"the graph database {self.path} was {what} after this process opened it; "
                "its changes would be lost: restart the server (or run the command again) to "
                "use the file there now"
            )
            if not self._said_replaced:  # once in the log, for the operator; every caller
                self._said_replaced = True  # is told in its answer
                log.error("%s", message)
            raise StoreReplacedError(message)

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._db_lock:
            try:
                return self._db.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"graph database read failed: {exc}") from exc

    def _db_seq(self) -> int:
        row = self._query("SELECT COALESCE(MAX(seq), 0) FROM commits")
        return int(row[0][0])

    def _mem(self) -> NetworkxStore:
        """The mirror, loaded on first use and brought up to date with the database."""
        with self._db_lock:
            if self._mirror is None:
                self._load()
            elif time.monotonic() >= self._next_check:
                self._sync()
            assert self._mirror is not None
            return self._mirror

    def _changed_elsewhere(self) -> bool:
        version = int(self._db.execute("PRAGMA data_version").fetchone()[0])
        changed = version != self._data_version
        self._data_version = version
        return changed

    def _read_all(self) -> tuple[GraphData, int]:
        """The whole graph as stored, and its commit seq (one read transaction)."""
        try:
            self._db.execute("BEGIN")
            try:
                self._changed_elsewhere()
                seq = self._db_seq_nolock()
                data = GraphData(embedding_model=self._meta_nolock("embedding_model"),
                                 link_settings=self._meta_nolock(LINK_SETTINGS_KEY))
                for nid, kind, props in self._db.execute("SELECT id, kind, props FROM nodes"):
                    data.nodes[nid] = node_from_props(kind, loads(props))
                types = {t.value: t for t in RelType}
                for s, t, typ, w, attrs in self._db.execute(
                    "SELECT source, target, type, weight, attrs FROM edges"
                ):
                    data.add_edge(Edge(s, t, types[typ], float(w), stored_attrs(attrs)))
                ids, rows = embedding_rows(
                    self._db.execute("SELECT id, dim, vector FROM embeddings ORDER BY id")
                )
            finally:
                self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the graph database {self.path}: {exc}") from exc
        except (ValueError, TypeError, KeyError) as exc:  # a row not written by citegraph
            raise StoreError(f"the graph database {self.path} has a damaged row: {exc}") from exc
        data.embedding_ids = ids
        data.embeddings = rows
        return data, seq

    def _load(self) -> None:
        """Read the whole graph into a fresh mirror (one read transaction)."""
        t0 = time.perf_counter()
        data, seq = self._read_all()
        mirror = NetworkxStore(keyword_source=self._keyword_hits)
        mirror._replace(data)
        old, self._mirror = self._mirror, mirror
        if old is not None:
            old.close()  # stops its vector index's build, if one runs (graph.query.ann)
        self._seq = seq
        self._next_check = time.monotonic() + SYNC_INTERVAL_S
        log.info(
            "loaded %s (seq %d, %d nodes) in %.2fs",
            self.path, seq, len(data.nodes), time.perf_counter() - t0,
        )

    def _db_seq_nolock(self) -> int:
        return int(self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM commits").fetchone()[0])

    def _meta_nolock(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _sync(self) -> None:
        """Bring the mirror up to date with commits made by other connections."""
        self._next_check = time.monotonic() + SYNC_INTERVAL_S
        if not self._changed_elsewhere():
            return
        assert self._mirror is not None
        try:
            self._db.execute("BEGIN")
            try:
                seq = self._db_seq_nolock()
                if seq == self._seq:
                    return
                change = self._rows_since(self._seq)
            finally:
                self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the graph database {self.path}: {exc}") from exc
        except (ValueError, TypeError, KeyError) as exc:
            raise StoreError(f"the graph database {self.path} has a damaged row: {exc}") from exc
        try:
            self._mirror.apply_trusted(change)
            self._seq = seq
        except Exception:
            log.exception("the in-memory graph could not follow the database; reloading it")
            self._load()

    def _rows_since(self, seq: int) -> GraphChange:
        """Everything committed after ``seq``, as a change for the mirror (in a read txn)."""
        db = self._db
        tomb_nodes: list[str] = []
        tomb_edges: list[tuple[str, str, RelType]] = []
        for what, key in db.execute(
            "SELECT what, key FROM tombstones WHERE seq > ? ORDER BY seq", (seq,)
        ):
            if what == "node":
                tomb_nodes.append(key)
            else:
                s, t, typ = json.loads(key)
                tomb_edges.append((s, t, RelType(typ)))
        nodes = [
            node_from_props(kind, json.loads(props))
            for kind, props in db.execute("SELECT kind, props FROM nodes WHERE seq > ?", (seq,))
        ]
        edges = [
            Edge(s, t, RelType(typ), float(w), json.loads(attrs))
            for s, t, typ, w, attrs in db.execute(
                "SELECT source, target, type, weight, attrs FROM edges WHERE seq > ?", (seq,)
            )
        ]
        ids, rows = embedding_rows(
            db.execute("SELECT id, dim, vector FROM embeddings WHERE seq > ? ORDER BY id", (seq,))
        )
        # a node deleted and created again since ``seq`` has a tombstone and a row: the
        # mirror drops it (and its edges) first, then takes the row and its edges back
        return GraphChange(
            upsert_nodes=tuple(nodes),
            delete_nodes=tuple(dict.fromkeys(tomb_nodes)),
            upsert_edges=tuple(edges),
            delete_edges=tuple(dict.fromkeys(tomb_edges)),
            embedding_ids=tuple(ids),
            embeddings=rows if ids else None,
            embedding_model=self._meta_nolock("embedding_model"),
            link_settings=self._meta_nolock(LINK_SETTINGS_KEY),
        )

    # ------------------------------------------------------------------ lifecycle
    def ping(self) -> None:
        self._query("SELECT 1")
        self._check_file()

    def close(self) -> None:
        with self._db_lock:
            if self._mirror is not None:
                self._mirror.close()
            if self._conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.close()
                self._conn = None
        with self._search_lock:
            if self._search_conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._search_conn.close()
                self._search_conn = None

    def refresh(self) -> None:
        """Bring the in-memory graph up to date with the database now."""
        with self._db_lock:
            if self._mirror is None:
                if self._sql_only:
                    return  # nothing in memory to bring up to date
                self._load()
            else:
                self._next_check = 0.0
                self._sync()

    def writer(
        self, on_wait: Callable[[str], None] | None = None
    ) -> contextlib.AbstractContextManager[None]:
        """Hold the data folder's write lock (across processes) and read fresh state.

        The build pipeline holds it from reading the graph to applying its change.
        """
        return self._writing(on_wait)

    @contextlib.contextmanager
    def _writing(self, on_wait: Callable[[str], None] | None) -> Iterator[None]:
        with self._writer.hold(self.lock_timeout_s, on_wait):
            self._check_file()
            self.refresh()
            yield

    def version(self) -> str:
        """A token that changes whenever any process commits a change to this graph."""
        return f"{self.path}:{self._db_seq()}"

    def history(self, limit: int = 20) -> list[dict[str, Any]]:
        """The latest commits, newest first: seq, time, process and summary."""
        rows = self._query(
            "SELECT seq, at, pid, summary FROM commits ORDER BY seq DESC LIMIT ?", (limit,)
        )
        return [
            {"seq": s, "at": at, "pid": pid, "summary": json.loads(summary)}
            for s, at, pid, summary in rows
        ]

    @property
    def _sql_only(self) -> bool:
        """A ``reads="sql"`` store that has loaded no mirror: writes and snapshots go to
        the database alone (a one-shot CLI write need not build the networkx graph)."""
        return self.reads == "sql" and self._mirror is None

    # ------------------------------------------------------------------ writes
    def apply(self, change: GraphChange) -> None:
        """Apply a diff in one transaction; on any error nothing changes anywhere."""
        if change.empty and not change.embedding_model:
            return
        with self._writer.hold(self.lock_timeout_s):
            self._check_file()
            if self._sql_only:
                with self._db_lock:
                    # the write lock is held: no other writer can move the seq meanwhile
                    rows = prepare(change, _SqlCurrent(self))
                    seq = self._db_seq() + 1
                    self._commit(seq, change, rows)
                    self._after_commit()
                    self._changed_elsewhere()
                return
            mirror = self._mem()
            with self._db_lock:
                if self._db_seq() != self._seq:
                    self._next_check = 0.0
                    self._sync()
                rows = prepare(change, MirrorCurrent(mirror))
                seq = self._seq + 1
                self._commit(seq, change, rows)
                self._after_commit()
                try:
                    mirror.apply_trusted(normalised(change))
                    self._seq = seq
                except Exception:
                    log.exception("the in-memory graph could not take a commit; reloading it")
                    self._load()
                self._changed_elsewhere()  # our own commit is not news

    def _commit(self, seq: int, change: GraphChange, rows: Rows) -> None:
        db = self._db
        big = len(rows.edges) + len(rows.nodes) >= BIG_CHANGE_ROWS
        try:
            if big:
                # a whole graph written at once: SQLite's default 2 MB page cache makes
                # every B-tree insert a page miss (3-5x slower at 500k edges)
                db.execute(f"PRAGMA cache_size = {-BIG_CHANGE_CACHE_KIB}")
            with _write_errors():
                db.execute("BEGIN IMMEDIATE")
                try:
                    _give_id(db)  # a file made before ids (walowner) gets one with its next write
                    self._write_rows(seq, rows, big=big)
                    fts.write(db, change.upsert_nodes, rows.delete_nodes)
                    self._finish(seq, _summary(rows))
                except BaseException:
                    with contextlib.suppress(sqlite3.Error):
                        db.execute("ROLLBACK")
                    raise
        finally:
            if big:
                with contextlib.suppress(sqlite3.Error):
                    db.execute(f"PRAGMA cache_size = {-CACHE_KIB}")
                    db.execute("PRAGMA shrink_memory")

    def _finish(self, seq: int, summary: Counter[str]) -> None:
        """Record the commit and COMMIT the open transaction."""
        db = self._db
        db.execute(
            "INSERT INTO commits VALUES (?, ?, ?, ?)",
            (seq, time.time(), os.getpid(), json.dumps(dict(summary))),
        )
        self._before_commit()
        # the lock file this writer holds is still the one at its path: else another
        # writer may be computing from what it read, and a commit here would mix two
        # writes (graph.store.filelock)
        self._writer.check()
        db.execute("COMMIT")
        _own_wal(db, self.path)
        _shrink_wal(db, self.path)

    @contextlib.contextmanager
    def write_in_parts(self) -> Iterator[PartsWrite]:
        """:meth:`GraphStore.write_in_parts`: one SQLite transaction, each part's rows
        written as it comes (a one-shot write, ``reads="sql"``); with the in-memory
        graph loaded, the parts are kept and applied as one change (it takes a change
        whole)."""
        if not self._sql_only:
            yield CollectedParts(self.apply)
            return
        with self._writer.hold(self.lock_timeout_s), self._db_lock:
            self._check_file()
            write = _SqlParts(self, self._db_seq() + 1)
            try:
                yield write
            finally:
                write.close()

    def _before_commit(self) -> None:
        """A hook between writing the rows and COMMIT (the crash tests kill here)."""

    def _after_commit(self) -> None:
        """A hook just after COMMIT, before memory takes the change (the crash tests kill
        here)."""

    def _write_rows(
        self, seq: int, rows: Rows, *, big: bool = False, in_parts: bool = False
    ) -> _Counts | None:
        """Write ``rows`` in the open transaction, and move the kept counts (meta
        ``counts``) by what they add and remove: found row by row for a change of an add's
        size, counted again whole after a ``big`` one (a build). ``in_parts``: one part
        of a :meth:`write_in_parts`, whose indexes and counts its commit sees to: the
        counts' change is returned (None: ``big``, count them again)."""
        db = self._db
        delta = _Counts() if not big else None
        for s, t, typ in rows.delete_edges:
            gone = db.execute(
                "DELETE FROM edges WHERE source = ? AND target = ? AND type = ?", (s, t, typ)
            ).rowcount
            if delta is not None and gone > 0:
                delta.edges[typ] -= gone
        db.executemany(
            "INSERT INTO tombstones VALUES (?, 'edge', ?)",
            [(seq, edge_key(s, t, typ)) for s, t, typ in rows.delete_edges],
        )
        for part in chunks(rows.delete_nodes):
            marks = ",".join("?" * len(part))
            if delta is not None:
                delta.take(db, f"SELECT type, COUNT(*) FROM edges WHERE source IN ({marks})"  # noqa: S608
                           f" OR target IN ({marks}) GROUP BY type", [*part, *part], "edges")
                delta.take(db, f"SELECT kind, COUNT(*) FROM nodes WHERE id IN ({marks})"  # noqa: S608
                           " GROUP BY kind", part, "nodes")
            db.execute(f"DELETE FROM edges WHERE source IN ({marks})", part)  # noqa: S608 - only placeholders
            db.execute(f"DELETE FROM edges WHERE target IN ({marks})", part)  # noqa: S608
            db.execute(f"DELETE FROM nodes WHERE id IN ({marks})", part)  # noqa: S608
            db.execute(f"DELETE FROM embeddings WHERE id IN ({marks})", part)  # noqa: S608
        db.executemany(
            "INSERT INTO tombstones VALUES (?, 'node', ?)", [(seq, n) for n in rows.delete_nodes]
        )
        # in key order: each insert then lands next to the last one in the B-tree
        rows.nodes.sort(key=_first)
        if delta is not None:
            kinds = {nid: kind for nid, kind, _ in rows.nodes}  # the last row of an id wins
            for part in chunks(sorted(kinds)):
                marks = ",".join("?" * len(part))
                for _, was in db.execute(
                    f"SELECT id, kind FROM nodes WHERE id IN ({marks})", part  # noqa: S608
                ):
                    delta.nodes[was] -= 1
            for kind in kinds.values():
                delta.nodes[kind] += 1
        db.executemany(
            "INSERT OR REPLACE INTO nodes VALUES (?, ?, ?, ?)",
            ((nid, kind, props, seq) for nid, kind, props in rows.nodes),
        )
        stale = [*rows.delete_nodes, *(nid for nid, _, _ in rows.nodes)]
        for part in chunks(stale):
            marks = ",".join("?" * len(part))
            db.execute(f"DELETE FROM names WHERE id IN ({marks})", part)  # noqa: S608
        rows.names.sort()
        db.executemany("INSERT OR IGNORE INTO names VALUES (?, ?)", rows.names)
        # the edges come in key order (Rows.edges): each insert lands next to the last one
        # in the B-tree. More new edge rows than stored ones (a first build): the secondary
        # indexes are made again after the rows rather than kept up to date row by row (2x
        # faster); in the transaction, so a rollback or a crash keeps them as they were
        rebuild = not in_parts and _rebuild_indexes(db, len(rows.edges))
        if rebuild:
            for name, _ in EDGE_INDEXES:
                db.execute(f"DROP INDEX IF EXISTS {name}")
        # checked and serialised a part at a time (an error rolls the whole write back)
        for start in range(0, len(rows.edges), EDGE_ROWS_PER_PART):
            edge_part = rows.edge_rows(start, start + EDGE_ROWS_PER_PART)
            if delta is not None:
                # before the part's inserts; a key twice in the change is new once
                keys = sorted({(s, t, typ) for s, t, typ, _, _ in edge_part})
                delta.edges.update(typ for _, _, typ in keys)
                delta.edges.subtract(_held_edges(db, keys))
            db.executemany(
                "INSERT OR REPLACE INTO edges VALUES (?, ?, ?, ?, ?, ?)",
                ((s, t, typ, w, attrs, seq) for s, t, typ, w, attrs in edge_part),
            )
        if rebuild:
            for _, create in EDGE_INDEXES:
                db.execute(create)
        db.executemany(
            "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)",
            ((pid, dim, blob, seq) for pid, dim, blob in vector_rows(rows)),
        )
        if rows.model is not None:
            db.execute("INSERT OR REPLACE INTO meta VALUES ('embedding_model', ?)", (rows.model,))
        if rows.link_settings is not None:
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                       (LINK_SETTINGS_KEY, rows.link_settings))
        if in_parts:
            return delta
        _store_counts(db, _counted(db) if delta is None else delta.plus(_kept_counts(db)))
        return None

    def clear(self) -> None:
        """Delete every node, edge and embedding (one transaction)."""
        with self._writer.hold(self.lock_timeout_s):
            ids = [r[0] for r in self._query("SELECT id FROM nodes")]
            self.apply(GraphChange(delete_nodes=tuple(ids)))

    # ------------------------------------------------------------------ reads (SQL)
    def get_nodes(self, ids: Sequence[str]) -> dict[str, GraphNode]:
        if self._mirror is not None:
            return self._mem().get_nodes(ids)
        return self._sql.get_nodes(ids)

    def stats(self) -> GraphStats:
        """Node counts by kind, edge counts by type: the mirror's, or the ones every commit
        keeps in the database (a COUNT over 4.4M edges took 2.9 s at 100k papers)."""
        if self._mirror is not None:
            return self._mem().stats()
        with self._db_lock:
            try:
                counts = _kept_counts(self._db)
            except sqlite3.Error as exc:
                raise StoreError(f"graph database read failed: {exc}") from exc
        return GraphStats(nodes=dict(counts.nodes), edges=dict(counts.edges))

    def embedding_model(self) -> str | None:
        rows = self._query("SELECT value FROM meta WHERE key = 'embedding_model'")
        return str(rows[0][0]) if rows else None

    def node_page(self, after: str | None, limit: int) -> list[GraphNode]:
        """From the database, not the mirror: an export reads pages of rows, and a page
        of the mirror would need its ids sorted each time."""
        return self._sql.node_page(after, limit)

    def edge_page(self, after: str | None, limit: int) -> list[Edge]:
        return self._sql.edge_page(after, limit)

    # ------------------------------------------------------------------ reads (mirror)
    def read_backend(self) -> Backend:
        """Queries are answered by the mirror (:mod:`graph.query` over its primitives), or
        by SQL in a ``reads="sql"`` store."""
        if self.reads == "sql":
            return self._sql
        return self._mem()

    def embeddings(self, ids: Sequence[str]) -> dict[str, list[float]]:
        if self.reads == "sql" or self._mirror is None:
            return self._sql.embeddings(ids)
        return self._mem().embeddings(ids)

    def embedding_matrix(self) -> tuple[list[str], np.ndarray]:
        """All embeddings at once (ids, float32 matrix) - the fast path for the pipeline."""
        return self._mem().embedding_matrix()

    def versioned_snapshot(self) -> tuple[GraphData, str]:
        """The whole graph and the :meth:`version` it is at, read together (a writer that
        reads ahead of its lock keeps what it read only if the version is the same then)."""
        if self._sql_only:
            data, seq = self._read_all()
            return data, f"{self.path}:{seq}"
        with self._db_lock:
            mirror = self._mem()
            return mirror.snapshot(), f"{self.path}:{self._seq}"

    def snapshot(self) -> GraphData:
        if self._sql_only:
            # straight from the rows: a one-shot writer reads the graph once and needs no
            # networkx mirror of it (building one was half of the read)
            return self._read_all()[0]
        # up to date with the database now, not within SYNC_INTERVAL_S: whole-graph
        # results are cached under version() (the server's PageRank), which is the
        # database's; a lagging mirror's graph would be kept under the newer version
        self.refresh()
        return self._mem().snapshot()


class _SqlParts:
    """A :meth:`EmbeddedStore.write_in_parts` write: BEGIN on the first part, each
    part's rows written as it comes, COMMIT on :meth:`commit`, ROLLBACK on close
    otherwise. The caller holds the write lock and the connection's lock."""

    def __init__(self, store: EmbeddedStore, seq: int) -> None:
        self._store, self._seq = store, seq
        self._open = self._done = self._wrote = False
        self._indexes_dropped: bool | None = None  # decided by the first part with edges
        self._summary: Counter[str] = Counter()
        # what the parts moved the kept counts by; None: a big part, count them again
        self._counts: _Counts | None = _Counts()

    def apply(self, change: GraphChange) -> None:
        if self._done:
            raise StoreError("this write in parts is committed already")
        if change.empty and not change.embedding_model:
            return
        store = self._store
        db = store._db
        with _write_errors():
            if not self._open:
                # the connection's page cache (CACHE_KIB), not a build's: its dirty pages
                # stay in memory until the commit, beside the parts still to be made; the
                # rows come in key order, so few pages are missed
                db.execute("BEGIN IMMEDIATE")
                self._open = True
                _give_id(db)
            # checked against what the earlier parts wrote (the same transaction)
            rows = prepare(change, _SqlCurrent(store))
            if self._indexes_dropped is None and rows.edges:
                self._indexes_dropped = _rebuild_indexes(db, len(rows.edges))
                if self._indexes_dropped:
                    for name, _ in EDGE_INDEXES:
                        db.execute(f"DROP INDEX IF EXISTS {name}")
            big = len(rows.edges) + len(rows.nodes) >= BIG_CHANGE_ROWS
            moved = store._write_rows(self._seq, rows, big=big, in_parts=True)
            if moved is None or self._counts is None:
                self._counts = None  # counted again on commit
            else:
                self._counts = self._counts.plus(moved)
            fts.write(db, change.upsert_nodes, rows.delete_nodes)
            self._summary.update(_summary(rows))
        self._wrote = True

    def commit(self) -> None:
        if self._done:
            return
        store = self._store
        if not self._wrote:
            self.close()  # only empty parts: nothing to commit
            self._done = True
            return
        db = store._db
        with _write_errors():
            if self._indexes_dropped:
                # with the parts' page cache: an index build's sort holds about as much
                # again as the cache, and at 100k papers 256 MB gave +0.5 GB and no speed
                # (4.4M rows: 5.4 s at 256 MB, 4.6 s at 64 MB)
                for _, create in EDGE_INDEXES:
                    db.execute(create)
            _store_counts(db, _counted(db) if self._counts is None
                          else self._counts.plus(_kept_counts(db)))
            store._finish(self._seq, self._summary)
        self._done = True
        self._open = False
        store._after_commit()
        store._changed_elsewhere()  # our own commit is not news

    def close(self) -> None:
        """Roll back what was not committed; the page cache back to its size."""
        db = self._store._db
        if self._open:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            self._open = False
        with contextlib.suppress(sqlite3.Error):
            db.execute(f"PRAGMA cache_size = {-CACHE_KIB}")
            db.execute("PRAGMA shrink_memory")


@contextlib.contextmanager
def _write_errors() -> Iterator[None]:
    """A failed write said as StoreWriteError (the transaction is rolled back by the
    caller)."""
    try:
        yield
    except sqlite3.Error as exc:
        raise StoreWriteError(f"graph database write failed, nothing was written: {exc}") from exc
    except OSError as exc:
        raise StoreWriteError(
            f"graph database write failed, nothing was written: {exc.strerror}"
        ) from exc


#: edge keys looked up by one statement (3 host parameters each)
_KEYS_PER_LOOKUP = 300


def _held_edges(db: sqlite3.Connection, keys: Sequence[tuple[str, str, str]]) -> Counter[str]:
    """How many of ``keys`` (source, target, type) the edge table holds, by type: a few
    hundred keys a statement, each found through the primary key (one SELECT a key was
    ~2x slower: an add of 10 at 100k papers looks up ~3,600)."""
    held: Counter[str] = Counter()
    for at in range(0, len(keys), _KEYS_PER_LOOKUP):
        part = keys[at : at + _KEYS_PER_LOOKUP]
        values = ",".join(["(?, ?, ?)"] * len(part))
        # CROSS JOIN keeps the listed keys as the outer loop: a primary-key lookup each
        sql = (f"SELECT k.column3, COUNT(*) FROM (VALUES {values}) AS k"  # noqa: S608 - placeholders only
               " CROSS JOIN edges AS e ON e.source = k.column1 AND e.target = k.column2"
               " AND e.type = k.column3 GROUP BY k.column3")
        for typ, n in db.execute(sql, [x for key in part for x in key]):
            held[typ] += n
    return held


def _rebuild_indexes(db: sqlite3.Connection, new_edges: int) -> bool:
    """Whether a write of ``new_edges`` edge rows makes the edge indexes again after its
    rows rather than keeping them up to date row by row (2x faster for a first build):
    more new rows than stored ones. In the transaction, so a rollback or a crash keeps
    them as they were."""
    return new_edges >= BIG_CHANGE_ROWS and new_edges >= int(
        db.execute("SELECT COUNT(*) FROM edges").fetchone()[0]
    )


def _summary(rows: Rows) -> Counter[str]:
    """What a commit's row in ``commits`` says it wrote."""
    return Counter({
        "nodes_upserted": len(rows.nodes),
        "nodes_deleted": len(rows.delete_nodes),
        "edges_upserted": len(rows.edges),
        "edges_deleted": len(rows.delete_edges),
        "embeddings": len(rows.embeddings),
    })


class _SqlCurrent:
    """What graph.store.rows.prepare checks a change against, read from the database:
    only the nodes the change names, and the stored vectors of another dimension."""

    def __init__(self, store: EmbeddedStore) -> None:
        self._store = store

    def node_kinds(self, ids: Collection[str]) -> dict[str, NodeKind]:
        out: dict[str, NodeKind] = {}
        for part in chunks(sorted(ids)):
            marks = ",".join("?" * len(part))
            for nid, kind in self._store._query(
                f"SELECT id, kind FROM nodes WHERE id IN ({marks})", part  # noqa: S608 - only placeholders
            ):
                out[nid] = NodeKind(kind)
        return out

    def vector_dims_other_than(self, dim: int) -> dict[str, int]:
        # each of MIN and MAX alone is one step down the index (both in one SELECT scan)
        lo = self._store._query("SELECT MIN(dim) FROM embeddings")
        hi = self._store._query("SELECT MAX(dim) FROM embeddings")
        if lo[0][0] is None or lo[0][0] == hi[0][0] == dim:
            return {}
        rows = self._store._query("SELECT id, dim FROM embeddings WHERE dim != ?", (dim,))
        return {pid: int(d) for pid, d in rows}



class _Counts:
    """Node counts by kind and edge counts by type (every kind and type present)."""

    def __init__(self, nodes: Mapping[str, int] | None = None,
                 edges: Mapping[str, int] | None = None) -> None:
        self.nodes: Counter[str] = Counter({k.value: 0 for k in NodeKind})
        self.edges: Counter[str] = Counter({t.value: 0 for t in RelType})
        self.nodes.update(nodes or {})
        self.edges.update(edges or {})

    def take(self, db: sqlite3.Connection, sql: str, params: Sequence[str], what: str) -> None:
        """Subtract the (name, count) rows of ``sql``: what a delete is about to remove."""
        into = self.nodes if what == "nodes" else self.edges
        for name, n in db.execute(sql, params):
            into[name] -= int(n)

    def plus(self, other: _Counts) -> _Counts:
        return _Counts({k: other.nodes[k] + self.nodes[k] for k in {*other.nodes, *self.nodes}},
                       {k: other.edges[k] + self.edges[k] for k in {*other.edges, *self.edges}})


def _counted(db: sqlite3.Connection) -> _Counts:
    """The counts from the tables themselves (O(rows): a build, an old database)."""
    return _Counts(
        {kind: int(n) for kind, n in db.execute("SELECT kind, COUNT(*) FROM nodes GROUP BY kind")},
        {typ: int(n) for typ, n in db.execute("SELECT type, COUNT(*) FROM edges GROUP BY type")},
    )


def _kept_counts(db: sqlite3.Connection) -> _Counts:
    """The counts meta ``counts`` keeps (counted from the tables when it has none)."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (COUNTS_KEY,)).fetchone()
    if row is None:
        return _counted(db)
    got = json.loads(row[0])
    return _Counts(got["nodes"], got["edges"])


def _store_counts(db: sqlite3.Connection, counts: _Counts) -> None:
    value = json.dumps({"nodes": dict(sorted(counts.nodes.items())),
                        "edges": dict(sorted(counts.edges.items()))})
    db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (COUNTS_KEY, value))


_first = operator.itemgetter(0)


def _give_id(db: sqlite3.Connection) -> None:
    """Give the file its random id (graph.store.walowner), in the open write transaction."""
    if int(db.execute("PRAGMA user_version").fetchone()[0]) == 0:
        db.execute(f"PRAGMA user_version = {walowner.new_id():d}")


def _shrink_wal(db: sqlite3.Connection, path: Path) -> None:
    """After a commit that left the WAL larger than :data:`WAL_KEEP_BYTES` (a build's),
    checkpoint it and cut it to nothing, waiting at most :data:`WAL_TRUNCATE_WAIT_MS` for
    readers (a server's); if they hold on, the next write cuts it to the limit."""
    try:
        if Path(f"{path}-wal").stat().st_size <= WAL_KEEP_BYTES:
            return
    except OSError:
        return
    with contextlib.suppress(sqlite3.Error):
        db.execute(f"PRAGMA busy_timeout = {WAL_TRUNCATE_WAIT_MS}")
        try:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        finally:
            db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")


def _own_wal(db: sqlite3.Connection, path: Path) -> None:
    """Record that the WAL beside ``path`` is this file's (graph.store.walowner)."""
    with contextlib.suppress(sqlite3.Error):
        walowner.record(path, int(db.execute("PRAGMA user_version").fetchone()[0]))


def _file_id(path: Path) -> tuple[int, int] | None:
    """(device, inode) of ``path``, or None when nothing is there."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _cause(path: Path) -> str:
    """What SQLite's "unable to open database file" or "disk I/O error" on open most likely
    means, when the folder says it: an open writes (the WAL index, a new file's tables)."""
    folder = path.parent
    try:
        if not os.access(folder, os.W_OK):
            return f" ({folder} cannot be written: a read-only filesystem or folder)"
        if shutil.disk_usage(folder).free == 0:
            return f" (the disk holding {folder} is full)"
    except OSError:
        pass
    return ""


def _fill_names(db: sqlite3.Connection) -> None:
    """(Re)build the ``names`` table when it was made by other rules (or not at all)."""
    row = db.execute("SELECT value FROM meta WHERE key = 'names'").fetchone()
    if row is not None and row[0] == NAMES_VERSION:
        return
    db.execute("DELETE FROM names")
    nodes = []
    for kind, props in db.execute("SELECT kind, props FROM nodes"):
        try:
            nodes.append(node_from_props(kind, json.loads(props)))
        except (ValueError, TypeError, KeyError):
            continue  # a damaged row is reported when it is read, not here
    db.executemany("INSERT OR IGNORE INTO names VALUES (?, ?)", name_rows(nodes))
    db.execute("INSERT OR REPLACE INTO meta VALUES ('names', ?)", (NAMES_VERSION,))


def _migrate(legacy: Path, target: Path) -> None:
    """Convert an old ``graph.citegraph`` ZIP into a database at ``target`` (atomically)."""
    log.warning("migrating %s to %s", legacy, target)
    data = NetworkxStore(legacy).snapshot()
    tmp = target.with_name(f".{target.name}.{os.getpid()}.migrating")
    for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm"), walowner.owner_path(tmp)):
        leftover.unlink(missing_ok=True)
    store = EmbeddedStore(tmp)
    try:
        store.apply(
            GraphChange(
                upsert_nodes=tuple(data.nodes.values()),
                upsert_edges=tuple(data.edges.values()),
                embedding_ids=tuple(data.embedding_ids),
                embeddings=data.embeddings if data.embedding_ids else None,
                embedding_model=data.embedding_model,
                link_settings=data.link_settings,
            )
        )
        store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        store.close()
    Path(f"{tmp}-wal").unlink(missing_ok=True)
    Path(f"{tmp}-shm").unlink(missing_ok=True)
    tmp.with_name(tmp.name + ".lock").unlink(missing_ok=True)
    walowner.owner_path(tmp).unlink(missing_ok=True)
    tmp.replace(target)
