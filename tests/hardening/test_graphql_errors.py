"""Issue 15, defect 7 and the API side of defect 2: bad requests get 400 JSON or a GraphQL
error naming the argument, never a plain-text 500 or INTERNAL_SERVER_ERROR.

* Bodies the JSON parser reads but strawberry did not expect (``"hello"``, ``42``,
  ``null``), a ``\\xff`` byte, an integer of 5,000 digits: 400 with a JSON error.
* A cursor of ``base64("offset:" + 5000 nines)``: INVALID_ARGUMENT naming ``after``.
* A lone surrogate (``"\\udfff"`` as a JSON escape) in *every* string or ID argument of
  the schema, found by walking it (new arguments are covered too), at the root and
  inside input objects: INVALID_ARGUMENT naming the argument; nothing is written.
* Text stored before it was checked (a lone surrogate in an id): queries that return
  it and every export still answer 200 (U+FFFD in the exports, with a warning header).
"""

from __future__ import annotations

import base64
import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from graphql import (
    GraphQLEnumType,
    GraphQLField,
    GraphQLInputObjectType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
    get_named_type,
)

from api.app import create_app
from api.graphql.schema import build_schema
from bench.load import Server
from graph.model import GraphChange, Paper
from graph.settings import Settings
from graph.store.memory import NetworkxStore
from tests.hardening.conftest import API_KEY, assert_no_leak, gql

pytestmark = pytest.mark.slow

LONE = "\udfff"
NINES = base64.b64encode(b"offset:" + b"9" * 5000).decode()


def _post_raw(http: httpx.Client, raw: bytes) -> httpx.Response:
    return http.post("/graphql", content=raw, headers={"Content-Type": "application/json"})


def _json_400(r: httpx.Response, *words: str) -> None:
    assert r.status_code == 400, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/json"), r.headers
    body = r.json()
    err = body["errors"][0]
    assert err["extensions"]["code"] == "BAD_REQUEST", body
    for w in words:
        assert w in err["message"], err["message"]
    assert_no_leak(body)


# ------------------------------------------------------------------ bodies


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b'"hello"', ("JSON object", "a string")),
        (b"42", ("JSON object", "a number")),
        (b"null", ("JSON object", "null")),
        (b"true", ("JSON object", "a boolean")),
        (b'{"query": "{ stats { totalNodes } }\xff"}', ("UTF-8", "\\xff")),
        (b'{"query": "{ __typename }", "variables": {"x": ' + b"9" * 5000 + b"}}", ("digits",)),
        (b'{"query": "{ __typename }", "variables": {"x": -' + b"1" * 4400 + b"}}", ("digits",)),
        (b"{not json", ("JSON",)),
        (b"[1, 2]", ("Batching",)),
    ],
    ids=["string", "number", "null", "bool", "xff", "5000-digits", "negative-4400", "broken",
         "batch"],
)
def test_unreadable_bodies_are_400_json(
    http: httpx.Client, raw: bytes, words: tuple[str, ...]
) -> None:
    _json_400(_post_raw(http, raw), *words)
    assert http.get("/healthz").status_code == 200


def test_unreadable_get_variables_are_400_json(http: httpx.Client) -> None:
    for variables in ('{"x": ' + "9" * 5000 + "}", "42", "{nope"):
        r = http.get("/graphql", params={"query": "{ __typename }", "variables": variables},
                     headers={"Accept": "application/json"})
        assert r.status_code == 400, r.text[:200]
        assert r.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"


# ------------------------------------------------------------------ cursors


@pytest.mark.parametrize(
    "query",
    [
        "query($c: String) { papers(after: $c) { totalCount } }",
        "query($c: String) { concepts(after: $c) { totalCount } }",
        "query($c: String) { datasets(after: $c) { totalCount } }",
        'query($c: String) { concept(name: "LLM") { papers(after: $c) { totalCount } } }',
    ],
)
@pytest.mark.parametrize(
    "cursor",
    [NINES, base64.b64encode(b"offset:" + b"9" * 40).decode(),
     base64.b64encode(b"offset:-1").decode(), base64.b64encode(b"offset:\xff").decode()],
    ids=["5000-nines", "40-nines", "negative", "not-utf8"],
)
def test_absurd_cursors_name_after(http: httpx.Client, query: str, cursor: str) -> None:
    status, body = gql(http, query, {"c": cursor})
    assert status == 200, body
    (err,) = body["errors"]
    assert err["extensions"] == {"code": "INVALID_ARGUMENT", "argument": "after"}, err
    assert len(err["message"]) < 200, "the error must not echo a 7 kB cursor back"


