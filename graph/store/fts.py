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

import json
import math
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


#: FTS5's bm25() constant k1 (fts5_aux.c): a term's share of a row's score in one table is
#: idf x f(k1 + 1) / (f + k1(1 - b + b D / avgdl)), always below idf x (k1 + 1)
_K1 = 1.2
#: a pruned search stops only when the limit-th score beats what every unscored row could
#: reach by this much more (scores are rounded to 9 places; the bounds are loose anyway)
_MARGIN = 1e-6
#: a query whose terms are in fewer rows than this (both tables) is run whole: pruning
#: would save less than its own extra statements cost
PRUNE_FROM_ROWS = 20_000
#: at most this many rounds of pruning (one more rare term each), then the whole query
_PRUNE_ROUNDS = 4


class TermCounts:
    """Rows per table and rows holding each term (FTS5's idf inputs), kept for one state
    of the index: :meth:`for_version` empties it when ``version`` changes."""

    def __init__(self) -> None:
        self._version: object = None
        self._rows: dict[str, int] = {}
        self._hits: dict[tuple[str, str], int] = {}

    def for_version(self, version: object) -> TermCounts:
        if version != self._version:
            self._version, self._rows, self._hits = version, {}, {}
        return self

    def rows(self, db: sqlite3.Connection, table: str) -> int:
        got = self._rows.get(table)
        if got is None:
            got = self._rows[table] = int(db.execute(
                f"SELECT count(*) FROM {table}"  # noqa: S608 - a constant table name
            ).fetchone()[0])
        return got

    def hits(self, db: sqlite3.Connection, table: str, term: str) -> int:
        got = self._hits.get((table, term))
        if got is None:
            # a doclist walk, no scoring: ~15x cheaper than the term's share of a query
            got = self._hits[(table, term)] = int(db.execute(
                f"SELECT count(*) FROM {table} WHERE {table} MATCH ?",  # noqa: S608 - constant
                (match_query([term]),),
            ).fetchone()[0])
        return got


def _idf(rows: int, hits: int) -> float:
    """FTS5's idf (fts5_aux.c), floored at 1e-6 as it is; 0 for a term in no row."""
    if hits <= 0:
        return 0.0
    idf = math.log((rows - hits + 0.5) / (hits + 0.5))
    return idf if idf > 0.0 else 1e-6


def search(
    db: sqlite3.Connection,
    terms: Sequence[str],
    kinds: Collection[NodeKind] | None,
    limit: int,
    counts: TermCounts | None = None,
) -> list[tuple[str, float]]:
    """(id, BM25 score > 0) of the best ``limit`` nodes of ``kinds``, best first, ties by id.

    With ``counts`` (the caller's, for the state ``db`` reads), a query whose terms are
    in many rows is pruned as MaxScore does (Turtle & Flood 1995): the rows holding its
    rarest terms are scored first, by the whole query, and the search stops when the
    ``limit``-th of them scores more than any row holding only the other, commoner
    terms could (each term adds less than idf x (k1 + 1) per table). The answer is the
    whole query's, scores and ties included; what it spares is FTS5's scoring of the
    10,000s of rows that hold only a title's common words.
    """
    if not terms or limit <= 0 or (kinds is not None and not kinds):
        return []
    kind_values = None if kinds is None else sorted(k.value for k in kinds)
    try:
        if counts is not None and len(terms) > 1:
            pruned = _pruned(db, terms, kind_values, limit, counts)
            if pruned is not None:
                return pruned
        return _scored(db, terms, kind_values, limit, None)
    except sqlite3.Error as exc:
        raise StoreError(f"keyword search failed: {exc}") from exc


def _scored(
    db: sqlite3.Connection,
    terms: Sequence[str],
    kinds: list[str] | None,
    limit: int,
    rowids: list[int] | None,
) -> list[tuple[str, float]]:
    """The query of ``terms`` over every matching row, or over ``rowids`` only: the
    same scores (idf and average lengths are the table's, whatever rows are read)."""
    where = ""
    params: list[object] = []
    if kinds is not None:
        where = f" AND kind IN ({','.join('?' * len(kinds))})"
        params = list(kinds)
    if rowids is not None:
        # '+rowid': a filter SQLite applies to FTS5's matches before bm25() is computed
        # for them. A plain 'rowid IN' goes to FTS5 as one lookup per value, and each
        # lookup counts every term's rows again for its idf
        where += " AND +rowid IN (SELECT value FROM json_each(?))"
        params.append(json.dumps(rowids))
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
    rows = db.execute(sql, [match, *params, match, *params, limit]).fetchall()
    return [(str(i), float(s)) for i, s in rows]


def _pruned(
    db: sqlite3.Connection,
    terms: Sequence[str],
    kinds: list[str] | None,
    limit: int,
    counts: TermCounts,
) -> list[tuple[str, float]] | None:
    """MaxScore over :func:`_scored`; None when pruning does not pay (run it whole)."""
    tables = ("search_names", "search_body")
    hits = {term: [counts.hits(db, t, term) for t in tables] for term in terms}
    total = sum(map(sum, hits.values()))
    if total < PRUNE_FROM_ROWS:
        return None
    n_rows = [counts.rows(db, t) for t in tables]
    bound = {
        term: (_K1 + 1.0) * sum(_idf(n, h) for n, h in zip(n_rows, hits[term], strict=True))
        for term in terms
    }
    # rarest first (largest bound), ties by the term: the same order every time
    order = sorted(terms, key=lambda term: (-bound[term], term))
    where = "" if kinds is None else f" AND kind IN ({','.join('?' * len(kinds))})"
    for j in range(1, min(len(order), _PRUNE_ROUNDS + 1)):
        rest = sum(bound[t] for t in order[j:])
        if 2 * sum(sum(hits[t]) for t in order[:j]) >= total:
            return None  # the rare terms are not rare: scoring their rows saves little
        match = match_query(order[:j])
        found = [
            int(r[0]) for r in db.execute(
                f"SELECT rowid FROM search_names WHERE search_names MATCH ?{where}"  # noqa: S608 - constants and placeholders only
                f" UNION SELECT rowid FROM search_body WHERE search_body MATCH ?{where}",
                [match, *(kinds or []), match, *(kinds or [])],
            )
        ]
        if len(found) < limit:
            continue  # too few rows hold the rare terms to fill the answer
        scored = _scored(db, terms, kinds, limit, found)
        if len(scored) >= limit and scored[limit - 1][1] > rest + _MARGIN:
            return scored
    return None


class MemoryIndex:
    """The FTS5 index in an in-memory database, for :class:`~graph.store.memory.NetworkxStore`.

    Its own lock guards the connection (sqlite3 connections are not for concurrent
    use), so searches need no lock of the store's; every write is one transaction.
    """

    def __init__(self, nodes: Iterable[GraphNode] = ()) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        self._counts = TermCounts()
        self._version = 0  # bumped by every write: the term counts are kept per version
        create(self._db)
        self.apply(nodes, ())

    def apply(self, upserts: Iterable[GraphNode], deletes: Iterable[str]) -> None:
        """Index ``upserts`` and drop ``deletes`` at once; after an error, nothing changed."""
        with self._lock:
            self._db.execute("BEGIN")
            self._version += 1
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
            return search(self._db, terms, kinds, limit, self._counts.for_version(self._version))
