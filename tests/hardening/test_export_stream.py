"""Issue 39, finding 5 (and the Neo4j issue's streaming exports): whole-graph exports stream.

8 concurrent ``/export/graphml`` on the ICLR server all answered 504, the server burned a
core for 35 s more and its RSS went from 2.34 GB to 5.66 GB; on Neo4j one export answered
504. Now a whole-graph export is read from the store a page at a time and sent as it is
written, under its own time limit, at most ``CITEGRAPH_MAX_CONCURRENT_EXPORTS`` at once.

Over a real ``citegraph serve`` on the embedded store and on Neo4j, each holding the seed
graph plus a synthetic part of 1,500 papers and 36,000 edges (a graph bigger than the
seeds, with hostile text in ids, labels and titles):

* each format completes, past the request limit of GraphQL, and reads back to the same
  graph as networkx's own writers make of the store's snapshot (the non-streamed file);
* exports beyond the cap answer 503 with Retry-After while the others complete, and a
  slot is free again once they end;
* a client that goes away after the first piece leaves the server idle soon after,
  having spent a fraction of what a whole export costs;
* the server's RSS grows by a bounded amount during an export, measured against the
  file's size (the old export held the graph as networkx and XML trees, ~14x the file).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import shutil
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import networkx as nx
import pytest

from api.middleware import LimitsMiddleware
from bench.load import Server, cpu_seconds, rss_bytes, start_server
from graph.export import to_networkx
from graph.model import Concept, Edge, GraphChange, GraphData, Paper, RelType
from graph.store.embedded import CACHE_KIB, EmbeddedStore

pytestmark = pytest.mark.slow

FORMATS = ("graphml", "gexf", "cytoscape.json")
CAP = 2
REQUEST_TIMEOUT_S = 2.0
ENV = {
    "CITEGRAPH_MAX_CONCURRENT_EXPORTS": str(CAP),
    "CITEGRAPH_REQUEST_TIMEOUT_S": str(REQUEST_TIMEOUT_S),
}
MIB = 1024 * 1024


# --------------------------------------------------------------------------- the graph


def _big_change(papers: int = 1500, concepts: int = 150) -> GraphChange:
    """A synthetic graph of ``papers`` papers (~24 edges each) with hostile text."""

    def pid(i: int) -> str:
        if i % 997 == 0:
            return f'big-q"<&>\U0001F600-{i:05d}'  # quotes, markup, a character past U+FFFF
        return f"big-{i:05d}"

    nodes: list[Any] = [
        Paper(id=pid(i), label=f'Paper {i}: <b>graphs</b> & "trees"',
              abstract=f"Synthetic abstract number {i} about graphs.", text_hash=f"h{i}",
              title=f"Graphs\tand trees\n{i} \u05e9\u05dc\u05d5\u05dd", venue="ICLR",
              year=2021, urls=(f"https://example.org/p?id={i}&x=1",))
        for i in range(papers)
    ]
    nodes += [Concept(id=f"concept:big-{j:04d}", name=f"concept {j} & <more>")
              for j in range(concepts)]
    edges: list[Edge] = []
    for i in range(papers):
        for k in range(1, 11):
            edges.append(Edge(pid(i), pid((i + k) % papers), RelType.SIMILAR_TO, 0.5 + k / 100,
                              {"score": 0.5 + k / 100, "words": k / 20, "rank": k}))
        for k in range(11, 17):
            a, b = sorted((pid(i), pid((i + k) % papers)))
            edges.append(Edge(a, b, RelType.SHARES_TERM, 2.0, {"terms": [f"term {k}", "x<y"]}))
        for m in range(8):
            edges.append(Edge(pid(i), f"concept:big-{(i * 7 + m) % concepts:04d}",
                              RelType.MENTIONS, 1.0, {"count": m + 1}))
    for j in range(concepts - 1):
        edges.append(Edge(f"concept:big-{j:04d}", f"concept:big-{j + 1:04d}",
                          RelType.RELATED_TO, 3.0, {"count": 3}))
    unique = {e.key: e for e in edges}
    return GraphChange(upsert_nodes=tuple(nodes), upsert_edges=tuple(unique.values()))


@dataclass
class Served:
    kind: str
    server: Server
    snapshot: GraphData


@pytest.fixture(scope="module", params=["embedded", pytest.param("neo4j", marks=pytest.mark.bolt)])
def served(
    request: pytest.FixtureRequest, hard_seed_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Served]:
    """A server over the seed graph plus :func:`_big_change`, on the embedded store or Neo4j."""
    root = tmp_path_factory.mktemp("export-stream")
    data = root / "data"
    shutil.copytree(hard_seed_dir, data)
    env = dict(ENV)
    if request.param == "embedded":
        store = EmbeddedStore(data / "graph.db")
        try:
            with store.writer():
                store.apply(_big_change())
            snapshot = store.snapshot()
        finally:
            store.close()
    else:
        from graph.store.neo4j import Neo4jStore

        bolt = request.getfixturevalue("bolt_server")
        seed_store = EmbeddedStore(data / "graph.db", reads="sql")
        try:
            seed = seed_store.snapshot()
        finally:
            seed_store.close()
        shutil.rmtree(data)
        data.mkdir()
        neo = Neo4jStore(request.getfixturevalue("bolt_driver"), bolt.database)
        neo.clear()
        neo.apply(GraphChange(
            upsert_nodes=tuple(seed.nodes.values()), upsert_edges=tuple(seed.edges.values()),
            embedding_ids=tuple(seed.embedding_ids), embeddings=seed.embeddings,
            embedding_model=seed.embedding_model,
        ))
        neo.apply(_big_change())
        snapshot = neo.snapshot()
        env |= {"CITEGRAPH_STORE": "neo4j", "NEO4J_URI": bolt.uri, "NEO4J_USER": bolt.user,
                "NEO4J_PASSWORD": bolt.password, "NEO4J_DATABASE": bolt.database}
    server = start_server(data, env)  # and the model: its warm-up would be measured
    try:
        yield Served(str(request.param), server, snapshot)
    finally:
        server.stop()


# --------------------------------------------------------------------------- helpers


def _reference(fmt: str, data: GraphData) -> bytes:
    """The file networkx's own writers make of ``data`` (what /export sent before)."""
    g = to_networkx(data.nodes.values(), data.edges.values())
    buf = io.BytesIO()
    if fmt == "graphml":
        nx.write_graphml(g, buf, encoding="utf-8")
    elif fmt == "gexf":
        out = nx.MultiDiGraph()
        out.add_nodes_from(g.nodes(data=True))
        for u, v, key, attrs in g.edges(keys=True, data=True):
            out.add_edge(u, v, key=key, **{("label" if k == "type" else k): x
                                          for k, x in attrs.items()})
        nx.write_gexf(out, buf, encoding="utf-8")
    else:
        buf.write(json.dumps(nx.cytoscape_data(g, name="label", ident="id"),
                             ensure_ascii=False).encode())
    return buf.getvalue()


