"""bench/: one entry point, no private names of the library, a doc generated from results."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from tests.support.seeds import ROOT

BENCH = ROOT / "bench"
LIBRARY = ("graph", "api", "citegraph")


def _private_uses(path: Path) -> list[str]:
    """Imports of a name with a leading underscore from the library, and attribute reads
    of one on a library module (``graph.build._Timer``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules: set[str] = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in LIBRARY:
            found += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
            modules |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in LIBRARY:
                    found += [a.name] if any(p.startswith("_") for p in a.name.split(".")) else []
                    modules.add(a.asname or a.name.split(".")[0])
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__") and isinstance(node.value, ast.Name)
                and node.value.id in modules):
            found.append(f"{node.value.id}.{node.attr}")
    return found


def test_no_benchmark_uses_a_private_name_of_the_library() -> None:
    scripts = sorted(BENCH.glob("*.py"))
    assert scripts
    bad = {p.name: _private_uses(p) for p in scripts}
    assert not {k: v for k, v in bad.items() if v}


def test_bench_is_a_dozen_maintained_scripts_with_one_entry_point() -> None:
    from bench.__main__ import BENCHES

    assert len(list(BENCH.glob("*.py"))) <= 15
    for b in BENCHES:
        if b.module is not None:
            assert (ROOT / (b.module.replace(".", "/") + ".py")).exists(), b.module


def test_the_doc_is_generated_from_results_and_says_what_was_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bench.__main__ as main

    results = tmp_path / "results"
    results.mkdir()
    (results / "build.quick.json").write_text(json.dumps({
        "name": "build", "command": "python -m bench build --quick", "quick": True,
        "corpus": "seeds", "date": "2030-01-02T03:04:05Z", "commit": "abc1234",
        "code_differs_from_commit": False, "seconds": 12.0,
        "machine": {"cpu": "CPU", "cores": 2, "ram_gib": 8.0, "load_avg_at_start": 0.5},
        "figures": [{"figure": "cold build", "value": 17.5, "unit": "s", "goal": "",
                     "met": None}],
        "tables": [], "notes": [],
    }))
    monkeypatch.setattr(main, "RESULTS", results)
    monkeypatch.setattr(main, "DOC", tmp_path / "benchmarks.md")
    text = main.write_doc().read_text()
    assert "`python -m bench build --quick`, 2030-01-02, commit abc1234" in text
    assert "| cold build | 17.5 s |" in text
    assert text.count("Not run yet on this commit") == sum(
        1 for b in main.BENCHES if b.module and b.name != "build")
    assert len(text.splitlines()) <= 250
