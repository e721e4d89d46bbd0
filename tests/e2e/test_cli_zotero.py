"""Zotero in and out on the command line: build from CSL-JSON and RIS, the references
counted, result lists written as BibTeX or RIS and read back as the same papers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import bibtexparser
import pytest
import rispy

from bench.load import copy_cache
from graph.ingest import read_corpus
from tests.support.seeds import EMBED_CACHE, SEEDS

pytestmark = pytest.mark.slow


def _run(cmd: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory, seed_graph_template: Path) -> Path:
    """12 seeds as a Zotero library: 8 in CSL-JSON, 4 in RIS, each with a DOI; the first
    CSL item cites two others by DOI and title, and two works outside the library."""
    root = tmp_path_factory.mktemp("zotero")
    seeds = read_corpus(sorted(SEEDS.glob("*.txt"))[:1]).papers[:12]
    assert len(seeds) == 12
    items = [
        {"id": f"z{i}", "type": "paper-conference", "title": f"Seed {i}", "abstract": p.abstract,
         "author": [{"family": "Hopper", "given": "Grace"}], "issued": {"date-parts": [[2025]]},
         "container-title": "ICLR 2025", "DOI": f"10.5555/Z{i}"}
        for i, p in enumerate(seeds[:8])
    ]
    items[0]["references"] = ["https://doi.org/10.5555/z1", {"title": "seed 2"},
                              {"doi": "10.9999/elsewhere"}, "Attention Is All You Need",
                              {"note": "no key"}]
    (root / "lib.json").write_text(json.dumps(items), encoding="utf-8")
    ris = "".join(
        f"TY  - CPAPER\nID  - r{i}\nTI  - Seed {i}\nAU  - Hopper, Grace\nPY  - 2025\n"
        f"T2  - ICLR 2025\nDO  - 10.5555/R{i}\nAB  - {p.abstract}\nER  - \n\n"
        for i, p in enumerate(seeds[8:], start=8)
    )
    (root / "lib.ris").write_text(ris, encoding="utf-8")
    copy_cache(EMBED_CACHE, root / "data" / "cache")
    return root


@pytest.fixture(scope="module")
def cli(library: Path) -> list[str]:
    cmd = [sys.executable, "-m", "citegraph", "--data-dir", str(library / "data")]
    built = _run(cmd, "build", str(library / "lib.json"), str(library / "lib.ris"))
    assert built.returncode == 3, built.stderr  # one reference dropped: partial
    assert "Read 12 papers" in built.stdout
    assert ("References: 2 resolved (cite a paper of the graph), 2 outside the corpus "
            "(cited outside works), 1 unparseable (dropped).") in " ".join(built.stdout.split())
    said = " ".join(built.stderr.split())
    assert "lib.json:1: references: dropped {'note': 'no key'}: not a DOI" in said
    return cmd


def test_build_json_counts_references(cli: list[str]) -> None:
    out = _run(cli, "neighbors", "z0", "--type", "CITES", "--json")
    assert out.returncode == 0, out.stderr
    edges = {(e["source"], e["target"]) for e in json.loads(out.stdout)["edges"]}
    # two corpus papers, and the two references outside the library as outside works
    assert edges == {("z0", "z1"), ("z0", "z2"), ("z0", "work:doi:10.9999/elsewhere"),
                     ("z0", "work:Attention Is All You Need")}


def test_related_as_ris_reads_back(cli: list[str], library: Path, tmp_path: Path) -> None:
    out = _run(cli, "related", "z0", "--format", "ris", "-n", "5")
    assert out.returncode == 0, out.stderr
    entries = rispy.loads(out.stdout)
    assert len(entries) == 5 and "z0" not in {e["id"] for e in entries}
    assert all(e["doi"].startswith("10.5555/") and e["authors"] == ["Hopper, Grace"]
               for e in entries)
    written = tmp_path / "related.ris"
    written.write_text(out.stdout, encoding="utf-8")
    again = read_corpus([written])
    assert not again.problems
    assert sorted(p.id for p in again.papers) == sorted(e["id"] for e in entries)
    # added back to the graph they came from, they are the same papers: nothing new
    add = _run(cli, "add", str(written), "--json")
    assert add.returncode == 0, add.stderr
    report = json.loads(add.stdout)
    assert (report["papers_read"], report["added"], report["updated"]) == (5, [], 0)


def test_search_and_neighbors_as_bibtex(cli: list[str]) -> None:
    out = _run(cli, "search", "model", "--format", "bibtex", "-n", "20")
    assert out.returncode == 0, out.stderr
    library = bibtexparser.parse_string(out.stdout)
    assert not library.failed_blocks and library.entries
    assert all(e.key[0] in "zr" and e["doi"].startswith("10.5555/") for e in library.entries)
    out = _run(cli, "neighbors", "z0", "--format", "bibtex")
    assert out.returncode == 0, out.stderr
    keys = [e.key for e in bibtexparser.parse_string(out.stdout).entries]
    assert keys[0] == "z0" and {"z1", "z2"} <= set(keys)
