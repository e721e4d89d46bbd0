"""Reads straight from the embedded database: a Backend that loads only what a query visits.

A server keeps the whole graph in memory (:class:`~graph.store.memory.NetworkxStore`,
loaded once, then kept current). A one-shot process, such as ``citegraph neighbors``,
would spend most of its life loading that mirror. It asks SQLite instead: each
primitive is one query over the primary key and the ``edges_target`` / ``names``
indexes, so the cost follows the size of the answer, not of the graph. The embedding
matrix is the one thing read whole, and only by a vector search.

Every read of one query runs in one SQLite read transaction (:meth:`SqlBackend.reading`),
so it sees one committed state even while another process writes.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from graph.errors import StoreError
from graph.ids import odd_spellings
from graph.model import Edge, GraphNode, NodeKind, Overlap, RelType, node_from_props
from graph.query.filters import CountBy, GroupCount, PaperFilter, PaperOrder, PaperSort
from graph.query.traverse import RingWalk
from graph.query.vectors import UnitMatrix
from graph.store import fts
from graph.store.citereads import overlap_in_sql
from graph.store.rows import chunks, embedding_rows, loads, stored_attrs

_TYPES = {t.value: t for t in RelType}


class SqlBackend:
    """The Backend primitives as SQL over one connection (shared with the store, under its lock)."""

    batch_reads = True  # each call is a query: path searches load a region at once

    def __init__(self, conn: Callable[[], sqlite3.Connection], lock: threading.RLock) -> None:
        self._conn = conn
        self._lock = lock
        self._depth = 0
        self._matrix: tuple[int, UnitMatrix] | None = None

    # ------------------------------------------------------------------ plumbing
    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        with self._lock:
            outer = self._depth == 0 and not self._conn().in_transaction
            try:
                if outer:
                    self._conn().execute("BEGIN")
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                    if outer:
                        self._conn().execute("COMMIT")
            except sqlite3.Error as exc:
                raise StoreError(f"graph database read failed: {exc}") from exc

    def reading(self) -> contextlib.AbstractContextManager[object]:
        return self._reading()

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._reading():
            return self._conn().execute(sql, params).fetchall()

    def _in(self, sql: str, ids: Iterable[str], extra: Sequence[Any] = ()) -> list[Any]:
        """``sql`` with ``{ids}`` replaced by placeholders, run per chunk of ids."""
        out: list[Any] = []
        unique = list(dict.fromkeys(ids))
        for part in chunks(unique):
            marks = ",".join("?" * len(part))
            out.extend(self._rows(sql.format(ids=marks), [*part, *extra]))
        return out

    def _in_after(self, sql: str, ids: Iterable[str], params: Sequence[Any]) -> list[Any]:
        """:meth:`_in` with ``params`` bound before the ids."""
        out: list[Any] = []
        for part in chunks(list(dict.fromkeys(ids))):
            out.extend(self._rows(sql.format(ids=",".join("?" * len(part))), [*params, *part]))
        return out

    @staticmethod
    def _type_clause(
        types: frozenset[RelType] | None, column: str = "type"
    ) -> tuple[str, list[str]]:
        if types is None:
            return "", []
        values = sorted(t.value for t in types)
        return f" AND {column} IN ({','.join('?' * len(values))})", values

    @staticmethod
    def _edge(row: Sequence[Any]) -> Edge:
        s, t, typ, w, attrs = row
        try:
            return Edge(s, t, _TYPES[typ], float(w), stored_attrs(attrs))
        except (ValueError, TypeError, KeyError) as exc:  # a row not written by citegraph
            raise StoreError(f"the graph database has a damaged edge row: {exc}") from exc

    @staticmethod
    def _node(kind: str, props: str) -> GraphNode:
        try:
            return node_from_props(kind, loads(props))
        except (ValueError, TypeError, KeyError) as exc:
            raise StoreError(f"the graph database has a damaged row: {exc}") from exc

    # ------------------------------------------------------------------ nodes
    def get_nodes(self, ids: Sequence[str]) -> dict[str, GraphNode]:
        found = {
            nid: self._node(kind, props)
            for nid, kind, props in self._in(
                "SELECT id, kind, props FROM nodes WHERE id IN ({ids})", ids
            )
        }
        return {i: found[i] for i in ids if i in found}

    def nodes_named(self, keys: Sequence[str]) -> list[GraphNode]:
        rows = self._in(
            "SELECT DISTINCT n.id, n.kind, n.props FROM names k JOIN nodes n ON n.id = k.id"
            " WHERE k.key IN ({ids})",
            keys,
        )
        return [self._node(kind, props) for _, kind, props in rows]

    def odd_paper_ids(self) -> dict[str, str]:
        # a superset (any id with a character outside printable ASCII, a space included),
        # narrowed by odd_spellings; one scan of the papers, only after a lookup missed
        rows = self._rows(
            "SELECT id FROM nodes WHERE kind = ? AND id GLOB '*[^!-~]*' ORDER BY id",
            [NodeKind.PAPER.value],
        )
        return odd_spellings(nid for (nid,) in rows)

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
        where = ["n.kind = ?"]
        params: list[Any] = [NodeKind(kind).value]
        if venue is not None:
            where.append("json_extract(n.props, '$.venue') = ?")
            params.append(venue)
        if year is not None:
            where.append("json_extract(n.props, '$.year') = ?")
            params.append(year)
        if neighbor is not None:
            where.append(
                "n.id IN (SELECT target FROM edges WHERE source = ?"
                " UNION SELECT source FROM edges WHERE target = ?)"
            )
            params.extend([neighbor, neighbor])
        cond = " AND ".join(where)
        with self._reading():
            total = int(self._rows(f"SELECT COUNT(*) FROM nodes n WHERE {cond}", params)[0][0])  # noqa: S608 - fixed clauses, values bound
            rows = self._rows(
                f"SELECT n.kind, n.props FROM nodes n WHERE {cond} ORDER BY n.id"  # noqa: S608
                " LIMIT ? OFFSET ?",
                [*params, limit, offset],
            )
        return [self._node(k, p) for k, p in rows], total

    # ------------------------------------------------------------------ filters
    def match_papers(
        self, where: PaperFilter, sort: PaperSort | None, offset: int, limit: int | None,
        within: Sequence[str] | None = None,
    ) -> tuple[list[str], int]:
        cond, params = _paper_where(where)
        if within is not None:  # one JSON array parameter, however many ids
            cond += " AND n.id IN (SELECT value FROM json_each(?))"
            params.append(json.dumps(list(dict.fromkeys(within))))
        order = _ORDER_SQL[sort.by].format(dir="DESC" if sort.descending else "ASC") + ", " if (
            sort is not None) else ""
        with self._reading():
            total = int(self._rows(f"SELECT COUNT(*) FROM nodes n WHERE {cond}", params)[0][0])  # noqa: S608 - fixed clauses, values bound
            rows = self._rows(
                f"SELECT n.id FROM nodes n WHERE {cond} ORDER BY {order}n.id LIMIT ? OFFSET ?",  # noqa: S608
                [*params, -1 if limit is None else limit, offset],
            )
        return [r[0] for r in rows], total

    def count_papers(self, where: PaperFilter, by: CountBy, limit: int) -> list[GroupCount]:
        cond, params = _paper_where(where)
        if by is CountBy.CONCEPT:
            sql = (f"SELECT e.target, COUNT(DISTINCT n.id) FROM nodes n JOIN edges e"  # noqa: S608
                   f" ON e.source = n.id AND e.type = '{RelType.MENTIONS.value}'"
                   f" WHERE {cond} GROUP BY e.target ORDER BY 2 DESC, 1 LIMIT ?")
        elif by is CountBy.TOPIC:  # top-level topics: level 1
            sql = (f"SELECT e.target, COUNT(DISTINCT n.id) FROM nodes n JOIN edges e"  # noqa: S608
                   f" ON e.source = n.id AND e.type = '{RelType.IN_TOPIC.value}'"
                   " JOIN nodes t ON t.id = e.target AND json_extract(t.props, '$.level') = 1"
                   f" WHERE {cond} GROUP BY e.target ORDER BY 2 DESC, 1 LIMIT ?")
        else:
            key = _YEAR if by is CountBy.YEAR else _VENUE
            ranked = "1" if by is CountBy.YEAR else "2 DESC, 1"
            sql = (f"SELECT {key}, COUNT(*) FROM nodes n WHERE {cond} AND {key} IS NOT NULL"  # noqa: S608
                   f" GROUP BY 1 ORDER BY {ranked} LIMIT ?")
        rows = self._rows(sql, [*params, limit])
        return [GroupCount(k, int(c)) for k, c in rows]

    # ------------------------------------------------------------------ edges
    def incident_edges(self, ids: Sequence[str], types: frozenset[RelType] | None) -> list[Edge]:
        clause, values = self._type_clause(types)
        cols = "source, target, type, weight, attrs"
        with self._reading():
            rows = self._in(
                f"SELECT {cols} FROM edges WHERE source IN ({{ids}}){clause}", ids, values  # noqa: S608
            ) + self._in(
                f"SELECT {cols} FROM edges WHERE target IN ({{ids}}){clause}", ids, values  # noqa: S608
            )
        return [self._edge(r) for r in rows]

    def edges_among(self, ids: Sequence[str], types: frozenset[RelType] | None) -> list[Edge]:
        inside = set(ids)
        clause, values = self._type_clause(types)
        sql = f"SELECT source, target, type, weight, attrs FROM edges WHERE source IN ({{ids}}){clause}"  # noqa: E501, S608
        rows = self._in(sql, inside, values)
        return [self._edge(r) for r in rows if r[1] in inside]

    def ring_neighbors(
        self, ids: Collection[str], types: frozenset[RelType] | None
    ) -> dict[str, Collection[str]]:
        clause, values = self._type_clause(types)
        out: dict[str, list[str]] = {}
        with self._reading():
            known = {r[0] for r in self._in("SELECT id FROM nodes WHERE id IN ({ids})", ids)}
            for nid in known:
                out[nid] = []
            for u, v in self._in(
                f"SELECT source, target FROM edges WHERE source IN ({{ids}}){clause}", known, values  # noqa: S608
            ) + self._in(
                f"SELECT target, source FROM edges WHERE target IN ({{ids}}){clause}", known, values  # noqa: S608
            ):
                out[u].append(v)
        return dict(out)

    def ring_weights(
        self,
        ids: Collection[str],
        types: frozenset[RelType] | None,
        kinds: frozenset[NodeKind] | None,
        exclude: Collection[str],
    ) -> dict[str, float]:
        clause, values = self._type_clause(types, "e.type")
        skip = set(exclude)
        reach: dict[str, float] = defaultdict(float)
        with self._reading():
            out_sql = f"SELECT e.target, e.weight, n.kind FROM edges e JOIN nodes n ON n.id = e.target WHERE e.source IN ({{ids}}){clause}"  # noqa: E501, S608
            in_sql = f"SELECT e.source, e.weight, n.kind FROM edges e JOIN nodes n ON n.id = e.source WHERE e.target IN ({{ids}}){clause}"  # noqa: E501, S608
            rows = self._in(out_sql, ids, values) + self._in(in_sql, ids, values)
        for v, w, kind in rows:
            if v in skip or (kinds is not None and NodeKind(kind) not in kinds):
                continue
            reach[v] += float(w)
        return dict(reach)

    # ------------------------------------------------------------------ search
    def ring_top(
        self,
        ids: Sequence[str],
        types: frozenset[RelType] | None,
        kinds: frozenset[NodeKind] | None,
        exclude: Collection[str],
        room: int,
    ) -> tuple[list[str], int] | None:
        return None  # ranked from ring_weights by the query layer

    def incident_with_ends(
        self, ids: Sequence[str], types: frozenset[RelType] | None
    ) -> tuple[list[Edge], dict[str, GraphNode]]:
        with self._reading():
            edges = self.incident_edges(ids, types)
            ends = self.get_nodes(list({n for e in edges for n in (e.source, e.target)}))
        return edges, ends

    def walk(
        self,
        ids: Sequence[str],
        depth: int,
        types: frozenset[RelType] | None,
        kinds: frozenset[NodeKind] | None,
        limit: int,
    ) -> RingWalk | None:
        return None  # ring by ring: each call costs no round trip

    def nodes_and_edges(
        self, ids: Sequence[str], types: frozenset[RelType] | None
    ) -> tuple[dict[str, GraphNode], list[Edge]]:
        with self._reading():
            return self.get_nodes(ids), self.edges_among(ids, types)

    def citation_overlap(self, ids: Sequence[str], coupling: bool) -> list[Overlap]:
        with self._reading():
            return overlap_in_sql(self._in_after, ids, coupling)

    def keyword_candidates(
        self, terms: Sequence[str], kinds: frozenset[NodeKind] | None, limit: int
    ) -> list[tuple[str, float]]:
        with self._reading():
            return fts.search(self._conn(), terms, kinds, limit)

    def embeddings(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """Stored embeddings by paper id, read for those ids alone."""
        rows = self._in("SELECT id, dim, vector FROM embeddings WHERE id IN ({ids})", ids)
        found = dict(zip(*embedding_rows(iter(rows)), strict=True))
        return {pid: found[pid].tolist() for pid in ids if pid in found}

    def _embeddings(self) -> UnitMatrix:
        """The embedding matrix, read once per database state."""
        with self._reading():
            key = int(self._rows("SELECT COALESCE(MAX(seq), 0) FROM commits")[0][0])
            if self._matrix is None or self._matrix[0] != key:
                ids, matrix = embedding_rows(
                    iter(self._rows("SELECT id, dim, vector FROM embeddings ORDER BY id"))
                )
                self._matrix = (key, UnitMatrix(ids, matrix))
        return self._matrix[1]

    def vector_candidates(
        self, unit: np.ndarray[Any, Any], limit: int, exclude: frozenset[str]
    ) -> list[tuple[str, float]]:
        return self._embeddings().top(unit, limit, exclude)

    # ------------------------------------------------------------------ pages (exports)
    def node_page(self, after: str | None, limit: int) -> list[GraphNode]:
        """Keyset pages over the nodes' primary key."""
        if after is None:
            rows = self._rows("SELECT id, kind, props FROM nodes ORDER BY id LIMIT ?", [limit])
        else:
            rows = self._rows(
                "SELECT id, kind, props FROM nodes WHERE id > ? ORDER BY id LIMIT ?",
                [after, limit],
            )
        return [self._node(kind, props) for _, kind, props in rows]

    def edge_page(self, after: str | None, limit: int) -> list[Edge]:
        """Keyset pages over the edges' primary key (source, target, type): ``limit`` rows,
        then the rest of the last source's, in one read transaction."""
        cols = "SELECT source, target, type, weight, attrs FROM edges"
        with self._reading():
            db = self._conn()
            if after is None:
                rows = db.execute(f"{cols} ORDER BY source, target, type LIMIT ?",
                                  [limit]).fetchall()
            else:
                rows = db.execute(f"{cols} WHERE source > ? ORDER BY source, target, type "
                                  "LIMIT ?", [after, limit]).fetchall()
            if rows and len(rows) == limit:
                source, target, typ = rows[-1][:3]
                rows += db.execute(
                    f"{cols} WHERE source = ? AND (target, type) > (?, ?) ORDER BY target, type",
                    [source, target, typ],
                ).fetchall()
        return [self._edge(r) for r in rows]


