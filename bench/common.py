"""What every benchmark shares: its result file, the machine, statistics, corpora, graphs.

A benchmark fills a :class:`Result` (headline figures, each beside its goal, and any
detail tables) and :func:`bench.__main__.main` writes it to ``bench/results/NAME.json``
(``NAME.quick.json`` for ``--quick``) with the machine, the commit, the date and the
command. ``docs/benchmarks.md`` is generated from those files (``python -m bench docs``);
nothing here writes prose into the docs.

Only public names of the library are used (no leading underscore): a benchmark measures
what a user can call.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
CACHE_DIR = ROOT / "bench" / ".cache"  # git-ignored: embeddings and built graphs, reused
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# the shared read-only corpora beside the checkout (/work/<checkout> -> /work/shared/data);
# CITEGRAPH_BENCH_DATA names another place
DATA = Path(os.environ.get("CITEGRAPH_BENCH_DATA") or (ROOT / ".." / "shared" / "data")).resolve()
ICLR_TSV = DATA / "iclr2021" / "paperlist.tsv"
CORA_DIR = DATA / "cora"
SEEDS_DIR = ROOT / "seeds"


# --------------------------------------------------------------------------- results
@dataclass
class Figure:
    """One headline figure: what, the value, its unit, and the goal it is held to."""

    figure: str
    value: float | int | str | None
    unit: str = ""
    goal: str = ""
    met: bool | None = None  # None: no goal, or not decidable from this run


@dataclass
class Result:
    """What one run of a benchmark found; written as JSON by ``python -m bench NAME``."""

    name: str
    quick: bool = False
    corpus: str = ""
    figures: list[Figure] = field(default_factory=list)
    tables: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def figure(self, figure: str, value: float | int | str | None, unit: str = "",
               goal: str = "", met: bool | None = None) -> None:
        """Add a headline figure (and print it)."""
        if isinstance(value, float):
            value = round(value, 4 if abs(value) < 1 else 2 if abs(value) < 100 else 1)
        self.figures.append(Figure(figure, value, unit, goal, met))
        shown = f"{value} {unit}".strip()
        print(f"  {figure}: {shown}" + (f"  (goal {goal}: {_met(met)})" if goal else ""),
              flush=True)

    def table(self, title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """Add a detail table (kept in the JSON and printed; the doc shows the figures)."""
        clean = [[_plain(v) for v in r] for r in rows]
        self.tables.append({"title": title, "headers": list(headers), "rows": clean})
        print(f"\n{title}\n" + markdown_table(headers, clean) + "\n", flush=True)

    def note(self, text: str) -> None:
        self.notes.append(text)
        print(f"  note: {text}", flush=True)


def _met(met: bool | None) -> str:
    return {True: "met", False: "missed", None: "n/a"}[met]


def _plain(v: Any) -> Any:
    if isinstance(v, float):
        return None if v != v else round(v, 4 if abs(v) < 10 else 1)
    if isinstance(v, int | str) or v is None:
        return v
    return str(v)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def fmt(v: Any) -> str:
        return "n/a" if v is None else str(v)

    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(fmt(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def synthetic_sizes(sizes: Sequence[int]) -> str:
    return "synthetic, " + ", ".join(f"{n:,}" for n in sizes) + " papers"


# --------------------------------------------------------------------------- machine
def git_commit() -> tuple[str, bool]:
    """(short commit of HEAD, whether graph/ api/ citegraph/ differ from it)."""
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--", "graph", "api", "citegraph"],
            capture_output=True, text=True, check=True).stdout.strip()
        return head, bool(dirty)
    except (OSError, subprocess.CalledProcessError):
        return "unknown", False


def machine() -> dict[str, Any]:
    """The machine a result came from: CPU model, cores, RAM, software, load."""
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = float("nan")
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                ram = int(line.split()[1]) / 1024**2
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_gib": round(ram, 1),
        "python": platform.python_version(),
        "load_avg_at_start": round(os.getloadavg()[0], 2),
    }


def now_utc() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_result(result: Result, command: str, seconds: float, started: str,
                 mach: dict[str, Any]) -> Path:
    commit, dirty = git_commit()
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / (f"{result.name}.quick.json" if result.quick else f"{result.name}.json")
    body = {
        "name": result.name,
        "command": command,
        "quick": result.quick,
        "corpus": result.corpus,
        "date": started,
        "commit": commit,
        "code_differs_from_commit": dirty,
        "machine": mach,
        "seconds": round(seconds, 1),
        "figures": [f.__dict__ for f in result.figures],
        "tables": result.tables,
        "notes": result.notes,
    }
    path.write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------- statistics
def median(xs: Sequence[float]) -> float:
    return float(statistics.median(xs)) if xs else float("nan")


def percentile(xs: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); p99 of fewer than 100 samples is the max."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = max(0, min(len(s) - 1, -(-len(s) * q // 100) - 1))
    return float(s[int(k)])


def timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def peak_rss_mib() -> float:
    """This process's own high-water RSS (VmHWM)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --------------------------------------------------------------------------- the CLI
@dataclass
class Run:
    """One ``citegraph`` command run as a user runs it."""

    rc: int
    wall_s: float
    peak_rss_mib: float  # the command's, or its largest descendant's (the model's process)
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def env() -> dict[str, str]:
    out = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               PYTHONPATH=str(ROOT))
    out.pop("CITEGRAPH_STORE", None)
    return out


