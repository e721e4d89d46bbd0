"""The benchmarks' one entry point, and the generator of docs/benchmarks.md.

    python -m bench list                 the benchmarks and the question each answers
    python -m bench NAME [--quick] ...   run one; writes bench/results/NAME[.quick].json
    python -m bench docs                 write docs/benchmarks.md from bench/results/

``--quick`` runs a benchmark on a small corpus (the seeds, or the smallest size) in a
minute or two, to check that it works; the goals are held against the full run. Each
benchmark's own options: ``python -m bench NAME --help``.
"""

from __future__ import annotations

import importlib
import json
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import RESULTS, ROOT, machine, markdown_table, now_utc, write_result

DOC = ROOT / "docs" / "benchmarks.md"


@dataclass(frozen=True)
class Earlier:
    """Figures measured by the scripts bench/ had before it was rebuilt (issue 40), kept
    in the doc, labelled with their commit and date, until the benchmark runs again."""

    source: str  # the command, commit and date they came from
    rows: tuple[tuple[str, str, str], ...]  # (figure, value, goal and whether met)


@dataclass(frozen=True)
class Bench:
    name: str
    module: str | None  # None: a slot for a later issue, nothing to run yet
    question: str
    about: str  # what it runs, on what, for a reader of the doc
    earlier: Earlier | None = None
    #: detail tables the doc shows too, by the start of their title (the others stay in
    #: the JSON)
    shown_tables: tuple[str, ...] = ()
    #: arguments the module's run() gets first (one module, two benchmarks)
    args: tuple[str, ...] = ()
    #: figures the doc leaves out, by the start of their name (they stay in the JSON)
    hidden: tuple[str, ...] = ()


