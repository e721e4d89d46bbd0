"""The CLI from outside: bytes that are not UTF-8, and a data dir with no graph in it
(or a database no build finished in).

Found by an outside probe: a shell argument with invalid UTF-8 reached the store or the
model as a lone surrogate and ended in a traceback; a query command on a mistyped data
dir showed an empty graph and left an empty database behind.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _cli(data_dir: Path, *args: bytes | str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "citegraph", "--data-dir", str(data_dir), *args],
        cwd=ROOT, env=env, capture_output=True, timeout=120, check=False,
    )


@pytest.mark.parametrize(
    "args",
    [
        (b"neighbors", b"graph\xff"),
        (b"path", b"graph\xff", b"concept:graph"),
        (b"search", b"graph\xff", b"--mode", b"hybrid"),
        (b"related", b"--text", b"caf\xe9 latte"),
        (b"remove", b"p-\xff"),
    ],
)
def test_an_argument_that_is_not_utf8_is_one_clear_error(
    tmp_path: Path, args: tuple[bytes, ...]
) -> None:
    proc = _cli(tmp_path, *args)
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 2, err
    assert "not valid UTF-8" in err and "Traceback" not in err
    assert not (tmp_path / "graph.db").exists()


@pytest.mark.parametrize(
    "args",
    [("stats",), ("neighbors", "graph"), ("path", "a", "b"), ("search", "graph"),
     ("related", "--text", "graphs"), ("remove", "p-1")],
)
def test_a_query_on_a_data_dir_without_a_graph_says_so_and_writes_nothing(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    missing = tmp_path / "no-such-dir"
    proc = _cli(missing, *args)
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert "no graph in" in err and "citegraph build" in err and "Traceback" not in err
    assert not missing.exists()


@pytest.mark.parametrize("args", [("stats",), ("search", "graph"), ("related", "--text", "graphs")])
def test_a_query_on_a_database_no_build_finished_in_says_so(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """A first build killed after it made graph.db leaves a database with no commit: a
    query said zero papers, as if the graph were empty (probe 6)."""
    from graph.store.embedded import EmbeddedStore

    EmbeddedStore(tmp_path / "graph.db").close()  # made, nothing ever committed
    before = (tmp_path / "graph.db").read_bytes()
    proc = _cli(tmp_path, *args)
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert "no graph in" in err and "no build finished" in err and "Traceback" not in err
    assert (tmp_path / "graph.db").read_bytes() == before


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("CITEGRAPH_SIMILAR_K", "0", "greater than or equal to 1"),
        ("CITEGRAPH_SIMILAR_K", "ten", "valid integer"),
        ("CITEGRAPH_SIMILAR_MIN_SCORE", "2", "less than or equal to 1"),
        ("CITEGRAPH_REQUEST_TIMEOUT_S", "-1", "greater than 0"),
        ("CITEGRAPH_SHARED_TERM_MAX_DF", "0", "greater than 0"),
    ],
)
def test_a_setting_out_of_range_is_one_clear_error(
    tmp_path: Path, variable: str, value: str, said: str
) -> None:
    """A bad CITEGRAPH_* variable: one line naming it, exit 2, nothing made. (k = 0 used
    to pass and fail deep in a build with an IndexError; a word for a number printed a
    pydantic traceback.)"""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", variable: value}
    done = subprocess.run(
        [sys.executable, "-m", "citegraph", "--data-dir", str(tmp_path / "d"), "build",
         str(ROOT / "seeds")],
        cwd=ROOT, env=env, capture_output=True, timeout=120, check=False,
    )
    lines = done.stderr.decode().strip().splitlines()
    assert done.returncode == 2, done.stderr.decode()[-2000:]
    assert len(lines) == 1 and variable in lines[0] and said in lines[0], lines
    assert repr(value) in lines[0]
    assert not (tmp_path / "d").exists()
