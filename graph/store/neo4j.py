"""The Neo4j store: :class:`~graph.store.base.GraphStore` over Bolt with the official driver.

Runs against Neo4j 5 (single server, cluster, Aura); the test suite runs it on a real
Neo4j 5.26 (scripts/neo4j.sh). All Cypher lives in :mod:`graph.store.cypher`.

Answers match the embedded store because this module only implements the
:class:`~graph.store.base.Backend` primitives, one Cypher round trip each (a whole
neighbourhood ring or path-search layer per query, ``$ids`` as a list): the server finds
(neighbours, ring weights, keyword candidates), :mod:`graph.query` ranks.

Writes: ``apply`` runs every statement of a change as ``UNWIND $rows`` batches of
``batch_size`` rows inside **one** managed transaction, so a change is all-or-nothing
and the driver retries it whole on transient errors (lost connection, leader switch).
Changes larger than ``max_tx_rows`` rows (a first bulk load) commit batch by batch
instead; every statement is an idempotent MERGE/DELETE, so a failed load leaves each
batch either fully written or not at all, and re-running the same change converges.

Property values: see :mod:`graph.store.neo4j_values` (exact round trips).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, TypeVar

import neo4j
import neo4j.exceptions as nex
import numpy as np

from graph import deadline
from graph.errors import (
    CitegraphError,
    InvalidArgumentError,
    QueryCancelledError,
    StoreError,
    StoreUnavailableError,
    WriteLockLostError,
    WriteLockTimeoutError,
)
from graph.ids import odd_spellings
from graph.model import (
    UNDIRECTED,
    Edge,
    GraphChange,
    GraphData,
    GraphNode,
    GraphStats,
    NodeKind,
    Overlap,
    RelType,
)
from graph.query import QueryLayer
from graph.query.filters import CountBy, GroupCount, PaperFilter, PaperSort
from graph.query.traverse import RingWalk, rank_reach
from graph.query.vectors import cosine, unit_rows
from graph.settings import Settings
from graph.store import cypher
from graph.store.base import Backend, CollectedParts, PartsWrite
from graph.store.cypher import VECTOR_INDEX
from graph.store.neo4j_values import (
    NAME_KEY_MAX_BYTES,
    NAME_KEYS,
    SEARCH_PROPS,
    decode_edge,
    decode_node,
    edge_props,
    name_keys,
    node_props,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

#: ConstraintValidationFailed from concurrent MERGEs on one key: retried this often.
CONSTRAINT_RETRIES = 3
#: a writer that has not got the lock after this many seconds says it is waiting
WRITER_WAIT_SAY_S = 1.0
#: a neighbourhood's walk brings the nodes and edges of at most 2 x limit + this many
#: candidates (more: weights tied at a cut through a hub; the kept ones are read apart)
WALK_HOLD_EXTRA = 100
#: how long a read that failed retryably is sent again (seconds)
READ_RETRY_S = 3.0
#: how long opening the store waits for a new keyword index to fill (seconds)
TEXT_INDEX_WAIT_S = 300

_UNAVAILABLE = (nex.ServiceUnavailable, nex.SessionExpired, nex.AuthError, nex.ConfigurationError)


def _one_line(exc: BaseException) -> str:
    text = re.sub(r"\s+", " ", str(exc)).strip()
    return text or type(exc).__name__


def open_driver(settings: Settings, *, connection_timeout: float = 5.0) -> neo4j.Driver:
    """Create the one driver an entry point passes down; fail with one clear line.

    Raises :class:`StoreUnavailableError` when the server is down, the URI is malformed
    or the credentials are refused.
    """
    uri = settings.neo4j_uri
    try:
        driver = neo4j.GraphDatabase.driver(
            uri,
            auth=(settings.neo4j_user, settings.neo4j_password.get_secret_value()),
            connection_timeout=connection_timeout,
            # below the API's request limit, so a dead server answers "unavailable",
            # not a timeout; long enough to ride out a cluster leader election
            max_transaction_retry_time=settings.neo4j_max_retry_s,
            # the server's hints ("property key does not exist" on an empty graph) would
            # reach the CLI's stderr as driver warnings
            notifications_min_severity=neo4j.NotificationMinimumSeverity.OFF,
        )
    except (ValueError, nex.ConfigurationError) as exc:
        raise StoreUnavailableError(f"bad NEO4J_URI {uri!r}: {_one_line(exc)}") from exc
    try:
        driver.verify_connectivity()
    except nex.AuthError as exc:
        driver.close()
        raise StoreUnavailableError(
            f"Neo4j at {uri} refused the credentials of user {settings.neo4j_user!r} "
            "(check NEO4J_USER / NEO4J_PASSWORD)"
        ) from exc
    except (nex.Neo4jError, nex.DriverError, OSError) as exc:
        driver.close()
        raise StoreUnavailableError(
            f"Neo4j at {uri} is unreachable: {_one_line(exc)}"
        ) from exc
    return driver


def store_from_settings(
    settings: Settings, driver: neo4j.Driver, *, owns_driver: bool = False
) -> Neo4jStore:
    """A :class:`Neo4jStore` for ``settings`` on an already opened driver."""
    return Neo4jStore(
        driver,
        settings.neo4j_database,
        batch_size=settings.neo4j_batch_size,
        max_tx_rows=settings.neo4j_max_tx_rows,
        owns_driver=owns_driver,
        lock_timeout_s=settings.write_lock_timeout_s,
    )


def _normalised(source: str, target: str, t: RelType) -> tuple[str, str]:
    return (min(source, target), max(source, target)) if t in UNDIRECTED else (source, target)


def _check_indexed(kind: NodeKind, node_id: str, props: dict[str, Any]) -> None:
    """Refuse a value that a range index cannot hold, before anything is written: the
    server would refuse it mid-write ("Property value is too large to index"), and a
    batched write would stop half done (probe 18, finding 2: one 9,000-character title)."""
    for prop in cypher.INDEXED_PROPS[kind]:
        value = node_id if prop == "id" else props.get(prop)
        if isinstance(value, str) and len(value) * 4 > cypher.INDEX_VALUE_MAX_BYTES and (
            size := len(value.encode("utf-8", "surrogatepass"))
        ) > cypher.INDEX_VALUE_MAX_BYTES:
            raise InvalidArgumentError(
                "papers",
                f"the {kind.value.lower()} {node_id[:80]!r} has a {prop} of {size:,} bytes; "
                f"Neo4j indexes at most {cypher.INDEX_VALUE_MAX_BYTES:,} (nothing was written)",
            )


def _batches(rows: Sequence[T], size: int) -> Iterable[Sequence[T]]:
    for i in range(0, len(rows), size):
        yield rows[i : i + size]


# --------------------------------------------------------------------------- the store


class Neo4jStore(QueryLayer):
    """:class:`~graph.store.base.GraphStore` on a Neo4j 5 server.

    ``driver`` is created once by the entry point (:func:`open_driver`) and passed in;
    :meth:`close` closes it only when ``owns_driver`` is set.
    """

    def __init__(
        self,
        driver: neo4j.Driver,
        database: str,
        *,
        batch_size: int = 1000,
        max_tx_rows: int = 10_000,
        exact_vector_max: int = 0,
        vector_index_wait_s: float = 5.0,
        setup_schema: bool = True,
        owns_driver: bool = False,
        lock_timeout_s: float = 600.0,
    ) -> None:
        if batch_size < 1:
            raise InvalidArgumentError("batch_size", "must be at least 1")
        self._driver = driver
        self._database = database
        self.batch_size = batch_size
        #: changes with more rows than this commit per batch instead of in one transaction
        self.max_tx_rows = max_tx_rows
        #: up to this many embedded papers vector_search scans exactly; above, the vector
        #: index, over-fetched and rescored. 0 (the default): the index at every size, an
        #: exact scan only while it populates. On ICLR 2021 (2,966 papers) the index path's
        #: recall@10 against the exact scan was 0.999 (300 papers as queries), and a search
        #: took 67 ms against the scan's 1,615 ms on a loaded 2-core machine (issue 41).
        self.exact_vector_max = exact_vector_max
        #: how long a vector search waits for a populating index before scanning exactly
        self.vector_index_wait_s = vector_index_wait_s
        #: the vector index was seen ONLINE (forgotten when the server goes away)
        self._vector_online = False
        self._owns_driver = owns_driver
        self._write_lock = threading.RLock()
        #: how long a writer waits for another process's write (then WriteLockTimeoutError)
        self.lock_timeout_s = lock_timeout_s
        #: a snapshot found the graph part-written: the next change, computed whole, clears it
        self._seen_incomplete = False
        self._writer_depth = 0  # writer() nesting in the thread that holds _write_lock
        #: this process's token in the writers' fence while it holds the write lock
        self._fence_token: str | None = None
        if setup_schema:
            self.ensure_schema()

    # ---- plumbing

    def _call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` mapping driver errors onto the citegraph hierarchy."""
        try:
            return fn()
        except CitegraphError:
            raise
        except _UNAVAILABLE as exc:
            # a restarted server rebuilds its vector index: look at it again next time
            self._vector_online = False
            raise StoreUnavailableError(f"graph server unavailable: {_one_line(exc)}") from exc
        except (nex.Neo4jError, nex.DriverError) as exc:
            if "TransactionTimedOut" in str(getattr(exc, "code", "")):
                # the deadline of the request it served (graph.deadline): the server
                # stopped the query; the request has been answered already
                raise QueryCancelledError(
                    "the query was stopped: its request ran past the time limit"
                ) from exc
            if "MemoryPoolOutOfMemoryError" in str(getattr(exc, "code", "")):
                raise StoreError(
                    "the change is too large for the server's transaction memory "
                    "(dbms.memory.transaction.total.max): lower CITEGRAPH_NEO4J_MAX_TX_ROWS "
                    f"so that it commits batch by batch ({_one_line(exc)})"
                ) from exc
            raise StoreError(f"graph query failed: {_one_line(exc)}") from exc

    def _read(self, query: str, **params: Any) -> list[neo4j.Record]:
        """One read round trip: an auto-commit query in a read session, every row in one
        fetch. Under a deadline (graph.deadline, an API request), it is checked first and
        bounds the query, so the server stops it when the request is given up, not only
        this process.

        Not ``driver.execute_query``: that wraps each read in an explicit transaction
        (BEGIN, RUN + PULL, COMMIT: two network round trips and ~3x the driver's CPU,
        measured in docs/neo4j.md). A read that fails retryably (a cluster member gone, a
        leader switch) is sent again, as the managed transaction would, for up to
        :data:`READ_RETRY_S`.
        """
        deadline.check()
        left = deadline.remaining()
        # the driver's own type: a str, or a Query carrying the query's timeout
        # (the server rounds it up to whole milliseconds; 0 would mean "none")
        text: Any = query if left is None else neo4j.Query(query, timeout=max(left, 0.001))

        def run() -> list[neo4j.Record]:
            started = time.monotonic()
            while True:
                try:
                    with self._driver.session(
                        database=self._database,
                        default_access_mode=neo4j.READ_ACCESS,
                        fetch_size=-1,
                        # the writes' bookmarks (_write_session): read your own writes
                        bookmark_manager=self._driver.execute_query_bookmark_manager,
                    ) as session:
                        return list(session.run(text, params))
                except (nex.Neo4jError, nex.DriverError) as exc:
                    if not exc.is_retryable() or time.monotonic() - started > READ_RETRY_S:
                        raise
                    deadline.check()
                    log.info("read failed (%s); sending it again", _one_line(exc))
                    time.sleep(0.1)

        return self._call(run)

    def _write_tx(self, work: Callable[[neo4j.ManagedTransaction], T]) -> T:
        """One managed write transaction; transient errors are retried by the driver,
        constraint races (two writers MERGE one new key) here. Under :meth:`writer`, the
        transaction first checks the writers' fence (:data:`cypher.WRITER_FENCE_CHECK`)
        and is rolled back with :class:`WriteLockLostError` if another writer took the
        lock since."""
        token = self._fence_token

        def fenced(tx: neo4j.ManagedTransaction) -> T:
            if token is not None:
                record = tx.run(cypher.WRITER_FENCE_CHECK, token=token).single()
                holder = record["holder"] if record is not None else None
                if holder != token:
                    raise WriteLockLostError(
                        "this write lost the Neo4j write lock before it committed: the "
                        "server ended the lock's transaction (db.transaction.timeout, "
                        "TERMINATE TRANSACTIONS or a dropped connection) and another writer "
                        "has taken the lock since; this transaction was rolled back"
                    )
            return work(tx)

        def run() -> T:
            for attempt in range(CONSTRAINT_RETRIES):
                try:
                    with self._write_session() as session:
                        return session.execute_write(fenced)
                except nex.ConstraintError:
                    if attempt == CONSTRAINT_RETRIES - 1:
                        raise
                    log.info("constraint race on MERGE; retrying (attempt %d)", attempt + 2)
                    time.sleep(0.05 * (attempt + 1))
            raise AssertionError("unreachable")

        return self._call(run)

    def _write_session(self) -> neo4j.Session:
        """A session for write transactions: routed to the writer (a cluster's leader),
        and sharing ``execute_query``'s bookmark manager with the reads, so that a read
        after this process's write (or after it took the writers' lock, whose fence is a
        write) waits until the member it is routed to has applied that write: this
        process reads its own writes, and a writer reads the graph the previous writer
        left, on a cluster too (causal consistency)."""
        return self._driver.session(
            database=self._database,
            default_access_mode=neo4j.WRITE_ACCESS,
            bookmark_manager=self._driver.execute_query_bookmark_manager,
        )

    def _write_query(self, query: str, **params: Any) -> list[neo4j.Record]:
        """One auto-routed write round trip (schema statements, and the admin commands
        that must reach the member running the writers' lock: the writer)."""
        records, _, _ = self._driver.execute_query(
            query, params, database_=self._database, routing_=neo4j.RoutingControl.WRITE
        )
        return list(records)

    # ---- lifecycle

    def ensure_schema(self) -> None:
        """Create constraints and lookup indexes if missing (idempotent)."""

        had_names = any(r["name"] == cypher.NAME_INDEX
                        for r in self._read(cypher.VECTOR_INDEXES, name=cypher.NAME_INDEX))

        def run() -> None:
            for stmt in cypher.schema_statements():
                self._write_query(stmt)
            # a new fulltext index over existing nodes fills in the background: wait for
            # it here, on the member that created it, so that keyword search and lookups
            # answer from a complete index
            for index in (cypher.TEXT_INDEX, cypher.NAME_INDEX):
                self._write_query(cypher.AWAIT_INDEX, name=index, timeout=TEXT_INDEX_WAIT_S)

        self._call(run)
        if not had_names:
            self._fill_name_keys()
        if any(r["name"] == cypher.OLD_TEXT_INDEX
               for r in self._read(cypher.VECTOR_INDEXES, name=cypher.OLD_TEXT_INDEX)):
            self._fill_search_props()
            self._schema_write(cypher.drop_index(cypher.OLD_TEXT_INDEX))
        meta = self._read(cypher.GET_META)
        if meta and meta[0]["dim"]:
            self._ensure_vector_index(int(meta[0]["dim"]))

    def _fill_name_keys(self) -> None:
        """Give the nodes of a graph written by an older release their name keys (once,
        when the name index is new; a page at a time, idempotent if cut off)."""
        filled = 0
        for kind in NodeKind:
            while True:
                rows = self._read(cypher.nameless_nodes(kind), limit=self.batch_size)
                if not rows:
                    break
                props = [{"id": node.id, "props": {NAME_KEYS: name_keys(node)}}
                         for node in (decode_node(r["n_props"], r["n_labels"]) for r in rows)]
                self._write_tx(lambda tx, props=props, kind=kind: tx.run(  # type: ignore[misc]
                    cypher.set_search_props(kind), rows=props).consume())
                filled += len(rows)
        if filled:
            self._call(lambda: self._driver.execute_query(
                cypher.AWAIT_INDEX, {"name": cypher.NAME_INDEX, "timeout": TEXT_INDEX_WAIT_S},
                database_=self._database))
            log.warning("name index: gave %d nodes their lookup keys (once, for a graph of "
                        "an older release)", filled)

    def _fill_search_props(self) -> None:
        """Give the nodes of a graph written by an older release the search properties
        the fulltext index now reads (once, a page at a time; idempotent if cut off)."""
        filled = 0
        for kind in NodeKind:
            while True:
                rows = self._read(cypher.unsearchable_nodes(kind), limit=self.batch_size)
                if not rows:
                    break
                props = []
                for r in rows:
                    node = decode_node(r["n_props"], r["n_labels"])
                    made = node_props(node)
                    props.append({"id": node.id, "props": {k: made[k] for k in SEARCH_PROPS}})
                self._write_tx(lambda tx, props=props, kind=kind: tx.run(  # type: ignore[misc]
                    cypher.set_search_props(kind), rows=props).consume())
                filled += len(rows)
        if filled:
            log.warning("keyword index: split the text of %d nodes into words as the "
                        "embedded store does (once, for a graph of an older release)", filled)

    def _ensure_vector_index(self, dims: int) -> None:
        """The cosine index for ``dims``, replacing one of another dimension or metric.

        ``CREATE VECTOR INDEX … IF NOT EXISTS`` silently keeps any vector index already on
        ``Paper.embedding``, so after a change of model its dimension would be wrong and
        queries would find nothing: the existing index is read back and dropped if it
        does not fit. Checked on every write of embeddings (one ``SHOW INDEXES``): another
        process may have changed the index since.
        """
        ddl = cypher.create_vector_index(dims)  # checks dims before anything is sent
        fits = False
        for r in self._read(cypher.VECTOR_INDEXES, name=VECTOR_INDEX):
            on_embedding = list(r["labelsOrTypes"] or []) == [NodeKind.PAPER.value] and list(
                r["properties"] or []
            ) == ["embedding"]
            if not on_embedding and r["name"] != VECTOR_INDEX:
                continue  # someone else's index on other data
            config = dict((r["options"] or {}).get("indexConfig") or {})
            if (
                r["name"] == VECTOR_INDEX
                and on_embedding
                and r["type"] == "VECTOR"
                and config.get("vector.dimensions") == dims
                and str(config.get("vector.similarity_function", "")).lower() == "cosine"
            ):
                fits = True
                continue
            log.warning(
                "dropping vector index %r (%s dimensions, %s): the embeddings have %d",
                r["name"], config.get("vector.dimensions"),
                config.get("vector.similarity_function"), dims,
            )
            self._schema_write(cypher.drop_index(str(r["name"])))
        if not fits:
            self._schema_write(ddl)
            self._vector_online = False

    def _schema_write(self, statement: str) -> None:
        self._call(lambda: self._write_query(statement))

    def _vector_index_ready(self) -> bool:
        """True when the vector index is online, waiting up to ``vector_index_wait_s``.

        Neo4j builds the index in the background (after it is created, and again after a
        restart over existing data). On 5.26 a ``queryNodes`` call on a populating index
        blocks until it is built (23 s for 20,000 384-d vectors here), so the state is
        checked first; while it is still populating, the caller scans exactly instead.
        """
        if self._vector_online:
            return True
        rows = [r for r in self._read(cypher.VECTOR_INDEXES, name=VECTOR_INDEX)
                if r["name"] == VECTOR_INDEX]
        if rows:
            state, percent = str(rows[0]["state"]), rows[0]["populationPercent"]
        else:
            meta = self._read(cypher.GET_META)
            if not meta or not meta[0]["dim"]:
                return False
            # gone (dropped by hand?): make it again
            self._ensure_vector_index(int(meta[0]["dim"]))
            state, percent = "POPULATING", 0.0
        if state == "POPULATING" and self.vector_index_wait_s > 0:
            try:
                self._read(cypher.AWAIT_INDEX, name=VECTOR_INDEX,
                           timeout=max(1, math.ceil(self.vector_index_wait_s)))
                state = "ONLINE"
            except StoreUnavailableError:
                raise
            except StoreError as exc:
                log.info("vector index still populating: %s", exc)
        if state != "ONLINE":
            log.info("vector index %s (%s%%): exact scan instead", state.lower(), percent)
            return False
        self._vector_online = True
        return True

    def ping(self) -> None:
        """Raise :class:`StoreUnavailableError` if the server or database cannot be reached.

        One auto-commit query, no retries: a health check must answer fast.
        """
        try:
            with self._driver.session(
                database=self._database, default_access_mode=neo4j.READ_ACCESS
            ) as session:
                session.run(cypher.PING).consume()
        except (nex.Neo4jError, nex.DriverError, OSError) as exc:
            raise StoreUnavailableError(f"Neo4j is unreachable: {_one_line(exc)}") from exc

    def version(self) -> str:
        """The token every change commits with it (:data:`cypher.BUMP_VERSION`), read
        in one query: a change by any process or replica changes it. A graph no write of
        this release has touched yet answers ``"unversioned"``."""
        rows = self._read(cypher.GET_VERSION)
        token = rows[0]["token"] if rows else None
        return f"neo4j:{token}" if token is not None else "unversioned"

    @contextlib.contextmanager
    def writer(self, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
        """Writers one at a time, in this process and across processes.

        A write computes its change from the graph it read, so two processes must not
        read-compute-apply at the same time (probe 8: two adds at once each wrote lists
        and weights computed without the other's papers). Across processes the lock is a
        transaction of the server that MERGEs a lock node and is held open, never
        committed, until the write is done: a second writer's MERGE waits for it. A
        process that dies ends its transaction with its connection, so it keeps no lock.
        The server may end that transaction while the writer still works (a transaction
        timeout, TERMINATE TRANSACTIONS, a dropped connection): each write transaction
        checks the writers' fence (:data:`cypher.WRITER_FENCE_TAKE`) and raises
        :class:`WriteLockLostError`, rolled back, once another writer has taken the lock.
        ``on_wait`` is told (once) when the lock is not had within a second.
        """
        with self._write_lock:
            if self._writer_depth:
                self._writer_depth += 1
                try:
                    yield
                finally:
                    self._writer_depth -= 1
                return
            session, tx = self._take_writer_lock(on_wait)
            try:
                token = uuid.uuid4().hex
                self._write_tx(
                    lambda t: t.run(cypher.WRITER_FENCE_TAKE, token=token).consume()
                )
            except BaseException:
                self._release_writer_lock(session, tx)
                raise
            self._writer_depth = 1
            self._fence_token = token
            try:
                yield
            finally:
                self._writer_depth = 0
                self._fence_token = None
                self._release_writer_lock(session, tx)

    def _take_writer_lock(
        self, on_wait: Callable[[str], None] | None
    ) -> tuple[neo4j.Session, neo4j.Transaction]:
        """Open the lock's transaction and MERGE the lock node in it, waiting for another
        writer's at most ``lock_timeout_s`` (then :class:`WriteLockTimeoutError`, nothing
        written). A watchdog thread says that it waits, naming the holder's pid when the
        server shows it, and at the deadline terminates this waiting transaction."""
        token = uuid.uuid4().hex
        got = threading.Event()
        guard = threading.Lock()
        state = {"acquired": False, "timed_out": False}

        def watch() -> None:
            if got.wait(WRITER_WAIT_SAY_S):
                return
            if on_wait is not None:
                holder = self._writer_lock_holder(token)
                on_wait(
                    "waiting for another writer on the Neo4j server"
                    + (f" (pid {holder})" if holder else "") + " to finish ..."
                )
            if got.wait(max(self.lock_timeout_s - WRITER_WAIT_SAY_S, 0.0)):
                return
            with guard:
                if state["acquired"]:
                    return
                state["timed_out"] = True
            self._terminate_waiting(token)

        def take() -> tuple[neo4j.Session, neo4j.Transaction]:
            session = self._write_session()
            try:
                tx = session.begin_transaction(metadata={
                    "app": "citegraph", "role": "writer lock", "pid": os.getpid(),
                    "token": token,
                })
                threading.Thread(target=watch, name="neo4j-writer-lock", daemon=True).start()
                try:
                    tx.run(cypher.WRITER_LOCK).consume()
                except (nex.Neo4jError, nex.DriverError) as exc:
                    if state["timed_out"]:
                        raise self._lock_timeout() from exc
                    code = str(getattr(exc, "code", ""))
                    if "Terminated" in code or "LockClientStopped" in code:
                        raise StoreError(
                            "the Neo4j server ended this write while it waited for the write "
                            "lock (a shutdown, or TERMINATE TRANSACTIONS); nothing was written"
                        ) from exc
                    raise
                with guard:
                    if not state["timed_out"]:
                        state["acquired"] = True
                if not state["acquired"]:  # had it just as the watchdog gave up
                    raise self._lock_timeout()
                return session, tx
            except BaseException:
                with contextlib.suppress(Exception):
                    session.close()
                raise

        try:
            return self._call(take)
        finally:
            got.set()

    def _lock_timeout(self) -> WriteLockTimeoutError:
        return WriteLockTimeoutError(
            f"another writer held the Neo4j write lock for more than {self.lock_timeout_s:g} s"
            " (CITEGRAPH_WRITE_LOCK_TIMEOUT_S); nothing was written, try again later"
        )

    def _writer_lock_holder(self, token: str) -> str | None:
        """The pid another citegraph writer gave its lock transaction, if the server says."""
        try:  # on the writer, where lock transactions run (SHOW shows one member's)
            records = self._write_query(cypher.WRITER_LOCK_HOLDERS, token=token)
        except Exception:  # only for the message (needs SHOW TRANSACTIONS)
            return None
        pids = [str(r["pid"]) for r in records if r["pid"] is not None]
        return ", ".join(pids) or None

    def _terminate_waiting(self, token: str) -> None:
        """End this process's waiting lock transaction (its MERGE then raises)."""
        try:
            ids = [r["id"] for r in self._write_query(cypher.WRITER_LOCK_MINE, token=token)]
            if ids:
                self._write_query(cypher.TERMINATE_TRANSACTIONS, ids=ids)
        except Exception as exc:
            log.warning("could not stop waiting for the Neo4j write lock: %s", _one_line(exc))

    @staticmethod
    def _release_writer_lock(session: neo4j.Session, tx: neo4j.Transaction) -> None:
        """Roll the lock's transaction back (nothing of it is stored); a server that went
        away has already ended it."""
        try:
            tx.rollback()
        except Exception as exc:  # the lock is gone with the connection
            log.info("writer lock: rollback failed (%s); the server ends it", _one_line(exc))
        finally:
            with contextlib.suppress(Exception):
                session.close()

    def close(self) -> None:
        """Close the driver if this store owns it (``owns_driver=True``); safe twice."""
        if self._owns_driver:
            self._driver.close()

    # ---- writes

    @contextlib.contextmanager
    def write_in_parts(self) -> Iterator[PartsWrite]:
        """:meth:`GraphStore.write_in_parts`: the parts kept, then applied as one change."""
        yield CollectedParts(self.apply)

    def apply(self, change: GraphChange) -> None:
        """Apply a diff: one transaction, or per-batch transactions above ``max_tx_rows``."""
        steps = self._plan(change)
        if change.embedding_ids:
            dims = self._embedding_dims(change)
            self._ensure_vector_index(dims)
        total = sum(len(rows) for _, rows, _ in steps)
        if not steps:
            return
        if total <= self.max_tx_rows:
            if self._seen_incomplete:  # this change was computed whole from such a graph
                steps.append((cypher.MARK_COMPLETE, [{}], False))
            self._write_tx(lambda tx: self._run_steps(tx, steps))
            self._seen_incomplete = False
            return
        # marked first: a change cut off part way is recomputed whole by the next write
        # (the stored SIMILAR_TO lists and hubs, SHARES_TERM lists and vectors it would
        # otherwise reuse may be half old, half new)
        self._write_tx(lambda tx: tx.run(cypher.MARK_INCOMPLETE).consume())
        done = 0
        n_batches = sum(math.ceil(len(r) / self.batch_size) for _, r, _ in steps)
        for query, rows, check in steps:
            for batch in _batches(rows, self.batch_size):
                one = [(query, list(batch), check)]
                try:
                    self._write_tx(lambda tx, one=one: self._run_steps(tx, one))  # type: ignore[misc]
                except StoreError as exc:
                    raise type(exc)(
                        f"{exc} (after {done} of {n_batches} batches committed; each batch is "
                        "all-or-nothing and idempotent: apply the same change again)"
                    ) from exc
                done += 1
        self._write_tx(lambda tx: tx.run(cypher.MARK_COMPLETE).consume())
        self._seen_incomplete = False

    def _embedding_dims(self, change: GraphChange) -> int:
        rows = np.asarray(change.embeddings)
        if rows.ndim != 2 or rows.shape[0] != len(change.embedding_ids):
            raise InvalidArgumentError("embeddings", "need one row per embedding id")
        return int(rows.shape[1])

    def _plan(
        self, change: GraphChange
    ) -> list[tuple[str, list[dict[str, Any]], bool]]:
        """(query, rows, check that every row was written) in the contract's order."""
        steps: list[tuple[str, list[dict[str, Any]], bool]] = []
        # delete edges
        by_type: dict[RelType, dict[tuple[str, str], dict[str, Any]]] = {}
        for source, target, raw in change.delete_edges:
            t = RelType(raw)
            s, d = _normalised(source, target, t)
            by_type.setdefault(t, {})[(s, d)] = {"source": s, "target": d}
        for t in RelType:
            if t in by_type:
                steps.append((cypher.delete_edges(t), list(by_type[t].values()), False))
        # delete nodes (ids carry no kind: one statement per label)
        if change.delete_nodes:
            ids = [{"id": i} for i in dict.fromkeys(change.delete_nodes)]
            for kind in NodeKind:
                steps.append((cypher.delete_nodes_rows(kind), ids, False))
        # upsert nodes
        nodes: dict[NodeKind, dict[str, dict[str, Any]]] = {}
        for node in change.upsert_nodes:
            props = node_props(node)
            _check_indexed(node.kind, node.id, props)
            nodes.setdefault(node.kind, {})[node.id] = {"id": node.id, "props": props}
        for kind in NodeKind:
            if kind in nodes:
                steps.append((cypher.upsert_nodes(kind), list(nodes[kind].values()), True))
        # upsert edges
        edges: dict[RelType, dict[tuple[str, str], dict[str, Any]]] = {}
        for edge in change.upsert_edges:
            s, d = _normalised(edge.source, edge.target, edge.type)
            edges.setdefault(edge.type, {})[(s, d)] = {
                "source": s,
                "target": d,
                "props": edge_props(edge),
            }
        for t in RelType:
            if t in edges:
                steps.append((cypher.upsert_edges(t), list(edges[t].values()), True))
        # embeddings
        if change.embedding_ids:
            matrix = np.asarray(change.embeddings, dtype=np.float64)
            rows = [
                {"id": pid, "embedding": [float(x) for x in matrix[i]]}
                for i, pid in enumerate(change.embedding_ids)
            ]
            steps.append((cypher.SET_EMBEDDINGS, rows, True))
        if change.embedding_model is not None or change.embedding_ids or change.link_settings:
            dim = self._embedding_dims(change) if change.embedding_ids else None
            steps.append((cypher.SET_META_ROWS, [{
                "model": change.embedding_model, "dim": dim,
                "link_settings": change.link_settings,
            }], False))
        return steps

    def _run_steps(
        self,
        tx: neo4j.ManagedTransaction,
        steps: Sequence[tuple[str, list[dict[str, Any]], bool]],
    ) -> None:
        for query, rows, check in steps:
            for batch in _batches(rows, self.batch_size):
                record = tx.run(query, rows=list(batch)).single()
                written = int(record[0]) if record is not None else 0
                if check and written != len(batch):
                    raise StoreError(
                        f"{len(batch) - written} of {len(batch)} rows refer to nodes "
                        "that are not in the graph: unknown endpoint (change not applied)"
                    )
        # in the same transaction: a reader that sees the new version sees the change
        tx.run(cypher.BUMP_VERSION).consume()

    def clear(self) -> None:
        """Delete every node and edge, in transactions of at most ``batch_size`` nodes."""
        limit = max(self.batch_size, 1000)
        while True:
            deleted = self._write_tx(
                lambda tx: int(tx.run(cypher.CLEAR_BATCH, limit=limit).single(strict=True)[0])
            )
            if deleted == 0:
                break
        if self._fence_token is not None:  # the fence went with everything else
            token = self._fence_token
            self._call(lambda: self._write_query(cypher.WRITER_FENCE_TAKE, token=token))
        # so did the version: a fresh one (never a token seen before)
        self._write_tx(lambda tx: tx.run(cypher.BUMP_VERSION).consume())

    # ---- reads: nodes

    def get_nodes(self, ids: Sequence[str]) -> dict[str, GraphNode]:
        """Nodes by id; unknown ids are simply absent."""
        if not ids:
            return {}
        out: dict[str, GraphNode] = {}
        for r in self._read(cypher.GET_NODES, ids=list(dict.fromkeys(ids))):
            node = decode_node(r["n_props"], r["n_labels"])
            out[node.id] = node
        return {i: out[i] for i in ids if i in out}

    # ---- the Backend primitives (graph.query ranks; one round trip per call)

    batch_reads = True

    def read_backend(self) -> Backend:
        return self

    def reading(self) -> AbstractContextManager[object]:
        """Nothing to hold: each call reads the server's committed state."""
        return contextlib.nullcontext()

    def nodes_named(self, keys: Sequence[str]) -> list[GraphNode]:
        """An index seek (:data:`cypher.NAME_INDEX`); a scan for a key too long for it."""
        wanted = sorted(set(keys))
        if not wanted:
            return []
        if all(len(k.encode("utf-8", "surrogatepass")) <= NAME_KEY_MAX_BYTES for k in wanted):
            rows = self._read(cypher.FIND_BY_NAME_KEYS, index=cypher.NAME_INDEX,
                              text=cypher.names_query(wanted))
        else:
            rows = self._read(cypher.FIND_BY_NAME, names=sorted({k.lower() for k in wanted}))
        return [decode_node(r["n_props"], r["n_labels"]) for r in rows]

    def odd_paper_ids(self) -> dict[str, str]:
        # sorted here: the server orders strings by UTF-16 units, Python by code points
        return odd_spellings(sorted(str(r["id"]) for r in self._read(cypher.ODD_PAPER_IDS)))

    def page(
        self,
        kind: NodeKind,
        *,
        offset: int,
        limit: int,
        venue: str | None,
        year: int | None,
        neighbor: str | None,
    ) -> tuple[list[GraphNode], int]:
        flags = {"venue": venue is not None, "year": year is not None,
                 "neighbor": neighbor is not None}
        params = {"venue": venue, "year": year, "neighbor": neighbor}
        total = int(self._read(cypher.count_list_nodes(kind, **flags), **params)[0]["total"])
        if limit == 0:
            return [], total
        rows = self._read(cypher.list_nodes(kind, **flags), offset=offset, limit=limit, **params)
        return [decode_node(r["n_props"], r["n_labels"]) for r in rows], total

    def match_papers(
        self, where: PaperFilter, sort: PaperSort | None, offset: int, limit: int | None,
        within: Sequence[str] | None = None,
    ) -> tuple[list[str], int]:
        if within is not None and not within:
            return [], 0
        match, params = cypher.paper_where(where, within=within is not None)
        if within is not None:
            params["ids"] = list(dict.fromkeys(within))
        row = self._read(cypher.match_papers(match, sort), offset=offset, limit=limit,
                         **params)[0]
        return [str(i) for i in row["page"]], int(row["total"])

    def count_papers(self, where: PaperFilter, by: CountBy, limit: int) -> list[GroupCount]:
        match, params = cypher.paper_where(where)
        rows = self._read(cypher.paper_counts(match, by), limit=limit, **params)
        return [GroupCount(r["k"], int(r["c"])) for r in rows]

    @staticmethod
    def _types(types: frozenset[RelType] | None) -> list[str]:
        return [t.value for t in RelType if types is None or t in types]

    @staticmethod
    def _edges(rows: Iterable[neo4j.Record]) -> list[Edge]:
        return [decode_edge(r["r_source"], r["r_target"], r["r_type"], r["r_props"]) for r in rows]

    def incident_edges(self, ids: Sequence[str], types: frozenset[RelType] | None) -> list[Edge]:
        if not ids:
            return []
        return self._edges(self._read(cypher.ADJACENT, ids=list(ids), types=self._types(types)))

    def edges_among(self, ids: Sequence[str], types: frozenset[RelType] | None) -> list[Edge]:
        if not ids:
            return []
        rows = self._read(cypher.EDGES_AMONG, ids=list(ids), types=self._types(types))
        return list({e.key: e for e in self._edges(rows)}.values())

    def ring_neighbors(
        self, ids: Collection[str], types: frozenset[RelType] | None
    ) -> dict[str, Collection[str]]:
        if not ids:
            return {}
        rows = self._read(cypher.RING_NEIGHBORS, ids=list(ids), types=self._types(types))
        return {r["near"]: r["ids"] for r in rows}

    def ring_weights(
        self,
        ids: Collection[str],
        types: frozenset[RelType] | None,
        kinds: frozenset[NodeKind] | None,
        exclude: Collection[str],
    ) -> dict[str, float]:
        if not ids:
            return {}
        rows = self._read(
            cypher.RING_WEIGHTS,
            ids=list(ids),
            types=self._types(types),
            kinds=[k.value for k in NodeKind if kinds is None or k in kinds],
            exclude=list(exclude),
        )
        reach: dict[str, float] = {}
        for r in rows:  # one row per (near label, far node): add the branches up
            reach[r["id"]] = reach.get(r["id"], 0.0) + float(r["w"])
        return reach

    def ring_top(
        self,
        ids: Sequence[str],
        types: frozenset[RelType] | None,
        kinds: frozenset[NodeKind] | None,
        exclude: Collection[str],
        room: int,
    ) -> tuple[list[str], int] | None:
        """Summed and cut in the database (:data:`cypher.RING_TOP`, one round trip);
        only the rows that may rank come back, ranked here exactly."""
        if not ids:
            return [], 0
        rows = self._read(
            cypher.RING_TOP,
            ids=list(ids),
            types=self._types(types),
            kinds=[k.value for k in NodeKind if kinds is None or k in kinds],
            exclude=list(exclude),
            room=room,
        )
        top = rows[0]["top"] if rows else []
        reached = int(rows[0]["reached"]) if rows else 0
        return rank_reach({str(i): float(w) for i, w in top}, room), reached

    def incident_with_ends(
        self, ids: Sequence[str], types: frozenset[RelType] | None
    ) -> tuple[list[Edge], dict[str, GraphNode]]:
        """One round trip (:data:`cypher.INCIDENT_WITH_ENDS`)."""
        if not ids:
            return [], {}
        edges: list[Edge] = []
        ends: dict[str, GraphNode] = {}
        for r in self._read(cypher.INCIDENT_WITH_ENDS, ids=list(ids), types=self._types(types)):
            if not r["adj"]:
                continue
            node = decode_node(r["n_props"], r["n_labels"])
            ends[node.id] = node
            for source, target, typ, props, far, far_labels in r["adj"]:
                edges.append(decode_edge(source, target, typ, props))
                if far["id"] not in ends:
                    ends[far["id"]] = decode_node(far, far_labels)
        return edges, ends

    def walk(
        self,
        ids: Sequence[str],
        depth: int,
        types: frozenset[RelType] | None,
        kinds: frozenset[NodeKind] | None,
        limit: int,
    ) -> RingWalk | None:
        """Two rings, their nodes and edges, in one round trip (:data:`cypher.WALK`)."""
        if not ids:
            return None
        rows = self._read(
            cypher.WALK, ids=list(ids), depth=depth, limit=limit,
            types=self._types(types),
            kinds=[k.value for k in NodeKind if kinds is None or k in kinds],
            hold_max=2 * limit + WALK_HOLD_EXTRA,
        )
        r = rows[0]
        rings = [({str(i): float(w) for i, w in r["top1"]}, int(r["reached1"]))]
        if r["walked2"]:
            rings.append(({str(i): float(w) for i, w in r["top2"]}, int(r["reached2"])))
        nodes: dict[str, GraphNode] = {}
        edges: list[Edge] = []
        for props, labels, out in r["nodes"] or []:
            node = decode_node(props, labels)
            nodes[node.id] = node
            edges += [decode_edge(node.id, t, typ, p) for t, typ, p in out]
        return RingWalk([str(i) for i in r["present"]], rings, nodes, edges)

    def nodes_and_edges(
        self, ids: Sequence[str], types: frozenset[RelType] | None
    ) -> tuple[dict[str, GraphNode], list[Edge]]:
        """Both in one round trip (:data:`cypher.NODES_AND_EDGES`)."""
        if not ids:
            return {}, []
        nodes: dict[str, GraphNode] = {}
        edges: list[Edge] = []
        for r in self._read(cypher.NODES_AND_EDGES, ids=list(dict.fromkeys(ids)),
                            types=self._types(types)):
            node = decode_node(r["n_props"], r["n_labels"])
            nodes[node.id] = node
            edges += [decode_edge(node.id, t, typ, props) for t, typ, props in r["out"]]
        return nodes, edges

    def citation_overlap(self, ids: Sequence[str], coupling: bool) -> list[Overlap]:
        if not ids:
            return []
        rows = self._read(cypher.COUPLING if coupling else cypher.COCITATION,
                          ids=list(dict.fromkeys(ids)))
        found = [
            Overlap(r["seed"], r["partner"], tuple(sorted(r["shared"])), int(r["ns"]),
                    int(r["nq"]))
            for r in rows
        ]
        return sorted(found, key=lambda o: (o.seed, o.partner))

    def keyword_candidates(
        self, terms: Sequence[str], kinds: frozenset[NodeKind] | None, limit: int
    ) -> list[tuple[str, float]]:
        """BM25 hits from the fulltext index (one round trip; kinds filtered in Cypher)."""
        labels = [k.value for k in NodeKind if kinds is None or k in kinds]
        if not terms or not labels or limit <= 0:
            return []
        rows = self._read(
            cypher.KEYWORD_QUERY, index=cypher.TEXT_INDEX, text=cypher.lucene_query(terms),
            labels=labels, limit=limit,
        )
        return [(str(r["id"]), float(r["score"])) for r in rows if r["score"] > 0]

    def vector_candidates(
        self, unit: np.ndarray[Any, Any], limit: int, exclude: frozenset[str]
    ) -> list[tuple[str, float]]:
        """The vector index over-fetched, then ranked exactly; an exact scan up to
        ``exact_vector_max`` papers and while the index populates."""
        excluded = sorted(exclude)
        n: int | None = None
        if self.exact_vector_max > 0 or not self._vector_online:
            # the count decides between the scan and the index; once the index is seen
            # online and no scan size is set, a search is one round trip (an empty graph's
            # index finds nothing)
            n = int(self._read(cypher.COUNT_EMBEDDED)[0]["c"])
            if n == 0:
                return []
        if (n is not None and n <= self.exact_vector_max) or not self._vector_index_ready():
            rows = self._read(cypher.ALL_EMBEDDINGS, exclude=excluded)
        else:
            # The index is approximate: over-fetch, then rank the candidates exactly.
            k = 4 * (limit + len(excluded)) + 20
            k = k if n is None else min(n, k)
            try:
                rows = self._read(
                    cypher.VECTOR_QUERY,
                    index=VECTOR_INDEX,
                    k=k,
                    vector=[float(x) for x in unit],
                    exclude=excluded,
                )
            except StoreUnavailableError:
                raise
            except StoreError as exc:  # dropped or replaced by another process meanwhile
                log.warning("vector index query failed (%s); exact scan instead", exc)
                self._vector_online = False
                rows = self._read(cypher.ALL_EMBEDDINGS, exclude=excluded)
        rows = [r for r in rows if r["embedding"] is not None and len(r["embedding"]) == unit.size]
        if not rows:
            return []
        scores = cosine(unit_rows(np.asarray([r["embedding"] for r in rows])), unit)
        return [(r["id"], float(s)) for r, s in zip(rows, scores, strict=True)]

    def embeddings(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """Stored embeddings by paper id (papers without one are absent)."""
        if not ids:
            return {}
        rows = self._read(cypher.GET_EMBEDDINGS, ids=list(dict.fromkeys(ids)))
        got = {r["id"]: [float(x) for x in r["embedding"]] for r in rows}
        return {i: got[i] for i in ids if i in got}

    def embedding_model(self) -> str | None:
        """Name of the model the stored embeddings came from."""
        rows = self._read(cypher.GET_META)
        return str(rows[0]["model"]) if rows and rows[0]["model"] is not None else None

    def stats(self) -> GraphStats:
        """Node counts by kind and edge counts by type (zeros included), and whether a
        batched write is part-written (the mark of :data:`cypher.MARK_INCOMPLETE`), in one
        query."""
        nodes = {k.value: 0 for k in NodeKind}
        edges = {t.value: 0 for t in RelType}
        incomplete = False
        for r in self._read(cypher.STATS):
            if r["what"] == "mark":
                incomplete = True
            else:
                (nodes if r["what"] == "node" else edges)[r["name"]] = int(r["c"])
        return GraphStats(nodes, edges, incomplete)

    def snapshot(self) -> GraphData:
        """The whole graph in memory."""
        data = GraphData()
        for r in self._read(cypher.ALL_NODES):
            node = decode_node(r["n_props"], r["n_labels"])
            data.nodes[node.id] = node
        for r in self._read(cypher.ALL_EDGES):
            data.add_edge(decode_edge(r["r_source"], r["r_target"], r["r_type"], r["r_props"]))
        meta = self._read(cypher.GET_META)
        data.embedding_model = (
            str(meta[0]["model"]) if meta and meta[0]["model"] is not None else None
        )
        data.link_settings = (
            str(meta[0]["link_settings"]) if meta and meta[0]["link_settings"] is not None
            else None
        )
        data.incomplete = bool(meta and meta[0]["incomplete"])
        if data.incomplete:
            self._seen_incomplete = True
            log.warning("the graph holds part of a write that was cut off: the next write "
                        "recomputes every link")
        rows = sorted(
            (r["id"], r["embedding"])
            for r in self._read(cypher.ALL_EMBEDDINGS, exclude=[])
        )
        if rows:
            data.embedding_ids = [i for i, _ in rows]
            data.embeddings = np.asarray([e for _, e in rows], dtype=np.float32)
        return data

    # ---- pages of the whole graph (exports: graph.store.base.PagedReads)

    def node_page(self, after: str | None, limit: int) -> list[GraphNode]:
        """Keyset pages over each label's id index (cypher.NODE_PAGE_*)."""
        query = cypher.NODE_PAGE_FIRST if after is None else cypher.NODE_PAGE_AFTER
        rows = self._read(query, after=after, limit=limit)
        return [decode_node(r["n_props"], r["n_labels"]) for r in rows]

    def edge_page(self, after: str | None, limit: int) -> list[Edge]:
        """The edges out of the next nodes by id, each node's whole (cypher.EDGE_PAGE_*)."""
        query = cypher.EDGE_PAGE_FIRST if after is None else cypher.EDGE_PAGE_AFTER
        return self._edges(self._read(query, after=after, limit=limit))
