"""The CLI on the Neo4j store, through settings, against the suite's real Neo4j 5.26."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import BoltServer
from tests.support.seeds import EMBED_CACHE, SEEDS

pytestmark = [pytest.mark.slow, pytest.mark.bolt]


def _env(server: BoltServer, data_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        CITEGRAPH_STORE="neo4j",
        NEO4J_URI=server.uri,
        NEO4J_USER=server.user,
        NEO4J_PASSWORD=server.password,
        NEO4J_DATABASE=server.database,
        CITEGRAPH_DATA_DIR=str(data_dir),
        HF_HUB_OFFLINE="1",
    )
    return env


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "citegraph", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_cli_builds_seeds_into_neo4j_with_the_embedded_counts(
    bolt_server: BoltServer, tmp_path: Path
) -> None:
    # the embedded build first (shares the session's embedding cache)
    emb_env = dict(os.environ, CITEGRAPH_DATA_DIR=str(tmp_path / "emb"), HF_HUB_OFFLINE="1")
    (tmp_path / "emb").mkdir()
    (tmp_path / "emb" / "cache").symlink_to(EMBED_CACHE, target_is_directory=True)
    assert _cli(emb_env, "build", str(SEEDS)).returncode == 0
    embedded = json.loads(_cli(emb_env, "stats", "--json").stdout)

    env = _env(bolt_server, tmp_path / "neo")
    (tmp_path / "neo").mkdir()
    (tmp_path / "neo" / "cache").symlink_to(EMBED_CACHE, target_is_directory=True)
    try:
        first = _cli(env, "build", str(SEEDS))
        assert first.returncode == 0, first.stderr
        counts = json.loads(_cli(env, "stats", "--json").stdout)
        assert counts == embedded
        again = _cli(env, "build", str(SEEDS), "--json")  # idempotent: nothing to write
        report = json.loads(again.stdout)
        assert report["nodes_written"] == 0 and report["edges_written"] == 0
        assert json.loads(_cli(env, "stats", "--json").stdout) == embedded
        related = _cli(env, "related", "LocoVR", "-n", "3", "--json")
        assert related.returncode == 0, related.stderr
        assert len(json.loads(related.stdout)) == 3
    finally:
        from graph.settings import Settings
        from graph.store import open_store

        saved = dict(os.environ)
        os.environ.update(env)
        try:
            store = open_store(Settings())
        finally:
            os.environ.clear()
            os.environ.update(saved)
        store.clear()
        store.close()


def test_cli_with_server_down_says_so_in_one_line(tmp_path: Path) -> None:
    env = _env(BoltServer("bolt://127.0.0.1:1", "neo4j", "x", "neo4j"), tmp_path)
    out = _cli(env, "stats")
    assert out.returncode == 1
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), out.stderr
    assert "Traceback" not in out.stderr


ODD_RECORDS = [
    {"id": "odd-1", "title": "Graph attention with empty lists",
     "abstract": "We study graph attention networks for node classification on Cora.",
     "keywords": [], "authors": ["Ann Author", None], "references": []},
    {"id": "odd-2", "title": "Null authors and mixed keywords",
     "abstract": "Diffusion models for protein design evaluated on new benchmarks.",
     "authors": None, "keywords": ["diffusion", None, 3, {"nested": "map"}],
     "references": ["odd-1", None]},
    {"id": "odd-3", "abstract": "Large language models as planners for robot tasks.",
     "year": "2021", "venue": None, "urls": [None]},
]


def test_cli_builds_odd_records_into_neo4j_as_the_embedded_store_does(
    bolt_server: BoltServer, tmp_path: Path
) -> None:
    """Empty lists, null authors, mixed and nested list items: the readers clean them,
    and what reaches Neo4j is exactly what the embedded store holds."""
    from graph.build import graphs_equal
    from graph.settings import Settings
    from graph.store import open_store

    corpus = tmp_path / "odd.jsonl"
    corpus.write_text("\n".join(json.dumps(r) for r in ODD_RECORDS) + "\n")
    emb_env = dict(os.environ, CITEGRAPH_DATA_DIR=str(tmp_path / "emb"), HF_HUB_OFFLINE="1")
    (tmp_path / "emb").mkdir()
    (tmp_path / "emb" / "cache").symlink_to(EMBED_CACHE, target_is_directory=True)
    emb = _cli(emb_env, "build", str(corpus))
    env = _env(bolt_server, tmp_path / "neo")
    (tmp_path / "neo").mkdir()
    (tmp_path / "neo" / "cache").symlink_to(EMBED_CACHE, target_is_directory=True)
    neo = _cli(env, "build", str(corpus))
    assert neo.returncode == emb.returncode, neo.stderr
    assert emb.returncode in (0, 3), emb.stderr
    assert "Traceback" not in neo.stderr
    saved = dict(os.environ)
    try:
        os.environ.update(env)
        store = open_store(Settings())
        os.environ.clear()
        os.environ.update(emb_env)
        embedded = open_store(Settings())
    finally:
        os.environ.clear()
        os.environ.update(saved)
    try:
        a, b = embedded.snapshot(), store.snapshot()
        assert set(b.nodes) >= {"odd-1", "odd-2", "odd-3"}
        assert graphs_equal(a, b) == []
        assert b.nodes["odd-1"].keywords == ()  # type: ignore[union-attr]
    finally:
        store.clear()
        store.close()
        embedded.close()
