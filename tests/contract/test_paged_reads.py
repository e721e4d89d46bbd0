"""PagedReads on every store: the pages of nodes and of edges hold the whole graph, each
node and edge once, in key order, whatever the page size (issue 39, finding 5)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from graph.model import Edge, GraphChange, GraphNode, Paper, RelType
from graph.store.base import GraphStore
from tests.contract import fixtures as fx

KINDS = [
    pytest.param("embedded", id="embedded"),
    pytest.param("sql", id="sql"),
    pytest.param("memory", id="memory"),
    pytest.param("neo4j", id="neo4j", marks=pytest.mark.bolt),
]


@pytest.fixture(params=KINDS)
def store(request: pytest.FixtureRequest, make_store: Any) -> GraphStore:
    s: GraphStore = make_store(str(request.param))
    s.apply(fx.full_change())
    return s


def node_pages(store: GraphStore, size: int) -> Iterator[list[GraphNode]]:
    after: str | None = None
    while page := store.node_page(after, size):
        yield page
        after = page[-1].id


def edge_pages(store: GraphStore, size: int) -> Iterator[list[Edge]]:
    after: str | None = None
    while page := store.edge_page(after, size):
        yield page
        after = page[-1].source


def _edge_t(e: Edge) -> tuple[Any, ...]:
    attrs = {k: list(v) if isinstance(v, tuple) else v for k, v in e.attrs.items()}
    return (e.source, e.target, e.type.value, round(e.weight, 9), sorted(attrs.items()))


@pytest.mark.parametrize("size", [1, 2, 3, 1000])
def test_pages_hold_the_whole_graph_once_in_key_order(store: GraphStore, size: int) -> None:
    data = store.snapshot()
    pages = list(node_pages(store, size))
    assert all(1 <= len(p) <= size for p in pages)
    ids = [n.id for p in pages for n in p]
    assert ids == sorted(data.nodes)
    assert {n.id: n for p in pages for n in p} == data.nodes

    epages = list(edge_pages(store, size))
    edges = [e for p in epages for e in p]
    assert [e.key for e in edges] == sorted(
        data.edges, key=lambda k: (k[0], k[1], k[2].value)
    )
    assert sorted(map(_edge_t, edges)) == sorted(map(_edge_t, data.edges.values()))
    for page in epages[:-1]:  # whole sources, at least `size` edges but the last page
        assert len(page) >= size
    sources = [p[-1].source for p in epages]
    assert len(set(sources)) == len(sources), "a source's edges split across pages"


def test_pages_of_an_empty_store_and_past_the_end(make_store: Any) -> None:
    for kind in ("embedded", "memory"):
        s: GraphStore = make_store(kind)
        assert s.node_page(None, 10) == [] and s.edge_page(None, 10) == []
        s.apply(GraphChange(upsert_nodes=(
            Paper(id="a", label="A", abstract="x y z", text_hash="h"),
            Paper(id="b", label="B", abstract="x y z", text_hash="h"),
        ), upsert_edges=(Edge("a", "b", RelType.CITES),)))
        assert [n.id for n in s.node_page("a", 10)] == ["b"]
        assert s.node_page("b", 10) == [] and s.edge_page("a", 10) == []
        assert [e.key for e in s.edge_page(None, 1)] == [("a", "b", RelType.CITES)]
