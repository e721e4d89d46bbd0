"""Argument validation, the same on every store: bad counts, hops and types are refused.

The embedded store used to accept ``limit=-1`` (and answer something) where the Neo4j
store refused it; the checks now live in ``graph.query`` (one query layer over every store),
and they run before the store is asked anything, also for unknown seeds and empty graphs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from graph.errors import InvalidArgumentError
from graph.model import NodeKind
from graph.store.base import GraphStore
from tests.contract import fixtures as fx
from tests.contract.test_store_contract import KINDS

Call = Callable[[GraphStore], Any]
VEC = np.ones(fx.DIM, dtype=np.float32).tolist()

BAD: list[tuple[str, Call, str]] = [
    ("neighborhood depth -1", lambda s: s.neighborhood(["p1"], depth=-1), "depth"),
    ("neighborhood limit -1", lambda s: s.neighborhood(["p1"], limit=-1), "limit"),
    ("neighborhood bad type", lambda s: s.neighborhood(["p1"], rel_types=["NOPE"]), "rel_types"),
    ("neighborhood bad kind", lambda s: s.neighborhood(["p1"], node_kinds=["Author"]), "kinds"),
    ("list offset -1", lambda s: s.list_nodes(NodeKind.PAPER, offset=-1), "offset"),
    ("list limit -1", lambda s: s.list_nodes(NodeKind.PAPER, limit=-1), "limit"),
    ("k_paths k -1", lambda s: s.k_paths("p1", "p6", k=-1), "k"),
    ("k_paths max_hops 0", lambda s: s.k_paths("p1", "p6", max_hops=0), "max_hops"),
    ("k_paths max_hops 21", lambda s: s.k_paths("p1", "p6", max_hops=21), "max_hops"),
    ("shortest max_hops 0", lambda s: s.shortest_path("p1", "p6", max_hops=0), "max_hops"),
    ("shortest unknown type", lambda s: s.shortest_path("p1", "p6", ["NOPE"]), "rel_types"),
    ("keyword limit -1", lambda s: s.keyword_search("graph", limit=-1), "limit"),
    ("vector limit -1", lambda s: s.vector_search(VEC, limit=-1), "limit"),
    ("neighborhood depth True", lambda s: s.neighborhood(["p1"], depth=True), "depth"),
    ("neighborhood limit 2.5", lambda s: s.neighborhood(["p1"], limit=2.5), "limit"),  # type: ignore[arg-type]
    ("find_node bad kind", lambda s: s.find_node("p1", kinds=["Author"]), "kinds"),
    ("edges_of bad type", lambda s: s.edges_of(["p1"], ["NOPE"]), "rel_types"),
    ("k_paths bad type", lambda s: s.k_paths("p1", "p6", rel_types=["NOPE"]), "rel_types"),
    ("k_paths max_hops '3'", lambda s: s.k_paths("p1", "p6", max_hops="3"), "max_hops"),  # type: ignore[arg-type]
    ("keyword bad kind", lambda s: s.keyword_search("graph", kinds=["Author"]), "kinds"),
    ("vector limit True", lambda s: s.vector_search(VEC, limit=True), "limit"),
    ("list limit '5'", lambda s: s.list_nodes(NodeKind.PAPER, limit="5"), "limit"),  # type: ignore[arg-type]
]


@pytest.fixture(params=KINDS)
def loaded(request: pytest.FixtureRequest, make_store: Any) -> GraphStore:
    store: GraphStore = make_store(request.param)
    store.apply(fx.full_change())
    return store


@pytest.mark.parametrize(("case", "call", "argument"), BAD, ids=[b[0] for b in BAD])
def test_bad_arguments_are_refused_naming_the_argument(
    loaded: GraphStore, case: str, call: Call, argument: str
) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        call(loaded)
    assert info.value.argument == argument, case


def test_zero_means_nothing_and_depth_zero_means_the_seeds(loaded: GraphStore) -> None:
    sub = loaded.neighborhood(["p1"], depth=0)
    assert [n.id for n in sub.nodes] == ["p1"]
    assert loaded.k_paths("p1", "p6", k=0) == []
    assert loaded.keyword_search("graph", limit=0) == []
    assert loaded.vector_search(VEC, limit=0) == []
    nodes, total = loaded.list_nodes(NodeKind.PAPER, limit=0)
    assert nodes == [] and total == len(fx.PAPERS)


@pytest.mark.parametrize(("case", "call", "argument"), BAD, ids=[b[0] for b in BAD])
def test_bad_arguments_are_refused_on_an_empty_store(
    kind: str, make_store: Any, case: str, call: Call, argument: str
) -> None:
    store: GraphStore = make_store(kind)
    with pytest.raises(InvalidArgumentError) as info:
        call(store)
    assert info.value.argument == argument, case


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)
