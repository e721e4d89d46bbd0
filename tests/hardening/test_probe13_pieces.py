"""Probe 13: SIMILAR_TO written in pieces (graph.build.SIMILAR_PIECE_EDGES), from outside.

Nothing here failed when written (docs/reliability.md, "Probe 13"): these keep the
attacks that held.
* ids that sort strangely (prefixes, quotes, spaces, NFC/NFD, CJK, emoji, 2999 chars),
  tiny corpora and exact piece multiples, built in pieces of 1 and 13 edges and rebuilt
  over each other, equal a fresh build written whole;
* k changed between builds (CITEGRAPH_SIMILAR_K, 10 -> 1 -> 25 -> 3) with SIMILAR_TO in
  pieces of 7 edges equals a fresh build at that k;
* a CLI build SIGTERMed / SIGKILLed right after a later SIMILAR_TO part leaves the graph
  exactly (sqlite3 from another process, `citegraph stats`), and its rerun equals a build
  written whole.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import graph.build as gb
from graph.ingest import read_corpus
from graph.model import Paper
from graph.store.embedded import EmbeddedStore
from tests.support.compare import assert_same_graph
from tests.support.seeds import EMBED_CACHE, ROOT, SEEDS, seed_settings

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def seed_papers() -> list[Paper]:
    result = read_corpus([SEEDS])
    assert not result.problems
    return sorted(result.papers, key=lambda p: p.id)


def _whole(tmp: Path, papers: list[Paper], **settings: object):
    assert gb.SIMILAR_PIECE_EDGES == 250_000
    tmp.mkdir(parents=True, exist_ok=True)
    store = EmbeddedStore(tmp / "whole.db", reads="sql")
    pipe = gb.Pipeline(seed_settings(tmp, **settings), cache_dir=EMBED_CACHE, incremental=False)
    try:
        pipe.run(store, add_papers=papers, replace=True)
        return store.snapshot()
    finally:
        pipe.close()
        store.close()


def _corpus(tmp: Path, name: str, records: list[dict]) -> list[Paper]:
    path = tmp / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    return read_corpus([path]).papers


STRANGE = ["a", "ab", "abc", "a b", "a'b", 'a"b', "a%b", "a_b", "ä", "a\u0308x", "z", "Z",
           "e\u0301z", "é", "日本", "🙂", "x" * 2999, "0", "00", "-1", "a;DROP TABLE edges;--",
           "a\\b", "a/b", "ß", "SS", "K", "\u212a"]


def test_strange_ids_and_tiny_corpora_in_pieces_equal_them_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed_papers: list[Paper]
) -> None:
    texts = [p.abstract for p in seed_papers]
    corpora = {"strange": [{"id": i, "abstract": texts[n]} for n, i in enumerate(STRANGE)]}
    for n in (1, 2, 4, 5, 8):  # 4 and 8: exact multiples of 40 edges / k = 10
        corpora[f"n{n}"] = [{"id": f"p{i}", "abstract": texts[i]} for i in range(n)]
    chain = EmbeddedStore(tmp_path / "chain.db", reads="sql")
    try:
        for name, records in corpora.items():
            papers = _corpus(tmp_path, name, records)
            full = _whole(tmp_path / f"w-{name}", papers)
            for size in (1, 13):
                store = EmbeddedStore(tmp_path / f"{name}-{size}.db", reads="sql")
                pipe = gb.Pipeline(seed_settings(tmp_path), cache_dir=EMBED_CACHE,
                                   incremental=False)
                try:
                    with monkeypatch.context() as m:
                        m.setattr(gb, "SIMILAR_PIECE_EDGES", size)
                        pipe.run(store, add_papers=papers, replace=True)
                        pipe.run(chain, add_papers=papers, replace=True)  # over the last
                    assert_same_graph(full, store.snapshot())
                    assert_same_graph(full, chain.snapshot())
                finally:
                    pipe.close()
                    store.close()
    finally:
        chain.close()


def test_k_changed_between_builds_in_pieces_equals_a_build_at_that_k(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed_papers: list[Paper]
) -> None:
    store = EmbeddedStore(tmp_path / "graph.db", reads="sql")
    try:
        for step, (k, papers) in enumerate([
            (10, seed_papers[:50]), (1, seed_papers[10:60]), (25, seed_papers[5:70]),
            (3, seed_papers[20:]),
        ]):
            pipe = gb.Pipeline(seed_settings(tmp_path, similar_k=k), cache_dir=EMBED_CACHE,
                               incremental=False)
            try:
                with monkeypatch.context() as m:
                    m.setattr(gb, "SIMILAR_PIECE_EDGES", 7)
                    pipe.run(store, add_papers=papers, replace=True)
            finally:
                pipe.close()
            assert_same_graph(_whole(tmp_path / f"w{step}", papers, similar_k=k),
                              store.snapshot())
    finally:
        store.close()


_WRAPPER = """
import os, signal, sys
sys.path.insert(0, {root!r})
import graph.build as gb
from graph.store.embedded import _SqlParts
gb.SIMILAR_PIECE_EDGES = 40
apply, calls = _SqlParts.apply, []
def counted(self, change):
    apply(self, change)
    calls.append(1)
    if len(calls) == 5:  # the nodes, SHARES_TERM, RELATED_TO, SIMILAR_TO's first two
        os.kill(os.getpid(), getattr(signal, {sig!r}))