_YEAR = "json_extract(n.props, '$.year')"
_VENUE = "json_extract(n.props, '$.venue')"
_IMPORTANCE = "json_extract(n.props, '$.importance')"
_TITLE = "COALESCE(json_extract(n.props, '$.title'), json_extract(n.props, '$.label'))"
#: ORDER BY terms of each sort key ({dir}: ASC or DESC); a missing year sorts last
_ORDER_SQL = {
    PaperOrder.YEAR: f"{_YEAR} IS NULL, {_YEAR} {{dir}}",
    PaperOrder.TITLE: f"{_TITLE} {{dir}}",
    # CITES only ever leaves a paper (graph.schema): the edges into n, by the target index
    PaperOrder.CITATIONS: "(SELECT COUNT(*) FROM edges c WHERE c.target = n.id AND c.type = "  # noqa: S608
    f"'{RelType.CITES.value}') {{dir}}",
    PaperOrder.IMPORTANCE: f"{_IMPORTANCE} IS NULL, {_IMPORTANCE} {{dir}}",
}


def _paper_where(where: PaperFilter) -> tuple[str, list[Any]]:
    """The SQL condition on ``nodes n`` of the papers ``where`` admits, and its values."""
    conds = ["n.kind = ?"]
    params: list[Any] = [NodeKind.PAPER.value]
    if where.year_from is not None:
        conds.append(f"{_YEAR} >= ?")
        params.append(where.year_from)
    if where.year_to is not None:
        conds.append(f"{_YEAR} <= ?")
        params.append(where.year_to)
    if where.venue_set:
        conds.append(f"{_VENUE} IN ({','.join('?' * len(where.venue_set))})")
        params.extend(where.venue_set)
    for ids, types in where.links():
        # each linked field: a seek of the edges_target index per id
        marks, type_marks = ",".join("?" * len(ids)), ",".join("?" * len(types))
        conds.append(
            f"n.id IN (SELECT e.source FROM edges e WHERE e.target IN ({marks})"  # noqa: S608
            f" AND e.type IN ({type_marks}))"
        )
        params.extend(ids)
        params.extend(sorted(t.value for t in types))
    return " AND ".join(conds), params
