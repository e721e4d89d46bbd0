"""The flat-row fast path gives exactly what strawberry's stock execution gives."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

from api.graphql.context import Context
from api.graphql.schema import build_schema
from api.services import Services
from graph.model import NodeKind
from graph.settings import Settings
from graph.store.memory import NetworkxStore

pytestmark = pytest.mark.slow

QUERIES = [
    """query($a: ID!) { neighborhood(id: $a, depth: 2, limit: 120) { truncated
       nodes { id label kind __typename } edges { source target type weight terms } } }""",
    """query($a: ID!) { neighborhood(id: $a) { nodes { key: id name: label ...K }
       edges { s: source t: target type @skip(if: true) w: weight @include(if: true) } } }
       fragment K on GraphNode { kind }""",
    # reason and terms are methods of the row, computed only when selected
    """query($a: ID!) { neighborhood(id: $a, depth: 2, limit: 150) {
       edges { why: reason source terms reason @include(if: true) } } }""",
    """query($a: ID!, $b: ID!) { paths(from: $a, to: $b, k: 2, maxHops: 3) {
       edges { reason terms type } } }""",
    # the neighbourhood's rows are left as domain objects (RawRows): every field skipped,
    # the same field twice under one key and under two, an unknown-to-the-row __typename
    """query($a: ID!) { neighborhood(id: $a, depth: 2, limit: 60) {
       nodes { id @skip(if: true) } edges { type type t2: type __typename w: weight } } }""",
    """query($a: ID!, $b: ID!) { paths(from: $a, to: $b, k: 2, maxHops: 3) {
       nodes { id kind } hops { from to type weight reason terms } edges { source type } } }""",
]


@pytest.mark.parametrize("query", QUERIES)
def test_fast_path_equals_stock(query: str, settings: Settings, seed_store: NetworkxStore) -> None:
    services = Services(settings, opener=lambda _s: seed_store)
    services.open()
    fast = build_schema(settings)
    stock = build_schema(settings)
    stock.execution_context_class = StrawberryGraphQLCoreExecutionContext
    papers, _ = seed_store.list_nodes(NodeKind.PAPER, limit=100)
    variables = {"a": papers[0].id, "b": papers[-1].id}

    async def run(schema: Any) -> Any:
        r = await schema.execute(query, variable_values=variables, context_value=Context(services))
        assert not r.errors, r.errors
        return r.data

    assert asyncio.run(run(fast)) == asyncio.run(run(stock))