BENCHES: tuple[Bench, ...] = (
    Bench(
        "quality", "bench.quality",
        "How good are the related papers and the SIMILAR_TO links?",
        "Cora (2,277 papers, 5,214 real citations): how many of a paper's citations are in "
        "its top 10; ICLR 2021 (2,966 papers): how many of the 10 share an author keyword, "
        "how many author keywords the concepts find; hubness. Against TF-IDF and random. "
        "`--quick`: 300 sampled related() queries per corpus.",
        Earlier("`python bench/quality.py` at 9d6e160, 2026-12-02 (issue 13, round 9)", (
            ("Cora related() recall@10", "0.451", "≥ 0.45: met"),
            ("Cora related() MRR@10", "0.559", "≥ 0.56: missed by 0.001"),
            ("Cora SIMILAR_TO recall@10", "0.425", "≥ 0.43: missed"),
            ("ICLR 2021 related(): share of the 10 sharing an author keyword",
             "0.330 (TF-IDF 0.291)", "≥ 0.33: met"),
            ("largest SIMILAR_TO in-degree ÷ k", "3.9 Cora, 3.4 ICLR", "≤ 5: met"),
            ("ICLR author keywords found as concepts (strict)", "0.656 at 14.5 concepts a paper",
             "≥ 0.65 at ≤ 15: met"),
        )),
    ),
    Bench(
        "citations", "bench.quality",
        "Does co-citation help related() find a paper's references?",
        "Cora: the papers that cite another, in four folds (seed 0); for each fold the graph "
        "is built with that fold's reference lists left out (everyone else's kept), and each "
        "test paper asks related() for 10 papers: how many of its hidden references are "
        "among them. related() without citation overlap, as shipped, and with the "
        "co-citation weight chosen on folds 1-2 and reported on folds 3-4, against plain "
        "co-citation ranking. `--quick`: two folds of 100.",
        args=("--citations",),
        hidden=("test half: related() as shipped",),  # shipped = the weight chosen
    ),
    Bench(
        "title_search", "bench.title_search",
        "Does a paper's title find that paper first?",
        "Titles of sampled papers searched in every mode (KEYWORD, SEMANTIC, HYBRID), among "
        "papers and among all kinds; as written and without their last word. Full: ICLR "
        "2021, 300 papers; `--quick`: the seeds.",
        Earlier("`python bench/title_search.py --sample 300 --seed 1 --variant drop-last` on "
                "an ICLR 2021 graph, at 9d6e160, 2026-12-02", (
            ("titles without their last word, first among papers: HYBRID", "300/300", "all: met"),
            ("the same among all kinds: HYBRID / KEYWORD", "300/300 / 300/300", "all: met"),
            ("the same among papers: SEMANTIC alone", "268/300", ""),
        )),
    ),
    Bench(
        "build", "bench.build",
        "How long do `citegraph build` and `citegraph add` take on a real corpus?",
        "The CLI as a user runs it, on a new data folder: a cold build (every text embedded), "
        "the same build again (nothing changed), `citegraph add` of 10 new papers against the "
        "model's load alone, and `addPapers` of 10 on a running server. Full: ICLR 2021; "
        "`--quick`: the seeds.",
        Earlier("`python bench/add_ab.py` on an ICLR 2021 graph built by `citegraph build` at "
                "c5e7ef4, 2026-12-03 (issue 12, round 15); `addPapers` from `python "
                "bench/store.py`, 2026-12-03 (round 9)", (
            ("cold `citegraph build` of ICLR 2021", "106.5 s (embedding 89 s)", ""),
            ("`citegraph add` of 10 minus the model's load alone", "1.60-1.77 s", "≤ 2 s: met"),
            ("`addPapers` of 10 ÷ cold build", "0.015", "≤ 0.02: met"),
        )),
    ),
    Bench(
        "build_scale", "bench.build_scale",
        "How long does a build of 100,000 papers take, and how much memory?",
        "`citegraph build` of a synthetic corpus (topic-clustered vectors and Zipf terms, "
        "bench/synthetic.py) whose embeddings and extractions are in the caches already, so "
        "the figures are linking and storing. Full: 100k; `--quick`: 3k.",
        Earlier("`python bench/build_scale.py --sizes 100000` at 473e46f, 2026-12-04", (
            ("100k: link + diff + write", "216.3 s (216-250 s over three runs)", "≤ 120 s: missed"),
            ("100k: whole build", "287.4 s", ""),
            ("100k: peak RSS", "1,961 MiB", "≤ 2 GB: met"),
        )),
    ),
    Bench(
        "add_scale", "bench.add_scale",
        "Does an add stay cheap as the graph grows?",
        "A server's path (one long-lived pipeline, as `addPapers` runs it) adding 10 papers "
        "at a time to synthetic graphs of 3k and 100k papers; medians of the adds after the "
        "first. `--quick`: 3k only.",
        Earlier("`python bench/add_scale.py --sizes 3000,100000` at 8042f8a-a2fa62a, "
                "2026-12-04 (issue 12, round 23; four runs)", (
            ("add of 10 at 100k ÷ at 3k", "1.49-1.81x", "≤ 2x: met"),
            ("add of 10 at 100k (median)", "0.81-1.12 s", ""),
        )),
    ),
    Bench(
        "queries", "bench.queries",
        "How fast is one query, in-process and over HTTP?",
        "Each query kind alone, one client: the library call (`GraphService`) and the same "
        "GraphQL query over HTTP to `citegraph serve`, p50 and p99. Full: ICLR 2021; "
        "`--quick`: the seeds.",
        Earlier("`python bench/load.py --per-kind 3 --workers 2` on ICLR 2021 at 76b1366, "
                "2026-12-02 (issue 11, session 10; HTTP, one client, two runs)", (
            ("neighbourhood depth 1 / depth 2, p50", "7.4-10.6 / 10.7-14.6 ms",
             "≤ 10 ms: at the line"),
            ("shortest path / k paths, p50", "7.6-10.5 / 7.9-10.7 ms", "≤ 10 ms: at the line"),
            ("keyword search, p50", "7.2-12.8 ms", "≤ 10 ms: at the line"),
            ("related, p50", "18.4-19.5 ms", "≤ 10 ms: missed"),
            ("semantic search / related(text:), p50", "14.6-18.1 / 21.1-25.3 ms",
             "≤ 20 ms: at the line"),
        )),
    ),
    Bench(
        "queries.cora", "bench.queries",
        "How fast are the citation reads on a graph with references?",
        "As `queries`, on Cora built with its citations as references (2,262 papers): "
        "prior and derivative works, coupled and co-cited papers, and related papers "
        "(coupling and co-citation among its signals), over HTTP and in-process. "
        "`--quick`: the seeds (no references: the reads answer empty lists).",
        args=("--corpus", "cora"),
        # the query kinds of `queries`, on another corpus: their figures are that section's
        hidden=("neighborhood", "shortest", "k paths", "keyword", "semantic", "related to"),
    ),
    Bench(
        "query_scale", "bench.query_scale",
        "Do queries stay fast at 100,000 papers?",
        "The embedded store over synthetic graphs of 3k and 100k papers: write, open, the "
        "server's in-memory reads and the CLI's SQL reads (neighbourhoods, paths, name "
        "lookups, vector search), and each 100k p50 over the 3k one. `--quick`: 3k only.",
        Earlier("`python bench/db_scale.py --sizes 3000,100000` at d6d7159, 2026-12-02 "
                "(issue 11, round 9)", (
            ("100k ÷ 3k, server reads: neighbourhood depth 1 / depth 2", "1.8x / 4.0x",
             "≤ 3x: met / missed"),
            ("100k ÷ 3k: shortest path / k paths", "54x / 58x", "≤ 3x: missed"),
            ("100k: vector search through the HNSW index", "1.34 ms (11x the 3k exact pass)",
             "≤ 3x: missed"),
        )),
    ),
    Bench(
        "load", "bench.load",
        "How many requests a second does a server answer under load, without errors?",
        "`citegraph serve` on loopback, 32 clients sending a mix of ten query kinds for 30 s, "
        "three rounds; every answer must be a 200 without errors. Full: ICLR 2021, two "
        "workers; `--quick`: the seeds, 8 clients for 5 s.",
        Earlier("`python bench/load.py --clients 32 --seconds 20 --runs 2 --workers 2` on ICLR "
                "2021 at 76b1366, 2026-12-02", (
            ("requests a second, 32 clients", "135-154", "≥ 300: missed"),
            ("errors", "0", "0: met"),
        )),
    ),
    Bench(
        "memory", "bench.memory",
        "How much memory does a warm server hold?",
        "`citegraph serve` started on a graph: its resident memory when ready, after its "
        "warm-up (model, indexes, the add path's state) and after a round of load. Full: "
        "ICLR 2021; `--quick`: the seeds.",
        Earlier("an ad hoc script at ec2e65f, 2026-12-05 (issue 12, round 24), and the outside "
                "probe 17 (docs/reliability.md)", (
            ("server over ICLR 2021 (~2,900 papers), after warm-up", "2,031-2,060 MiB", ""),
            ("warm-up state over 10k / 100k synthetic papers", "1,620 / 12,606 MiB", ""),
        )),
    ),
    Bench(
        "neo4j", "bench.neo4j_store",
        "How does the Neo4j store compare with the embedded one?",
        "A real Neo4j 5.26 started on loopback (scripts/neo4j.sh): the ICLR 2021 graph "
        "loaded through `Neo4jStore`; two real `citegraph serve --workers 2`, one on the "
        "embedded graph and one on Neo4j, asked in turn over HTTP: each query kind's p50 "
        "and their ratio (issue 41: ≤ 2x), then 32 clients for 15 s on the query mix, with "
        "and without related papers, on each (issue 41: ≥ 0.5x the embedded req/s, 0 "
        "errors, p99 ≤ 1 s). `--quick`: the seeds, 10 requests a kind, 16 clients for 5 s.",
        Earlier("`python bench/neo4j_load.py --quick` (300 ICLR papers) at a64b2e0, "
                "2026-12-01, a loaded machine", (
            ("Neo4j ÷ embedded p50: keyword search", "2.9x", "≤ 3x: met"),
            ("Neo4j ÷ embedded p50: neighbourhood d1 / shortest path", "12.5x / 99.9x",
             "≤ 3x: missed"),
            ("Neo4j ÷ embedded p50: related / vector search", "65x / 769x", "≤ 3x: missed"),
        )),
    ),
    Bench(
        "topics", "bench.topics",
        "Do the topics match what people say the topics are, and do their labels read right?",
        "Cora (2,277 papers, its citations as references): NMI and ARI of the top-level topics "
        "against Cora's 7 human labels, the Leiden resolution chosen on a seeded half of the "
        "papers and reported on the other half, beside k-means (k = 7) on TF-IDF vectors and "
        "on the MiniLM vectors; ICLR 2021: the topics' author-keyword purity (untuned), the "
        "time `citegraph topics --recompute` takes, and 20 labels read against their top "
        "papers with a verdict each (bench/topic_verdicts.json). `--quick`: the seeds.",
        shown_tables=("iclr2021: the 20 biggest",),
    ),
)
BY_NAME = {b.name: b for b in BENCHES}


