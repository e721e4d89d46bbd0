"""Per-request DataLoaders: every node and edge lookup in one query is batched.

A query for 50 papers with their concepts costs one ``list_nodes`` and one
``edges_and_ends`` call (the edges with the nodes at their far ends: one round trip on
Neo4j), however many papers it returns.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ParamSpec, Protocol, TypeVar

from starlette.concurrency import run_in_threadpool
from strawberry.dataloader import DataLoader

from graph.model import Edge, GraphNode, RelType
from graph.store import GraphStore

T = TypeVar("T")
P = ParamSpec("P")

EdgeKey = tuple[str, frozenset[RelType] | None]


class StoreReader(Protocol):
    """Runs ``fn(store)`` over the open store (api.services.Services.reading)."""

    def __call__(self, fn: Callable[[GraphStore], T], *, expensive: bool = False) -> T: ...


async def in_thread(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run a (sync, maybe slow) store call off the event loop; mypy checks the arguments."""
    return await run_in_threadpool(fn, *args, **kwargs)


@dataclass
class Loaders:
    """Fresh for every request, so nothing leaks between requests or users."""

    nodes: DataLoader[str, GraphNode | None]
    edges: DataLoader[EdgeKey, list[Edge]]
    #: the edges of a node with the node at each one's far end (edges, ends by id)
    neighbours: DataLoader[EdgeKey, tuple[list[Edge], dict[str, GraphNode]]]


def make_loaders(read: StoreReader) -> Loaders:
    """DataLoaders over the store ``read`` runs on (resolved lazily, per batch)."""

    async def load_nodes(ids: list[str]) -> list[GraphNode | None]:
        found = await in_thread(lambda: read(lambda store: store.get_nodes(ids)))
        return [found.get(i) for i in ids]

    async def load_edges(keys: list[EdgeKey]) -> list[list[Edge]]:
        by_types: dict[frozenset[RelType] | None, list[str]] = defaultdict(list)
        for nid, types in keys:
            by_types[types].append(nid)
        out: dict[EdgeKey, list[Edge]] = {k: [] for k in keys}
        for types, ids in by_types.items():
            edges = await in_thread(_edges_of, read, ids, types)
            wanted = set(ids)
            for e in edges:
                for end in {e.source, e.target}:
                    if end in wanted:
                        out[(end, types)].append(e)
        return [out[k] for k in keys]

    nodes = DataLoader(load_fn=load_nodes, max_batch_size=1000)

    async def load_neighbours(
        keys: list[EdgeKey],
    ) -> list[tuple[list[Edge], dict[str, GraphNode]]]:
        by_types: dict[frozenset[RelType] | None, list[str]] = defaultdict(list)
        for nid, types in keys:
            by_types[types].append(nid)
        out: dict[EdgeKey, tuple[list[Edge], dict[str, GraphNode]]] = {
            k: ([], {}) for k in keys
        }
        for types, ids in by_types.items():
            edges, ends = await in_thread(_edges_and_ends, read, ids, types)
            nodes.prime_many(ends)  # the same nodes a later field would load by id
            wanted = set(ids)
            for e in edges:
                for end in {e.source, e.target}:
                    if end in wanted:
                        out[(end, types)][0].append(e)
            for k in keys:
                if k[1] == types:
                    out[k] = (out[k][0], ends)
        return [out[k] for k in keys]

    return Loaders(
        nodes=nodes,
        edges=DataLoader(load_fn=load_edges, max_batch_size=1000),
        neighbours=DataLoader(load_fn=load_neighbours, max_batch_size=1000),
    )


def _edges_of(
    read: StoreReader, ids: Sequence[str], types: frozenset[RelType] | None
) -> list[Edge]:
    wanted = sorted(types) if types is not None else None
    return read(lambda store: store.edges_of(list(ids), wanted))


def _edges_and_ends(
    read: StoreReader, ids: Sequence[str], types: frozenset[RelType] | None
) -> tuple[list[Edge], dict[str, GraphNode]]:
    wanted = sorted(types) if types is not None else None
    return read(lambda store: store.edges_and_ends(list(ids), wanted))


def edge_key(node_id: str, *types: RelType) -> EdgeKey:
    """Loader key for the edges of ``node_id`` of ``types`` (none: every type)."""
    return (node_id, frozenset(types) if types else None)
