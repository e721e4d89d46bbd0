"""Errors and limits: clear messages naming the argument, no stack traces, no 500s."""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from graph.errors import StoreUnavailableError
from graph.model import GraphStats, NodeKind
from graph.settings import Settings
from graph.store.memory import NetworkxStore
from tests.api.conftest import GQL

pytestmark = pytest.mark.slow


def _pid(store: NetworkxStore) -> str:
    return store.list_nodes(NodeKind.PAPER, limit=1)[0][0].id


@pytest.mark.parametrize(
    ("query", "argument"),
    [
        ("{ papers(first: 101) { totalCount } }", "first"),
        ("{ papers(first: 0) { totalCount } }", "first"),
        ('{ papers(after: "bogus") { totalCount } }', "after"),
        ('{ neighborhood(id: "$P", limit: 501) { truncated } }', "limit"),
        ('{ neighborhood(id: "$P", depth: 4) { truncated } }', "depth"),
        ('{ shortestPath(from: "$P", to: "$P", maxHops: 7) { length } }', "maxHops"),
        ('{ paths(from: "$P", to: "$P", k: 11) { length } }', "k"),
        ('{ search(query: "  ") { score } }', "query"),
        ('{ search(query: "x", mode: SEMANTIC, kinds: [CONCEPT]) { score } }', "kinds"),
        ("{ related { score } }", "paper"),
    ],
)
def test_invalid_arguments_are_named(
    gql: GQL, seed_store: NetworkxStore, query: str, argument: str
) -> None:
    errors = gql.errors(query.replace("$P", _pid(seed_store)))
    assert errors[0]["extensions"] == {"code": "INVALID_ARGUMENT", "argument": argument}
    assert errors[0]["message"].startswith(f"{argument}:")


def test_query_depth_limit(gql: GQL) -> None:
    deep = (
        '{ concept(name: "LLM") { papers { edges { node { similar { paper { similar { paper {'
        " similar { paper { similar { paper { similar { paper { key } } } } } } } } } } } } } } }"
    )
    errors = gql.errors(deep)
    assert "exceeds maximum operation depth" in errors[0]["message"]


def test_alias_limit(gql: GQL) -> None:
    query = "{ " + " ".join(f"a{i}: stats {{ totalNodes }}" for i in range(31)) + " }"
    assert "aliases" in gql.errors(query)[0]["message"].lower()


def test_token_limit(gql: GQL) -> None:
    query = "{ stats { " + " ".join(["totalNodes"] * 2100) + " } }"
    assert "token" in gql.errors(query)[0]["message"].lower()


def test_unknown_field_is_a_validation_error(gql: GQL) -> None:
    (err,) = gql.errors("{ nope }")
    assert "Cannot query field 'nope'" in err["message"]
    assert err["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"


def test_request_body_limit(client: TestClient) -> None:
    r = client.post("/graphql", json={"query": "{ stats { totalNodes } }", "pad": "x" * 200_000})
    assert r.status_code == 413
    assert "CITEGRAPH_MAX_BODY_BYTES" in r.json()["errors"][0]["message"]


class BrokenStore(NetworkxStore):
    """A store whose keyword search fails unexpectedly (a bug, not a client error)."""

    def keyword_search(self, *args: object, **kwargs: object) -> list:  # type: ignore[override]
        raise RuntimeError("secret internals /etc/passwd")


def test_unexpected_errors_are_masked(settings: Settings, seed_store: NetworkxStore) -> None:
    broken = BrokenStore()
    app = create_app(settings, opener=lambda _s: broken)
    with TestClient(app) as c:
        body = GQL(c).raw('{ search(query: "x") { score } }')
    (err,) = body["errors"]
    assert "secret" not in str(body) and "Traceback" not in str(body)
    assert err["extensions"]["code"] == "INTERNAL_SERVER_ERROR"


def test_store_down_then_back(settings: Settings, seed_store: NetworkxStore) -> None:
    up = {"ok": False}

    def opener(_s: Settings) -> NetworkxStore:
        if not up["ok"]:
            raise StoreUnavailableError("cannot reach bolt://db:7687")
        return seed_store

    app = create_app(settings, opener=opener)
    app.state.services.RETRY_S = 0.0
    with TestClient(app) as c:
        assert c.get("/healthz").status_code == 200
        r = c.get("/readyz")
        assert r.status_code == 503 and "bolt://db:7687" in r.json()["store"]
        (err,) = GQL(c).errors("{ stats { totalNodes } }")
        assert err["extensions"]["code"] == "STORE_UNAVAILABLE"
        assert "store unavailable" in err["message"]
        up["ok"] = True
        assert c.get("/readyz").status_code == 200
        assert GQL(c).data("{ stats { totalNodes } }")["stats"]["totalNodes"] > 0


class SlowStats(NetworkxStore):
    """A store whose stats take longer than the request limit (a stand-in for a slow query)."""

    def stats(self) -> GraphStats:
        time.sleep(1.5)
        return super().stats()


def test_a_query_past_the_time_limit_answers_504(settings: Settings) -> None:
    slow = SlowStats()
    app = create_app(settings.model_copy(update={"request_timeout_s": 0.3}),
                     opener=lambda _s: slow)
    with TestClient(app) as c:
        t0 = time.monotonic()
        r = c.post("/graphql", json={"query": "{ stats { totalNodes } }"})
        took = time.monotonic() - t0
        assert r.status_code == 504
        (err,) = r.json()["errors"]
        assert err["extensions"]["code"] == "TIMEOUT"
        assert "CITEGRAPH_REQUEST_TIMEOUT_S" in err["message"]
        assert took < 1.4  # answered at the limit, not after the slow call
        assert c.get("/healthz").status_code == 200  # and the server still answers


def test_every_check_is_one_extension_per_request() -> None:
    """strawberry makes each extension afresh for every request and wraps each of its
    hooks in a context manager: citegraph's checks are one extension (eight before)."""
    from api.graphql.schema import build_schema

    assert len(build_schema().get_extensions()) == 1
