"""A build that reads no papers refuses, and the graph stays as it was.

Found from outside (probe 4): ``citegraph build`` replaces the whole graph with what it
reads, so ``citegraph build /mistyped/path`` (or an empty folder, or a CSV with its
header only) reported the path as skipped and then deleted every paper (exit code 3,
"removed 76"). Each input here is one a user could give by mistake.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.hardening.test_embed_ahead import _cli, _finish, _load, _same

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("kind", ["missing path", "empty folder", "header-only csv"])
def test_a_build_that_reads_no_papers_leaves_the_graph(
    hard_seed_dir: Path, tmp_path: Path, kind: str
) -> None:
    data = tmp_path / "d"
    shutil.copytree(hard_seed_dir, data, ignore=shutil.ignore_patterns("*.lock"))
    before = _load(data)
    source = tmp_path / "input"
    if kind == "empty folder":
        source.mkdir()
    elif kind == "header-only csv":
        source = tmp_path / "papers.csv"
        source.write_text("id,title,abstract\n", encoding="utf-8")
    rc, out, err = _finish(_cli(data, "build", str(source)))
    assert rc == 1, (out, err)
    assert "no papers read, so the graph is left as it was" in err, err
    assert str(source) in err  # says which input
    assert "Traceback" not in err
    _same(_load(data), before)
