"""The input boundary from outside: the real ``citegraph add`` on hostile input (issue 15).

Each test runs the command as a user would (``python -m citegraph --data-dir D add ...``,
the real embedding model) and then opens the graph file it wrote:

* a lone surrogate in a JSONL record's id, title or authors rejects that record alone,
  named with its line and field; the good records go in and the exit code is 3;
* control characters in a .txt, .jsonl or .csv record do not reach the graph, so its
  GraphML and GEXF exports stay well-formed XML;
* a FIFO, a symlink to /dev/zero, a socket, a dangling symlink and a directory loop in an
  input folder are each named as a problem, within a bounded time, and the good file in
  the same folder still goes in;
* a data dir that cannot be written (even by root) gives one line, not a traceback;
* a BibTeX file goes in with ``citegraph add refs.bib``; its entries without an
  abstract are problems naming the entry key and line.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graph.export import gexf, graphml, to_networkx
from graph.model import Paper
from graph.store.embedded import EmbeddedStore

ROOT = Path(__file__).resolve().parents[2]
CLI_TIMEOUT_S = 180  # the model loads in ~8 s here; a hang is what this bounds

GOOD = [
    {
        "id": "good-1",
        "title": "Sparse graph learning at scale",
        "abstract": "We propose a simple method for learning sparse graph representations "
        "that scales to millions of nodes and improves accuracy on five benchmarks.",
        "authors": ["Ada Lovelace", "Alan Turing"],
    },
    {
        "id": "good-2",
        "abstract": "Diffusion models can be personalised with very few images when the rank "
        "of the fine-tuned parameters is explicitly controlled during training.",
        "venue": "ICLR 2025",
    },
]
OK_ABSTRACT = (
    "Large language models are often augmented with retrieved contexts, and we study "
    "when those contexts help or hurt the final answer quality."
)


def citegraph(
    data_dir: Path, *args: str, preexec: Any = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "citegraph", "--data-dir", str(data_dir), *args],
        capture_output=True, text=True, timeout=CLI_TIMEOUT_S, env=env, cwd=ROOT,
        preexec_fn=preexec,
    )


def papers_in(data_dir: Path) -> dict[str, Paper]:
    store = EmbeddedStore(data_dir / "graph.db")
    try:
        return {k: n for k, n in store.snapshot().nodes.items() if isinstance(n, Paper)}
    finally:
        store.close()


def report_of(run: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    out: dict[str, Any] = json.loads(run.stdout)
    return out


# ---------------------------------------------------------------- defect 2: surrogates


def test_lone_surrogate_in_any_field_rejects_only_that_record(tmp_path: Path) -> None:
    lines = [
        GOOD[0],
        {"id": "bad\udfff", "abstract": OK_ABSTRACT},  # line 2
        {"id": "bad-title", "title": "Retrieval \udfff", "abstract": OK_ABSTRACT + " One."},
        {"id": "bad-authors", "authors": ["A. \ud800"], "abstract": OK_ABSTRACT + " Two."},
        {"id": "bad-venue", "venue": "\udfffICLR", "abstract": OK_ABSTRACT + " Three."},
        {"id": "bad-url", "url": "https://x.org/\udfff", "abstract": OK_ABSTRACT + " Four."},
        {"id": "bad-kw", "keywords": "rag;\udc80", "abstract": OK_ABSTRACT + " Five."},
        {"id": "bad-refs", "references": ["good-1", "\udfff"], "abstract": OK_ABSTRACT + " Six."},
        GOOD[1],
    ]
    path = tmp_path / "in.jsonl"
    # json.dumps escapes the surrogate as "\udfff": valid JSON, not valid Unicode text
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n", encoding="ascii")
    data = tmp_path / "data"
    run = citegraph(data, "add", "--json", str(path))
    report = report_of(run)
    assert run.returncode == 3, run.stderr[-2000:]
    assert sorted(papers_in(data)) == ["good-1", "good-2"]
    problems = report["problems"]
    fields = ["id", "title", "authors", "venue", "url", "keywords", "references"]
    assert len(problems) == len(fields), problems
    for line, (field, problem) in enumerate(zip(fields, problems, strict=True), start=2):
        assert problem.startswith(f"{path}:{line}: field '{field}': "), problem
        assert "unpaired surrogate U+D" in problem, problem


# ---------------------------------------------------------------- defect 5: controls

C0 = "".join(chr(c) for c in range(0x20) if chr(c) not in "\t\n\r")
EVERY_CONTROL = C0 + "\x7f" + "".join(chr(c) for c in range(0x80, 0xA0)) + "\ufffe\uffff"


def test_control_characters_never_reach_the_exports(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.txt").write_text(
        f"Control Workshop 2024 Papers\n\nWe{C0}study graph learning{C0} on very "
        f"large{C0}graphs with millions of nodes.\n",
        encoding="utf-8",
    )
    (folder / "b.jsonl").write_text(
        json.dumps({
            "id": "ctl-json",
            "title": f"Controls{EVERY_CONTROL}in a title",
            "abstract": f"Diffusion{EVERY_CONTROL} models can be personalised with few images.",
            "venue": f"ICLR{EVERY_CONTROL}2025",
            "authors": [f"Ada{EVERY_CONTROL}Lovelace"],
            "url": "https://example.org/\x00x",
        }) + "\n",
        encoding="utf-8",
    )
    (folder / "c.csv").write_text(
        f'id,title,abstract\nctl-csv,"CSV{C0}title","Retrieval{C0} helps question '
        f'answering on long documents."\n',
        encoding="utf-8",
    )
    data = tmp_path / "data"
    run = citegraph(data, "add", "--json", str(folder))
    report = report_of(run)
    assert run.returncode == 0, (report["problems"], run.stderr[-2000:])
    papers = papers_in(data)
    assert len(papers) == 3
    assert papers["ctl-json"].title == "Controls in a title"
    assert papers["ctl-json"].authors == ("Ada Lovelace",)
    assert papers["ctl-csv"].title == "CSV title"
    store = EmbeddedStore(data / "graph.db")
    try:
        snapshot = store.snapshot()
    finally:
        store.close()
    g = to_networkx(snapshot.nodes.values(), snapshot.edges.values())
    for write in (graphml, gexf):
        doc = ET.fromstring(write(g))  # raises on a character XML 1.0 cannot hold
        texts = [t for e in doc.iter() for t in (e.text or "", *e.attrib.values())]
        assert any("Controls in a title" in t for t in texts), write.__name__


# ---------------------------------------------------------------- defect 6: special files


@pytest.fixture
def hostile_folder(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A good .jsonl beside a FIFO, /dev/zero, a socket, a dangling link and a loop."""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a_good.jsonl").write_text("\n".join(json.dumps(r) for r in GOOD) + "\n")
    os.mkfifo(folder / "b_pipe.txt")
    (folder / "c_zero.txt").symlink_to("/dev/zero")
    (folder / "d_gone.csv").symlink_to(folder / "nowhere.csv")
    (folder / "e_self.txt").symlink_to(folder / "e_self.txt")
    (folder / "sub").mkdir()
    (folder / "sub" / "loop").symlink_to(folder)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(folder / "f_sock.jsonl"))
    expected = {
        "b_pipe.txt": "FIFO",
        "c_zero.txt": "character device",
        "d_gone.csv": "dangling symlink",
        "e_self.txt": "symlink loop",
        "f_sock.jsonl": "socket",
        "sub/loop": "directory loop",
    }
    try:
        yield folder, expected
    finally:
        sock.close()


