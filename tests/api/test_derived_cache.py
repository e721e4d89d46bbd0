"""Whole-graph results (PageRank's central concepts) follow another process's writes
on a store with no version (Neo4j) too (probe 8, finding F2).

On Neo4j, ``stats { centralConcepts }`` kept the PageRank of the graph the server first
read until the server itself wrote: a ``citegraph --store neo4j add`` beside it
(another process) never showed there (degree 17 for a concept that had 27). Here the
store is the seed graph with its version hidden, and the other process's write is a
change applied to the store directly.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

import api.services
from api.graphql.context import Context
from api.graphql.schema import build_schema
from api.services import Services
from graph.model import GraphChange, NodeKind
from graph.settings import Settings
from graph.store.embedded import EmbeddedStore
from tests.support.seeds import seed_settings

pytestmark = pytest.mark.slow

CENTRAL = "{ stats { centralConcepts { concept { key } degree } } }"


def test_central_concepts_follow_another_writer_on_a_store_without_version(
    writable_dir: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = EmbeddedStore(seed_settings(writable_dir).graph_db)
    monkeypatch.setattr(store, "version", lambda: None)  # as the Neo4j store
    monkeypatch.setattr(api.services, "UNVERSIONED_CACHE_S", 0.5, raising=False)
    services = Services(settings, opener=lambda _s: store)
    services.open()
    schema = build_schema(settings)

    def central() -> list[tuple[str, int]]:
        async def run() -> Any:
            r = await schema.execute(CENTRAL, context_value=Context(services))
            assert not r.errors, r.errors
            return r.data

        rows = asyncio.run(run())["stats"]["centralConcepts"]
        return [(c["concept"]["key"], c["degree"]) for c in rows]

    try:
        before = central()
        top = before[0][0]
        # another process removes the most central concept (and so its edges)
        assert store.get_nodes([top])[top].kind is NodeKind.CONCEPT
        store.apply(GraphChange(delete_nodes=[top]))
        time.sleep(0.6)
        after = central()
        assert top not in [k for k, _ in after], "PageRank of the graph before the write"
    finally:
        store.close()
