"""A build that cannot read what it was given refuses, and the graph stays as it was.

Found from outside (probe 4): ``citegraph build`` replaces the whole graph with what it
reads, so ``citegraph build /mistyped/path`` (or an empty folder, or a CSV with its
header only) reported the input as skipped and then deleted every paper (exit code 3,
"removed 76"); ``citegraph build good.jsonl /mistyped/path`` deleted every paper that
good.jsonl does not hold. Each input here is one a user could give by mistake.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.hardening.test_embed_ahead import _cli, _finish, _load, _same
from tests.support.seeds import SEEDS

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("kind", "code", "said"),
    [
        ("missing path", 2, "does not exist"),
        ("a good file and a missing path", 2, "does not exist"),
        ("empty folder", 1, "no papers read, so the graph is left as it was"),
        ("header-only csv", 1, "no papers read, so the graph is left as it was"),
    ],
)
def test_a_build_that_cannot_read_its_input_leaves_the_graph(
    hard_seed_dir: Path, tmp_path: Path, kind: str, code: int, said: str
) -> None:
    data = tmp_path / "d"
    shutil.copytree(hard_seed_dir, data, ignore=shutil.ignore_patterns("*.lock"))
    before = _load(data)
    source = tmp_path / "input"
    args = [str(source)]
    if kind == "empty folder":
        source.mkdir()
    elif kind == "header-only csv":
        source = tmp_path / "papers.csv"
        source.write_text("id,title,abstract\n", encoding="utf-8")
        args = [str(source)]
    elif kind == "a good file and a missing path":
        args = [str(sorted(SEEDS.glob("*.txt"))[0]), str(source)]
    rc, out, err = _finish(_cli(data, "build", *args))
    assert rc == code, (out, err)
    flat = " ".join(err.replace("│", " ").split())  # click's box wraps long paths
    assert said in flat, err
    # says which input (the box may wrap inside the name: a longer tmp path, e.g. xdist's)
    assert source.name in "".join(flat.split())
    assert "Traceback" not in err
    _same(_load(data), before)
