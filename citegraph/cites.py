"""The citation commands: prior and derivative works of one paper or a set of seeds.

Registered on :data:`citegraph.cli.app` when that module is imported (it imports this one
last), so they share its store wiring, its errors and its --json / --format options.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated

import typer
from rich.table import Table

from citegraph.cli import (
    NO_FILTERS,
    Filters,
    FormatOpt,
    JsonOpt,
    SortOpt,
    _fail,
    _keep,
    _print_papers,
    _service,
    _sort,
    app,
    console,
    filtered,
)
from graph.errors import CitegraphError
from graph.model import CitationLink, GraphNode
from graph.query.citations import Relation

Seeds = Annotated[list[str], typer.Argument(
    help="Seed paper ids or labels (a title, or a short name only one paper has); for "
         "derivative works an outside work's id (work:doi:10.1/x) too.")]
First = Annotated[int, typer.Option("--first", "-n", min=1, max=1000,
                                    help="How many works to list.")]


def _show(relation: Relation, refs: Sequence[str], first: int, as_json: bool,
          fmt: FormatOpt, what: str, count_says: str, filters: Filters,
          sort: str | None) -> None:
    order = _sort(sort)
    with _service(reads_only=True) as service:
        keep = _keep(service, filters)
        try:
            seeds, links = service.citations(relation, refs, limit=first, keep=keep,
                                             sort=order)
        except CitegraphError as exc:
            raise _fail(exc) from None
    if fmt is not None:
        _print_papers(fmt, [x.node for x in links])  # outside works are no papers: left out
        return
    if as_json:
        console.print_json(json.dumps([_row(x) for x in links]))
        return
    table = Table(title=f"{what} of {_names(seeds)}")
    for col, justify in (("#", "right"), ("work", "left"), ("kind", "left"),
                         (count_says, "right"), ("via", "left")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for i, x in enumerate(links, 1):
        kind = "paper" if x.node.kind.value == "Paper" else "outside work"
        via = ", ".join(n.label for n in x.shared)
        table.add_row(str(i), f"{x.node.label}\n[dim]{x.node.id}[/dim]", kind,
                      f"{x.count} of {len(seeds)}", via)
    console.print(table)
    if not links:
        console.print("[dim]No citations join these papers to the graph.[/dim]")


def _names(seeds: Sequence[GraphNode]) -> str:
    first = f"“{seeds[0].label}”"
    return first if len(seeds) == 1 else f"{first} and {len(seeds) - 1} more"


def _row(x: CitationLink) -> dict[str, object]:
    return {
        "id": x.node.id, "kind": x.node.kind.value, "label": x.node.label,
        "count": x.count, "strength": x.strength,
        "seeds": [{"id": n.id, "label": n.label} for n in x.shared],
    }


@app.command()
@filtered
def prior(ids: Seeds, first: First = 20, as_json: JsonOpt = False, fmt: FormatOpt = None,
          sort: SortOpt = None, filters: Filters = NO_FILTERS) -> None:
    """Prior works: what the seed papers cite most, outside works included.

    Connected Papers' "prior works": the works most of the seeds build on,
    ranked by how many seeds cite each (ties by id).
    An outside work is a reference that names no paper of the graph
    (its id starts with work:).
    With --format bibtex or ris: the corpus papers among them, as a file
    for a reference manager.
    --year-from, --year-to, --venue, --concept, --dataset and --topic keep only the
    papers they admit (an outside work has none of them); --sort lists the
    corpus papers among them in that order instead.
    """
    _show(Relation.PRIOR, ids, first, as_json, fmt, "Prior works", "cited by",
          filters, sort)


@app.command()
@filtered
def derivative(ids: Seeds, first: First = 20, as_json: JsonOpt = False,
               fmt: FormatOpt = None, sort: SortOpt = None,
               filters: Filters = NO_FILTERS) -> None:
    """Derivative works: the corpus papers that cite the seeds most.

    Connected Papers' "derivative works": the papers built on most of the
    seeds, ranked by how many seeds each cites (ties by id).
    With --format bibtex or ris: they are printed as a file for a reference
    manager.
    --year-from, --year-to, --venue, --concept, --dataset and --topic keep only the
    papers they admit; --sort lists them in that order instead (-year:
    newest first).
    """
    _show(Relation.DERIVATIVE, ids, first, as_json, fmt, "Derivative works", "cites",
          filters, sort)