_SqlParts.apply = counted
from citegraph.cli import main
main(sys.argv[1:])
"""


def _dump(db: Path, topics: bool = True) -> list:
    """The stored graph, row by row; ``topics=False``: without the Topic nodes, their edges
    and each paper's importance (a build over an earlier graph keeps that graph's topic ids,
    a build into an empty folder numbers them afresh: docs/format.md)."""
    import sqlite3

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    skip_nodes = "" if topics else " WHERE kind != 'Topic'"
    skip_edges = "" if topics else " WHERE type NOT IN ('IN_TOPIC', 'SUBTOPIC_OF')"
    props = "props" if topics else "json_remove(props, '$.importance')"
    try:
        return [
            con.execute(f"SELECT id, kind, {props} FROM nodes{skip_nodes} ORDER BY id").fetchall(),
            con.execute("SELECT source, target, type, weight, attrs FROM edges"
                        f"{skip_edges} ORDER BY source, target, type").fetchall(),
            con.execute("SELECT id, vector FROM embeddings ORDER BY id").fetchall(),
            con.execute("SELECT key, value FROM meta WHERE key != 'version'"
                        " ORDER BY key").fetchall(),
            con.execute("SELECT count(*) FROM commits").fetchall(),
        ]
    finally:
        con.close()


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL"])
def test_a_cli_build_killed_between_similar_pieces_keeps_the_graph(
    tmp_path: Path, seed_papers: list[Paper], sig: str
) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    (tmp_path / "a.jsonl").write_text("".join(
        json.dumps({"id": p.id, "abstract": p.abstract}) + "\n" for p in seed_papers[:50]))
    (tmp_path / "b.jsonl").write_text("".join(
        json.dumps({"id": p.id, "abstract": p.abstract}) + "\n" for p in seed_papers[10:]))
    wrapper = tmp_path / "wrap.py"
    wrapper.write_text(_WRAPPER.format(root=str(ROOT), sig=sig))

    def cli(data: Path, *args: str, wrap: bool = False) -> subprocess.CompletedProcess[str]:
        pre = [str(wrapper)] if wrap else ["-m", "citegraph"]
        return subprocess.run([sys.executable, *pre, "--data-dir", str(data), *args],
                              capture_output=True, text=True, env=env, timeout=300)

    data, fresh = tmp_path / "d", tmp_path / "f"
    for d in (data, fresh):
        (d / "cache").mkdir(parents=True)
        shutil.copy(EMBED_CACHE / "embeddings.sqlite", d / "cache" / "embeddings.sqlite")
    assert cli(data, "build", str(tmp_path / "a.jsonl")).returncode == 0
    before = _dump(data / "graph.db")
    stats = cli(data, "stats", "--json").stdout
    r = cli(data, "build", str(tmp_path / "b.jsonl"), wrap=True)
    assert r.returncode == (-signal.SIGKILL if sig == "SIGKILL" else 143), r.stderr[-2000:]
    assert _dump(data / "graph.db") == before
    assert cli(data, "stats", "--json").stdout == stats
    assert cli(data, "build", str(tmp_path / "b.jsonl")).returncode == 0
    assert cli(fresh, "build", str(tmp_path / "b.jsonl")).returncode == 0
    assert _dump(data / "graph.db", topics=False)[:4] == _dump(fresh / "graph.db", topics=False)[:4]
