"""The embedding child imports citegraph's ``graph``, wherever the user stands.

Found from outside (probe 4): the child was ``python -c ...``, whose first path entry is
the current directory. ``citegraph add`` (the console script: the parent's path does not
hold the current directory) run from a project with a ``graph`` package or a
``graph.py`` of its own, a common name, imported that one in the child: the add failed
with "No module named 'graph.embed'", after running whatever that file does.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.hardening.test_embed_ahead import (
    RUN_TIMEOUT,
    _batch,
    _cold,
    _env,
    _load,
    _papers,
    abstracts,  # noqa: F401 - the fixture
)

pytestmark = pytest.mark.slow


def test_a_graph_module_in_the_current_directory_is_not_imported_by_the_child(
    hard_seed_dir: Path, tmp_path: Path, abstracts: list[str]  # noqa: F811
) -> None:
    ids = _batch(tmp_path / "a.jsonl", "cwd-", abstracts[:2])
    data = _cold(hard_seed_dir, tmp_path / "d")
    marker = tmp_path / "imported"
    here = tmp_path / "user-project"
    here.mkdir()
    (here / "graph.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8"
    )
    # what a console script is: a file elsewhere, so sys.path[0] is its folder, not here
    script = tmp_path / "bin" / "citegraph"
    script.parent.mkdir()
    script.write_text("from citegraph.cli import main\nmain()\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), "--data-dir", str(data), "add", str(tmp_path / "a.jsonl")],
        cwd=here, env=_env(), capture_output=True, text=True, timeout=RUN_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "in a second process" in done.stderr
    assert not marker.exists(), "the child imported graph.py from the current directory"
    assert ids <= _papers(_load(data))
