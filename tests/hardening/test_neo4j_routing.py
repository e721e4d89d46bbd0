"""The Neo4j store over a routing URI (``neo4j://``): every read runs in a READ
transaction, every write (the writers' lock, its fence, schema statements, changes) in a
WRITE one, and a write's bookmark reaches the reads that follow it (issue 41, item 3).

On a single server a read sent to the writer answers the same, so the access mode is
read where the driver states it: the ``BEGIN`` message of a transaction, or the ``RUN``
of an auto-commit query (``'mode': 'r'`` for a read, no mode for a write), logged by
``neo4j.io`` at DEBUG. A cluster routes
on that mode. The write's bookmark is what makes a read on another cluster member wait
until that member has the write (the store's reads use ``execute_query``'s bookmark
manager; its write sessions did not share it before).
"""

from __future__ import annotations

import ast
import io
import logging
import re
import tokenize
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from graph.model import Edge, GraphChange, NodeKind, Paper, RelType
from graph.settings import Settings
from graph.store.neo4j import Neo4jStore, open_driver, store_from_settings
from tests.conftest import BoltServer
from tests.e2e.test_neo4j_replicas import routing_uri

pytestmark = [pytest.mark.slow, pytest.mark.bolt]

WRITES = re.compile(r"\b(MERGE|CREATE|DELETE|SET|REMOVE|DROP|TERMINATE)\b")
#: read-only statements that must run on the writer: waiting for an index it created, and
#: the lock transactions it holds (SHOW TRANSACTIONS lists one member's)
ON_THE_WRITER = ("db.awaitIndex", "SHOW TRANSACTIONS")


class Bolt(logging.Handler):
    """The statements the driver sent, each with its transaction's access mode."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.runs: list[tuple[str, str, list[str]]] = []  # query, mode, bookmarks
        self.routes = 0
        self._open: dict[Any, tuple[str, list[str]]] = {}  # connection -> its BEGIN
        self._committing: set[Any] = set()
        #: the bookmark of each committed write transaction, in order
        self.write_commits: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        msg, args = str(record.msg), record.args
        if not isinstance(args, tuple) or not args:
            return
        port = args[0]
        if "C: BEGIN" in msg and len(args) > 1:
            extra: dict[str, Any] = args[1]
            self._open[port] = (str(extra.get("mode", "w")), list(extra.get("bookmarks", [])))
        elif "C: RUN" in msg and len(args) > 1:
            text = str(args[1])
            query = next(t.string for t in tokenize.generate_tokens(io.StringIO(text).readline)
                         if t.type == tokenize.STRING)
            if port in self._open:
                mode, bookmarks = self._open[port]
            else:  # auto-commit: the mode and bookmarks travel in RUN itself
                extra = _last_dict(text)
                mode = str(extra.get("mode", "w"))
                bookmarks = list(extra.get("bookmarks", []))
            self.runs.append((ast.literal_eval(query), mode, bookmarks))
        elif re.search(r"C: (COMMIT|ROLLBACK|RESET)", msg):
            began = self._open.pop(port, None)
            if "COMMIT" in msg and began is not None and began[0] == "w":
                self._committing.add(port)
        elif "S: SUCCESS" in msg and port in self._committing and len(args) > 1:
            self._committing.discard(port)
            if isinstance(args[1], dict) and args[1].get("bookmark"):
                self.write_commits.append(str(args[1]["bookmark"]))
        elif "C: ROUTE" in msg:
            self.routes += 1


def _last_dict(text: str) -> dict[str, Any]:
    """The last of the logged message's fields (query, parameters, extra): the extra."""
    at = len(text)
    while (at := text.rfind(" {", 0, at)) >= 0:
        try:
            value = ast.literal_eval(text[at + 1:])
        except (ValueError, SyntaxError):
            continue
        return value if isinstance(value, dict) else {}
    return {}


@pytest.fixture
def routed(bolt_server: BoltServer) -> Iterator[tuple[Neo4jStore, Bolt]]:
    settings = Settings(store="neo4j", neo4j_uri=routing_uri(bolt_server.uri),  # type: ignore[arg-type]
                        neo4j_user=bolt_server.user, neo4j_password=bolt_server.password,
                        neo4j_database=bolt_server.database)
    bolt = Bolt()
    logger = logging.getLogger("neo4j")
    level = logger.level
    logger.addHandler(bolt)
    logger.setLevel(logging.DEBUG)
    store = store_from_settings(settings, open_driver(settings), owns_driver=True)
    try:
        store.clear()
        yield store, bolt
    finally:
        logger.removeHandler(bolt)
        logger.setLevel(level)
        store.clear()
        store.close()


def _change() -> GraphChange:
    rng = np.random.default_rng(41)
    papers = [Paper(id=f"r{i}", label=f"Routed paper {i}", abstract=f"graph routing {i}",
                    text_hash=f"r{i}") for i in range(3)]
    return GraphChange(
        upsert_nodes=papers,
        upsert_edges=[Edge("r0", "r1", RelType.CITES, 1.0), Edge("r1", "r2", RelType.CITES, 1.0)],
        embedding_ids=[p.id for p in papers],
        embeddings=rng.normal(size=(3, 8)).astype(np.float32),
        embedding_model="test-model",
    )


def test_reads_run_as_read_transactions_and_writes_as_write_ones(
    routed: tuple[Neo4jStore, Bolt],
) -> None:
    store, bolt = routed
    store.ensure_schema()
    with store.writer():
        store.apply(_change())
    assert store.get_nodes(["r0"])
    assert store.find_node("Routed paper 1") is not None
    assert store.neighborhood(["r0"], depth=2).nodes
    assert store.shortest_path("r0", "r2") is not None
    assert store.keyword_search("routing", limit=3)
    assert store.vector_search(np.ones(8) / np.sqrt(8), limit=2)
    assert store.list_nodes(NodeKind.PAPER)[1] == 3
    assert store.edges_of(["r1"])
    assert store.stats().nodes["Paper"] == 3
    assert store.version() != "unversioned"
    store.ping()
    store.clear()

    assert bolt.routes, "the driver never asked for a routing table: not a routing URI"
    wrong = [(mode, q.strip()[:80]) for q, mode, _ in bolt.runs
             if mode != ("w" if WRITES.search(q) or any(w in q for w in ON_THE_WRITER)
                         else "r")]
    assert not wrong, wrong
    kinds = {mode for _, mode, _ in bolt.runs}
    assert kinds == {"r", "w"}, kinds


def test_a_write_hands_its_bookmark_to_the_reads_after_it(
    routed: tuple[Neo4jStore, Bolt],
) -> None:
    store, bolt = routed
    for writes in range(2):
        with store.writer():  # the lock's fence commits, then the change
            if writes:
                store.apply(_change())
        bolt.runs.clear()
        last = bolt.write_commits[-1]  # the fence's, then the change's
        assert store.get_nodes(["r0"]) if writes else not store.get_nodes(["r0"])
        (read,) = [r for r in bolt.runs if r[1] == "r"]
        assert last in read[2], "the read after the write does not wait for it"
