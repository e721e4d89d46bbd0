"""A write whose model is not loaded embeds in a second process while it reads ahead.

``citegraph add`` spent most of its wall time importing torch and loading the model, and
then did the graph work, one after the other, on a 2-core machine. Now a child process
loads the model and embeds the new texts while the command reads the graph and resolves
the corpus it will write (``graph.embed.EncodeProcess``, ``Pipeline._read_ahead``). What
was read ahead is used only if the store has not moved by the time the write lock is
held. Tried from outside, with a cold embedding cache so the model really runs:

* the graph written is the one a single process writes (nodes, edges with every stored
  attribute, vectors to the bit);
* two cold adds at once: both read ahead from the same graph, the second finds it moved
  and reads again; nothing is lost and the result is the two adds one after the other;
* SIGKILL of the command while its child loads the model: the child dies with it and
  the graph is unchanged.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from graph.build import Pipeline, graphs_equal
from graph.ingest import read_text
from graph.model import GraphData, Paper
from graph.store.embedded import EmbeddedStore
from tests.support.seeds import ROOT, SEEDS, seed_settings

pytestmark = pytest.mark.slow

RUN_TIMEOUT = 240


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT), **extra)
    env.pop("CITEGRAPH_STORE", None)
    return env


def _cli(data_dir: Path, *args: str, **env: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "citegraph", "--data-dir", str(data_dir), *args],
        cwd=ROOT, env=_env(**env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )


def _finish(proc: subprocess.Popen[bytes]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=RUN_TIMEOUT)
    return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def _load(data_dir: Path) -> GraphData:
    store = EmbeddedStore(data_dir / "graph.db")
    try:
        return store.snapshot()
    finally:
        store.close()


def _papers(data: GraphData) -> set[str]:
    return {nid for nid, n in data.nodes.items() if isinstance(n, Paper)}


def _cold(hard_seed_dir: Path, where: Path) -> Path:
    """The seed graph without its caches: every new text needs the model."""
    shutil.copytree(hard_seed_dir, where, ignore=shutil.ignore_patterns("cache", "*.lock"))
    return where


def _batch(path: Path, prefix: str, abstracts: list[str]) -> set[str]:
    rows = [{"id": f"{prefix}{i}", "abstract": f"{t} We release the {prefix}{i} toolkit."}
            for i, t in enumerate(abstracts)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return {r["id"] for r in rows}


@pytest.fixture(scope="module")
def abstracts() -> list[str]:
    return [p.abstract for p in read_text(sorted(SEEDS.glob("*.txt"))[1]).papers[:8]]


def _same(a: GraphData, b: GraphData) -> None:
    assert graphs_equal(a, b) == []
    assert a.edges == b.edges  # stored attributes too (hubs, evidence, shared terms)
    assert a.embedding_ids == b.embedding_ids
    assert a.embeddings is not None and b.embeddings is not None
    assert np.array_equal(a.embeddings, b.embeddings)  # to the bit


def test_an_add_embedded_in_a_second_process_writes_what_one_process_writes(
    hard_seed_dir: Path, tmp_path: Path, abstracts: list[str]
) -> None:
    ids = _batch(tmp_path / "a.jsonl", "ahead-", abstracts[:4])
    two = _cold(hard_seed_dir, tmp_path / "two")
    one = _cold(hard_seed_dir, tmp_path / "one")
    rc, out, err = _finish(_cli(two, "add", str(tmp_path / "a.jsonl"), "--json"))
    assert rc == 0, err[-2000:]
    assert "in a second process" in err, err[-2000:]
    report = json.loads(out)
    assert report["embedded"] == 4 and sorted(report["added"]) == sorted(ids)
    assert "ahead" in report["stage_seconds"]
    rc, out, err = _finish(_cli(one, "add", str(tmp_path / "a.jsonl"), "--json",
                                CITEGRAPH_EMBED_IN_PROCESS_AHEAD="false"))
    assert rc == 0, err[-2000:]
    assert "in a second process" not in err
    assert json.loads(out)["embedded"] == 4
    _same(_load(two), _load(one))


def test_two_cold_adds_at_once_lose_nothing(
    hard_seed_dir: Path, tmp_path: Path, abstracts: list[str]
) -> None:
    a_ids = _batch(tmp_path / "a.jsonl", "cold-a-", abstracts[:3])
    b_ids = _batch(tmp_path / "b.jsonl", "cold-b-", abstracts[3:6])
    data = _cold(hard_seed_dir, tmp_path / "d")
    before = _papers(_load(data))
    first = _cli(data, "add", str(tmp_path / "a.jsonl"))
    second = _cli(data, "add", str(tmp_path / "b.jsonl"))
    (rc1, _, err1), (rc2, _, err2) = _finish(first), _finish(second)
    assert rc1 == 0 and rc2 == 0, (err1[-1500:], err2[-1500:])
    # both embedded in a child while reading the same graph (the first to hold the lock
    # then changed it under the other: the test below makes that certain)
    assert "in a second process" in err1 and "in a second process" in err2
    after = _load(data)
    assert _papers(after) == before | a_ids | b_ids
    # the same as the two adds one after the other (whoever went first: the graph is a
    # function of its set of papers), the slow way: one process each, in turn
    seq = _cold(hard_seed_dir, tmp_path / "seq")
    for f in ("a.jsonl", "b.jsonl"):
        rc, _, err = _finish(_cli(seq, "add", str(tmp_path / f),
                                  CITEGRAPH_EMBED_IN_PROCESS_AHEAD="false"))
        assert rc == 0, err[-1500:]
    _same(after, _load(seq))


def test_a_graph_changed_after_the_read_ahead_is_read_again(
    hard_seed_dir: Path, tmp_path: Path, abstracts: list[str]
) -> None:
    """The change lands between the read ahead and the lock, for certain: this test
    holds the lock until the add waits for it, then removes a paper under it."""
    _batch(tmp_path / "a.jsonl", "moved-", abstracts[:3])
    data = _cold(hard_seed_dir, tmp_path / "d")
    gone = sorted(_papers(_load(data)))[0]
    store = EmbeddedStore(data / "graph.db")
    pipe = Pipeline(seed_settings(data))
    lines: list[str] = []
    try:
        with store.writer():
            proc = _cli(data, "--verbose", "add", str(tmp_path / "a.jsonl"))
            assert proc.stderr is not None
            reader = threading.Thread(
                target=lambda: lines.extend(iter(proc.stderr.readline, b"")), daemon=True  # type: ignore[union-attr]
            )
            reader.start()
            deadline = time.monotonic() + RUN_TIMEOUT
            while not any(b"waiting for another writer" in x for x in lines):
                assert proc.poll() is None, b"".join(lines).decode()[-2000:]
                assert time.monotonic() < deadline, "the add never waited for the lock"
                time.sleep(0.05)
            pipe.run(store, remove=[gone])  # the lock is re-entrant in this thread
        proc.wait(RUN_TIMEOUT)  # its stdout (a table) fits the pipe; stderr is the reader's
        reader.join(10)
    finally:
        pipe.close()
        store.close()
    err = b"".join(lines).decode(errors="replace")
    assert proc.returncode == 0, err[-2000:]
    assert "changed since it was read ahead" in err, err[-2000:]
    after = _load(data)
    assert gone not in after.nodes
    # the same as the remove, then the add, one process at a time
    seq = _cold(hard_seed_dir, tmp_path / "seq")
    for args in (("remove", gone), ("add", str(tmp_path / "a.jsonl"))):
        rc, _, e = _finish(_cli(seq, *args, CITEGRAPH_EMBED_IN_PROCESS_AHEAD="false"))
        assert rc == 0, e[-1500:]
    _same(after, _load(seq))


SCRIPT = """
import sys
from pathlib import Path

