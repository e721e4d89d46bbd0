"""A change as the embedded store's SQLite rows: checked and serialised before any write."""

from __future__ import annotations

import json
import math
import re
from collections.abc import (
    Collection,
    ItemsView,
    Iterable,
    Iterator,
    KeysView,
    Mapping,
    Sequence,
    ValuesView,
)
from typing import Any, Protocol

import numpy as np
import orjson

from graph.errors import StoreError
from graph.model import (
    UNDIRECTED,
    Edge,
    FixedAttrs,
    GraphChange,
    GraphNode,
    NodeKind,
    RelType,
    node_to_props,
)
from graph.query.search import names_of
from graph.store.memory import NetworkxStore

CHUNK = 500  # host parameters per IN (...) list


def edge_key(source: str, target: str, type_: str) -> str:
    """A deleted edge's key in ``tombstones``: a JSON list, whatever the ids contain."""
    return json.dumps([source, target, type_], ensure_ascii=False)


class JsonAttrs(Mapping[str, Any]):
    """An edge's attributes, decoded from their stored JSON on first access.

    Loading a graph decodes 100,000s of these, and most are never read (a traversal
    needs the weight and type only): decoding on demand halves the load time.
    """

    __slots__ = ("_data", "_raw")

    def __init__(self, raw: str) -> None:
        self._raw = raw
        self._data: dict[str, Any] | None = None

    def _decoded(self) -> dict[str, Any]:
        if self._data is None:
            self._data = dict(loads(self._raw))
        return self._data

    def __getitem__(self, key: str) -> Any:
        return self._decoded()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._decoded())

    def __len__(self) -> int:
        return len(self._decoded())

    def __repr__(self) -> str:
        return repr(self._decoded())

    # Mapping's get / in / views go through __getitem__ and __iter__ (Python calls and a
    # KeyError per miss); an add reads a few attrs of every stored SIMILAR_TO and
    # SHARES_TERM edge (~400k reads at 3k papers), so these answer from the dict
    def get(self, key: str, default: Any = None) -> Any:
        return self._decoded().get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._decoded()

    def keys(self) -> KeysView[str]:
        return self._decoded().keys()

    def items(self) -> ItemsView[str, Any]:
        return self._decoded().items()

    def values(self) -> ValuesView[Any]:
        return self._decoded().values()

    def _peek(self) -> dict[str, Any]:
        """The decoded attrs, not kept: a diff compares every stored edge once, and kept,
        the dicts of a rebuild's 1.3M stored edges were +0.5 GB (30k papers)."""
        return self._data if self._data is not None else dict(loads(self._raw))

    def __eq__(self, other: object) -> bool:
        # the decoded dicts compared in C: Mapping's __eq__ goes key by key through
        # __getitem__ (~0.9 s of an add's diff over the ICLR graph's stored edges)
        if isinstance(other, JsonAttrs):
            return self._raw == other._raw or self._peek() == other._peek()
        if isinstance(other, dict):
            return self._peek() == other
        if isinstance(other, Mapping):
            return self._peek() == dict(other)
        return NotImplemented

    def __hash__(self) -> int:  # a mapping is not hashable, as a dict is not
        raise TypeError(f"unhashable type: {type(self).__name__!r}")


NO_ATTRS = "{}"

# orjson serialises what json.dumps does (tuples as lists, str enums as their value) ~10x
# faster; the passthrough options send what json.dumps refuses (datetimes, dataclasses,
# subclasses such as numpy.float64) back to it, so both accept and refuse the same values
_ORJSON_OPTIONS = (
    orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def dumps(value: Any) -> str:
    """Compact JSON text of ``value`` as the store keeps it.

    Raises what ``json.dumps(allow_nan=False)`` raises (ValueError for NaN/inf, TypeError
    for what JSON cannot hold), and returns a lone surrogate as is (:func:`utf8` refuses
    it with the field's name). orjson writes NaN as null and refuses surrogates and
    non-str keys: those (and any text holding "null") take json.dumps' path.
    """
    try:
        out = orjson.dumps(value, option=_ORJSON_OPTIONS)
    except TypeError:
        out = None
    if out is None or b"null" in out:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return out.decode("utf-8")


_LONG_DIGITS = re.compile(r"\d{19}")


def loads(text: str) -> Any:
    """``json.loads(text)`` of a stored row, by orjson (~4x faster; the same values, floats
    to the bit) where it gives json's answer: not for a run of 19+ digits (orjson reads an
    integer past 64 bits as a float), nor for what it refuses (json then says why)."""
    if _LONG_DIGITS.search(text) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)


