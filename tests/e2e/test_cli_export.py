"""``citegraph export``: the files a graph tool opens, read back as a tool would, against
what the other commands say the graph holds."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from bench.load import copy_cache
from tests.support.seeds import EMBED_CACHE, SEEDS


def _run(cmd: list[str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory, seed_graph_template: Path) -> list[str]:
    """The command line over a graph built from 20 of the seed abstracts.

    The session's seed build has put their vectors and extractions in EMBED_CACHE; the
    data folder starts with a copy of it, so the build loads no model (what is tested
    here is the export, not the embedding)."""
    root = tmp_path_factory.mktemp("export")
    inputs = root / "in"
    inputs.mkdir()
    for f in sorted(SEEDS.glob("*.txt"))[:20]:
        shutil.copy(f, inputs / f.name)
    copy_cache(EMBED_CACHE, root / "data" / "cache")
    cmd = [sys.executable, "-m", "citegraph", "--data-dir", str(root / "data")]
    built = _run(cmd, "build", str(inputs))
    assert built.returncode == 0, built.stderr
    return cmd


def _stats(cli: list[str]) -> dict[str, Any]:
    out = _run(cli, "stats", "--json")
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout))


def _types(g: nx.MultiDiGraph, key: str) -> Counter[str]:
    return Counter(str(d[key]) for *_, d in g.edges(data=True))


def test_whole_graph_in_each_format_holds_what_stats_counts(
    cli: list[str], tmp_path: Path
) -> None:
    stats = _stats(cli)
    want_nodes = sum(stats["nodes"].values())
    want_edges = Counter({k: v for k, v in stats["edges"].items() if v})
    out = _run(cli, "export", "graphml", cwd=tmp_path)  # default name, in the current folder
    assert out.returncode == 0, out.stderr
    assert f"Wrote {want_nodes} nodes and {sum(want_edges.values())} edges" in out.stderr
    g = nx.read_graphml(tmp_path / "citegraph.graphml")
    assert g.number_of_nodes() == want_nodes
    assert _types(g, "type") == want_edges
    assert Counter(d["kind"] for _, d in g.nodes(data=True)) == Counter(
        {k: v for k, v in stats["nodes"].items() if v}
    )

    gexf = tmp_path / "g.gexf"
    assert _run(cli, "export", "gexf", "-o", str(gexf)).returncode == 0
    h = nx.read_gexf(gexf)
    assert h.number_of_nodes() == want_nodes
    assert _types(h, "label") == want_edges  # GEXF: the type is the edge's label

    cy = _run(cli, "export", "cytoscape.json", "-o", "-")
    assert cy.returncode == 0, cy.stderr
    data = json.loads(cy.stdout)
    assert len(data["elements"]["nodes"]) == want_nodes
    assert Counter(e["data"]["type"] for e in data["elements"]["edges"]) == want_edges


def test_neighborhood_and_path_match_the_query_commands(cli: list[str], tmp_path: Path) -> None:
    papers = json.loads(_run(cli, "search", "model", "--kind", "paper", "--json").stdout)
    a, b = papers[0]["id"], papers[-1]["id"]
    near = _run(cli, "neighbors", a, "--depth", "1", "--limit", "40", "--json")
    assert near.returncode == 0, near.stderr
    want = {n["id"] for n in json.loads(near.stdout)["nodes"]}
    f = tmp_path / "near.graphml"
    out = _run(cli, "export", "graphml", "--around", a, "--depth", "1", "--limit", "40",
               "-o", str(f))
    assert out.returncode == 0, out.stderr
    assert set(nx.read_graphml(f).nodes) == want

    route = json.loads(_run(cli, "path", a, b, "--json").stdout)
    p = tmp_path / "path.graphml"
    out = _run(cli, "export", "graphml", "--path", a, "--path", b, "-o", str(p))
    assert out.returncode == 0, out.stderr
    g = nx.read_graphml(p)
    assert set(g.nodes) == {n["id"] for n in route[0]["nodes"]}
    assert g.number_of_edges() >= len(route[0]["edges"])

    ids = _run(cli, "export", "graphml", "--id", a, "--id", b, "-o", str(p))
    assert ids.returncode == 0, ids.stderr
    assert set(nx.read_graphml(p).nodes) == {a, b}


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["dot"], "unknown export format 'dot'"),
        (["graphml", "--around", "no such node at all"], "no such node at all"),
        (["graphml", "--path", "x"], "give two nodes"),
        (["graphml", "--around", "x", "--id", "y"], "give one of around, path or ids"),
    ],
)
def test_a_refused_export_says_why_and_leaves_the_file(
    cli: list[str], tmp_path: Path, args: list[str], says: str
) -> None:
    target = tmp_path / "keep.graphml"
    target.write_text("the previous export")
    fmt, *rest = args
    out = _run(cli, "export", fmt, *rest, "-o", str(target))
    assert out.returncode == 1
    assert says in out.stderr and "Traceback" not in out.stderr
    assert target.read_text() == "the previous export"
    assert list(tmp_path.iterdir()) == [target]  # no temporary file left


def test_unwritable_target_says_so(cli: list[str], tmp_path: Path) -> None:
    out = _run(cli, "export", "graphml", "-o", str(tmp_path / "missing" / "g.graphml"))
    assert out.returncode == 1 and "no folder" in out.stderr
    folder = tmp_path / "a-folder.graphml"
    folder.mkdir()
    out = _run(cli, "export", "graphml", "-o", str(folder))
    assert out.returncode == 1 and "is a folder" in out.stderr
    assert "Traceback" not in out.stderr
    assert list(folder.iterdir()) == []
    assert not [f for f in tmp_path.iterdir() if f.name.endswith(".tmp")]


def test_no_graph_is_an_error_not_an_empty_file(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "citegraph", "--data-dir", str(tmp_path / "none")]
    out = _run(cmd, "export", "graphml", cwd=tmp_path)
    assert out.returncode == 1 and "no graph in" in out.stderr
    assert not (tmp_path / "citegraph.graphml").exists()


@pytest.mark.parametrize("name", ["", ".", ".."])
def test_a_folder_name_as_output_is_refused_in_one_line(
    cli: list[str], tmp_path: Path, name: str
) -> None:
    """probe 11: ``-o ''`` and ``-o .`` ended in a ValueError traceback."""
    out = _run(cli, "export", "graphml", "-o", str(tmp_path / name) if name else name)
    assert out.returncode == 1, out.stderr
    assert "is a folder" in out.stderr and "Traceback" not in out.stderr
    assert list(tmp_path.iterdir()) == []


def test_output_through_a_link_or_into_a_fifo_keeps_what_is_there(
    cli: list[str], tmp_path: Path
) -> None:
    """probe 11: the write-then-rename put a plain file in place of a symlink, a FIFO (its
    reader never got a byte) or a device: as root ``-o /dev/full`` replaced /dev/full."""
    real = tmp_path / "real.graphml"
    real.write_text("old")
    link = tmp_path / "link.graphml"
    link.symlink_to(real.name)
    out = _run(cli, "export", "graphml", "-o", str(link))
    assert out.returncode == 0, out.stderr
    assert link.is_symlink() and os.readlink(link) == real.name
    assert nx.read_graphml(real).number_of_nodes() > 0

    fifo = tmp_path / "pipe.graphml"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    out = _run(cli, "export", "cytoscape.json", "-o", str(fifo))
    reader.join(timeout=60)
    assert out.returncode == 0, out.stderr
    assert fifo.is_fifo()
    assert json.loads(got[0])["elements"]["nodes"]
    assert sorted(f.name for f in tmp_path.iterdir()) == ["link.graphml", "pipe.graphml",
                                                          "real.graphml"]


def test_a_read_only_filesystem_is_one_line(cli: list[str], tmp_path: Path) -> None:
    """probe 11: on a read-only filesystem the clean-up of the temporary file failed as the
    write had (EROFS), and the export ended in a traceback. Needs a mount: root only."""
    ro = tmp_path / "ro"
    ro.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,ro", "tmpfs", str(ro)],
                             capture_output=True, check=False)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a read-only tmpfs here")
    try:
        out = _run(cli, "export", "gexf", "-o", str(ro / "g.gexf"))
        assert out.returncode == 1
        assert "cannot write" in out.stderr and "Traceback" not in out.stderr
        assert list(ro.iterdir()) == []
    finally:
        subprocess.run(["umount", str(ro)], check=False)
