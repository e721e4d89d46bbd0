"""Keyword search as BM25 over a SQLite FTS5 index (the embedded and memory stores).

One FTS5 table, ``search_text`` (``id``, ``kind`` unindexed; ``name``, ``title``,
``abstract`` indexed with the Porter stemmer over unicode61), and ``search_ids``, which
gives each node id its FTS rowid so that an update or delete touches one row instead of
scanning the table. The embedded store keeps both in ``graph.db`` and writes them in the
transaction that writes the node rows; the memory store keeps them in an in-memory
database (:class:`MemoryIndex`). Ranking is FTS5's ``bm25()`` with
:data:`graph.query.text.COLUMN_WEIGHTS`; the query is built from
:func:`graph.query.text.query_terms`, each term quoted, so no user text is FTS syntax.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Collection, Iterable, Sequence

from graph.errors import StoreError
from graph.model import GraphNode, NodeKind
from graph.query.text import COLUMN_WEIGHTS, search_fields

#: bumped when the tokenizer or the columns change: the embedded store refills the index
INDEX_VERSION = "1"
#: the meta key holding the INDEX_VERSION the table was filled with
META_KEY = "search_index"

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS search_ids (docid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS search_text USING fts5("
    "id UNINDEXED, kind UNINDEXED, name, title, abstract, tokenize = 'porter unicode61')",
)

_WEIGHTS = ", ".join(["0", "0", *(repr(float(w)) for w in COLUMN_WEIGHTS)])
_DELETE_TEXT = "DELETE FROM search_text WHERE rowid = (SELECT docid FROM search_ids WHERE id = ?)"
_INSERT_TEXT = (
    "INSERT INTO search_text (rowid, id, kind, name, title, abstract) "
    "VALUES ((SELECT docid FROM search_ids WHERE id = ?), ?, ?, ?, ?, ?)"
)


def create(db: sqlite3.Connection) -> None:
    """Create the tables if missing (inside the caller's transaction)."""
    for stmt in SCHEMA:
        db.execute(stmt)


def write(db: sqlite3.Connection, upserts: Iterable[GraphNode], deletes: Iterable[str]) -> None:
    """Index ``upserts`` (replacing what they had) and drop ``deletes``, in the caller's
    transaction: a rollback takes these rows back with the rest."""
    nodes = {_storable(n.id): n for n in upserts}
    gone = [(i,) for i in dict.fromkeys(map(_storable, deletes)) if i not in nodes]
    db.executemany(_DELETE_TEXT, [*gone, *((i,) for i in nodes)])
    db.executemany("DELETE FROM search_ids WHERE id = ?", gone)
    db.executemany("INSERT OR IGNORE INTO search_ids (id) VALUES (?)", [(i,) for i in nodes])
    db.executemany(
        _INSERT_TEXT,
        [(i, i, n.kind.value, *map(_storable, search_fields(n))) for i, n in nodes.items()],
    )


def _storable(text: str) -> str:
    """``text`` with unpaired surrogates replaced: SQLite takes UTF-8 only, and the memory
    store holds whatever it is given (the embedded store refuses such text earlier)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def refill(db: sqlite3.Connection, nodes: Iterable[GraphNode]) -> None:
    """Empty the index and index ``nodes`` (in the caller's transaction)."""
    db.execute("DELETE FROM search_text")
    db.execute("DELETE FROM search_ids")
    write(db, nodes, ())


def match_query(terms: Sequence[str]) -> str:
    """FTS5 MATCH text: each term a quoted string (FTS5 reads nothing inside as an
    operator, column filter or prefix), OR-joined, so BM25 ranks partial matches too."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def search(
    db: sqlite3.Connection,
    terms: Sequence[str],
    kinds: Collection[NodeKind] | None,
    limit: int,
) -> list[tuple[str, float]]:
    """(id, BM25 score > 0) of the best ``limit`` nodes of ``kinds``, best first, ties by id."""
    if not terms or limit <= 0 or (kinds is not None and not kinds):
        return []
    where = ""
    params: list[object] = [match_query(terms)]
    if kinds is not None:
        where = f" AND kind IN ({','.join('?' * len(kinds))})"
        params += sorted(k.value for k in kinds)
    # bm25() is lower-is-better (negative): negated, and rounded so that ties are by id
    sql = (
        f"SELECT id, round(-bm25(search_text, {_WEIGHTS}), 9) AS score FROM search_text"  # noqa: S608 - constants and placeholders only
        f" WHERE search_text MATCH ?{where} ORDER BY score DESC, id LIMIT ?"
    )
    try:
        rows = db.execute(sql, [*params, limit]).fetchall()
    except sqlite3.Error as exc:
        raise StoreError(f"keyword search failed: {exc}") from exc
    return [(str(i), float(s)) for i, s in rows]


class MemoryIndex:
    """The FTS5 index in an in-memory database, for :class:`~graph.store.memory.NetworkxStore`.

    Its own lock guards the connection (sqlite3 connections are not for concurrent
    use), so searches need no lock of the store's; every write is one transaction.
    """

    def __init__(self, nodes: Iterable[GraphNode] = ()) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        create(self._db)
        self.apply(nodes, ())

    def apply(self, upserts: Iterable[GraphNode], deletes: Iterable[str]) -> None:
        """Index ``upserts`` and drop ``deletes`` at once; after an error, nothing changed."""
        with self._lock:
            self._db.execute("BEGIN")
            try:
                write(self._db, upserts, deletes)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def search(
        self, terms: Sequence[str], kinds: Collection[NodeKind] | None, limit: int
    ) -> list[tuple[str, float]]:
        """See :func:`search`."""
        with self._lock:
            return search(self._db, terms, kinds, limit)