def stored_attrs(raw: str) -> Mapping[str, Any]:
    return {} if raw == NO_ATTRS else JsonAttrs(raw)


def utf8(text: str, what: str) -> str:
    """``text`` if it can be stored as UTF-8; StoreError naming ``what`` otherwise."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start : exc.end]
        raise StoreError(
            f"{what}: cannot be stored: contains {bad!r} (an unpaired surrogate); "
            "nothing was written"
        ) from None
    return text


class Rows:
    """A change serialised to rows, checked before any of it is written; its edges are
    checked and serialised part by part as they are written (:meth:`edge_rows`), inside
    the write's transaction, so a whole graph's rows are never all held at once."""

    __slots__ = ("_gone", "_stored", "_upserted", "delete_edges", "delete_nodes", "edges",
                 "embeddings", "link_settings", "matrix", "model", "names", "nodes")

    def __init__(self) -> None:
        self.delete_edges: list[tuple[str, str, str]] = []
        self.delete_nodes: list[str] = []
        self.nodes: list[tuple[str, str, str]] = []
        self.names: list[tuple[str, str]] = []  # (folded name, id) of the upserted nodes
        # the change's edges, normalised, in key order (stably: of two with one key the
        # change's last is written last, and wins, as in memory)
        self.edges: list[Edge] = []
        # (id, dimension, row of ``matrix``): each row made bytes as it is written, so a
        # build's vectors are not held twice (150 MB at 100k papers)
        self.embeddings: list[tuple[str, int, int]] = []
        self.matrix: np.ndarray | None = None
        self.model: str | None = None
        self.link_settings: str | None = None
        # what an edge's ends are checked against: the change's nodes, the stored ones
        # it names, and the ones it deletes
        self._upserted: Collection[str] = ()
        self._stored: Collection[str] = ()
        self._gone: Collection[str] = ()

    def edge_rows(self, start: int, stop: int) -> list[tuple[str, str, str, float, str]]:
        """``edges[start:stop]`` as rows (source, target, type, weight, attrs JSON);
        StoreError for an edge with an unknown end or attrs that cannot be stored."""
        upserted, stored, gone = self._upserted, self._stored, self._gone
        out = []
        for e in self.edges[start:stop]:
            s, t = e.source, e.target
            # (inlined: a call per end was a third of the edge loop at 100k papers)
            if not ((s in upserted or (s in stored and s not in gone))
                    and (t in upserted or (t in stored and t not in gone))):
                raise StoreError(f"{_edge_name(e)}: unknown endpoint; nothing was written")
            w = float(e.weight)
            if math.isnan(w):  # SQLite takes NaN as NULL and names no edge (probe 12 F4)
                raise StoreError(f"{_edge_name(e)}: weight is NaN; nothing was written")
            out.append((s, t, _TYPE_VALUES[e.type], w, _attrs_text(e)))
        return out


#: an enum's .value is a descriptor call: looked up once per type
_TYPE_VALUES = {t: t.value for t in RelType}


def _attrs_text(e: Edge) -> str:
    attrs = e.attrs
    if not attrs:
        return NO_ATTRS
    if type(attrs) is JsonAttrs and attrs._data is None and '"weight"' not in attrs._raw:
        return attrs._raw  # read from the store and never decoded: stored as it was
    # a build's millions of edges hold FixedAttrs: dict(attrs) looked each key up through
    # the Mapping protocol (a third of the edge rows' time)
    data = attrs if type(attrs) is dict else (
        attrs.as_dict() if isinstance(attrs, FixedAttrs) else dict(attrs))
    if "weight" in data and abs(float(data["weight"]) - e.weight) > 1e-9:
        raise StoreError(f"{_edge_name(e)}: attrs.weight != weight; nothing was written")
    try:
        text = dumps(data)
        text.encode("utf-8")
    except (TypeError, ValueError) as exc:
        if isinstance(exc, UnicodeEncodeError):
            utf8(text, _edge_name(e))  # says what it holds
        raise StoreError(
            f"{_edge_name(e)}: attrs cannot be stored ({exc}); nothing was written"
        ) from None
    return text


def _edge_name(e: Edge) -> str:
    return f"edge {_TYPE_VALUES[e.type]} {e.source!r} -> {e.target!r}"


def _edge_sort_key(e: Edge) -> tuple[str, str, str]:
    return (e.source, e.target, _TYPE_VALUES[e.type])


#: below this many edges a plain sort by key tuple (its keys' memory does not matter)
KEY_ORDER_SORT_BELOW = 50_000
_TYPE_RANKS = {t: i for i, t in enumerate(sorted(RelType, key=lambda t: t.value))}


def in_key_order(edges: Sequence[Edge]) -> list[Edge]:
    """``sorted(edges, key=(source, target, type value))``, stably, as one integer per
    edge (the ends' ranks among the ids) instead of a key tuple per edge: a whole graph's
    4.4M key tuples at 100k papers are ~320 MB on top of everything else."""
    n = len(edges)
    ids = sorted({e.source for e in edges} | {e.target for e in edges})
    span = len(ids) * len(ids) * len(_TYPE_RANKS)
    if n < KEY_ORDER_SORT_BELOW or span >= 2**63:
        return sorted(edges, key=_edge_sort_key)
    rank = {nid: i for i, nid in enumerate(ids)}
    width, kinds, types = len(ids), len(_TYPE_RANKS), _TYPE_RANKS
    keys = np.fromiter(
        ((rank[e.source] * width + rank[e.target]) * kinds + types[e.type] for e in edges),
        dtype=np.int64, count=n,
    )
    if n < 2 or bool((keys[1:] >= keys[:-1]).all()):
        return list(edges)
    # (no list of 4.4M Python ints: the positions are read one at a time)
    return [edges[i] for i in np.argsort(keys, kind="stable")]


def normalised(change: GraphChange) -> GraphChange:
    """Undirected edges with source < target, as stored."""
    flip = [
        e if e.type not in UNDIRECTED or e.source <= e.target
        else Edge(e.target, e.source, e.type, e.weight, e.attrs)
        for e in change.upsert_edges
    ]
    dels = [
        (t, s, typ) if typ in UNDIRECTED and s > t else (s, t, typ)
        for s, t, typ in change.delete_edges
    ]
    return GraphChange(
        upsert_nodes=change.upsert_nodes,
        delete_nodes=change.delete_nodes,
        upsert_edges=tuple(flip),
        delete_edges=tuple(dels),
        embedding_ids=change.embedding_ids,
        embeddings=change.embeddings,
        embedding_model=change.embedding_model,
        link_settings=change.link_settings,
    )


class Current(Protocol):
    """The stored graph as :func:`prepare` checks a change against it."""

    def node_kinds(self, ids: Collection[str]) -> dict[str, NodeKind]:
        """The kind of each stored node among ``ids`` (absent ids are left out)."""
        ...

    def vector_dims_other_than(self, dim: int) -> dict[str, int]:
        """Stored vectors whose dimension is not ``dim``: id -> dimension."""
        ...


class MirrorCurrent:
    """:class:`Current` over an in-memory graph."""

    def __init__(self, mirror: NetworkxStore) -> None:
        self._mirror = mirror

    def node_kinds(self, ids: Collection[str]) -> dict[str, NodeKind]:
        nodes = self._mirror.g.nodes
        return {nid: nodes[nid]["node"].kind for nid in ids if nid in nodes}

    def vector_dims_other_than(self, dim: int) -> dict[str, int]:
        ids, stored = self._mirror.embedding_matrix()
        if not stored.size or stored.shape[1] == dim:
            return {}
        return dict.fromkeys(ids, int(stored.shape[1]))


def prepare(change: GraphChange, current: Current) -> Rows:
    """Validate ``change`` against the graph as it is and serialise it; nothing is written.

    Only the stored nodes the change names are looked up, so that the check costs what
    the change does, not what the graph does.
    """
    change = normalised(change)
    rows = Rows()
    gone = set(change.delete_nodes)
    upserted = {n.id: n for n in change.upsert_nodes}
    named = {*change.delete_nodes, *change.embedding_ids}
    for e in change.upsert_edges:
        named.add(e.source)
        named.add(e.target)
    stored = current.node_kinds(named)

    def exists(nid: str) -> bool:
        return nid in upserted or (nid in stored and nid not in gone)

    for s, t, typ in change.delete_edges:
        rows.delete_edges.append((s, t, RelType(typ).value))
    rows.delete_nodes = [n for n in dict.fromkeys(change.delete_nodes) if n in stored]
    for node in change.upsert_nodes:
        utf8(node.id, f"node id {node.id!r}")
        try:
            props = dumps(node_to_props(node))
        except (TypeError, ValueError) as exc:
            raise StoreError(f"node {node.id!r}: cannot be stored ({exc})") from None
        rows.nodes.append((node.id, node.kind.value, utf8(props, f"node {node.id!r}")))
    rows.names = name_rows(change.upsert_nodes)
    # the edges are checked as they are written (Rows.edge_rows): a change of a whole
    # graph would otherwise hold every row at once (~1.5 GB at 100k papers)
    rows.edges = in_key_order(change.upsert_edges)
    rows._upserted, rows._stored, rows._gone = upserted, stored, gone
    if change.embedding_ids:
        matrix = np.asarray(change.embeddings, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(change.embedding_ids):
            raise StoreError("embeddings: need one row per embedding id; nothing was written")
        if not np.isfinite(matrix).all():
            raise StoreError("embeddings: not finite; nothing was written")
        other = current.vector_dims_other_than(int(matrix.shape[1]))
        kept = {pid for pid in other if pid not in gone} - set(change.embedding_ids)
        if kept:
            # one dimension for every vector: a new model must replace them all at once
            raise StoreError(
                f"embeddings: {matrix.shape[1]} dimensions, but {len(kept)} stored papers have "
                f"{other[min(kept)]}; nothing was written"
            )
        for at, pid in enumerate(change.embedding_ids):
            owner = upserted.get(pid)
            kind = owner.kind if owner is not None else (stored.get(pid) if exists(pid) else None)
            if kind is not NodeKind.PAPER:
                raise StoreError(
                    f"embedding for a paper not in the graph: {pid!r}; nothing was written"
                )
            rows.embeddings.append((pid, int(matrix.shape[1]), at))
        rows.matrix = matrix
    if change.embedding_model:
        rows.model = utf8(change.embedding_model, "embedding model name")
    if change.link_settings:
        rows.link_settings = utf8(change.link_settings, "link settings")
    return rows


def vector_rows(rows: Rows) -> Iterator[tuple[str, int, bytes]]:
    """``rows.embeddings`` as (id, dimension, little-endian float32 bytes), in id order."""
    matrix = rows.matrix
    for pid, dim, at in sorted(rows.embeddings):
        assert matrix is not None
        yield pid, dim, matrix[at].astype("<f4").tobytes()


def name_rows(nodes: Iterable[GraphNode]) -> list[tuple[str, str]]:
    """The (key, id) rows of the embedded store's ``names`` table for ``nodes``."""
    return [(key, n.id) for n in nodes for key in sorted(names_of(n))]


def embedding_rows(cursor: Iterator[Any]) -> tuple[list[str], np.ndarray]:
    ids: list[str] = []
    vecs: list[np.ndarray] = []
    for pid, dim, blob in cursor:
        ids.append(pid)
        vecs.append(np.frombuffer(blob, dtype="<f4", count=int(dim)))
    if not ids:
        return [], np.zeros((0, 0), dtype=np.float32)
    return ids, np.vstack(vecs).astype(np.float32)


#: bump when :func:`graph.query.search.names_of` folds names differently: the ``names``
#: table is then filled again on open
NAMES_VERSION = "1"


def chunks(items: Sequence[str]) -> Iterator[list[str]]:
    for i in range(0, len(items), CHUNK):
        yield list(items[i : i + CHUNK])