from graph.build import Pipeline
from graph.settings import Settings
from graph.store.embedded import EmbeddedStore

print("the script's body ran", flush=True)
settings = Settings(data_dir=Path(sys.argv[1]))
store = EmbeddedStore(settings.graph_db)
pipe = Pipeline(settings, incremental=False)
report = pipe.run(store, add_paths=[sys.argv[2]])
print("added", len(report.added), "embedded", report.embedded, "ahead" in report.stage_seconds)
pipe.close()
store.close()
"""


def test_a_script_without_a_main_guard_runs_once(
    hard_seed_dir: Path, tmp_path: Path, abstracts: list[str]
) -> None:
    """multiprocessing's spawn would import the caller's main module in the child: a
    library user's script without ``if __name__ == "__main__"`` would run twice, its
    write in the child too. The child imports graph.embed alone."""
    _batch(tmp_path / "a.jsonl", "script-", abstracts[:2])
    data = _cold(hard_seed_dir, tmp_path / "d")
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(data), str(tmp_path / "a.jsonl")],
        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=RUN_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("the script's body ran") == 1, done.stdout
    assert "added 2 embedded 2 True" in done.stdout, done.stdout


def test_a_model_that_cannot_load_in_the_child_is_one_clear_error_and_writes_nothing(
    hard_seed_dir: Path, tmp_path: Path, abstracts: list[str]
) -> None:
    _batch(tmp_path / "a.jsonl", "nomodel-", abstracts[:2])
    data = _cold(hard_seed_dir, tmp_path / "d")
    before = _load(data)
    rc, out, err = _finish(_cli(data, "add", str(tmp_path / "a.jsonl"),
                                CITEGRAPH_MODEL=str(tmp_path / "no-such-model")))
    assert rc == 1, (out, err)
    assert "in a second process" in err
    assert "error: cannot load embedding model" in err and "no-such-model" in err, err
    assert "Traceback" not in err
    _same(_load(data), before)


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(c) for c in text.split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has stopped; only its exit status waits for a reaper


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_killing_the_writer_kills_its_embedding_process(
    hard_seed_dir: Path, tmp_path: Path, abstracts: list[str]
) -> None:
    _batch(tmp_path / "a.jsonl", "killed-", abstracts[:3])
    data = _cold(hard_seed_dir, tmp_path / "d")
    before = _load(data)
    proc = _cli(data, "add", str(tmp_path / "a.jsonl"))
    child = None
    try:
        deadline = time.monotonic() + 60
        while child is None and time.monotonic() < deadline and proc.poll() is None:
            kids = _children(proc.pid)
            child = kids[0] if kids else None
            time.sleep(0.05)
        assert child is not None, "no embedding process was started"
        time.sleep(0.5)  # the child is importing torch / loading the model
        assert _alive(child)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child), "the embedding process outlived the writer it served"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        if child is not None and _alive(child):
            os.kill(child, signal.SIGKILL)
    _same(_load(data), before)


def test_a_model_started_early_and_not_needed_is_stopped_before_the_write(
    hard_seed_dir: Path, tmp_path: Path, abstracts: list[str]
) -> None:
    """``citegraph add`` starts the model's process before it has read its input; an
    add whose texts are all in the embedding cache stops it at once, and writes what a
    process that never started one writes."""
    ids = _batch(tmp_path / "a.jsonl", "early-", abstracts[:3])
    warm = _cold(hard_seed_dir, tmp_path / "warm")
    rc, _, err = _finish(_cli(warm, "add", str(tmp_path / "a.jsonl")))
    assert rc == 0, err[-2000:]
    rc, _, err = _finish(_cli(warm, "remove", *sorted(ids)))
    assert rc == 0, err[-2000:]
    rc, out, err = _finish(_cli(warm, "--verbose", "add", str(tmp_path / "a.jsonl"), "--json"))
    assert rc == 0, err[-2000:]
    assert json.loads(out)["embedded"] == 0
    assert "no text to embed: the model's process is stopped" in err, err[-2000:]
    assert "in a second process" not in err
    # the stop comes before the graph work, not when the command ends
    assert err.index("the model's process is stopped") < err.index("resolved "), err[-3000:]
    plain = _cold(hard_seed_dir, tmp_path / "plain")
    shutil.copytree(warm / "cache", plain / "cache")
    rc, _, err = _finish(_cli(plain, "add", str(tmp_path / "a.jsonl"),
                              CITEGRAPH_EMBED_IN_PROCESS_AHEAD="false"))
    assert rc == 0, err[-2000:]
    _same(_load(warm), _load(plain))


def test_a_process_started_without_texts_encodes_what_it_is_sent_later(
    abstracts: list[str]
) -> None:
    from graph.embed import EncodeProcess, SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder()
    waiting = EncodeProcess(embedder)
    assert waiting.waiting
    time.sleep(0.5)  # the child has started loading before it knows what to encode
    waiting.send(abstracts[:3])
    assert not waiting.waiting
    vectors, _ = waiting.result()
    assert np.array_equal(vectors, embedder.encode(abstracts[:3]))  # to the bit
    unused = EncodeProcess(embedder)
    pid = unused._process.pid
    unused.close()  # never sent texts: it ends (or is killed) without an answer
    assert not _alive(pid)
    with pytest.raises(RuntimeError):
        waiting.send(abstracts[:1])