_PARSED: dict[tuple[str, str], tuple[dict[str, Any], Counter[Any]]] = {}


def _parsed_reference(served: Served, fmt: str) -> tuple[dict[str, Any], Counter[Any]]:
    """:func:`_graph_of` the :func:`_reference` file of the served graph (made once)."""
    key = (served.kind, fmt)
    if key not in _PARSED:
        _PARSED[key] = _graph_of(fmt, _reference(fmt, served.snapshot))
    return _PARSED[key]


def _graph_of(fmt: str, body: bytes) -> tuple[dict[str, Any], Counter[Any]]:
    """Nodes with their attributes, and edges with theirs, as networkx reads ``body``
    (GEXF's edge ids, a counter, left out)."""
    if fmt == "graphml":
        g = nx.read_graphml(io.BytesIO(body))
    elif fmt == "gexf":
        g = nx.read_gexf(io.BytesIO(body))
    else:
        g = nx.cytoscape_graph(json.loads(body))
    nodes = {n: dict(d) for n, d in g.nodes(data=True)}
    edges = Counter(
        (u, v, k, tuple(sorted((a, x) for a, x in d.items() if a != "id")))
        for u, v, k, d in g.edges(keys=True, data=True)
    )
    return nodes, edges


class SlowReader:
    """A GET over a socket with a small receive buffer, that reads only when asked: the
    server can send only so much before it waits for this client (through httpx, the
    kernel's loopback buffers, up to ~36 MB here, took a whole file at once)."""

    RCVBUF = 16 * 1024

    def __init__(self, server: Server, path: str) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.RCVBUF)
        self.sock.settimeout(300)
        self.sock.connect(("127.0.0.1", server.port))
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          "Connection: close\r\n\r\n".encode())
        self.raw = b""
        while b"\r\n\r\n" not in self.raw:
            self.raw += self._recv()
        head, self.raw = self.raw.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split()[1])
        self.headers = {k.strip().lower(): v.strip()
                        for k, v in (line.split(":", 1) for line in lines[1:])}

    def _recv(self) -> bytes:
        data = self.sock.recv(1 << 20)
        if not data:
            raise EOFError("the server closed the connection")
        return data

    def some(self) -> None:
        """Wait for the first bytes of the body."""
        while not self.raw:
            self.raw += self._recv()

    def body(self) -> bytes:
        """The rest of the response, read to its end (chunked transfer decoded)."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * MIB)
        got = [self.raw]
        with contextlib.suppress(EOFError):
            while True:
                got.append(self._recv())
        self.raw = b"".join(got)
        if self.headers.get("transfer-encoding") != "chunked":
            return self.raw
        out: list[bytes] = []
        rest = self.raw
        while True:
            size_line, rest = rest.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                return b"".join(out)
            out.append(rest[:size])
            assert rest[size : size + 2] == b"\r\n", "a chunk cut short"
            rest = rest[size + 2 :]

    def close(self) -> None:
        self.sock.close()


def _wait_idle(pid: int, deadline_s: float, busy_s: float = 0.1) -> float:
    """Seconds until the server uses under ``busy_s`` of CPU in a second (``deadline_s`` at
    most: then the test fails)."""
    t0 = time.monotonic()
    last = cpu_seconds(pid)
    while time.monotonic() - t0 < deadline_s:
        time.sleep(1.0)
        now = cpu_seconds(pid)
        if now - last < busy_s:
            return time.monotonic() - t0
        last = now
    raise AssertionError(f"the server still used {now - last:.2f} s of CPU a second after "
                         f"{deadline_s:.0f} s")


# --------------------------------------------------------------------------- the tests


def test_server_memory_stays_bounded_during_an_export(served: Served) -> None:
    """First on a fresh server: RSS that earlier exports left with the allocator would
    hide growth."""
    pid, url = served.server.pid, served.server.url
    _wait_idle(pid, 60)
    idle = rss_bytes(pid)
    peak = idle
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, rss_bytes(pid))
            time.sleep(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    size = 0
    try:
        with httpx.Client(base_url=url, timeout=300) as c, \
                c.stream("GET", "/export/graphml") as r:
            assert r.status_code == 200
            for piece in r.iter_raw():
                size += len(piece)
    finally:
        done.set()
        sampler.join()
    grown = peak - idle
    # the file is never held, nor the graph: a page of rows, its piece of the file, and
    # (embedded store) SQLite's page cache, which has a fixed size
    bound = CACHE_KIB * 1024 + size // 4
    assert size > 5 * MIB
    assert grown < bound, (
        f"RSS grew by {grown / MIB:.0f} MB during a {size / MIB:.0f} MB export "
        f"(bound {bound / MIB:.0f} MB)"
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_whole_graph_streams_and_reads_back_as_networkx_wrote_it(
    served: Served, fmt: str
) -> None:
    t0 = time.monotonic()
    with httpx.Client(base_url=served.server.url, timeout=300) as c, \
            c.stream("GET", f"/export/{fmt}") as r:
        assert r.status_code == 200, r.read()[:500]
        assert r.headers.get("transfer-encoding") == "chunked"  # streamed, no length known
        assert "attachment" in r.headers["content-disposition"]
        pieces: list[bytes] = []
        for piece in r.iter_raw():
            if not pieces:
                time.sleep(REQUEST_TIMEOUT_S + 1)  # the export outlives GraphQL's limit
            pieces.append(piece)
    assert time.monotonic() - t0 > REQUEST_TIMEOUT_S
    body = b"".join(pieces)
    got_nodes, got_edges = _graph_of(fmt, body)
    want_nodes, want_edges = _parsed_reference(served, fmt)
    assert len(got_nodes) == len(served.snapshot.nodes) > 1500
    assert sum(got_edges.values()) == len(served.snapshot.edges) > 36_000
    assert got_nodes == want_nodes
    assert got_edges == want_edges


def test_exports_beyond_the_cap_answer_503_while_the_others_complete(served: Served) -> None:
    url = served.server.url
    held = [SlowReader(served.server, "/export/cytoscape.json") for _ in range(CAP)]
    try:
        # each has its headers: each holds a slot, and reads nothing more for now
        assert [r.status for r in held] == [200] * CAP
        with httpx.Client(base_url=url, timeout=60) as other:
            for fmt in FORMATS:
                busy = other.get(f"/export/{fmt}")
                assert busy.status_code == 503, busy.text[:300]
                assert int(busy.headers["retry-after"]) > 0
                assert busy.json()["errors"][0]["extensions"]["code"] == "EXPORT_BUSY"
                assert "CITEGRAPH_MAX_CONCURRENT_EXPORTS" in busy.text
            # subgraph exports are small and not counted; queries go on meanwhile
            pid = next(iter(served.snapshot.nodes))
            assert other.get("/export/graphml", params={"ids": pid}).status_code == 200
            assert other.get("/healthz").status_code == 200
        bodies = [r.body() for r in held]
    finally:
        for r in held:
            r.close()
    assert bodies[0] == bodies[1]  # a whole-graph file lists nodes and edges by key
    assert _graph_of("cytoscape.json", bodies[0]) == _parsed_reference(served, "cytoscape.json")
    # the slots are given back: as many as the cap run again
    with httpx.Client(base_url=url, timeout=300) as c:
        for _ in range(CAP + 1):
            assert c.get("/export/cytoscape.json").status_code == 200


def test_a_client_that_goes_away_stops_the_export(served: Served) -> None:
    pid, url = served.server.pid, served.server.url
    _wait_idle(pid, 60)
    cpu0 = cpu_seconds(pid)
    with httpx.Client(base_url=url, timeout=300) as c:
        assert len(c.get("/export/gexf").content) > 5 * MIB
    whole = cpu_seconds(pid) - cpu0
    _wait_idle(pid, 60)
    cpu0 = cpu_seconds(pid)
    reader = SlowReader(served.server, "/export/gexf")
    try:
        assert reader.status == 200
        reader.some()
    finally:
        reader.close()  # mid-file
    _wait_idle(pid, 60)
    spent = cpu_seconds(pid) - cpu0
    assert spent < 0.5 * whole, (
        f"after its client left, the export went on: {spent:.2f} s of server CPU, a whole "
        f"export takes {whole:.2f} s"
    )
    with httpx.Client(base_url=url, timeout=300) as c:  # and its slot is free again
        for _ in range(CAP):
            assert c.get("/export/cytoscape.json").status_code == 200


# --------------------------------------------------------------------------- the time limits


def test_exports_run_under_their_own_time_limit_and_queries_under_theirs() -> None:
    """An /export/ path may take longer than REQUEST_TIMEOUT_S, up to its own limit."""

    async def slow(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for _ in range(6):
            await asyncio.sleep(0.1)
            await send({"type": "http.response.body", "body": b"x", "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def slow_start(scope: Any, receive: Any, send: Any) -> None:
        await asyncio.sleep(0.6)
        await slow(scope, receive, send)

    async def call(app: Any, path: str) -> tuple[int | None, bytes, bool]:
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await app({"type": "http", "path": path, "headers": []}, receive, send)
        status = next((m["status"] for m in sent if m["type"] == "http.response.start"), None)
        body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
        finished = any(m["type"] == "http.response.body" and not m.get("more_body")
                       for m in sent)
        return status, body, finished

    limits = LimitsMiddleware(slow, 1000, timeout_s=0.3, export_timeout_s=5.0)
    assert asyncio.run(call(limits, "/export/graphml")) == (200, b"xxxxxx", True)
    status, body, finished = asyncio.run(call(limits, "/graphql"))
    assert status == 200 and not finished  # a query's stream is cut at its limit
    late = LimitsMiddleware(slow_start, 1000, timeout_s=5.0, export_timeout_s=0.3)
    status, body, _ = asyncio.run(call(late, "/export/gexf"))
    assert status == 504 and b"CITEGRAPH_EXPORT_TIMEOUT_S" in body