# ------------------------------------------------------------------ lone surrogates


def _sample(t: Any, paper: str, depth: int = 0) -> Any:
    """A valid value of input type ``t`` (required parts only)."""
    if isinstance(t, GraphQLNonNull):
        return _sample(t.of_type, paper, depth)
    if isinstance(t, GraphQLList):
        return [_sample(t.of_type, paper, depth)]
    if isinstance(t, GraphQLEnumType):
        return next(iter(t.values))
    if isinstance(t, GraphQLInputObjectType):
        return {
            n: _sample(f.type, paper, depth + 1)
            for n, f in t.fields.items() if isinstance(f.type, GraphQLNonNull)
        }
    assert isinstance(t, GraphQLScalarType)
    return {"ID": paper, "String": "graph", "Int": 1, "Float": 0.5, "Boolean": True}[t.name]


def _text_paths(t: Any, path: str) -> Iterator[tuple[str, Any]]:
    """(path, poisoned value builder) for every String/ID slot inside input type ``t``."""
    inner = t.of_type if isinstance(t, GraphQLNonNull) else t
    if isinstance(inner, GraphQLList):
        for p, make in _text_paths(inner.of_type, f"{path}[0]"):
            yield p, (lambda m=make: [m()])
        return
    named = get_named_type(inner)
    if isinstance(named, GraphQLScalarType) and named.name in ("String", "ID"):
        yield path, (lambda: f"graph {LONE} neural")
    elif isinstance(named, GraphQLInputObjectType):
        for name, f in named.fields.items():
            for p, make in _text_paths(f.type, f"{path}.{name}"):
                yield p, (lambda n=name, m=make, o=named: {
                    **{k: "x" for k, v in o.fields.items() if isinstance(v.type, GraphQLNonNull)},
                    n: m(),
                })


def _type_sdl(t: Any) -> str:
    return str(t)


def _cases() -> list[tuple[str, str, str, str, Any]]:
    """(operation type, field, argument, path, builder) for every text slot of a root field."""
    schema = build_schema()._schema
    out = []
    for op, root in (("query", schema.query_type), ("mutation", schema.mutation_type)):
        assert isinstance(root, GraphQLObjectType)
        for fname, field in root.fields.items():
            for aname, arg in field.args.items():
                for path, make in _text_paths(arg.type, aname):
                    out.append((op, fname, aname, path, make))
    return out


CASES = _cases()


def _document(op: str, fname: str, field: GraphQLField, target: str, paper: str) -> tuple[
    str, dict[str, Any]
]:
    params, args, variables = [], [], {}
    for aname, arg in field.args.items():
        if aname == target:
            params.append(f"$v: {_type_sdl(arg.type)}")
            args.append(f"{aname}: $v")
        elif isinstance(arg.type, GraphQLNonNull):
            params.append(f"$a_{aname}: {_type_sdl(arg.type)}")
            args.append(f"{aname}: $a_{aname}")
            variables[f"a_{aname}"] = _sample(arg.type, paper)
    fields = "added problems" if fname == "addPapers" else "__typename"
    return f"{op}({', '.join(params)}) {{ {fname}({', '.join(args)}) {{ {fields} }} }}", variables


@pytest.fixture(scope="module")
def paper_key(hard_server: Server) -> str:
    with httpx.Client(base_url=hard_server.url, timeout=60) as c:
        _, body = gql(c, "{ papers(first: 1) { edges { node { key } } } }")
    return str(body["data"]["papers"]["edges"][0]["node"]["key"])


def test_the_walk_finds_the_arguments_of_the_report() -> None:
    found = {(f, p) for _, f, _, p, _ in CASES}
    for slot in [("search", "query"), ("related", "text"), ("node", "id"), ("paper", "id"),
                 ("papers", "after"), ("papers", "filter.venue"), ("addPapers", "input[0].id"),
                 ("addPapers", "input[0].authors[0]"), ("shortestPath", "from")]:
        assert slot in found, slot


