"""The in-memory graph: a networkx MultiDiGraph plus an embedding matrix.

It answers every read of the embedded store (:mod:`graph.store.embedded`, whose SQLite
database is the truth and which keeps this mirror current), and serves alone where
no file is wanted (tests, benchmarks). ``path`` reads and :meth:`NetworkxStore.save`
writes the legacy single-file format, which the embedded store migrates on first open.

Legacy file format (docs/format.md): a ZIP archive holding ``manifest.json`` (format
version, counts, embedding model), ``nodes.jsonl`` (one ``{"kind", "props"}`` per
line), ``edges.jsonl`` (``{"source", "target", "type", "weight", "attrs"}``),
``embedding_ids.json`` and ``embeddings.npy`` (float32, loaded with
``allow_pickle=False``). Nothing in it is executable. Saves go to a temporary file
in the same folder, are fsynced, then renamed over the old file, so a crash
mid-write leaves the previous graph loadable.
"""

from __future__ import annotations

import contextlib
import heapq
import io
import json
import logging
import os
import tempfile
import threading
import zipfile
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from itertools import chain
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from graph.errors import StoreError
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
    Paper,
    RelType,
    Topic,
    node_from_props,
    node_to_props,
)
from graph.query import QueryLayer
from graph.query.ann import ApproximateIndex, ask_count
from graph.query.filters import (
    CountBy,
    GroupCount,
    PaperFilter,
    PaperOrder,
    PaperSort,
    ranked_groups,
    sort_value,
    sorted_ids,
)
from graph.query.search import names_of
from graph.query.traverse import Adjacent, RingWalk, adjacency
from graph.query.vectors import UnitMatrix
from graph.store.base import Backend, CollectedParts, PartsWrite, jsonable_attrs
from graph.store.citereads import overlap_in_memory
from graph.store.fts import MemoryIndex

#: answers keyword_candidates for a mirror whose index lives elsewhere (graph.db)
KeywordSource = Callable[[Sequence[str], frozenset[NodeKind] | None, int], list[tuple[str, float]]]

log = logging.getLogger(__name__)

FORMAT = "citegraph-graph"
FORMAT_VERSION = 1


#: a ring whose (neighbour, weight) entries number more than this is summed in numpy by
#: ring_top; below it the plain walk costs less than making the arrays
RING_ARRAYS_FROM = 2000


