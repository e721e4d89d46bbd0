# ruff: noqa: E501 - long table rows
"""Shared helpers for the benchmarks: machine line, report appending, stats, corpora.

Every script in ``bench/`` prints a table and appends it, with :func:`machine_line` and
the exact command that produced it, to ``docs/benchmarks.md``. The machine is shared
and noisy, so scripts report medians and ratios measured side by side in one run.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# the shared data beside the checkout (/work/main -> /work/shared); a worktree deeper down
# (/work/wt/<branch>) names it with CITEGRAPH_BENCH_DATA
DATA = Path(os.environ.get("CITEGRAPH_BENCH_DATA") or (ROOT / ".." / "shared" / "data")).resolve()
ICLR_TSV = DATA / "iclr2021" / "paperlist.tsv"
CORA_DIR = DATA / "cora"
SEEDS_DIR = ROOT / "seeds"
CACHE_DIR = ROOT / "bench" / ".cache"  # git-ignored; embeddings reused between quality runs
REPORT = Path(os.environ.get("CITEGRAPH_BENCH_REPORT", ROOT / "docs" / "benchmarks.md"))


# --------------------------------------------------------------------------- machine / report
def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _ram_gib() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return int(line.split()[1]) / 1024**2
    except OSError:
        pass
    return float("nan")


def git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--", "graph", "api"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
        return out + ("+dirty(graph/api)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine_line() -> str:
    """One line naming the machine, software and commit a result came from."""
    try:
        import torch

        torch_v = torch.__version__
        threads = torch.get_num_threads()
    except ImportError:  # pragma: no cover
        torch_v, threads = "n/a", 0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{_cpu_model()}, {os.cpu_count()} cores (torch threads {threads}), "
        f"{_ram_gib():.0f} GiB RAM, Python {platform.python_version()}, torch {torch_v}, "
        f"{_dt.datetime.now().strftime('%Y-%m-%d %H:%M')}, commit {git_commit()}, "
        f"load avg {load:.1f} at start (shared machine)"
    )


def command_line() -> str:
    return "python " + " ".join(shlex.quote(a) for a in ["bench/" + Path(sys.argv[0]).name, *sys.argv[1:]])


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub markdown table."""
    def fmt(v: Any) -> str:
        if isinstance(v, float):
            if v != v:
                return "n/a"
            return f"{v:.3f}" if abs(v) < 100 else f"{v:.1f}"
        return str(v)

    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(fmt(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


class Report:
    """Collects the text of one benchmark run; ``save`` prints nothing, ``add`` prints."""

    def __init__(self, title: str, machine: str | None = None) -> None:
        self.title = title
        self.machine = machine or machine_line()
        self.parts: list[str] = []
        print(f"## {title}\n\nMachine: {self.machine}\n", flush=True)

    def add(self, text: str) -> None:
        print(text + "\n", flush=True)
        self.parts.append(text)

    def save(self, path: Path | None = None) -> None:
        path = path or REPORT
        path.parent.mkdir(parents=True, exist_ok=True)
        body = (
            f"\n## {self.title}\n\n"
            f"Command: `{command_line()}`  \nMachine: {self.machine}\n\n"
            + "\n\n".join(self.parts)
            + "\n"
        )
        if not path.exists():
            path.write_text("# Benchmarks\n\nAppended by the scripts in `bench/`; see "
                            "the top of each script for what it measures.\n")
        with path.open("a", encoding="utf-8") as f:
            f.write(body)
        print(f"(appended to {path})")


# --------------------------------------------------------------------------- stats
def median(xs: Sequence[float]) -> float:
    return float(statistics.median(xs)) if xs else float("nan")


def percentile(xs: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); p99 of fewer than 100 samples is the max."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = max(0, min(len(s) - 1, int(np.ceil(q / 100 * len(s))) - 1))
    return float(s[k])


def timeit(fn: Callable[[], Any], repeat: int = 5) -> tuple[float, list[float]]:
    """(median seconds, all samples) of ``fn()`` run ``repeat`` times."""
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return median(samples), samples


def peak_rss_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --------------------------------------------------------------------------- corpora
def load_iclr() -> list[Any]:
    """ICLR 2021 papers through the project's own reader (titles, keywords, abstracts)."""
    from graph.ingest import read_corpus

    res = read_corpus([ICLR_TSV])
    return list(res.papers)


def load_seeds() -> list[Any]:
    from graph.ingest import read_corpus

    return list(read_corpus([SEEDS_DIR]).papers)


def load_cora() -> tuple[list[Any], list[set[int]], list[int]]:
    """Cora papers (id ``cora-<line>``), citation neighbours per node (either direction), labels.

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
    labels = [int(x) for x in (CORA_DIR / "group.txt").read_text().split()]
    return papers, cites, labels


# --------------------------------------------------------------------------- embeddings
def embed_texts(
    texts: Sequence[str], long_text: str = "truncate", dtype: str = "float32",
    cache: bool = True,
) -> np.ndarray:
    """Pipeline embeddings (SentenceTransformerEmbedder) of ``texts``, cached in bench/.cache.

    For ``chunks``/``head_tail`` only texts longer than the model window differ from
    ``truncate`` (a short text is one piece of weight 1), so only those are embedded
    again; the rest reuse the truncate vectors.
    """
    from graph.embed import EmbeddingCache, SentenceTransformerEmbedder, embed_cached

    store = EmbeddingCache(CACHE_DIR / "embeddings.sqlite" if cache else None)
    try:
        base = SentenceTransformerEmbedder(dtype=dtype, long_text="truncate")
        idx = {str(i): t for i, t in enumerate(texts)}
        vecs, _ = embed_cached(base, store, idx)
        out = np.vstack([vecs[str(i)] for i in range(len(texts))]).astype(np.float32)
        if long_text != "truncate":
            lengths = base._n_tokens(list(texts))
            long_i = [i for i, n in enumerate(lengths) if n > base.max_tokens]
            if long_i:
                emb = SentenceTransformerEmbedder(dtype=dtype, long_text=long_text)
                emb._model = base._load()  # same weights; skip a second load
                lv, _ = embed_cached(emb, store, {str(i): texts[i] for i in long_i})
                for i in long_i:
                    out[i] = lv[str(i)]
        return out
    finally:
        store.close()


def n_long(texts: Sequence[str]) -> tuple[int, int]:
    """(texts over the model's window, model window in word pieces)."""
    from graph.embed import SentenceTransformerEmbedder

    e = SentenceTransformerEmbedder()
    lengths = e._n_tokens(list(texts))
    return sum(n > e.max_tokens for n in lengths), e.max_tokens
