"""A batched Neo4j write cut off part way is completed by running the command again
(probe 8, finding F3).

A change over ``max_tx_rows`` rows commits batch by batch (a first load of a large
corpus). Cut off part way (the CLI killed, the server stopped), the graph held some
batches, and running the same ``build`` (or ``add``) again did not complete it: the
pipeline reused the stored SIMILAR_TO lists and hubs (a paper whose edges were not
written yet reads as a paper with no neighbours), so it found nothing to write, and the
graph kept 215 SIMILAR_TO edges of 755 for good. Now the store marks the graph while such
a change is part-written, and the next write recomputes every link and vector.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest

from graph.build import Pipeline, graphs_equal
from graph.errors import StoreUnavailableError
from graph.store.embedded import EmbeddedStore
from graph.store.neo4j import Neo4jStore
from tests.conftest import BoltServer
from tests.support.seeds import EMBED_CACHE, SEEDS, seed_settings

pytestmark = [pytest.mark.slow, pytest.mark.bolt]

FIRST = sorted(SEEDS.glob("*.txt"))[:2]


@pytest.fixture
def store(bolt_server: BoltServer) -> Iterator[Neo4jStore]:
    driver = neo4j.GraphDatabase.driver(
        bolt_server.uri, auth=bolt_server.auth,
        notifications_min_severity=neo4j.NotificationMinimumSeverity.OFF,
    )
    s = Neo4jStore(driver, bolt_server.database, batch_size=10, max_tx_rows=100,
                   owns_driver=True)
    s.clear()
    try:
        yield s
    finally:
        s.clear()
        s.close()


def _build(store: Any, settings: Any, paths: list[Path]) -> None:
    pipeline = Pipeline(settings, cache_dir=EMBED_CACHE)
    try:
        pipeline.run(store, add_paths=paths, replace=True)
    finally:
        pipeline.close()


@pytest.mark.parametrize("cut_at", [12, 25, 40])
def test_a_build_cut_off_part_way_is_completed_by_the_next_build(
    store: Neo4jStore, tmp_path: Path, cut_at: int
) -> None:
    settings = seed_settings(tmp_path / "d")
    reference = EmbeddedStore(tmp_path / "ref.db")
    try:
        _build(reference, settings, [SEEDS])
        _build(store, settings, FIRST)

        real: Callable[..., Any] = store._write_tx
        calls = {"n": 0}

        def cut(work: Any) -> Any:
            calls["n"] += 1
            if calls["n"] == cut_at:
                raise StoreUnavailableError("graph server unavailable: cut off by the test")
            return real(work)

        store._write_tx = cut  # type: ignore[method-assign]
        with pytest.raises(StoreUnavailableError, match="batches committed"):
            _build(store, settings, [SEEDS])
        del store._write_tx  # the class's again
        assert graphs_equal(reference.snapshot(), store.snapshot()), "nothing was cut off"

        _build(store, settings, [SEEDS])  # the same command again
        assert graphs_equal(reference.snapshot(), store.snapshot()) == []
        assert not store.snapshot().incomplete
    finally:
        reference.close()