def test_special_files_are_named_and_the_good_file_goes_in(
    tmp_path: Path, hostile_folder: tuple[Path, dict[str, str]]
) -> None:
    folder, expected = hostile_folder
    data = tmp_path / "data"
    # before the fix this never returned (the FIFO), or ran out of memory (/dev/zero)
    run = citegraph(data, "add", "--json", str(folder))
    report = report_of(run)
    assert run.returncode == 3, run.stderr[-2000:]
    assert sorted(papers_in(data)) == ["good-1", "good-2"]
    problems = report["problems"]
    assert len(problems) == len(expected), problems
    for name, reason in expected.items():
        hits = [p for p in problems if p.startswith(f"{folder / name}: ")]
        assert len(hits) == 1 and reason in hits[0], (name, problems)


# ---------------------------------------------------------------- defect 8: unwritable


def _one_line_error(run: subprocess.CompletedProcess[str], data: Path) -> str:
    assert run.returncode == 1, (run.returncode, run.stdout[-500:], run.stderr[-2000:])
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, run.stderr[-3000:]
    # the store says "cannot create the data folder D: …", the CLI "cannot write to D: …"
    assert lines[0].startswith("error: cannot ") and str(data) in lines[0], lines
    return lines[0]


def test_data_dir_under_a_regular_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("not a folder")
    data = tmp_path / "plain" / "data"  # root cannot write here either: ENOTDIR
    good = tmp_path / "in.jsonl"
    good.write_text(json.dumps(GOOD[0]) + "\n")
    line = _one_line_error(citegraph(data, "add", str(good)), data)
    assert "not a directory" in line.lower()


def test_cache_folder_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "cache").write_text("a file where the cache folder goes")
    good = tmp_path / "in.jsonl"
    good.write_text(json.dumps(GOOD[0]) + "\n")
    line = _one_line_error(citegraph(data, "add", str(good)), data)
    assert line == f"error: cannot write to {data}: file exists ({data / 'cache'})"


def test_read_only_file_system_is_one_line(tmp_path: Path) -> None:
    data = Path("/sys/citegraph-hardening-probe")  # sysfs refuses mkdir, even to root
    try:
        data.mkdir()
    except OSError:
        pass
    else:  # pragma: no cover - a sysfs that takes new folders: nothing to test
        data.rmdir()
        pytest.skip("/sys takes new folders here")
    good = tmp_path / "in.jsonl"
    good.write_text(json.dumps(GOOD[0]) + "\n")
    _one_line_error(citegraph(data, "add", str(good)), data)


def test_file_size_limit_hit_while_saving_is_one_line(tmp_path: Path) -> None:
    good = tmp_path / "in.jsonl"
    good.write_text("\n".join(json.dumps(r) for r in GOOD) + "\n")
    data = tmp_path / "data"

    def small_files() -> None:  # EFBIG on any write past 2 KiB (Python ignores SIGXFSZ)
        resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))

    run = citegraph(data, "add", str(good), preexec=small_files)
    _one_line_error(run, data)
    if (data / "graph.db").exists():  # made before the failed write: nothing half-written
        assert papers_in(data) == {}


# ---------------------------------------------------------------- BibTeX through the CLI


def test_add_a_bibtex_file(tmp_path: Path) -> None:
    refs = ROOT / "tests" / "unit" / "data" / "refs.bib"
    data = tmp_path / "data"
    run = citegraph(data, "add", "--json", str(refs))
    report = report_of(run)
    assert run.returncode == 3, run.stderr[-2000:]
    papers = papers_in(data)
    assert sorted(papers) == ["hu2022lora", "mueller2023graphs", "smith2021"]
    assert papers["mueller2023graphs"].authors[0] == "Jörg Müller"
    assert f"{refs}:36: entry 'noabstract2024': no abstract" in report["problems"]
    assert len(report["problems"]) == 5
