"""Keyword search as BM25 over a SQLite FTS5 index (the embedded and memory stores).

Two FTS5 tables (``id``, ``kind`` unindexed; the rest indexed with the Porter stemmer over
unicode61): ``search_names`` holds every node's ``name`` and ``title``, ``search_body``
the papers' ``abstract``; and ``search_ids`` gives each node id its FTS rowid so that an
update or delete touches one row instead of scanning a table. A node's score is the sum
of its BM25 in each table. Two tables rather than one so that BM25 normalises a name or
title by the length of names and titles, and an abstract by that of abstracts (as
BM25F and Lucene do per field): in one table a paper's 200-word abstract made its title
count for less than a two-word concept name, and a concept named like a paper's title
outranked the paper for that title (164 of 200 ICLR 2021 titles found their paper first
among all kinds, against 200 of 200 with two tables).

The embedded store keeps the tables in ``graph.db`` and writes them in the
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
INDEX_VERSION = "2"
#: the meta key holding the INDEX_VERSION the table was filled with
META_KEY = "search_index"
_CHUNK = 500  # host parameters per IN (...) list

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS search_ids (docid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS search_names USING fts5("
    "id UNINDEXED, kind UNINDEXED, name, title, tokenize = 'porter unicode61')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS search_body USING fts5("
    "id UNINDEXED, kind UNINDEXED, abstract, tokenize = 'porter unicode61')",
)

_NAME_W, _TITLE_W, _ABSTRACT_W = (repr(float(w)) for w in COLUMN_WEIGHTS)
_DELETE = (
    "DELETE FROM search_names WHERE rowid = (SELECT docid FROM search_ids WHERE id = ?)",
    "DELETE FROM search_body WHERE rowid = (SELECT docid FROM search_ids WHERE id = ?)",
)
_INSERT_NAMES = (
    "INSERT INTO search_names (rowid, id, kind, name, title)"
    " VALUES ((SELECT docid FROM search_ids WHERE id = ?), ?, ?, ?, ?)"
)
_INSERT_BODY = (
    "INSERT INTO search_body (rowid, id, kind, abstract)"
    " VALUES ((SELECT docid FROM search_ids WHERE id = ?), ?, ?, ?)"
)


def create(db: sqlite3.Connection) -> None:
    """Create the tables if missing (inside the caller's transaction)."""
    for stmt in SCHEMA:
        db.execute(stmt)


def write(db: sqlite3.Connection, upserts: Iterable[GraphNode], deletes: Iterable[str]) -> None:
    """Index ``upserts`` (replacing what they had) and drop ``deletes``, in the caller's
    transaction: a rollback takes these rows back with the rest."""
    nodes = {_storable(n.id): n for n in upserts}
    # only ids the index holds have rows to delete: none, in a first build's 100,000s
    held = _held(db, [*dict.fromkeys(map(_storable, deletes)), *nodes])
    gone = [(i,) for i in dict.fromkeys(map(_storable, deletes)) if i not in nodes and i in held]
    for stmt in _DELETE:
        db.executemany(stmt, [*gone, *((i,) for i in nodes if i in held)])
    db.executemany("DELETE FROM search_ids WHERE id = ?", gone)
    db.executemany("INSERT OR IGNORE INTO search_ids (id) VALUES (?)", [(i,) for i in nodes])
    names, bodies = [], []
    for i, n in nodes.items():
        name, title, abstract = map(_storable, search_fields(n))
        names.append((i, i, n.kind.value, name, title))
        if abstract:
            bodies.append((i, i, n.kind.value, abstract))
    db.executemany(_INSERT_NAMES, names)
    db.executemany(_INSERT_BODY, bodies)


def _held(db: sqlite3.Connection, ids: Sequence[str]) -> set[str]:
    """Those of ``ids`` that the index holds."""
    if not ids:
        return set()
    if db.execute("SELECT 1 FROM search_ids LIMIT 1").fetchone() is None:
        return set()  # an empty index (a first build) holds none of them
    held: set[str] = set()
    for i in range(0, len(ids), _CHUNK):
        part = ids[i : i + _CHUNK]
        marks = ",".join("?" * len(part))
        sql = f"SELECT id FROM search_ids WHERE id IN ({marks})"  # noqa: S608 - placeholders only
        held.update(r[0] for r in db.execute(sql, part))
    return held


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
    db.execute("DELETE FROM search_names")
    db.execute("DELETE FROM search_body")
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
    kind_values: list[str] = []
    if kinds is not None:
        where = f" AND kind IN ({','.join('?' * len(kinds))})"
        kind_values = sorted(k.value for k in kinds)
    match = match_query(terms)
    # bm25() is lower-is-better (negative): negated, summed over the two tables, and
    # rounded so that ties are by id. Grouped by the rowid both tables share (a node's
    # docid), not by the id column: reading that column for every match (thousands for
    # a common word) was a third of the query; only the grouped rows look their id up
    sql = (
        "SELECT i.id, g.score FROM (SELECT d, round(sum(s), 9) AS score FROM ("  # noqa: S608 - constants and placeholders only
        f"SELECT rowid AS d, -bm25(search_names, 0, 0, {_NAME_W}, {_TITLE_W}) AS s"
        f" FROM search_names WHERE search_names MATCH ?{where}"
        f" UNION ALL SELECT rowid AS d, -bm25(search_body, 0, 0, {_ABSTRACT_W}) AS s"
        f" FROM search_body WHERE search_body MATCH ?{where}"
        ") GROUP BY d) AS g JOIN search_ids AS i ON i.docid = g.d"
        " ORDER BY g.score DESC, i.id LIMIT ?"
    )
    try:
        rows = db.execute(sql, [match, *kind_values, match, *kind_values, limit]).fetchall()
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
