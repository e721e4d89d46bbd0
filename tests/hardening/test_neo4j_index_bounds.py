"""A value too long for Neo4j's range indexes is refused before anything is written
(probe 18, finding 2, the store's half; ingest bounds titles first: test_input_boundary).

One 9,000-character title made the server refuse a batched build part way ("Property
value is too large to index"): the old papers were deleted, the new ones half written,
and every rerun failed the same way. Every indexed property of every kind is checked
against the measured limit before the first transaction.
"""

from __future__ import annotations

from collections.abc import Iterator

import neo4j
import pytest

from graph.errors import InvalidArgumentError
from graph.model import Concept, GraphChange, GraphNode, NodeKind, Paper
from graph.store import cypher
from graph.store.neo4j import Neo4jStore
from tests.conftest import BoltServer

pytestmark = [pytest.mark.slow, pytest.mark.bolt]

LIMIT = cypher.INDEX_VALUE_MAX_BYTES


@pytest.fixture
def store(bolt_server: BoltServer) -> Iterator[Neo4jStore]:
    driver = neo4j.GraphDatabase.driver(bolt_server.uri, auth=bolt_server.auth)
    s = Neo4jStore(driver, bolt_server.database, batch_size=5, max_tx_rows=10,
                   owns_driver=True)
    s.clear()
    try:
        yield s
    finally:
        s.clear()
        s.close()


def _paper(pid: str, label: str = "ok") -> Paper:
    return Paper(id=pid, label=label, abstract="text", text_hash=pid)


def _ids(store: Neo4jStore) -> list[str]:
    return sorted(n.id for n in store.list_nodes(NodeKind.PAPER, offset=0, limit=100)[0])


@pytest.mark.parametrize("bad", [
    _paper("p-long-title", "x" * 9_000),
    _paper("p-long-utf8", "é" * (LIMIT // 2 + 1)),  # under the limit in characters
    _paper("p-" + "i" * LIMIT),
    Concept(id="concept:long", name="c" * (LIMIT + 1)),
], ids=["title", "title-utf8", "id", "concept-name"])
def test_a_value_too_long_to_index_writes_nothing_even_in_batches(
    store: Neo4jStore, bad: GraphNode
) -> None:
    store.apply(GraphChange(upsert_nodes=tuple(_paper(f"old-{i}") for i in range(3))))
    change = GraphChange(  # batched: 30 rows over max_tx_rows=10, the bad one last
        delete_nodes=("old-0",),
        upsert_nodes=(*(_paper(f"new-{i}") for i in range(30)), bad),
    )
    with pytest.raises(InvalidArgumentError, match="nothing was written"):
        store.apply(change)
    assert _ids(store) == ["old-0", "old-1", "old-2"]
    assert not store.stats().incomplete


def test_values_at_the_limit_are_written(store: Neo4jStore) -> None:
    store.apply(GraphChange(upsert_nodes=(
        _paper("p-edge", "x" * LIMIT), _paper("p-" + "i" * (LIMIT - 2)),
        Concept(id="concept:edge", name="c" * LIMIT),
    )))
    assert len(_ids(store)) == 2
