"""Ctrl-C and SIGTERM stop a write with one clear line, a non-zero code, nothing half
written and no embedding process left behind.

Found from outside (probe 4): Ctrl-C during ``citegraph add`` printed a blank line and
nothing else (exit 130), and SIGTERM ended the command with no word at all (killed by
the signal, its ``finally`` blocks skipped). Tried here at two points, with a cold
embedding cache so the second process is really running: while the child loads the
model (Ctrl-C to the whole process group, as a terminal sends it), and while the
command waits for the write lock (SIGTERM to the command alone, as a service manager
sends it).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from graph.store.embedded import EmbeddedStore
from tests.hardening.test_embed_ahead import (
    RUN_TIMEOUT,
    _alive,
    _batch,
    _children,
    _cold,
    _env,
    _load,
    _same,
    abstracts,  # noqa: F401 - the fixture
)
from tests.support.seeds import ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc"),
]


def _start(data: Path, batch: Path) -> subprocess.Popen[bytes]:
    # a test run started in the background by a shell (``cmd &``) ignores SIGINT, and an
    # ignored signal stays ignored across exec: the CLI gets the default, as in a terminal
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "citegraph", "--data-dir", str(data), "add", str(batch)],
            cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group, as a shell job has
        )
    finally:
        signal.signal(signal.SIGINT, previous)


def _child_of(proc: subprocess.Popen[bytes]) -> int:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        kids = _children(proc.pid)
        if kids:
            return kids[0]
        time.sleep(0.02)
    raise AssertionError("no embedding process was started")


def _stop(proc: subprocess.Popen[bytes], child: int | None) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    if child is not None and _alive(child):
        os.kill(child, signal.SIGKILL)


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def _add_stopped(
    hard_seed_dir: Path, where: Path, texts: list[str], *, delay: float, child_alone: bool
) -> tuple[int, str, int]:
    """An add of 3 new texts (cold cache) sent SIGINT ``delay`` s after its embedding
    process started: to the whole group, as a terminal sends Ctrl-C, or to that process
    alone. Its exit code, stderr and child; the graph must be as it was."""
    _batch(where / "a.jsonl", "ctrlc-", texts[:3])
    data = _cold(hard_seed_dir, where / "d")
    before = _load(data)
    proc = _start(data, where / "a.jsonl")
    child = None
    try:
        child = _child_of(proc)
        time.sleep(delay)
        assert proc.poll() is None and _alive(child)
        if child_alone:
            os.kill(child, signal.SIGINT)
        else:
            os.killpg(proc.pid, signal.SIGINT)
        _, err_b = proc.communicate(timeout=RUN_TIMEOUT)
    finally:
        _stop(proc, child)
    _same(_load(data), before)
    err = err_b.decode(errors="replace")
    assert "Traceback" not in err and "without an answer" not in err, err[-2000:]
    return proc.returncode, err, child


def test_ctrl_c_while_the_child_loads_the_model(
    hard_seed_dir: Path, tmp_path: Path, abstracts: list[str]  # noqa: F811
) -> None:
    code, err, child = _add_stopped(
        hard_seed_dir, tmp_path, abstracts, delay=1.0, child_alone=False  # importing torch
    )
    assert code == 130, err[-2000:]
    # on a busy machine the store may not be open yet a second in ("stopped by Ctrl-C
    # before the graph was opened: nothing was written"): either way, one calm line
    assert "stopped by Ctrl-C" in err and "nothing was written" in err, err[-2000:]
    assert _gone(child), "the embedding process outlived the interrupted write"


def test_ctrl_c_seen_by_the_model_process_alone(
    hard_seed_dir: Path, tmp_path: Path, abstracts: list[str]  # noqa: F811
) -> None:
    """CI once saw the child end by Ctrl-C before the command saw its own (exit 1,
    "the embedding process ended without an answer (exit code 0)"): made certain here
    by sending SIGINT to the child alone. The command stops as Ctrl-C stops it."""
    code, err, _ = _add_stopped(hard_seed_dir, tmp_path, abstracts, delay=1.0, child_alone=True)
    assert code == 130, err[-2000:]
    assert "stopped by Ctrl-C" in err and "nothing was written" in err, err[-2000:]


@pytest.mark.parametrize("delay", [0.0, 0.05])
def test_ctrl_c_as_the_command_starts(
    hard_seed_dir: Path, tmp_path: Path, abstracts: list[str], delay: float  # noqa: F811
) -> None:
    """Ctrl-C in the command's first moments (the store not yet open, or just opened)
    says so in one line too: typer alone ended the process with 130 and no word."""
    code, err, child = _add_stopped(
        hard_seed_dir, tmp_path, abstracts, delay=delay, child_alone=False
    )
    assert code == 130, err[-2000:]
    assert "stopped by Ctrl-C" in err and "nothing was written" in err, err[-2000:]
    assert _gone(child), "the embedding process outlived the interrupted write"


def test_sigterm_while_waiting_for_the_write_lock(
    hard_seed_dir: Path, tmp_path: Path, abstracts: list[str]  # noqa: F811
) -> None:
    _batch(tmp_path / "a.jsonl", "term-", abstracts[:3])
    data = _cold(hard_seed_dir, tmp_path / "d")
    before = _load(data)
    store = EmbeddedStore(data / "graph.db")
    lines: list[bytes] = []
    proc = None
    child = None
    try:
        with store.writer():
            proc = _start(data, tmp_path / "a.jsonl")
            child = _child_of(proc)
            assert proc.stderr is not None
            stream = proc.stderr
            reader = threading.Thread(
                target=lambda: lines.extend(iter(stream.readline, b"")), daemon=True
            )
            reader.start()
            deadline = time.monotonic() + RUN_TIMEOUT
            while not any(b"waiting for another writer" in x for x in lines):
                assert proc.poll() is None, b"".join(lines).decode()[-2000:]
                assert time.monotonic() < deadline, "the add never waited for the lock"
                time.sleep(0.05)
            proc.send_signal(signal.SIGTERM)  # the command alone, not its group
            proc.wait(RUN_TIMEOUT)
            reader.join(10)
    finally:
        store.close()
        if proc is not None:
            _stop(proc, child)
    err = b"".join(lines).decode(errors="replace")
    assert proc is not None and proc.returncode == 143, err[-2000:]
    assert "stopped by SIGTERM: nothing was written" in err, err[-2000:]
    assert "Traceback" not in err
    assert child is not None and _gone(child)
    _same(_load(data), before)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_the_child_killed_from_outside_is_named_and_nothing_is_written(
    hard_seed_dir: Path, tmp_path: Path, abstracts: list[str], sig: signal.Signals  # noqa: F811
) -> None:
    """An operator (or the OOM killer) ends the embedding process: the add says so,
    in words, and writes nothing (it said ``exit code -15``)."""
    _batch(tmp_path / "a.jsonl", "childkill-", abstracts[:3])
    data = _cold(hard_seed_dir, tmp_path / "d")
    before = _load(data)
    proc = _start(data, tmp_path / "a.jsonl")
    child = None
    try:
        child = _child_of(proc)
        time.sleep(1.0)
        assert proc.poll() is None and _alive(child)
        os.kill(child, sig)
        _, err_b = proc.communicate(timeout=RUN_TIMEOUT)
    finally:
        _stop(proc, child)
    err = err_b.decode(errors="replace")
    assert proc.returncode == 1, err[-2000:]
    assert f"the embedding process ended without an answer (killed by {sig.name})" in err, err
    assert "Traceback" not in err
    _same(_load(data), before)
