"""DataLoaders keep the number of store calls bounded, however many papers a query returns."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from graph.settings import Settings
from graph.store.memory import NetworkxStore
from tests.api.conftest import GQL

pytestmark = pytest.mark.slow


class CountingStore:
    """Forwards to a real store and counts each method call (a fake, not a mock)."""

    def __init__(self, inner: NetworkxStore) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return attr(*args, **kwargs)

        return counted


def test_fifty_papers_with_concepts_take_three_store_calls(
    settings: Settings, seed_store: NetworkxStore
) -> None:
    counting = CountingStore(seed_store)
    app = create_app(settings, opener=lambda _s: counting)  # type: ignore[arg-type,return-value]
    with TestClient(app) as c:
        # the warm-up reads the graph through the same store: its calls are not the query's
        assert app.state.services.wait_warm_up(300)
        counting.calls.clear()
        data = GQL(c).data("""{ papers(first: 50) { edges { node { key
          concepts { weight concept { name paperCount } } datasets { dataset { name } } } } } }""")
    papers = data["papers"]["edges"]
    assert len(papers) == 50
    assert sum(len(p["node"]["concepts"]) for p in papers) > 200
    # list_nodes; edges_and_ends(MENTIONS) + edges_and_ends(USES/INTRODUCES) for the 50
    # papers (their concepts/datasets come with the edges); edges_of(MENTIONS) for
    # paperCount
    assert counting.calls["list_nodes"] == 1
    assert counting.calls["edges_and_ends"] <= 2
    assert counting.calls["get_nodes"] <= 1
    assert counting.calls["edges_of"] <= 1
    assert sum(counting.calls.values()) <= 5, counting.calls