def _list() -> None:
    for b in BENCHES:
        print(f"{b.name:13} {b.question}" + ("" if b.module else "  (not built yet)"))


def _run(name: str, argv: list[str]) -> int:
    bench = BY_NAME.get(name)
    if bench is None:
        print(f"no benchmark {name!r}; python -m bench list", file=sys.stderr)
        return 2
    if bench.module is None:
        print(f"{name}: {bench.about}", file=sys.stderr)
        return 2
    module = importlib.import_module(bench.module)
    command = shlex.join(["python", "-m", "bench", name, *argv])
    started, mach = now_utc(), machine()
    t0 = time.perf_counter()
    if not {"-h", "--help"} & set(argv):
        print(f"{command}  ({started}, {mach['cpu']}, {mach['cores']} cores)", flush=True)
    result = module.run([*bench.args, *argv])
    path = write_result(result, command, time.perf_counter() - t0, started, mach)
    print(f"\nwrote {path.relative_to(ROOT)}")
    return 0


# --------------------------------------------------------------------------- the doc
def _load(bench: Bench) -> dict[str, Any] | None:
    """The full run's result when there is one, else the quick run's."""
    for name in (f"{bench.name}.json", f"{bench.name}.quick.json"):
        path = RESULTS / name
        if path.exists():
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            return data
    return None


