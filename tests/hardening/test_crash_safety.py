"""Crash safety of the embedded store: SIGKILL during ``citegraph add``/``build``.

A real ``python -m citegraph --data-dir D ...`` process is killed with SIGKILL

* at exact points of the write path (``_killpoint.py``: before apply, with every row
  written but COMMIT not sent, just after COMMIT), and
* at moments it does not choose: as soon as the database's write-ahead log starts to
  grow, and after fixed delays spread over the run.

Afterwards the graph database in D must load and equal, exactly, either the graph
before the command or the graph the command produces when left alone (before for
every kill ahead of COMMIT); and the same command run again must finish with the same
result (no stale lock, cache or half-written state gets in its way).

The corpus is small (38 seed abstracts, then 10 more as JSONL) and the embedding
cache is pre-warmed from the session cache, so no run loads the model.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from graph.build import graphs_equal
from graph.errors import StoreError
from graph.ingest import read_text
from graph.model import Edge, GraphChange, GraphData, RelType
from graph.store.embedded import EmbeddedStore
from tests.hardening._hyp import fuzz_settings
from tests.support.seeds import EMBED_CACHE, ROOT, SEEDS

pytestmark = pytest.mark.slow

KILLPOINT = Path(__file__).with_name("_killpoint.py")
BASE = sorted(SEEDS.glob("*.txt"))[:2]
GRAPH = "graph.db"
RUN_TIMEOUT = 120


@dataclass(frozen=True)
class Scene:
    """A warmed-up data folder holding the base graph, and the graphs to expect."""

    template: Path  # data dir: base graph + warm cache
    add_file: Path  # 10 new abstracts (JSONL)
    before: GraphData
    after_add: GraphData
    after_build: GraphData

    def fresh(self, where: Path) -> Path:
        shutil.copytree(self.template, where)
        return where

    def args(self, command: str) -> list[str]:
        if command == "add":
            return ["add", str(self.add_file)]
        return ["build", *map(str, BASE), str(self.add_file)]

    def expected(self, command: str) -> GraphData:
        return self.after_add if command == "add" else self.after_build


def _env() -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT))
    env.pop("CITEGRAPH_STORE", None)
    return env


def cli(data_dir: Path, args: list[str], point: str = "none") -> subprocess.Popen[bytes]:
    """Start ``citegraph --data-dir DATA_DIR ARGS`` (via the kill-point wrapper)."""
    return subprocess.Popen(
        [sys.executable, str(KILLPOINT), point, "--data-dir", str(data_dir), *args],
        cwd=ROOT,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def run_cli(
    data_dir: Path, args: list[str], point: str = "none"
) -> subprocess.CompletedProcess[bytes]:
    proc = cli(data_dir, args, point)
    out, err = proc.communicate(timeout=RUN_TIMEOUT)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def load(data_dir: Path) -> GraphData:
    """The graph database in DATA_DIR, loaded the way every command loads it."""
    store = EmbeddedStore(data_dir / GRAPH)
    try:
        return store.snapshot()
    finally:
        store.close()


def same(a: GraphData, b: GraphData) -> list[str]:
    problems = graphs_equal(a, b)
    if a.embedding_ids != b.embedding_ids or not np.array_equal(a.embeddings, b.embeddings):
        problems.append("embeddings differ")
    return problems


def _copy_cache(src: Path, dst: Path) -> None:
    """Copy SQLite caches with the backup API (safe while another test writes them)."""
    dst.mkdir(parents=True, exist_ok=True)
    for db in sorted(src.glob("*.sqlite")):
        with sqlite3.connect(db) as a, sqlite3.connect(dst / db.name) as b:
            a.backup(b)


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scene]:
    root = tmp_path_factory.mktemp("crash")
    extra = read_text(sorted(SEEDS.glob("*.txt"))[2]).papers[:10]
    add_file = root / "ten.jsonl"
    # no title: the embedded text is the abstract alone, as for the seeds (cache hits)
    add_file.write_text(
        "".join(
            json.dumps({"id": f"x{i}", "abstract": p.abstract}) + "\n" for i, p in enumerate(extra)
        )
    )
    template = root / "template"
    if EMBED_CACHE.is_dir():
        _copy_cache(EMBED_CACHE, template / "cache")
    result = run_cli(template, ["build", *map(str, BASE)])
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    before = load(template)
    assert len(before.nodes) > 38
    warm = root / "warm-add"
    shutil.copytree(template, warm)
    result = run_cli(warm, ["add", str(add_file)])
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    # the add warmed the cache for the new texts; make the template's cache warm too
    shutil.rmtree(template / "cache")
    _copy_cache(warm / "cache", template / "cache")
    warm_build = root / "warm-build"
    shutil.copytree(template, warm_build)
    scene = Scene(template, add_file, before, load(warm), before)
    result = run_cli(warm_build, scene.args("build"))
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    scene = Scene(template, add_file, before, load(warm), load(warm_build))
    assert same(scene.before, scene.after_add), "the add changed nothing?"
    yield scene


def _wal_size(data_dir: Path) -> int:
    wal = data_dir / f"{GRAPH}-wal"
    return wal.stat().st_size if wal.exists() else 0


# ------------------------------------------------------------------ exact kill points


@pytest.mark.parametrize(
    ("command", "point", "outcome"),
    [
        ("add", "apply", "before"),
        ("build", "apply", "before"),
        ("add", "part", "before"),
        ("build", "part", "before"),
        ("add", "write", "before"),
        ("build", "write", "before"),
        ("add", "commit", "after"),
        ("build", "commit", "after"),
    ],
)
def test_sigkill_at_each_write_step_keeps_a_whole_graph(
    scene: Scene, tmp_path: Path, command: str, point: str, outcome: str
) -> None:
    data = scene.fresh(tmp_path / "d")
    result = run_cli(data, scene.args(command), point)
    assert result.returncode == -signal.SIGKILL, (result.returncode, result.stderr[-2000:])
    expected = scene.before if outcome == "before" else scene.expected(command)
    assert same(load(data), expected) == []
    # the same command again finishes and gives what it gives when never interrupted
    again = run_cli(data, scene.args(command))
    assert again.returncode == 0, again.stderr.decode()[-2000:]
    assert same(load(data), scene.expected(command)) == []


# ------------------------------------------------------------------ kills from outside


def _kill_when(proc: subprocess.Popen[bytes], data_dir: Path, delay: float | None) -> str:
    """SIGKILL ``proc`` after ``delay`` s, or (None) when the write-ahead log grows."""
    deadline = time.monotonic() + RUN_TIMEOUT
    start = time.monotonic()
    wal = _wal_size(data_dir)
    while proc.poll() is None and time.monotonic() < deadline:
        if delay is None:
            if _wal_size(data_dir) != wal:
                proc.send_signal(signal.SIGKILL)
                return "write-ahead log growing"
            time.sleep(0.0005)
        elif time.monotonic() - start >= delay:
            proc.send_signal(signal.SIGKILL)
            return f"after {delay:.1f}s"
        else:
            time.sleep(0.01)
    return "finished first"


@pytest.mark.parametrize(
    ("command", "point", "outcome", "says"),
    [
        ("add", "int-write", "before", "nothing was written; the graph is as it was"),
        ("add", "int-commit", "after", "this write had committed: the graph holds it whole"),
        ("build", "int-commit", "after", "this write had committed: the graph holds it whole"),
    ],
)
def test_ctrl_c_on_either_side_of_the_commit_says_which(
    scene: Scene, tmp_path: Path, command: str, point: str, outcome: str, says: str
) -> None:
    """Probe 17 O1: a Ctrl-C that landed after the commit said "this write had committed
    whole, or another writer's did"; the store's history names the process that
    committed, so the line now says which."""
    data = scene.fresh(tmp_path / "d")
    result = run_cli(data, scene.args(command), point)
    err = result.stderr.decode(errors="replace")
    assert result.returncode == 130, err[-2000:]
    assert f"stopped by Ctrl-C: {says}" in err, err[-2000:]
    assert "Traceback" not in err
    expected = scene.before if outcome == "before" else scene.expected(command)
    assert same(load(data), expected) == []


@pytest.mark.parametrize(
    ("command", "delay"),
    [
        ("add", None),
        ("build", None),
        ("add", 1.0),
        ("build", 2.0),
    ],
)
def test_sigkill_from_outside_keeps_a_whole_graph(
    scene: Scene, tmp_path: Path, command: str, delay: float | None
) -> None:
    data = scene.fresh(tmp_path / "d")
    proc = cli(data, scene.args(command))
    when = _kill_when(proc, data, delay)
    proc.communicate(timeout=RUN_TIMEOUT)
    graph = load(data)
    # killed any time: the database holds the old graph or the new one, never a mix
    as_before, as_after = same(graph, scene.before), same(graph, scene.expected(command))
    assert not as_before or not as_after, f"killed {when}: {as_before[:3]} / {as_after[:3]}"
    if proc.returncode == 0:
        assert not as_after
    print(
        f"{command}: killed {when}, rc={proc.returncode}, "
        f"graph={'before' if not as_before else 'after'}, wal={_wal_size(data)} bytes"
    )


# ------------------------------------------------------------------ failed apply


@pytest.fixture(scope="module")
def base_store(scene: Scene, tmp_path_factory: pytest.TempPathFactory) -> EmbeddedStore:
    return EmbeddedStore(scene.fresh(tmp_path_factory.mktemp("failed-apply") / "d") / GRAPH)


def _bad_edge(where: int) -> Edge:
    return Edge(f"p-missing-{where}", "c-missing", RelType.MENTIONS, 1.0, {})


@fuzz_settings(40)
@given(data=st.data())
def test_failed_apply_leaves_the_graph_unchanged(
    base_store: EmbeddedStore, data: st.DataObject
) -> None:
    """A diff that fails part-way (edge to an unknown node, bad embeddings) changes nothing."""
    before = base_store.snapshot()
    node_ids = sorted(before.nodes)
    edge_keys = sorted(before.edges, key=lambda k: (k[0], k[1], k[2].value))
    drop_nodes = data.draw(st.lists(st.sampled_from(node_ids), max_size=20, unique=True))
    drop_edges = data.draw(st.lists(st.sampled_from(edge_keys), max_size=40, unique=True))
    new_edges = list(before.edges.values())[: data.draw(st.integers(0, 50))]
    failure = data.draw(st.sampled_from(["edge", "embedding_shape", "embedding_count"]))
    emb_ids: tuple[str, ...] = ()
    emb = None
    if failure == "edge":
        new_edges.insert(data.draw(st.integers(0, len(new_edges))), _bad_edge(len(new_edges)))
    else:
        papers = [i for i in before.embedding_ids if i not in drop_nodes][:3]
        emb_ids = tuple(papers) if papers else ("p-x",)
        dim = before.embeddings.shape[1]
        rows = len(emb_ids) + (1 if failure == "embedding_count" else 0)
        emb = np.ones((rows, dim + (1 if failure == "embedding_shape" else 0)), np.float32)
    change = GraphChange(
        upsert_nodes=tuple(before.nodes[i] for i in node_ids[:10]),
        delete_nodes=tuple(drop_nodes),
        upsert_edges=tuple(new_edges),
        delete_edges=tuple(drop_edges),
        embedding_ids=emb_ids,
        embeddings=emb,
        embedding_model="other-model" if failure != "edge" else before.embedding_model,
    )
    with pytest.raises((StoreError, ValueError)):
        base_store.apply(change)
    after = base_store.snapshot()
    assert same(after, before) == []
    assert base_store.embedding_model() == before.embedding_model
    # memory and disk agree: a second process reading the database sees the same graph
    assert same(load(base_store.path.parent), before) == []
