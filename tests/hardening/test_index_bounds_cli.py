"""One long title must not cost a Neo4j graph its write (issue 39, finding 2, ingest half).

Ingest took titles up to 10,000 characters; a 9,000-character title made Neo4j's range
index on ``Paper.label`` refuse the write ("Property value is too large to index"), so a
small ``citegraph add`` failed whole, good records included, with exit 1 (the embedded
store took it). Now every text that reaches an indexed property is bounded at ingest
(graph/bounds.py), the same for both stores: the record is rejected with file:line and
the reason, the good records go in, and the CLI exits 3.

The real CLI, on the embedded store and on the suite's real Neo4j: a graph built from a
seed file, then an ``add`` of a file holding good records, one 9,000-character title, and
one good record whose abstract holds a 9,000-letter "word" (extraction must not make an
index key of it: a concept's name is indexed too).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from graph.model import Paper, node_to_props
from graph.settings import Settings
from graph.store import open_store
from tests.conftest import BoltServer
from tests.support.seeds import EMBED_CACHE, SEEDS

pytestmark = pytest.mark.slow

SEED = sorted(SEEDS.glob("*.txt"))[0]
WORD = "xq" * 4500
RECORDS = [
    {"id": "ib-good", "title": "Bounded keys for range indexes",
     "abstract": "We bound every indexed property of a graph store so that a single long "
                 "value can never refuse a whole write of many good records."},
    {"id": "ib-long", "title": "Long " * 1800,
     "abstract": "A title of nine thousand characters is longer than any index key a "
                 "graph database keeps, so the record is refused at ingest."},
    {"id": "ib-word", "title": "A long word",
     "abstract": f"We study the {WORD} network and report that the {WORD} network trains "
                 "well, which must not become a concept name too long to index."},
]


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "citegraph", *args], env=env,
                          capture_output=True, text=True, timeout=900)


def _papers(env: dict[str, str]) -> dict[str, dict[str, object]]:
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        store = open_store(Settings())
    finally:
        os.environ.clear()
        os.environ.update(saved)
    try:
        return {n.id: node_to_props(n) for n in store.snapshot().nodes.values()
                if isinstance(n, Paper)}
    finally:
        store.close()


@pytest.fixture(params=["embedded", "neo4j"])
def env(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, str]]:
    data = tmp_path / "data"
    data.mkdir()
    (data / "cache").symlink_to(EMBED_CACHE, target_is_directory=True)
    env = dict(os.environ, CITEGRAPH_DATA_DIR=str(data), HF_HUB_OFFLINE="1")
    if request.param == "neo4j":
        server: BoltServer = request.getfixturevalue("bolt_server")
        env.update(CITEGRAPH_STORE="neo4j", NEO4J_URI=server.uri, NEO4J_USER=server.user,
                   NEO4J_PASSWORD=server.password, NEO4J_DATABASE=server.database)
    yield env
    if request.param == "neo4j":
        saved = dict(os.environ)
        os.environ.update(env)
        try:
            store = open_store(Settings())
        finally:
            os.environ.clear()
            os.environ.update(saved)
        store.clear()
        store.close()


def test_a_title_too_long_to_index_is_one_rejected_record(
    env: dict[str, str], tmp_path: Path
) -> None:
    built = _cli(env, "build", str(SEED))
    assert built.returncode == 0, built.stderr[-2000:]
    before = _papers(env)
    assert before

    more = tmp_path / "more.jsonl"
    more.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    added = _cli(env, "add", str(more), "--json")
    assert added.returncode == 3, (added.returncode, added.stderr[-3000:])
    report = json.loads(added.stdout)
    assert report["problems"] == [
        f"{more}:2: title too long to index: 8999 characters > 1000"
    ]
    assert sorted(report["added"]) == ["ib-good", "ib-word"]

    after = _papers(env)
    assert "ib-long" not in after and {"ib-good", "ib-word"} <= set(after)
    assert {pid: after[pid] for pid in before} == before  # the old graph as it was
    stats = _cli(env, "stats", "--json")
    assert stats.returncode == 0, stats.stderr[-2000:]
