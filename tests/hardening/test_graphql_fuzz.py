"""Fuzz the GraphQL API with documents built from the real schema (issue 15: the classes).

Hypothesis walks strawberry's built schema (``build_schema()._schema``): root fields of
Query and Mutation, their arguments (hostile and valid values, literal or as
variables), aliases, nested selections down to past the depth limit, inline fragments
on interfaces, and named fragments spread once or several times (fan-out chains
included). New fields and arguments are fuzzed without touching this file.

The oracles, for every document:

* an answer within ``ANSWER_S``;
* HTTP 200 or 400, a JSON body, GraphQL errors with a code, never
  INTERNAL_SERVER_ERROR, and nothing from ``LEAKS``;
* ``/healthz`` answers right after; nothing is written (mutations carry no API key).

Most examples run in process (a TestClient over a copy of the seed graph: fast);
a few go to the real ``citegraph serve`` (``hard_server``). The example counts are CI's
short profile; ``HYPOTHESIS_PROFILE=fuzz`` runs ten times as many (tests/hardening/_hyp.py).
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLSchema,
    GraphQLUnionType,
    get_named_type,
)
from hypothesis import event, given, settings
from hypothesis import strategies as st

from api.app import create_app
from api.graphql.schema import build_schema
from api.ids import to_global_id
from bench.load import Server
from graph.model import NodeKind
from tests.hardening._hyp import fuzz_settings
from tests.hardening.conftest import assert_no_leak
from tests.support.seeds import seed_settings

pytestmark = pytest.mark.slow

ANSWER_S = 5.0
SCHEMA: GraphQLSchema = build_schema()._schema
MAX_NEST = 16  # past max_query_depth (12): the depth limit is fuzzed too

HOSTILE_TEXT = [
    "", " ", "\t\n", "x", "LLM", "diffusion model", "graph", "\udfff", "a\ud800b", "\x00",
    "\x1b[31m", "\u202e\u2066", "😀" * 50, "é" * 300, "x" * 5000, "' OR 1=1 --",
    "MATCH (n) DETACH DELETE n", '"}) { __schema { types { name } } }', "${jndi:x}",
    "../../../../etc/passwd", "%00%ff", "p-000000000000", "concept:large-language-model",
    "dataset:imagenet", to_global_id(NodeKind.PAPER, "nope"),
    to_global_id(NodeKind.CONCEPT, "concept:diffusion-model"), "UGFwZXI6", "====",
]
HOSTILE_INT = [0, 1, 2, 3, 5, 10, 100, 101, 500, 501, -1, -(2**31), 2**31 - 1, 7, 12]
HOSTILE_FLOAT = [0.0, 0.5, 1.0, -1.0, 1e308, -1e308, 1e-308, 2.5e-10]


# ------------------------------------------------------------------ documents


class Doc:
    """A document under construction: variables, their values, fragments."""

    def __init__(self) -> None:
        self.var_defs: list[str] = []
        self.variables: dict[str, Any] = {}
        self.fragments: list[str] = []

    def variable(self, type_sdl: str, value: Any) -> str:
        name = f"v{len(self.var_defs)}"
        self.var_defs.append(f"${name}: {type_sdl}")
        self.variables[name] = value
        return f"${name}"


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)  # a surrogate becomes a \\udfff escape: a syntax error
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, _Enum):
        return value.name
    return repr(value)


class _Enum:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


@st.composite
def input_value(draw: st.DrawFn, t: Any, depth: int = 0) -> Any:
    """A value for input type ``t``: mostly well-typed, sometimes hostile within the type."""
    if isinstance(t, GraphQLNonNull):
        return draw(input_value(t.of_type, depth))
    if isinstance(t, GraphQLList):
        return draw(st.lists(input_value(t.of_type, depth + 1), max_size=3))
    if isinstance(t, GraphQLEnumType):
        return _Enum(draw(st.sampled_from(sorted(t.values))))
    if isinstance(t, GraphQLInputObjectType):
        out = {}
        for name, f in t.fields.items():
            if isinstance(f.type, GraphQLNonNull) or draw(st.booleans()):
                out[name] = draw(input_value(f.type, depth + 1))
        return out
    assert isinstance(t, GraphQLScalarType), t
    if t.name in ("String", "ID"):
        return draw(st.one_of(st.sampled_from(HOSTILE_TEXT), st.text(max_size=40)))
    if t.name == "Int":
        return draw(st.one_of(st.sampled_from(HOSTILE_INT), st.integers(-(2**31), 2**31 - 1)))
    if t.name == "Float":
        return draw(st.sampled_from(HOSTILE_FLOAT))
    if t.name == "Boolean":
        return draw(st.booleans())
    return None


def _to_json(value: Any) -> Any:
    if isinstance(value, _Enum):
        return value.name
    if isinstance(value, list):
        return [_to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _to_json(v) for k, v in value.items()}
    return value


@st.composite
def arguments(draw: st.DrawFn, field: Any, doc: Doc) -> str:
    parts = []
    for name, arg in field.args.items():
        if not isinstance(arg.type, GraphQLNonNull) and not draw(st.booleans()):
            continue
        value = draw(input_value(arg.type))
        has_surrogate = "\\ud" in json.dumps(_to_json(value))
        if has_surrogate or draw(st.booleans()):
            parts.append(f"{name}: {doc.variable(str(arg.type), _to_json(value))}")
        else:
            parts.append(f"{name}: {_literal(value)}")
    return f"({', '.join(parts)})" if parts else ""


def _object_types(t: Any) -> list[GraphQLObjectType]:
    if isinstance(t, GraphQLObjectType):
        return [t]
    if isinstance(t, GraphQLInterfaceType):
        return list(SCHEMA.get_implementations(t).objects)
    if isinstance(t, GraphQLUnionType):
        return list(t.types)
    return []


@st.composite
def selection_set(draw: st.DrawFn, t: Any, doc: Doc, nest: int) -> str:
    """``{ … }`` on composite type ``t``: fields (some aliased), inline and named fragments."""
    fields = getattr(t, "fields", {})
    names = sorted(fields)
    wide = 3 if nest <= 2 else 1  # broad near the root, narrow below: documents stay small
    picks = draw(st.lists(st.sampled_from(names), min_size=1, max_size=wide)) if names else []
    parts: list[str] = []
    for name in picks:
        field = fields[name]
        alias = f"{draw(st.sampled_from(['a', 'b', 'x']))}{len(parts)}: " if draw(
            st.integers(0, 3)) == 0 else ""
        sub = ""
        named = get_named_type(field.type)
        if not isinstance(named, GraphQLScalarType | GraphQLEnumType):
            if nest >= MAX_NEST:
                continue
            sub = " " + draw(selection_set(named, doc, nest + 1))
        parts.append(f"{alias}{name}{draw(arguments(field, doc))}{sub}")
    concrete = _object_types(t)
    if concrete and not isinstance(t, GraphQLObjectType) and draw(st.booleans()):
        on = draw(st.sampled_from(concrete))
        parts.append(f"... on {on.name} {draw(selection_set(on, doc, nest))}")
    if draw(st.integers(0, 4)) == 0 and nest < MAX_NEST:
        # a named fragment on this type, spread one to three times
        fname = f"F{len(doc.fragments)}"
        doc.fragments.append("")  # reserve the name before nested fragments take one
        body = draw(selection_set(t, doc, nest + 1))
        doc.fragments[int(fname[1:])] = f"fragment {fname} on {t.name} {body}"
        parts.extend([f"...{fname}"] * draw(st.integers(1, 3)))
    parts.append("__typename")
    return "{ " + " ".join(parts) + " }"


@st.composite
def fan_out_chain(draw: st.DrawFn, doc: Doc, t: GraphQLObjectType) -> str:
    """A fragment chain where each spreads the next k times (k**n paths)."""
    n, k = draw(st.integers(5, 45)), draw(st.integers(2, 4))
    base = len(doc.fragments)
    for i in range(n):
        spreads = " ".join([f"...F{base + i + 1}"] * k)
        doc.fragments.append(f"fragment F{base + i} on {t.name} {{ __typename {spreads} }}")
    doc.fragments.append(f"fragment F{base + n} on {t.name} {{ __typename }}")
    return f"...F{base}"


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    doc = Doc()
    mutation = draw(st.integers(0, 9)) == 0
    root = SCHEMA.mutation_type if mutation else SCHEMA.query_type
    assert root is not None
    body = draw(selection_set(root, doc, 1))
    if not mutation and draw(st.integers(0, 5)) == 0:
        body = body[:-1] + draw(fan_out_chain(doc, root)) + " }"
    op = "mutation" if mutation else "query"
    defs = f"({', '.join(doc.var_defs)})" if doc.var_defs else ""
    return f"{op} Fuzz{defs} {body} " + " ".join(doc.fragments), doc.variables


# ------------------------------------------------------------------ oracles


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def check_answer(client: httpx.Client | TestClient, query: str, variables: dict[str, Any]) -> None:
    payload = json.dumps({"query": query, "variables": variables})  # \\udfff stays escaped
    t0 = time.perf_counter()
    r = client.post("/graphql", content=payload, headers={"Content-Type": "application/json"})
    took = time.perf_counter() - t0
    assert took < ANSWER_S, f"{took:.1f} s for {query[:300]}"
    assert r.status_code in (200, 400), (r.status_code, r.text[:300], query[:300])
    body = r.json()
    assert isinstance(body, dict) and ("data" in body or "errors" in body), body
    errors = body.get("errors") or []
    codes = sorted({(e.get("extensions") or {}).get("code") or "" for e in errors})
    event(f"{'data' if body.get('data') else 'no data'}; errors: {', '.join(codes) or 'none'}")
    for err in body.get("errors") or []:
        code = (err.get("extensions") or {}).get("code")
        assert code is not None, (err, query[:300])
        assert code != "INTERNAL_SERVER_ERROR", (err, query[:500], variables)
    # errors may quote what was sent ("no concept … 'MATCH (n) …'"): that is not a leak
    text = json.dumps(body, ensure_ascii=False)
    for sent in sorted({*HOSTILE_TEXT, *_strings(variables)}, key=len, reverse=True):
        if len(sent) >= 3:
            text = text.replace(sent, "")
    assert_no_leak(text)
    assert client.get("/healthz").status_code == 200


@pytest.fixture(scope="module")
def local(hard_seed_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    data = tmp_path_factory.mktemp("fuzz") / "data"
    shutil.copytree(hard_seed_dir, data)
    app = create_app(seed_settings(data, request_timeout_s=30.0))
    with TestClient(app) as c:
        # load the model before anything is timed (a first semantic query takes seconds)
        r = c.post("/graphql", json={"query": '{ search(query: "graph", mode: SEMANTIC) '
                                              "{ score } }"})
        assert r.status_code == 200 and "errors" not in r.json(), r.text[:300]
        yield c


def _stats(c: httpx.Client | TestClient) -> Any:
    return c.post("/graphql", json={"query": "{ stats { totalNodes totalEdges } }"}).json()


@settings(fuzz_settings(80), deadline=timedelta(seconds=30))
@given(documents())
def test_fuzz_documents_in_process(local: TestClient, doc: tuple[str, dict[str, Any]]) -> None:
    before = _stats(local)
    check_answer(local, *doc)
    assert _stats(local) == before


@settings(fuzz_settings(15), deadline=timedelta(seconds=30))
@given(documents())
def test_fuzz_documents_real_server(hard_server: Server, doc: tuple[str, dict[str, Any]]) -> None:
    with httpx.Client(base_url=hard_server.url, timeout=ANSWER_S * 4) as c:
        check_answer(c, *doc)


def test_the_generator_builds_fragments_aliases_and_variables() -> None:
    """One document with all three exists within a few hundred draws (the strategy is not dead)."""
    from hypothesis import Phase, find

    doc, _ = find(documents(), lambda d: "...F" in d[0] and " a" in d[0] and "$v" in d[0],
                  settings=settings(max_examples=500, database=None, deadline=None,
                                    phases=[Phase.generate]))  # found is enough: no shrinking
    assert doc.startswith("query") or doc.startswith("mutation")