def citegraph(data_dir: Path, *args: str, timeout: float = 3600) -> Run:
    """``python -m citegraph --data-dir DATA_DIR ARGS``: wall time, peak RSS, output."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "citegraph", "--data-dir", str(data_dir), *args],
            cwd=ROOT, env=env(), stdout=out, stderr=err)
        deadline = time.monotonic() + timeout
        while True:  # wait4: the command's own rusage (its peak RSS), not this process's
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                raise TimeoutError(f"citegraph {' '.join(args)}: over {timeout:.0f} s")
            time.sleep(0.02)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Run(proc.returncode, wall, usage.ru_maxrss / 1024,
                   out.read().decode(errors="replace"), err.read().decode(errors="replace"))


def built_graph(corpus: str) -> Path:
    """A data folder holding ``corpus`` ("seeds", "iclr2021" or "cora": Cora with its
    citations as references, :func:`cora_jsonl`) built by ``citegraph build``
    at this checkout, kept in bench/.cache/graphs and rebuilt when the code changed.
    Copy it before writing to it (:func:`copy_graph`)."""
    commit, dirty = git_commit()
    where = CACHE_DIR / "graphs" / f"{corpus}-{commit}{'-dirty' if dirty else ''}"
    if (where / "graph.db").exists():
        return where
    source = {"seeds": SEEDS_DIR, "iclr2021": ICLR_TSV}.get(corpus) or cora_jsonl()
    if where.exists():
        shutil.rmtree(where)
    where.mkdir(parents=True)
    shared = CACHE_DIR / "embed-cache"  # embeddings depend on (model, text) only
    if shared.is_dir():
        shutil.copytree(shared, where / "cache")
    print(f"building {corpus} into {where} ...", flush=True)
    run = citegraph(where, "build", str(source), "--json")
    if run.rc not in (0, 3):
        raise RuntimeError(f"citegraph build {source} failed: {run.stderr[-2000:]}")
    shared.mkdir(parents=True, exist_ok=True)
    for db in (where / "cache").glob("*.sqlite"):
        shutil.copy2(db, shared / db.name)
    return where


def copy_graph(src: Path, where: Path) -> Path:
    shutil.copytree(src, where)
    return where


# --------------------------------------------------------------------------- corpora
def load_iclr() -> list[Any]:
    """ICLR 2021 papers through the project's own reader (titles, keywords, abstracts)."""
    from graph.ingest import read_corpus

    return list(read_corpus([ICLR_TSV]).papers)


def load_cora() -> tuple[list[Any], list[set[int]], list[int | None]]:
    """Cora papers (id ``cora-<line>``), citation neighbours per node (either direction),
    labels (None: the paper has none).

    data.txt line i is node i: one stop-word-stripped abstract, no title.
    """
    from graph.ingest import paper_from_record

    lines = (CORA_DIR / "data.txt").read_text(encoding="utf-8").splitlines()
    papers = [
        paper_from_record({"id": f"cora-{i}", "abstract": t}, source=f"cora/data.txt:{i + 1}")
        for i, t in enumerate(lines)
    ]
    cites: list[set[int]] = [set() for _ in lines]
    for row in (CORA_DIR / "graph.txt").read_text().split("\n"):
        if not row.strip():
            continue
        a, b = (int(x) for x in row.split())
        if a != b:
            cites[a].add(b)
            cites[b].add(a)
    # line i is node i's label; 66 lines are empty (no label): None, not skipped (skipping
    # them shifted every later label onto the wrong paper)
    rows = (CORA_DIR / "group.txt").read_text().split("\n")
    labels = [int(x) if x.strip() else None for x in rows[: len(lines)]]
    return papers, cites, labels


def cora_jsonl() -> Path:
    """Cora as a JSONL file citegraph reads: ``cora-<line>`` papers whose references are
    the papers graph.txt says they cite (kept in bench/.cache)."""
    papers, _, _ = load_cora()
    cites: dict[int, list[str]] = {}
    for row in (CORA_DIR / "graph.txt").read_text().split("\n"):
        if row.strip():
            a, b = (int(x) for x in row.split())
            if a != b:
                cites.setdefault(a, []).append(f"cora-{b}")
    out = CACHE_DIR / "cora.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for i, p in enumerate(papers):
            rec = {"id": p.id, "abstract": p.abstract, "references": sorted(set(cites.get(i, [])))}
            f.write(json.dumps(rec) + "\n")
    return out


def embed_texts(texts: Sequence[str], long_text: str = "truncate") -> Any:
    """The pipeline's embeddings of ``texts`` (float32 rows), cached in bench/.cache."""
    import numpy as np

    from graph.embed import EmbeddingCache, SentenceTransformerEmbedder, embed_cached

    store = EmbeddingCache(CACHE_DIR / "embeddings.sqlite")
    try:
        emb = SentenceTransformerEmbedder(long_text=long_text)
        vecs, _ = embed_cached(emb, store, {str(i): t for i, t in enumerate(texts)})
        return np.vstack([vecs[str(i)] for i in range(len(texts))]).astype(np.float32)
    finally:
        store.close()