@pytest.mark.parametrize(
    ("op", "fname", "aname", "path"), [c[:4] for c in CASES], ids=[f"{c[1]}:{c[3]}" for c in CASES]
)
def test_lone_surrogate_in_every_text_argument(
    http: httpx.Client, paper_key: str, op: str, fname: str, aname: str, path: str
) -> None:
    schema = build_schema()._schema
    root = schema.query_type if op == "query" else schema.mutation_type
    assert root is not None
    field = root.fields[fname]
    query, variables = _document(op, fname, field, aname, paper_key)
    make = next(c[4] for c in CASES if c[1] == fname and c[3] == path)
    variables["v"] = make()
    if fname == "addPapers" and not path.startswith("input[0].abstract"):
        # a record good but for the surrogate, so the problem reported is the surrogate
        variables["v"][0]["abstract"] = "We test a hostile record whose abstract is long enough."
    before = http.post("/graphql", json={"query": "{ stats { totalNodes totalEdges } }"}).json()
    # json.dumps escapes the surrogate as \udfff (httpx's own encoder would refuse it)
    r = http.post("/graphql", content=json.dumps({"query": query, "variables": variables}),
                  headers={"Content-Type": "application/json", "X-API-Key": API_KEY})
    status, body = r.status_code, r.json()
    assert status == 200, body
    if fname == "addPapers":
        # papers are checked one by one: the bad one is a problem, the request goes through
        assert "errors" not in body, body
        report = body["data"]["addPapers"]
        assert report["added"] == [] and len(report["problems"]) == 1, report
        assert "surrogate" in report["problems"][0], report
    else:
        (err,) = body["errors"]
        assert err["extensions"] == {"code": "INVALID_ARGUMENT", "argument": aname}, (query, err)
        assert "surrogate" in err["message"] and err["message"].startswith(f"{aname}:")
    assert_no_leak(body)
    after = http.post("/graphql", json={"query": "{ stats { totalNodes totalEdges } }"}).json()
    assert after == before, "a refused request changed the graph"


@pytest.mark.parametrize("mode", ["KEYWORD", "SEMANTIC", "HYBRID"])
def test_lone_surrogate_in_search_names_query(http: httpx.Client, mode: str) -> None:
    query = f"query($q: String!) {{ search(query: $q, mode: {mode}) {{ score }} }}"
    raw = json.dumps({"query": query, "variables": {"q": "diffusion \udfff model"}}).encode()
    body = _post_raw(http, raw).json()
    assert body["errors"][0]["extensions"] == {"code": "INVALID_ARGUMENT", "argument": "query"}


def test_lone_surrogate_literal_in_the_document(http: httpx.Client) -> None:
    """The surrogate inside the GraphQL text itself (a raw character, not a \\u escape)."""
    query = '{ search(query: "a \udfff b") { score } related(text: "x") { score } }'
    raw = json.dumps({"query": query}).encode()  # the surrogate as a JSON \udfff escape
    r = _post_raw(http, raw)
    assert r.status_code in (200, 400), r.text[:300]
    body = r.json()
    codes = {e["extensions"]["code"] for e in body["errors"]}
    assert codes <= {"INVALID_ARGUMENT", "GRAPHQL_VALIDATION_FAILED", "BAD_REQUEST"}, body


# ------------------------------------------------------------------ stored bad text


@pytest.fixture
def poisoned(tmp_path: Any) -> Iterator[TestClient]:
    """An app over a store holding a paper whose id and title have a lone surrogate."""
    store = NetworkxStore(None)
    bad = Paper(id=f"p-bad{LONE}", label=f"Title {LONE}", abstract="about graphs",
                text_hash="h", title=f"Title {LONE}", authors=(f"A{LONE}",))
    good = Paper(id="p-good", label="Good", abstract="about graphs too", text_hash="g")
    store.apply(GraphChange(upsert_nodes=(bad, good)))
    settings = Settings.model_validate({"data_dir": str(tmp_path)})
    with TestClient(create_app(settings, opener=lambda _s: store)) as c:
        yield c


def test_stored_bad_text_still_answers(poisoned: TestClient) -> None:
    r = poisoned.post("/graphql", json={
        "query": "{ papers(first: 5) { edges { node { id key title authors } } } }"
    })
    assert r.status_code == 200, r.text[:300]
    body = r.json()
    assert "errors" not in body, body
    keys = [e["node"]["key"] for e in body["data"]["papers"]["edges"]]
    assert f"p-bad{LONE}" in keys and "p-good" in keys


@pytest.mark.parametrize("fmt", ["cytoscape.json", "graphml", "gexf"])
def test_exports_of_stored_bad_text(poisoned: TestClient, fmt: str) -> None:
    r = poisoned.get(f"/export/{fmt}")
    assert r.status_code == 200, r.text[:300]
    assert "U+FFFD" in r.headers["x-citegraph-warning"]
    text = r.content.decode("utf-8")  # valid UTF-8 throughout
    if fmt == "cytoscape.json":
        ids = {n["data"]["id"] for n in json.loads(text)["elements"]["nodes"]}
    else:
        root = ET.fromstring(r.content)
        ids = {el.get("id") for el in root.iter() if el.tag.endswith("node")}
    assert {"p-bad\ufffd", "p-good"} <= ids, ids
