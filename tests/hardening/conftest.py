"""Hardening suite: fuzzing, crash safety, abuse, auth, faults, a short load run.

``hard_server``: one real ``citegraph serve`` (uvicorn) on 127.0.0.1 over a copy of
the seed graph, with an API key and one allowed CORS origin, shared by the abuse,
auth and load tests of a session; stopped by PID at the end.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.load import Server, seed_data_dir, start_server
from tests.support.seeds import copy_seed_graph

API_KEY = "hardening-key-6f1c0e"
ALLOWED_ORIGIN = "http://allowed.example"
#: what must never appear in an answer to a client
LEAKS = (
    "Traceback",
    "/work/",
    "site-packages",
    '.py"',
    ".py:",
    'File "',
    "MATCH (",
    "MERGE (",
    "DETACH",
    "neo4j.exceptions",
    "CypherSyntaxError",
    "com.arcadedb",
    "java.",
    "RecursionError",
    "KeyError",
    "AttributeError",
)


@pytest.fixture(scope="session")
def hard_seed_dir(tmp_path_factory: pytest.TempPathFactory, seed_graph_template: Path) -> Path:
    """The seed graph and a warm cache; never changed (copy it to write)."""
    where = tmp_path_factory.mktemp("hard-seed") / "data"
    copy_seed_graph(seed_graph_template, where).close()  # the session's one build
    return seed_data_dir(where)


@pytest.fixture(scope="session")
def hard_server(hard_seed_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("hard-server") / "data"
    import shutil

    shutil.copytree(hard_seed_dir, data)
    server = start_server(
        data,
        {
            "CITEGRAPH_API_KEY": API_KEY,
            "CITEGRAPH_CORS_ORIGINS": json.dumps([ALLOWED_ORIGIN]),
            "CITEGRAPH_REQUEST_TIMEOUT_S": "30",
        },
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def http(hard_server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=hard_server.url, timeout=60) as c:
        yield c


def gql(
    client: httpx.Client,
    query: str,
    variables: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """POST a GraphQL request: (status, parsed JSON body or the raw text)."""
    r = client.post(
        "/graphql", json={"query": query, "variables": variables or {}}, headers=headers or {}
    )
    try:
        return r.status_code, r.json()
    except ValueError:
        return r.status_code, r.text


def assert_no_leak(body: object) -> None:
    """No traceback, file path, Cypher or driver internals in what a client sees."""
    text = body if isinstance(body, str) else json.dumps(body)
    for leak in LEAKS:
        assert leak not in text, f"{leak!r} leaked to the client: {text[:500]}"
