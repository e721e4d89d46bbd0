"""The topic commands: the corpus's topics at a glance, one topic in full, a recompute.

Registered on :data:`citegraph.cli.app` when that module is imported (it imports this one
last), so they share its store wiring, its errors and its --json option.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated, Any

import typer
from rich.table import Table

from citegraph.cli import JsonOpt, _fail, _service, app, console
from graph.errors import CitegraphError
from graph.model import Paper, Topic


def _row(t: Topic, titles: dict[str, str]) -> dict[str, Any]:
    row = {k: v for k, v in dataclasses.asdict(t).items() if k != "kind"}
    row["years"] = dict(zip(t.years, t.year_counts, strict=True))
    del row["year_counts"]
    row["top_papers"] = [{"id": p, "title": titles.get(p, p)} for p in t.papers]
    return row


def _titles(service: Any, ids: list[str]) -> dict[str, str]:
    nodes = service.store.get_nodes(sorted(set(ids)))
    return {k: (n.title or n.label) for k, n in nodes.items() if isinstance(n, Paper)}


@app.command()
def topics(
    recompute: Annotated[bool, typer.Option(
        "--recompute", help="Compute the topics afresh now (a build does; an add or remove "
        "does once the papers changed since reach CITEGRAPH_TOPIC_RECOMPUTE_FRACTION of the "
        "corpus).")] = False,
    as_json: JsonOpt = False,
) -> None:
    """The corpus's topics: id, label, size, top concepts and top paper.

    Topics are communities of papers (Leiden over similar abstracts, citations and
    shared references), labelled by their most distinctive concepts; a big topic has
    subtopics (ids like topic:3.1). `citegraph topic ID` shows one in full.
    """
    with _service(reads_only=True) as service:
        try:
            if recompute:
                done = service.recompute_topics()
                if not as_json:
                    console.print(f"Recomputed {done.topics} topics in {done.seconds:.1f}s.")
            found = service.topics()
            titles = _titles(service, [t.papers[0] for t in found if t.papers])
        except CitegraphError as exc:
            raise _fail(exc) from None
    if as_json:
        console.print_json(json.dumps([_row(t, titles) for t in found]))
        return
    if not found:
        console.print("No topics yet: `citegraph build` computes them, or "
                      "`citegraph topics --recompute`.")
        return
    table = Table(title=f"{sum(t.level == 1 for t in found)} topics, "
                        f"{sum(t.level == 2 for t in found)} subtopics "
                        f"(computed at {found[0].corpus} papers)")
    for col in ("id", "label", "size", "top concepts", "top paper"):
        table.add_column(col, overflow="fold")
    for t in found:
        top = titles.get(t.papers[0], t.papers[0]) if t.papers else ""
        table.add_row(t.id, t.name, str(t.size), ", ".join(t.concept_names[:5]), top)
    console.print(table)


@app.command()
def topic(
    ref: Annotated[str, typer.Argument(help="A topic id (topic:3, 3, 3.1) or its label.")],
    as_json: JsonOpt = False,
) -> None:
    """One topic: its label, top papers, concepts, datasets and papers per year."""
    with _service(reads_only=True) as service:
        try:
            t = service.topic(ref)
            titles = _titles(service, list(t.papers))
            names = service.store.get_nodes(list(t.datasets))
            subs = [s for s in service.topics() if s.parent == t.id]
        except CitegraphError as exc:
            raise _fail(exc) from None
    if as_json:
        row = _row(t, titles)
        row["subtopics"] = [s.id for s in subs]
        console.print_json(json.dumps(row))
        return
    console.print(f"[bold]{t.id}[/bold] {t.name}  ({t.size} papers"
                  + (f", a subtopic of {t.parent}" if t.parent else "") + ")")
    console.print("Concepts: " + ", ".join(t.concept_names))
    if t.datasets:
        console.print("Datasets: " + ", ".join(
            names[d].label if d in names else d for d in t.datasets))
    if subs:
        console.print("Subtopics: " + "; ".join(f"{s.id} {s.name} ({s.size})" for s in subs))
    table = Table(title="Top papers (by importance)")
    table.add_column("id")
    table.add_column("title", overflow="fold")
    for p in t.papers:
        table.add_row(p, titles.get(p, p))
    console.print(table)
    if t.years:
        most = max(t.year_counts)
        console.print("Papers per year:")
        for y, n in zip(t.years, t.year_counts, strict=True):
            console.print(f"  {y}  {'█' * max(1, round(30 * n / most))} {n}")
