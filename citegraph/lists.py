"""``citegraph papers`` and ``citegraph counts``: the papers a filter admits, sorted, and
how many there are by year, venue, concept or topic.

Registered on :data:`citegraph.cli.app` when that module is imported (it imports this one
last), so they share its store wiring, its errors and its options.
"""

from __future__ import annotations

import json
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
    _node_row,
    _print_papers,
    _service,
    _sort,
    app,
    console,
    filtered,
)
from graph.errors import CitegraphError
from graph.model import Concept, Topic
from graph.query.filters import CountBy


@app.command()
@filtered
def papers(
    first: Annotated[int, typer.Option("--first", "-n", min=1, max=1000,
                                       help="How many papers to list.")] = 20,
    offset: Annotated[int, typer.Option(min=0, help="Skip this many first.")] = 0,
    sort: SortOpt = None,
    as_json: JsonOpt = False,
    fmt: FormatOpt = None,
    filters: Filters = NO_FILTERS,
) -> None:
    """The papers the filters admit, by id or --sort, and how many there are.

    e.g. citegraph papers --year-from 2020 --concept GNN --sort -citations
    lists the papers on GNNs since 2020 that the corpus cites most;
    citegraph papers --topic topic:3 --sort -importance the most important of topic 3.
    """
    order = _sort(sort)
    with _service(reads_only=True) as service:
        keep = _keep(service, filters)
        try:
            found, total = service.papers(keep, order, offset, first)
        except CitegraphError as exc:
            raise _fail(exc) from None
    if fmt is not None:
        _print_papers(fmt, found)
        return
    if as_json:
        console.print_json(json.dumps({
            "total": total,
            "papers": [{**_node_row(p), "year": p.year, "venue": p.venue} for p in found],
        }))
        return
    table = Table(title=f"{total} papers" + (f", by {sort}" if sort else ""))
    for col, justify in (("#", "right"), ("paper", "left"), ("year", "right"),
                         ("venue", "left")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for i, p in enumerate(found, offset + 1):
        table.add_row(str(i), f"{p.label}\n[dim]{p.id}[/dim]",
                      str(p.year) if p.year is not None else "", p.venue or "")
    console.print(table)


@app.command()
@filtered
def counts(
    by: Annotated[CountBy, typer.Option("--by", case_sensitive=False,
                                        help="Group the papers by year, venue, concept or "
                                        "top-level topic.")],
    first: Annotated[int, typer.Option("--first", "-n", min=1, max=1000,
                                       help="How many groups to show.")] = 20,
    as_json: JsonOpt = False,
    filters: Filters = NO_FILTERS,
) -> None:
    """How many papers there are by year, venue, concept or topic, under the filters.

    Years in order; venues, concepts and topics most papers first (ties by id).
    A paper without a year or venue is in no group.
    e.g. citegraph counts --by year --concept GNN
    """
    with _service(reads_only=True) as service:
        keep = _keep(service, filters)
        try:
            groups = service.counts(by, keep, first)
            _, total = service.papers(keep, None, 0, 0)
            named = service.store.get_nodes([str(g.key) for g in groups]) if (
                by in (CountBy.CONCEPT, CountBy.TOPIC)) else {}
        except CitegraphError as exc:
            raise _fail(exc) from None
    rows = [{"key": g.key, "count": g.count,
             **({"name": n.label} if isinstance(n := named.get(str(g.key)), Concept | Topic)
                else {})}
            for g in groups]
    if as_json:
        console.print_json(json.dumps({"by": by.value, "total": total, "groups": rows}))
        return
    table = Table(title=f"{total} papers by {by.value}")
    table.add_column(by.value)
    table.add_column("papers", justify="right")
    for row in rows:
        table.add_row(str(row.get("name", row["key"])), str(row["count"]))
    console.print(table)
