"""Auth and CORS: mutations need the API key, reads do not; CORS closed by default.

Against the real server (key and one allowed origin from the environment) and, for
other configurations, apps built in process over the same seed graph.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.graphql.context import Context
from bench.load import Server
from graph.settings import Settings
from graph.store.embedded import EmbeddedStore
from graph.store.memory import NetworkxStore
from tests.hardening.conftest import ALLOWED_ORIGIN, API_KEY, assert_no_leak, gql

pytestmark = pytest.mark.slow

REMOVE = 'mutation { removePaper(id: "p-does-not-exist") { removed } }'
ADD = 'mutation { addPapers(input: [{abstract: "x"}]) { added problems } }'


def _code(body: dict) -> str:  # type: ignore[type-arg]
    return str(body["errors"][0]["extensions"]["code"])


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"X-API-Key": ""},
        {"X-API-Key": "wrong"},
        {"X-API-Key": API_KEY[:-1]},  # a prefix
        {"X-API-Key": API_KEY + "x"},  # longer
        {"X-API-Key": API_KEY.upper()},
        {"Authorization": f"Bearer {API_KEY}"},  # the wrong header
    ],
    ids=["none", "empty", "wrong", "prefix", "longer", "case", "bearer"],
)
@pytest.mark.parametrize("mutation", [REMOVE, ADD], ids=["remove", "add"])
def test_mutations_need_the_exact_key(
    http: httpx.Client, headers: dict[str, str], mutation: str
) -> None:
    before = gql(http, "{ stats { totalNodes totalEdges } }")[1]
    status, body = gql(http, mutation, headers=headers)
    assert status == 200
    assert _code(body) == "FORBIDDEN", body
    assert "X-API-Key" in body["errors"][0]["message"]
    text = str(body)
    assert API_KEY not in text and (not headers or "wrong" not in text)
    assert_no_leak(body)
    assert gql(http, "{ stats { totalNodes totalEdges } }")[1] == before


def test_the_right_key_gets_past_auth(http: httpx.Client) -> None:
    status, body = gql(http, REMOVE, headers={"X-API-Key": API_KEY})
    assert status == 200 and _code(body) == "NOT_FOUND", body  # auth passed, id unknown


def test_reads_need_no_key(http: httpx.Client) -> None:
    status, body = gql(http, "{ stats { totalNodes } }")
    assert status == 200 and "errors" not in body


def test_key_compare_is_constant_time() -> None:
    source = inspect.getsource(Context.require_api_key)
    assert "hmac.compare_digest" in source or "secrets.compare_digest" in source
    assert "==" not in source.split("compare_digest")[1].split("\n")[0]


# ------------------------------------------------------------------ other configurations


@pytest.fixture(scope="module")
def seed_store(hard_seed_dir: Path) -> NetworkxStore:
    return EmbeddedStore(hard_seed_dir / "graph.db")  # type: ignore[return-value]


@pytest.fixture
def app_with(hard_seed_dir: Path, seed_store: NetworkxStore) -> Iterator[callable]:  # type: ignore[valid-type]
    """``app_with(**settings)``: a TestClient over the seed graph (model never loaded)."""
    clients: list[TestClient] = []

    def make(**overrides: object) -> TestClient:
        settings = Settings(data_dir=hard_seed_dir, model="/nonexistent/model", **overrides)  # type: ignore[arg-type]
        client = TestClient(create_app(settings, opener=lambda _s: seed_store))
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for c in clients:
        c.__exit__(None, None, None)


@pytest.mark.parametrize("configured", [None, ""], ids=["unset", "empty"])
@pytest.mark.parametrize("given", [None, "", "anything"])
def test_no_key_configured_disables_mutations(
    app_with: callable,
    configured: str | None,
    given: str | None,  # type: ignore[valid-type]
) -> None:
    client = app_with(api_key=configured)
    headers = {} if given is None else {"X-API-Key": given}
    r = client.post("/graphql", json={"query": REMOVE}, headers=headers)
    body = r.json()
    assert _code(body) == "FORBIDDEN", body
    assert "disabled" in body["errors"][0]["message"]
    assert "CITEGRAPH_API_KEY" in body["errors"][0]["message"]


def test_key_comes_from_the_environment(
    app_with: callable,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[valid-type]
) -> None:
    monkeypatch.setenv("CITEGRAPH_API_KEY", "from-env-123")
    client = app_with()
    ok = client.post("/graphql", json={"query": REMOVE}, headers={"X-API-Key": "from-env-123"})
    assert _code(ok.json()) == "NOT_FOUND"
    bad = client.post("/graphql", json={"query": REMOVE}, headers={"X-API-Key": "from-env"})
    assert _code(bad.json()) == "FORBIDDEN"


def _preflight(client: TestClient | httpx.Client, origin: str) -> httpx.Response:
    return client.options(
        "/graphql",
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type,x-api-key",
        },
    )


def test_cors_closed_by_default(app_with: callable) -> None:  # type: ignore[valid-type]
    client = app_with()
    for origin in ("http://evil.example", ALLOWED_ORIGIN, "null"):
        pre = _preflight(client, origin)
        assert "access-control-allow-origin" not in pre.headers, pre.headers
        r = client.post(
            "/graphql", json={"query": "{ stats { totalNodes } }"}, headers={"Origin": origin}
        )
        assert "access-control-allow-origin" not in r.headers


def test_cors_open_to_the_configured_origin_only(hard_server: Server) -> None:
    with httpx.Client(base_url=hard_server.url, timeout=30) as c:
        pre = _preflight(c, ALLOWED_ORIGIN)
        assert pre.status_code == 200, pre.text
        assert pre.headers["access-control-allow-origin"] == ALLOWED_ORIGIN
        assert "x-api-key" in pre.headers["access-control-allow-headers"].lower()
        r = c.post(
            "/graphql",
            json={"query": "{ stats { totalNodes } }"},
            headers={"Origin": ALLOWED_ORIGIN},
        )
        assert r.headers["access-control-allow-origin"] == ALLOWED_ORIGIN
        for origin in ("http://evil.example", "http://allowed.example.evil.com", "null"):
            pre = _preflight(c, origin)
            assert pre.headers.get("access-control-allow-origin") != origin
            assert "access-control-allow-origin" not in pre.headers
            r = c.post(
                "/graphql", json={"query": "{ stats { totalNodes } }"}, headers={"Origin": origin}
            )
            assert "access-control-allow-origin" not in r.headers
            assert r.headers.get("access-control-allow-credentials") != "true"