def _cell(v: Any, unit: str = "") -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        a = abs(v)
        digits = 3 if a < 1 else 2 if a < 10 else 1 if a < 100 else 0
        v = f"{v:,.{digits}f}"
    elif isinstance(v, int):
        v = f"{v:,}"
    return f"{v}{unit}" if unit == "x" else f"{v} {unit}".strip()


def _machine(m: dict[str, Any]) -> str:
    return (f"{m['cpu']}, {m['cores']} cores, {m['ram_gib']:.0f} GiB RAM, "
            f"load {m['load_avg_at_start']}")


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but - and _ dropped."""
    kept = "".join(c for c in heading.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def _section(bench: Bench) -> list[str]:
    """One table per question: this commit's run (if any), then the earlier figures."""
    out = [f"## {bench.question}", bench.about, ""]
    if bench.module is None:
        return [*out, "_No benchmark yet._", ""]
    res = _load(bench)
    rows: list[str] = []
    legend: list[str] = []
    if res is None:
        legend.append(f"**Not run yet on this commit**: `python -m bench {bench.name}`.")
    else:
        when = res["date"][:10]
        commit = res["commit"] + (" (with uncommitted changes)"
                                  if res["code_differs_from_commit"] else "")
        tag = "quick" if res["quick"] else "now"
        legend.append(f"*{tag}*: `{res['command']}`, {when}, commit {commit}, "
                      f"{_machine(res['machine'])}, {res['seconds']:.0f} s"
                      + (f"; {res['corpus']}" if res["corpus"] else "") + "."
                      + (" A `--quick` run shows that the benchmark works; the goals are held "
                         f"against `python -m bench {bench.name}`, not run yet on this commit."
                         if res["quick"] else ""))
        for f in res["figures"]:
            if bench.hidden and f["figure"].startswith(bench.hidden):
                continue
            met = "" if res["quick"] or f["met"] is None else (
                ": met" if f["met"] else ": **missed**")
            goal = f"{f['goal']}{met}" if f["goal"] else ""
            rows.append(f"| {f['figure']} | {_cell(f['value'], f['unit'])} | {goal} | {tag} |")
        legend += res["notes"]
    if bench.earlier is not None and (res is None or res["quick"]):
        legend.append(f"*earlier*: {bench.earlier.source}; not rerun on this commit.")
        rows += [f"| {a} | {b} | {c} | earlier |" for a, b, c in bench.earlier.rows]
    if rows:
        out += ["| figure | value | goal | run |", "|---|---|---|---|", *rows]
    out += [f"- {line}" for line in legend]
    for table in (res or {}).get("tables", []) if bench.shown_tables else []:
        if table["title"].startswith(bench.shown_tables):
            out += ["", f"**{table['title']}**",
                    markdown_table(table["headers"], table["rows"])]
    return [*out, ""]


def write_doc() -> Path:
    lines = [
        "# Benchmarks",
        "",
        "Generated by `python -m bench docs` from `bench/results/*.json`; do not edit by hand. "
        "One table per question: each figure beside its goal, below it the command that "
        "reproduces it, with date, commit and machine.",
        "Figures measured before this commit are marked *earlier*, with their own commit and "
        "date. `python -m bench list` names them. The defaults these figures rest on, and the "
        "experiments that chose them: "
        "[architecture.md](architecture.md#defaults-and-the-measurements-behind-them).",
        "",
        "| question | benchmark | latest run |",
        "|---|---|---|",
    ]
    for b in BENCHES:
        res = _load(b) if b.module else None
        state = ("not built yet" if b.module is None else "not run yet on this commit"
                 if res is None else f"{res['date'][:10]} at {res['commit']}"
                 + (" (`--quick` only)" if res["quick"] else ""))
        lines.append(f"| [{b.question}](#{anchor(b.question)}) | `{b.name}` | {state} |")
    lines.append("")
    for b in BENCHES:
        lines += _section(b)
    DOC.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    return DOC


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        _list()
        return 0
    if argv[0] == "list":
        _list()
        return 0
    if argv[0] == "docs":
        path = write_doc()
        print(f"wrote {path.relative_to(ROOT)} ({len(path.read_text().splitlines())} lines)")
        return 0
    return _run(argv[0], argv[1:])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