class NetworkxStore(QueryLayer):
    """In-process GraphStore; ``path`` None keeps it in memory only."""

    def __init__(
        self, path: Path | None = None, keyword_source: KeywordSource | None = None
    ) -> None:
        self.path = path
        #: where keyword search reads, when not from this store's own index
        self.keyword_source = keyword_source
        # the FTS5 index, built on the first keyword search and kept current from then on
        self._fts: MemoryIndex | None = None
        self._lock = threading.RLock()
        self._write_lock = threading.RLock()
        self._changes = 0  # bumped by every applied change (version())
        # node id -> [(neighbour, edge weight)] in adjacency order (out-edges, then in-edges),
        # made on a node's first visit by an untyped ring_weights and dropped by any change
        self._weighted: dict[str, list[tuple[str, float]]] = {}
        # node id -> every edge touching it (out, then in), likewise: paths walk untyped
        self._touching: dict[str, list[Edge]] = {}
        # node id -> [(neighbour, best edge)] by neighbour over those edges, likewise:
        # the lists k paths and shortest paths walk, sorted once per version, not per query
        self._adjacent: dict[str, Adjacent] = {}
        # node id -> [(target, edge)] of its out-edges, likewise: what edges_among walks
        self._out: dict[str, list[tuple[str, Edge]]] = {}
        # the same (neighbour, weight) lists as _weighted, as arrays of neighbour numbers
        # (into _numbered's ids) and weights, likewise: what ring_top sums in numpy
        self._numbered: tuple[dict[str, int], list[str]] | None = None
        self._weight_arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._paper_ids: list[str] | None = None  # the papers, for filters; None: not read
        self._cited: Counter[str] | None = None  # each node's CITES in-degree, likewise
        self._stats: tuple[int, GraphStats] | None = None
        self.g: nx.MultiDiGraph = nx.MultiDiGraph()
        self._emb_ids: list[str] = []
        self._emb: np.ndarray = np.zeros((0, 0), dtype=np.float32)
        self._emb_index: dict[str, int] = {}
        # big graphs: an HNSW index of the embeddings for vector search (graph.query.ann)
        self._ann = ApproximateIndex()
        self._vectors = UnitMatrix([], self._emb)
        self._model: str | None = None
        self._link_settings: str | None = None
        self._alias_index: dict[str, list[str]] | None = None
        self._odd_ids: dict[str, str] | None = None
        # node id -> edge type -> the edges of that type touching it (either way): a typed
        # read (related papers' terms, a paper's concepts) looks at those edges alone instead
        # of every neighbour's, e.g. the ~600 SHARES_TERM/SIMILAR_TO edges of 60 candidate
        # papers that related() skips. Built with the graph, kept current by every change.
        self._by_type: dict[str, dict[RelType, list[Edge]]] = {}
        if path is not None and path.exists():
            self._load(path)

    # ------------------------------------------------------------------ lifecycle
    def ping(self) -> None:
        return None

    def version(self) -> str:
        return f"memory:{id(self)}:{self._changes}"

    @contextlib.contextmanager
    def writer(self, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
        """One writer at a time within this process (the graph lives in it alone)."""
        with self._write_lock:
            yield

    def close(self) -> None:
        self._ann.close()

    # ------------------------------------------------------------------ persistence
    def _load(self, path: Path) -> None:
        try:
            with zipfile.ZipFile(path) as zf:
                manifest = json.loads(zf.read("manifest.json"))
                if manifest.get("format") != FORMAT:
                    raise StoreError(f"{path}: not a citegraph graph file")
                if int(manifest.get("version", 0)) > FORMAT_VERSION:
                    raise StoreError(
                        f"{path}: written by a newer citegraph (format {manifest['version']})"
                    )
                data = GraphData(embedding_model=manifest.get("embedding_model"),
                                 link_settings=manifest.get("link_settings"))
                for line in zf.read("nodes.jsonl").decode("utf-8").splitlines():
                    row = json.loads(line)
                    node = node_from_props(row["kind"], row["props"])
                    data.nodes[node.id] = node
                for line in zf.read("edges.jsonl").decode("utf-8").splitlines():
                    row = json.loads(line)
                    data.add_edge(
                        Edge(
                            row["source"],
                            row["target"],
                            RelType(row["type"]),
                            float(row["weight"]),
                            row.get("attrs", {}),
                        )
                    )
                data.embedding_ids = json.loads(zf.read("embedding_ids.json"))
                data.embeddings = np.load(io.BytesIO(zf.read("embeddings.npy")), allow_pickle=False)
        except StoreError:
            raise
        except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
            raise StoreError(f"cannot read graph file {path}: {exc}") from exc
        self._replace(data)

    def save(self, path: Path | None = None) -> Path:
        """Write the graph atomically (temp file + fsync + rename)."""
        target = path or self.path
        if target is None:
            raise StoreError("this store has no file to save to")
        target.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            data = self.snapshot()
        _remove_stale_temp_files(target)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; a graph file is not secret
            with os.fdopen(fd, "wb") as fh:
                with zipfile.ZipFile(
                    fh, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1
                ) as zf:
                    zf.writestr("manifest.json", json.dumps(self._manifest(data), indent=2))
                    zf.writestr("nodes.jsonl", "".join(_node_line(n) for n in _sorted_nodes(data)))
                    zf.writestr(
                        "edges.jsonl",
                        "".join(
                            _edge_line(data.edges[k]) for k in sorted(data.edges, key=_key_str)
                        ),
                    )
                    zf.writestr("embedding_ids.json", json.dumps(data.embedding_ids))
                    buf = io.BytesIO()
                    np.save(buf, np.asarray(data.embeddings, dtype=np.float32), allow_pickle=False)
                    zf.writestr("embeddings.npy", buf.getvalue())
                fh.flush()
                os.fsync(fh.fileno())
            Path(tmp).replace(target)
            _fsync_dir(target.parent)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return target

    def _manifest(self, data: GraphData) -> dict[str, Any]:
        stats = self.stats()
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "embedding_model": data.embedding_model,
            "link_settings": data.link_settings,
            "embedding_dim": int(self._emb.shape[1]) if self._emb.size else 0,
            "nodes": dict(stats.nodes),
            "edges": dict(stats.edges),
        }

    # ------------------------------------------------------------------ writes
    def _replace(self, data: GraphData) -> None:
        with self._lock:
            g = nx.MultiDiGraph()
            g.add_nodes_from((node.id, {"node": node}) for node in data.nodes.values())
            rows = []
            for edge in data.edges.values():
                if edge.source not in g or edge.target not in g:
                    raise StoreError(
                        f"edge {edge.type} {edge.source} -> {edge.target}: unknown endpoint"
                    )
                if edge.type in UNDIRECTED and edge.source > edge.target:
                    edge = Edge(edge.target, edge.source, edge.type, edge.weight, edge.attrs)
                rows.append((edge.source, edge.target, edge.type, {"edge": edge}))
            g.add_edges_from(rows)  # one call: far less per-edge overhead than add_edge
            self.g = g
            self._by_type = _typed_index(row[3]["edge"] for row in rows)
            emb = data.embeddings
            if emb is None:
                emb = np.zeros((0, 0), dtype=np.float32)
            self._set_embeddings(list(data.embedding_ids), np.asarray(emb, dtype=np.float32))
            self._model = data.embedding_model
            self._link_settings = data.link_settings
            self._alias_index = self._odd_ids = None
            self._drop_index()
            self._changes += 1
            self._drop_lists()

    def _drop_lists(self) -> None:
        # new dicts, never emptied in place: a read that holds the old ones ends on them
        self._weighted = {}
        self._touching = {}
        self._adjacent = {}
        self._out = {}
        self._numbered = None
        self._weight_arrays = {}
        self._paper_ids = None
        self._cited = None

    def _drop_index(self) -> None:
        # not closed: a search running on it meanwhile finishes on the old state
        self._fts = None

    def _index_change(self, change: GraphChange) -> None:
        """Keep the keyword index (if built) current with a change the graph just took."""
        if self._fts is not None:
            self._fts.apply(change.upsert_nodes, change.delete_nodes)

    def _add_edge(self, edge: Edge) -> None:
        if edge.source not in self.g or edge.target not in self.g:
            raise StoreError(f"edge {edge.type} {edge.source} -> {edge.target}: unknown endpoint")
        if edge.type in UNDIRECTED and edge.source > edge.target:
            edge = Edge(edge.target, edge.source, edge.type, edge.weight, edge.attrs)
        if self.g.has_edge(edge.source, edge.target, key=edge.type):
            self._unindex(edge.source, edge.target, edge.type)
        self.g.add_edge(edge.source, edge.target, key=edge.type, edge=edge)
        for end in {edge.source, edge.target}:
            self._by_type.setdefault(end, {}).setdefault(edge.type, []).append(edge)

    def _add_edges(self, edges: Sequence[Edge]) -> None:
        """:meth:`_add_edge` of each, in order, with each list of the typed index that
        loses replaced edges filtered once, not once per edge (O(degree) each: an add of
        10 papers on ICLR 2021 replaces ~5k stored rows, many at the same papers)."""
        g = self.g
        todo: list[Edge] = []
        keys: set[tuple[str, str, RelType]] = set()
        for edge in edges:
            if edge.source not in g or edge.target not in g:
                raise StoreError(
                    f"edge {edge.type} {edge.source} -> {edge.target}: unknown endpoint"
                )
            if edge.type in UNDIRECTED and edge.source > edge.target:
                edge = Edge(edge.target, edge.source, edge.type, edge.weight, edge.attrs)
            todo.append(edge)
            keys.add((edge.source, edge.target, edge.type))
        if len(keys) != len(todo):  # an edge twice in one change: the later one wins
            for edge in todo:
                self._add_edge(edge)
            return
        drop: dict[tuple[str, RelType], set[tuple[str, str]]] = defaultdict(set)
        for e in todo:
            if g.has_edge(e.source, e.target, key=e.type):
                for end in {e.source, e.target}:
                    drop[(end, e.type)].add((e.source, e.target))
        for (end, typ), gone in drop.items():
            lst = self._by_type.get(end, {}).get(typ)
            if lst:
                lst[:] = [x for x in lst if (x.source, x.target) not in gone]
        for e in todo:
            g.add_edge(e.source, e.target, key=e.type, edge=e)
            for end in {e.source, e.target}:
                self._by_type.setdefault(end, {}).setdefault(e.type, []).append(e)

    def _unindex(self, source: str, target: str, typ: RelType) -> None:
        """Drop the edge (source, target, typ) from the typed index (O(degree))."""
        for end in {source, target}:
            edges = self._by_type.get(end, {}).get(typ)
            if edges:
                edges[:] = [e for e in edges if e.source != source or e.target != target]

    def _set_embeddings(self, ids: list[str], matrix: np.ndarray) -> None:
        self._emb_ids = ids
        self._emb = matrix
        self._emb_index = {pid: i for i, pid in enumerate(ids)}
        self._vectors = UnitMatrix(ids, matrix)
        self._ann.follow(self._vectors)

    @contextlib.contextmanager
    def write_in_parts(self) -> Iterator[PartsWrite]:
        """:meth:`GraphStore.write_in_parts`: the parts kept, then applied as one change."""
        yield CollectedParts(self.apply)

    def apply(self, change: GraphChange) -> None:
        """Apply a diff; on error the in-memory graph is restored to what it was."""
        with self._lock:
            backup = (self.g.copy(), self._emb_ids, self._emb, self._model, self._link_settings)
            try:
                self._apply(change)
                self._index_change(change)  # one transaction: on error it took nothing
            except Exception:
                self.g, ids, emb, self._model, self._link_settings = backup
                self._set_embeddings(ids, emb)
                self._by_type = _typed_index(a["edge"] for _, _, a in self.g.edges(data=True))
                raise
            finally:
                self._alias_index = self._odd_ids = None
                self._changes += 1
                self._drop_lists()

    def apply_trusted(self, change: GraphChange) -> None:
        """Apply a diff already checked (and committed) by the caller, without a backup.

        The embedded database store feeds its mirror through this: copying the whole
        graph to undo a change that cannot fail would make every write cost O(N).
        """
        with self._lock:
            try:
                self._apply(change)
                self._index_change(change)
            except Exception:
                self._drop_index()  # built again from the graph on the next search
                self._by_type = _typed_index(a["edge"] for _, _, a in self.g.edges(data=True))
                raise
            finally:
                self._alias_index = self._odd_ids = None
                self._changes += 1
                self._drop_lists()

    def _apply(self, change: GraphChange) -> None:
        for s, t, typ in change.delete_edges:
            if typ in UNDIRECTED and s > t:
                s, t = t, s
            if self.g.has_edge(s, t, key=typ):
                self.g.remove_edge(s, t, key=typ)
                self._unindex(s, t, typ)
        removed = set(change.delete_nodes)
        for n in change.delete_nodes:
            for typ, edges in self._by_type.pop(n, {}).items():
                for e in edges:
                    other = e.target if e.source == n else e.source
                    if other != n:
                        self._unindex(e.source, e.target, typ)
        self.g.remove_nodes_from([n for n in change.delete_nodes if n in self.g])
        for node in change.upsert_nodes:
            if node.id in self.g:
                self.g.nodes[node.id]["node"] = node
            else:
                self.g.add_node(node.id, node=node)
        self._add_edges(change.upsert_edges)
        ids = [pid for pid in self._emb_ids if pid not in removed and pid in self.g]
        rows = [self._emb_index[pid] for pid in ids]
        matrix = self._emb[rows] if self._emb.size else self._emb
        if change.embedding_ids:
            unknown = [pid for pid in change.embedding_ids if pid not in self.g]
            if unknown:
                raise StoreError(f"embedding for a paper not in the graph: {unknown[0]!r}")
            new = np.asarray(change.embeddings, dtype=np.float32)
            index = {pid: i for i, pid in enumerate(ids)}
            extra_ids, extra_rows = [], []
            if matrix.size == 0:
                matrix = np.zeros((len(ids), new.shape[1]), dtype=np.float32)
            matrix = matrix.copy()
            for pid, vec in zip(change.embedding_ids, new, strict=True):
                if pid in index:
                    matrix[index[pid]] = vec
                else:
                    extra_ids.append(pid)
                    extra_rows.append(vec)
            if extra_rows:
                matrix = np.vstack([matrix, np.asarray(extra_rows, dtype=np.float32)])
            ids = ids + extra_ids
        self._set_embeddings(ids, matrix)
        if change.embedding_model:
            self._model = change.embedding_model
        if change.link_settings:
            self._link_settings = change.link_settings

    def clear(self) -> None:
        self._replace(GraphData())

    # ------------------------------------------------------------------ reads
    def _node(self, nid: str) -> GraphNode:
        node: GraphNode = self.g.nodes[nid]["node"]
        return node

    def get_nodes(self, ids: Sequence[str]) -> dict[str, GraphNode]:
        return {i: self._node(i) for i in ids if i in self.g}

    # ------------------------------------------------------------------ the Backend primitives
    batch_reads = False  # every call is in-process: load only what a search visits

    def read_backend(self) -> Backend:
        return self

    def reading(self) -> AbstractContextManager[object]:
        return self._lock

    def _aliases(self) -> dict[str, list[str]]:
        if self._alias_index is None:
            index: dict[str, list[str]] = defaultdict(list)
            for nid, attrs in self.g.nodes(data=True):
                for key in names_of(attrs["node"]):
                    index[key].append(nid)
            self._alias_index = {k: sorted(v) for k, v in index.items()}
        return self._alias_index

    def nodes_named(self, keys: Sequence[str]) -> list[GraphNode]:
        aliases = self._aliases()
        return [self._node(nid) for key in keys for nid in aliases.get(key, [])]

    def odd_paper_ids(self) -> dict[str, str]:
        if self._odd_ids is None:
            self._odd_ids = odd_spellings(
                sorted(nid for nid, a in self.g.nodes(data=True)
                       if a["node"].kind is NodeKind.PAPER)
            )
        return self._odd_ids

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
        if neighbor is not None:
            if neighbor not in self.g:
                return [], 0
            pool: Iterable[str] = set(self.g._succ[neighbor]) | set(self.g._pred[neighbor])
        else:
            pool = self.g.nodes
        matches = []
        for nid in pool:
            node = self._node(nid)
            if node.kind is not kind:
                continue
            if venue is not None and getattr(node, "venue", None) != venue:
                continue
            if year is not None and getattr(node, "year", None) != year:
                continue
            matches.append(node)
        matches.sort(key=lambda n: n.id)
        return matches[offset : offset + limit], len(matches)

    # ---- filters (graph.query.filters): the reference every other store must match
    def _edges_into(self, nid: str, typ: RelType) -> list[Edge]:
        return [e for e in self._by_type.get(nid, {}).get(typ, ()) if e.target == nid]

    def _papers(self) -> list[str]:
        """Every paper's id (kept until the graph changes: a filter reads it each time)."""
        ids = self._paper_ids
        if ids is None:
            ids = [n for n, d in self.g.nodes(data="node") if d.kind is NodeKind.PAPER]
            self._paper_ids = ids
        return ids

    def _citations(self) -> Counter[str]:
        """How many papers cite each node (kept until the graph changes)."""
        cited = self._cited
        if cited is None:
            by_type = self._by_type
            # CITES only ever leaves a paper (graph.schema)
            cited = Counter(e.target for nid in self._papers()
                            for e in by_type.get(nid, {}).get(RelType.CITES, ())
                            if e.source == nid)
            self._cited = cited
        return cited

    def _matching(self, where: PaperFilter, pool: Iterable[str] | None) -> list[str]:
        linked = [{e.source for nid in ids for t in types for e in self._edges_into(nid, t)}
                  for ids, types in where.links()]
        if pool is None:  # the smallest linked set, else every paper
            pool = min(linked, key=len) if linked else self._papers()
        nodes = self.g._node  # networkx's own dict: its views cost a call per node
        admits, out = where.admits_fields, []
        for nid in pool:
            data = nodes.get(nid)
            if data is None:
                continue
            node = data["node"]
            if node.kind is NodeKind.PAPER and admits(node) and all(nid in s for s in linked):
                out.append(nid)
        return out

    def match_papers(
        self, where: PaperFilter, sort: PaperSort | None, offset: int, limit: int | None,
        within: Sequence[str] | None = None,
    ) -> tuple[list[str], int]:
        ids = self._matching(where, None if within is None else dict.fromkeys(within))
        values: dict[str, float | str | None] = {}
        if sort is not None:
            cited = self._citations() if sort.by is PaperOrder.CITATIONS else Counter()
            for nid in ids:
                node = self._node(nid)
                assert isinstance(node, Paper)
                values[nid] = sort_value(sort, node, cited[nid])
        order = sorted_ids(ids, sort, values)
        end = None if limit is None else offset + limit
        return order[offset:end], len(order)

    def _top_level(self, nid: str) -> bool:
        node = self._node(nid)
        return isinstance(node, Topic) and node.level == 1

    def count_papers(self, where: PaperFilter, by: CountBy, limit: int) -> list[GroupCount]:
        counts: Counter[int | str] = Counter()
        for nid in self._matching(where, None):
            if by is CountBy.CONCEPT:
                counts.update({e.target for e in self._by_type.get(nid, {}).get(
                    RelType.MENTIONS, ()) if e.source == nid})
                continue
            if by is CountBy.TOPIC:
                counts.update({e.target for e in self._by_type.get(nid, {}).get(
                    RelType.IN_TOPIC, ()) if e.source == nid and self._top_level(e.target)})
                continue
            node = self._node(nid)
            assert isinstance(node, Paper)
            key = node.year if by is CountBy.YEAR else node.venue
            if key is not None:
                counts[key] += 1
        return ranked_groups(dict(counts), by, limit)

    # The walks below read networkx's adjacency dicts directly: its edge views build a
    # tuple per edge, and a depth-2 neighbourhood on a 3k-paper graph visits ~20,000.

    def incident_edges(self, ids: Sequence[str], types: frozenset[RelType] | None) -> list[Edge]:
        if types is not None:
            by_type, wanted = self._by_type, sorted(types)
            typed: list[Edge] = []
            for nid in ids:
                mine = by_type.get(nid)
                if mine:
                    for t in wanted:
                        edges = mine.get(t)
                        if edges:
                            typed.extend(edges)
            return typed
        out: list[Edge] = []
        succ, pred, touching = self.g._succ, self.g._pred, self._touching
        for nid in ids:
            edges = touching.get(nid)
            if edges is None:
                if nid not in succ:
                    continue
                edges = touching[nid] = [
                    attrs["edge"]
                    for adj in (succ[nid], pred[nid])
                    for keys in adj.values()
                    for attrs in keys.values()
                ]
            out.extend(edges)
        return out

    def adjacent(self, ids: Sequence[str]) -> dict[str, Adjacent]:
        """For each of ``ids``: :func:`~graph.query.traverse.adjacency` of every edge
        touching it ((neighbour, best edge), by neighbour; [] for an unknown id), made on a
        node's first visit and kept until the next change, as the lists above."""
        kept = self._adjacent
        todo = [i for i in ids if i not in kept]
        if todo:
            kept.update(adjacency(self.incident_edges(todo, None), todo))
        return {i: kept[i] for i in ids}

    def edges_among(self, ids: Sequence[str], types: frozenset[RelType] | None) -> list[Edge]:
        inside = set(ids)
        edges: list[Edge] = []
        kept = self._out
        # every edge among the nodes is an out-edge of exactly one of them; a flat kept
        # list per node is walked by one comprehension (a depth-2 neighbourhood's 200
        # nodes have ~8,000 out-edges on ICLR 2021, ~2,500 of them inside: 2.4x faster
        # than walking the adjacency dicts)
        for u in inside:
            out = kept.get(u)
            if out is None:
                out = kept[u] = [
                    (v, attrs["edge"]) for v, keys in self.g._succ[u].items()
                    for attrs in keys.values()
                ]
            if types is None:
                edges += [e for v, e in out if v in inside]
            else:
                edges += [e for v, e in out if v in inside and e.type in types]
        return edges

    def incident_with_ends(
        self, ids: Sequence[str], types: frozenset[RelType] | None
    ) -> tuple[list[Edge], dict[str, GraphNode]]:
        edges = self.incident_edges(ids, types)
        return edges, self.get_nodes(list({n for e in edges for n in (e.source, e.target)}))

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
        return self.get_nodes(ids), self.edges_among(ids, types)

    def citation_overlap(self, ids: Sequence[str], coupling: bool) -> list[Overlap]:
        return overlap_in_memory(self.g._succ, self.g._pred, ids, coupling)

    def ring_neighbors(
        self, ids: Collection[str], types: frozenset[RelType] | None
    ) -> dict[str, Collection[str]]:
        succ, pred = self.g._succ, self.g._pred
        if types is None:
            return {u: [*succ[u], *pred[u]] for u in ids if u in succ}
        return {
            u: [v for adj in (succ[u], pred[u]) for v, keys in adj.items()
                if not types.isdisjoint(keys)]
            for u in ids
            if u in succ
        }

    def ring_weights(
        self,
        ids: Collection[str],
        types: frozenset[RelType] | None,
        kinds: frozenset[NodeKind] | None,
        exclude: Collection[str],
    ) -> dict[str, float]:
        reach: dict[str, float] = defaultdict(float)
        node_attrs = self.g._node
        succ, pred = self.g._succ, self.g._pred
        if types is None and kinds is None:
            # the hot loop of a depth-2 neighbourhood (~20,000 visits on ICLR 2021), over
            # flat (neighbour, weight) lists: the same additions in the same order as the
            # walk below, so every sum is bit for bit the same
            weighted, flat = self._weighted, self._flat_weights
            for u in ids:
                pairs = weighted.get(u)
                if pairs is None:
                    pairs = weighted[u] = flat(u)
                for v, w in pairs:
                    if v not in exclude:
                        reach[v] += w
            return reach
        # the filters are tested once per neighbour, not once per edge, and not at all when off
        for u in ids:
            for adj in (succ[u], pred[u]):
                for v, keys in adj.items():
                    if v in exclude:
                        continue
                    if kinds is not None and node_attrs[v]["node"].kind not in kinds:
                        continue
                    if types is None:
                        for attrs in keys.values():
                            reach[v] += attrs["edge"].weight
                    else:
                        for key, attrs in keys.items():
                            if key in types:
                                reach[v] += attrs["edge"].weight
        return reach

    def ring_top(
        self,
        ids: Sequence[str],
        types: frozenset[RelType] | None,
        kinds: frozenset[NodeKind] | None,
        exclude: Collection[str],
        room: int,
    ) -> tuple[list[str], int] | None:
        """:func:`~graph.query.traverse.ring_top` over ``ring_weights``' sums, in numpy.

        The first ``room`` of the ring's reach by (-round(weight, 9), id), and how many
        nodes it reached; None where the plain walk serves as well (a filter, a small
        ring). The sums are ``ring_weights``' bit for bit: ``np.bincount`` adds each
        node's weights in input order from 0.0, and the input is the same lists in the
        same order. What it spares is a Python step per reached node: a depth-2 ring
        through a concept that half the papers mention reaches half the graph.
        """
        if types is not None or kinds is not None or room <= 0:
            return None
        weighted = self._weighted
        size = 0
        for u in ids:
            pairs = weighted.get(u)
            if pairs is None:
                pairs = weighted[u] = self._flat_weights(u)
            size += len(pairs)
        if size <= RING_ARRAYS_FROM:
            return None
        numbered = self._numbered
        if numbered is None:
            order = list(self.g._node)
            numbered = self._numbered = ({n: i for i, n in enumerate(order)}, order)
        number, names = numbered
        arrays = self._weight_arrays
        parts = []
        for u in ids:
            got = arrays.get(u)
            if got is None:
                pairs = weighted[u]
                got = arrays[u] = (
                    np.fromiter((number[v] for v, _ in pairs), dtype=np.intp, count=len(pairs)),
                    np.fromiter((w for _, w in pairs), dtype=np.float64, count=len(pairs)),
                )
            parts.append(got)
        at = np.concatenate([a for a, _ in parts])
        sums = np.bincount(at, weights=np.concatenate([w for _, w in parts]),
                           minlength=len(names))
        reached = np.zeros(len(names), dtype=bool)
        reached[at] = True
        gone = [number[x] for x in exclude if x in number]
        reached[gone] = False
        found = np.flatnonzero(reached)
        weights = sums[found]
        if len(found) > room and np.isfinite(weights).all():
            # as _near_top: round() moves no weight by more than 1e-9, so the first `room`
            # under it all weigh at least the room-th largest less 1e-9
            cut = float(np.partition(weights, len(weights) - room)[len(weights) - room]) - 1e-8
            near = weights >= cut
            found, weights = found[near], weights[near]
        # Python's round(), not numpy's (which scales, rounds and unscales: not always
        # the same last bit), so the keys are the plain walk's to the bit
        ranked = sorted(
            (-round(w, 9), names[i])
            for w, i in zip(weights.tolist(), found.tolist(), strict=True)
        )
        return [v for _, v in ranked[:room]], int(np.count_nonzero(reached))

    def _flat_weights(self, u: str) -> list[tuple[str, float]]:
        return [
            (v, attrs["edge"].weight)
            for adj in (self.g._succ[u], self.g._pred[u])
            for v, keys in adj.items()
            for attrs in keys.values()
        ]

    def keyword_candidates(
        self, terms: Sequence[str], kinds: frozenset[NodeKind] | None, limit: int
    ) -> list[tuple[str, float]]:
        if self.keyword_source is not None:
            return self.keyword_source(terms, kinds, limit)
        index = self._fts
        if index is None:
            with self._lock:
                if self._fts is None:
                    self._fts = MemoryIndex(attrs["node"] for _, attrs in self.g.nodes(data=True))
                index = self._fts
        return index.search(terms, kinds, limit)

    def vector_candidates(
        self, unit: np.ndarray[Any, Any], limit: int, exclude: frozenset[str]
    ) -> list[tuple[str, float]]:
        vectors = self._vectors
        index = self._ann.ready_for(vectors)
        if index is None:
            return vectors.top(unit, limit, exclude)
        found = self._ann.candidates(index, unit.astype(np.float32), ask_count(limit, exclude))
        return vectors.top(unit, limit, exclude, among=found)

    def embeddings(self, ids: Sequence[str]) -> dict[str, list[float]]:
        return {
            pid: self._emb[self._emb_index[pid]].tolist() for pid in ids if pid in self._emb_index
        }

    def embedding_rows(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """:meth:`embeddings` as float64 arrays: the same values, no list per paper."""
        emb, at = self._emb, self._emb_index
        return {pid: emb[at[pid]].astype(np.float64) for pid in ids if pid in at}

    def embedding_matrix(self) -> tuple[list[str], np.ndarray]:
        """All embeddings at once (ids, float32 matrix) - the fast path for the pipeline."""
        return list(self._emb_ids), self._emb

    def embedding_model(self) -> str | None:
        return self._model

    def stats(self) -> GraphStats:
        """Counts, kept until the next change (a count over every edge costs ~0.1 s at 3k)."""
        with self._lock:
            cached = self._stats
            if cached is not None and cached[0] == self._changes:
                return cached[1]
            nodes = {k.value: 0 for k in NodeKind}
            for kind, n in Counter(a["node"].kind for a in self.g._node.values()).items():
                nodes[kind.value] = n
            # the adjacency dicts directly: networkx's edge view costs ~3x as much per edge,
            # and a write asks for the counts after every change
            by_key: Counter[str] = Counter(chain.from_iterable(
                keys for nbrs in self.g._succ.values() for keys in nbrs.values()
            ))
            edges = {t.value: 0 for t in RelType}
            for key, n in by_key.items():
                edges[RelType(key).value] += n
            result = GraphStats(nodes=nodes, edges=edges)
            self._stats = (self._changes, result)
            return result

    def versioned_snapshot(self) -> tuple[GraphData, str]:
        """The whole graph and the :meth:`version` it is at, read together."""
        with self._lock:
            return self.snapshot(), self.version()

    def snapshot(self) -> GraphData:
        with self._lock:
            data = GraphData(embedding_model=self._model, link_settings=self._link_settings)
            for nid, attrs in self.g.nodes(data=True):
                data.nodes[nid] = attrs["node"]
            for _, _, attrs in self.g.edges(data=True):
                data.add_edge(attrs["edge"])
            data.embedding_ids = list(self._emb_ids)
            data.embeddings = self._emb.copy()
            return data

    # ------------------------------------------------------------------ pages (exports)
    def node_page(self, after: str | None, limit: int) -> list[GraphNode]:
        with self._lock:
            ids = heapq.nsmallest(
                limit, (n for n in self.g._node if after is None or n > after)
            )
            return [self._node(i) for i in ids]

    def edge_page(self, after: str | None, limit: int) -> list[Edge]:
        with self._lock:
            succ = self.g._succ
            sources = heapq.nsmallest(
                limit, (s for s, out in succ.items() if out and (after is None or s > after))
            )
            page: list[Edge] = []
            for s in sources:
                edges = [a["edge"] for keys in succ[s].values() for a in keys.values()]
                edges.sort(key=lambda e: (e.target, e.type.value))
                page += edges
                if len(page) >= limit:
                    break
            return page


def _typed_index(edges: Iterable[Edge]) -> dict[str, dict[RelType, list[Edge]]]:
    """node id -> edge type -> the edges of that type touching the node."""
    index: dict[str, dict[RelType, list[Edge]]] = {}
    for e in edges:
        index.setdefault(e.source, {}).setdefault(e.type, []).append(e)
        if e.target != e.source:
            index.setdefault(e.target, {}).setdefault(e.type, []).append(e)
    return index


def _sorted_nodes(data: GraphData) -> list[GraphNode]:
    return [data.nodes[k] for k in sorted(data.nodes)]


def _node_line(node: GraphNode) -> str:
    return (
        json.dumps({"kind": node.kind.value, "props": node_to_props(node)}, ensure_ascii=False)
        + "\n"
    )


def _edge_line(edge: Edge) -> str:
    row = {
        "source": edge.source,
        "target": edge.target,
        "type": edge.type.value,
        "weight": edge.weight,
        "attrs": jsonable_attrs(dict(edge.attrs)),
    }
    return json.dumps(row, ensure_ascii=False) + "\n"


def _key_str(key: tuple[str, str, RelType]) -> tuple[str, str, str]:
    return (key[0], key[1], key[2].value)


STALE_TEMP_S = 600


def _remove_stale_temp_files(target: Path) -> None:
    """Delete temp files a killed save left behind (older than STALE_TEMP_S)."""
    import time

    for old in target.parent.glob(f".{target.name}.*.tmp"):
        try:
            if time.time() - old.stat().st_mtime > STALE_TEMP_S:
                old.unlink()
                log.info("removed %s, left by an interrupted save", old)
        except OSError:
            pass


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
