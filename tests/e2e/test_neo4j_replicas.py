"""Scale-out on Neo4j (issue 41, items 2 and 3): every command and two real ``citegraph
serve`` replicas over a ``neo4j://`` (routing) URI, against the suite's single Neo4j.

A paper added through one replica's ``addPapers`` is found by the other's ``node``,
keyword and semantic search, ``neighborhood`` and ``related``; a removal likewise. The
bound docs/neo4j.md promises is "a read that starts after the write was answered sees
it": no per-process cache keeps the other replica stale. The test reads each kind until
it shows the write (a generous deadline, no sleeps), then asserts that no read which
started more than 1 s after the write's answer missed it: how stale, not how slow.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.load import Server, start_server
from tests.conftest import BoltServer
from tests.support.seeds import EMBED_CACHE, SEEDS

pytestmark = [pytest.mark.slow, pytest.mark.bolt]

API_KEY = "replica-key-41"
#: what docs/neo4j.md promises another replica's reader ("within 1 s"); measured from the
#: write's answer to the start of the first read that saw it
STALENESS_S = 1.0
#: how long the test waits for a replica to see a write before it fails (generous: a
#: loaded 2-core machine, a semantic search encodes its query)
SEEN_DEADLINE_S = 60.0

NEW_ID = "replica-added-1"
NEW_TITLE = "Gossip replicas for retrieval augmented generation"
NEW_ABSTRACT = (
    "We study retrieval-augmented generation with large language models and show that "
    "diffusion-based rerankers improve answer accuracy on open-domain question answering "
    "benchmarks while reducing hallucination across several model sizes."
)


def routing_uri(uri: str) -> str:
    """The same server through the routing scheme (``neo4j://``)."""
    scheme, sep, rest = uri.partition("://")
    assert sep, uri
    return {"bolt": "neo4j", "bolt+s": "neo4j+s", "bolt+ssc": "neo4j+ssc"}.get(
        scheme, scheme) + "://" + rest


def _env(server: BoltServer, data_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "CITEGRAPH_STORE": "neo4j",
        "NEO4J_URI": routing_uri(server.uri),
        "NEO4J_USER": server.user,
        "NEO4J_PASSWORD": server.password,
        "NEO4J_DATABASE": server.database,
        "CITEGRAPH_DATA_DIR": str(data_dir),
        "HF_HUB_OFFLINE": "1",
    }


def _data_dir(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "cache").symlink_to(EMBED_CACHE, target_is_directory=True)
    return root


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    out = subprocess.run([sys.executable, "-m", "citegraph", *args], env=env,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, f"citegraph {' '.join(args)}: {out.stderr[-3000:]}"
    return out


@pytest.fixture(scope="module")
def routed_graph(bolt_server: BoltServer, tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[dict[str, str]]:
    """The seeds built into the suite's Neo4j through ``neo4j://`` by the CLI."""
    env = _env(bolt_server, _data_dir(tmp_path_factory.mktemp("routed") / "cli"))
    _cli(env, "build", str(SEEDS))
    try:
        yield env
    finally:
        from graph.settings import Settings
        from graph.store.neo4j import open_driver, store_from_settings

        settings = Settings(store="neo4j", neo4j_uri=env["NEO4J_URI"],  # type: ignore[arg-type]
                            neo4j_user=env["NEO4J_USER"], neo4j_password=env["NEO4J_PASSWORD"],
                            neo4j_database=env["NEO4J_DATABASE"])
        store = store_from_settings(settings, open_driver(settings), owns_driver=True)
        store.clear()
        store.close()


def test_every_command_runs_over_a_routing_uri(routed_graph: dict[str, str],
                                               tmp_path: Path) -> None:
    env = routed_graph
    stats = json.loads(_cli(env, "stats", "--json").stdout)
    assert stats["nodes"]["Paper"] > 10
    hits = json.loads(_cli(env, "search", "language models", "--kind", "paper", "--json").stdout)
    assert hits
    first = hits[0]["id"]
    assert json.loads(_cli(env, "neighbors", first, "--json").stdout)
    assert json.loads(_cli(env, "related", first, "-n", "3", "--json").stdout)
    other = json.loads(_cli(env, "related", first, "-n", "1", "--json").stdout)[0]["id"]
    _cli(env, "path", first, other)
    out = tmp_path / "graph.graphml"
    _cli(env, "export", "graphml", "--output", str(out))
    assert out.stat().st_size > 1000
    corpus = tmp_path / "one.jsonl"
    corpus.write_text(json.dumps({"id": "cli-routed-1", "title": NEW_TITLE,
                                  "abstract": NEW_ABSTRACT}) + "\n")
    _cli(env, "add", str(corpus))
    assert json.loads(_cli(env, "stats", "--json").stdout)["nodes"]["Paper"] == \
        stats["nodes"]["Paper"] + 1
    _cli(env, "remove", "cli-routed-1")
    assert json.loads(_cli(env, "stats", "--json").stdout) == stats


@pytest.fixture(scope="module")
def replicas(routed_graph: dict[str, str], tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[tuple[Server, Server]]:
    """Two ``citegraph serve`` processes on two ports, one Neo4j, a ``neo4j://`` URI."""
    root = tmp_path_factory.mktemp("replicas")
    started: list[Server] = []
    try:
        for name in ("a", "b"):
            env = {k: v for k, v in routed_graph.items() if k != "CITEGRAPH_DATA_DIR"}
            env.update(CITEGRAPH_API_KEY=API_KEY, CITEGRAPH_REQUEST_TIMEOUT_S="60")
            started.append(start_server(_data_dir(root / name), env, ready_timeout=300))
        yield started[0], started[1]
    finally:
        for server in started:
            server.stop()


def _gql(client: httpx.Client, query: str, **variables: Any) -> dict[str, Any]:
    r = client.post("/graphql", json={"query": query, "variables": variables},
                    headers={"X-API-Key": API_KEY})
    body: dict[str, Any] = r.json()
    return body


def _global_id(key: str) -> str:
    return base64.b64encode(f"Paper:{key}".encode()).decode()


READS: dict[str, tuple[str, Callable[[dict[str, Any]], bool]]] = {
    "node": ('query($id: ID!) { node(id: $id) { id } }',
             lambda d: d.get("node") is not None),
    "keyword search": (
        'query { search(query: "gossip replicas", first: 5) { node { ... on Paper { key } } } }',
        lambda d: NEW_ID in [h["node"].get("key") for h in d.get("search") or []]),
    "semantic search": (
        f'query {{ search(query: "{NEW_TITLE}", mode: SEMANTIC, first: 5) '
        "{ node { ... on Paper { key } } } }",
        lambda d: NEW_ID in [h["node"].get("key") for h in d.get("search") or []]),
    "neighborhood": (
        f'query {{ neighborhood(id: "{NEW_ID}") {{ nodes {{ id }} }} }}',
        lambda d: bool((d.get("neighborhood") or {}).get("nodes"))),
    # with its word-overlap reasons: the word index is a per-process cache (it was kept
    # 5 s on Neo4j, and a paper it did not hold yet had no shared wording)
    "related": (
        f'query {{ related(paper: "{NEW_ID}", first: 5) '
        "{ paper { key } reasons { kind } } }",
        lambda d: any(r["kind"] == "words" for p in d.get("related") or [] for r in p["reasons"])),
}
#: whole-graph PageRank, a per-process cache (it was kept 5 s on Neo4j)
CENTRAL = "{ stats { centralConcepts { concept { key } degree pagerank } } }"


def _seen(client: httpx.Client, what: str, central: Any = None) -> bool:
    if what == "central concepts":  # "seen": the PageRank of another graph than before
        now = _gql(client, CENTRAL)["data"]["stats"]["centralConcepts"]
        return bool(now != central)
    query, found = READS[what]
    body = _gql(client, query, **({"id": _global_id(NEW_ID)} if "$id" in query else {}))
    return found(body.get("data") or {})


def _stale_for(client: httpx.Client, what: str, present: bool, since: float,
               central: Any) -> float:
    """Read ``what`` until its answer shows the paper ``present`` (or absent), for at most
    SEEN_DEADLINE_S; how long after ``since`` the last read that did not show it started
    (0 when the first read showed it): how stale the replica was, not how slow."""
    stale = 0.0
    while True:
        started = time.monotonic()
        if _seen(client, what, central) == present:
            return stale
        stale = started - since
        assert stale < SEEN_DEADLINE_S, f"{what}: not seen in {SEEN_DEADLINE_S} s"


def test_replicas_see_each_others_writes(replicas: tuple[Server, Server]) -> None:
    a, b = replicas
    with httpx.Client(base_url=a.url, timeout=120) as ca, \
            httpx.Client(base_url=b.url, timeout=120) as cb:
        # a read of each kind on both first: whatever a replica would cache, it has
        central = _gql(cb, CENTRAL)["data"]["stats"]["centralConcepts"]
        assert central and _gql(ca, CENTRAL)["data"]["stats"]["centralConcepts"] == central
        for what in READS:
            assert not _seen(cb, what) and not _seen(ca, what), what
        kinds = [*READS, "central concepts"]

        added = _gql(ca, "mutation($in: [PaperInput!]!) { addPapers(input: $in) { added } }",
                     **{"in": [{"id": NEW_ID, "title": NEW_TITLE, "abstract": NEW_ABSTRACT}]})
        assert added.get("data", {}).get("addPapers", {}).get("added") == [NEW_ID], added
        answered = time.monotonic()
        lags = {what: _stale_for(cb, what, True, answered, central) for what in kinds}
        assert all(lag <= STALENESS_S for lag in lags.values()), str(lags)
        # A keeps the PageRank of the graph with the paper: B's removal must replace it
        assert _seen(ca, "central concepts", central)

        removed = _gql(cb, f'mutation {{ removePaper(id: "{NEW_ID}") {{ removed }} }}')
        assert removed.get("data", {}).get("removePaper", {}).get("removed") == [NEW_ID], removed
        answered = time.monotonic()
        lags = {what: _stale_for(ca, what, False, answered, central) for what in kinds}
        assert all(lag <= STALENESS_S for lag in lags.values()), str(lags)
