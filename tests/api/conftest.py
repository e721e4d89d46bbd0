"""One seed graph per session (real model, real pipeline) and apps over it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from graph.settings import Settings
from graph.store.embedded import EmbeddedStore
from graph.store.memory import NetworkxStore
from tests.support.seeds import copy_seed_graph, seed_settings


@pytest.fixture(scope="session")
def seed_dir(tmp_path_factory: pytest.TempPathFactory, seed_graph_template: Path) -> Path:
    data_dir = tmp_path_factory.mktemp("api-seed")
    copy_seed_graph(seed_graph_template, data_dir).close()
    return data_dir


@pytest.fixture(scope="session")
def seed_store(seed_dir: Path) -> NetworkxStore:
    """The seed graph, read-only for tests (mutation tests use their own copy)."""
    return EmbeddedStore(seed_settings(seed_dir).graph_db)  # type: ignore[return-value]


@pytest.fixture(scope="session")
def settings(seed_dir: Path) -> Settings:
    # generous: a loaded CI machine may take longer than 10 s to load the model
    return seed_settings(seed_dir, request_timeout_s=60.0)


@pytest.fixture(scope="session")
def client(settings: Settings, seed_store: NetworkxStore) -> Iterator[TestClient]:
    app = create_app(settings, opener=lambda _s: seed_store)
    with TestClient(app) as c:
        yield c


class GQL:
    """POST a query through HTTP; ``data`` asserts there were no errors."""

    def __init__(self, client: TestClient | httpx.Client) -> None:
        self.client = client

    def raw(self, query: str, headers: dict[str, str] | None = None, **variables: Any) -> Any:
        r = self.client.post("/graphql", json={"query": query, "variables": variables},
                             headers=headers or {})
        assert r.status_code == 200, r.text
        return r.json()

    def data(self, query: str, **variables: Any) -> Any:
        body = self.raw(query, **variables)
        assert "errors" not in body, body["errors"]
        return body["data"]

    def errors(self, query: str, **variables: Any) -> list[dict[str, Any]]:
        body = self.raw(query, **variables)
        assert body.get("errors"), body
        return list(body["errors"])


@pytest.fixture(scope="session")
def gql(client: TestClient) -> GQL:
    return GQL(client)


@pytest.fixture
def writable_dir(seed_dir: Path, tmp_path: Path) -> Path:
    """A copy of the seed graph (and its caches) that a test may change."""
    shutil.copytree(seed_dir, tmp_path / "data")
    return tmp_path / "data"
