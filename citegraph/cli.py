"""The ``citegraph`` command: build, update, query and serve the graph.

This is the composition root: settings are read here once, logging is configured
here, and the store, the pipeline and (for ``serve``) the web app are wired here.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import inspect
import json
import logging
import os
import signal
import sqlite3
import stat
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from graph import bibliography
from graph.errors import CitegraphError, InvalidArgumentError, NotFoundError
from graph.lookup import paper_to_remove
from graph.model import Edge, GraphNode, GraphPath, GraphStats, NodeKind, RelType
from graph.query.filters import PaperFilter, PaperOrder, PaperSort
from graph.schema import hop_reason
from graph.service import Embedding, GraphService, SearchMode
from graph.settings import Settings
from graph.store import open_store

if TYPE_CHECKING:
    from graph.build import BuildReport

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_PARTIAL = 3  # some input records were rejected; the good ones went in
EXIT_USAGE = 2  # as click says a command line is wrong

app = typer.Typer(
    name="citegraph",
    help=(
        "Build a knowledge graph of papers, concepts and datasets from abstracts, "
        "then query it here or serve it over GraphQL.\n\n"
        "Start with:  citegraph build seeds/   then   citegraph stats   or   citegraph serve"
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
)
console = Console()
err = Console(stderr=True, soft_wrap=True)  # one error = one line, however long


class _State:
    settings: Settings
    json: bool = False
    #: the command wrote and closed everything: end the process without tearing down
    exit_at_once: bool = False


state = _State()


@app.callback()
def _main(
    store: Annotated[
        str | None, typer.Option(help="Store to use: 'embedded' (a file, default) or 'neo4j'.")
    ] = None,
    data_dir: Annotated[
        Path | None, typer.Option(help="Folder for the embedded graph file and caches.")
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log details.")] = False,
) -> None:
    """Global options; settings also come from CITEGRAPH_* environment variables."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    # a broken BibTeX entry is reported as one problem line of ours; not twice
    logging.getLogger("bibtexparser").setLevel(logging.INFO if verbose else logging.ERROR)
    # the Neo4j driver logs each retry and dropped connection (~300 characters each)
    # before the command's own one-line error says what failed (probe 8): only with -v
    logging.getLogger("neo4j").setLevel(logging.INFO if verbose else logging.CRITICAL)
    overrides: dict[str, Any] = {}
    if store:
        overrides["store"] = store
    if data_dir:
        overrides["data_dir"] = data_dir
    try:
        state.settings = Settings(**overrides)
    except ValidationError as exc:
        # a CITEGRAPH_* variable out of range or of the wrong type: one line each, not a
        # traceback (CITEGRAPH_SIMILAR_K=0 used to fail deep in a build)
        for problem in exc.errors():
            name = ".".join(str(x) for x in problem["loc"])
            err.print(f"[red]error:[/red] setting {name} (CITEGRAPH_{name.upper()}): "
                      f"{problem['msg']}, got {problem.get('input')!r}")
        raise typer.Exit(EXIT_USAGE) from None


@contextmanager
def _service(*, reads_only: bool = False, embeds: bool = False) -> Iterator[GraphService]:
    """The use cases over the configured store, for one command.

    ``reads_only``: the command needs a graph to be there; with the embedded store and no
    graph file it says so (a mistyped --data-dir would otherwise show an empty graph, and
    leave an empty database behind). ``embeds``: the command will likely embed new texts;
    the model starts loading in a second process now (graph.embed.EncodeProcess), beside
    the rest of the command's start, and is stopped if the write needs no model.
    """
    s = state.settings
    if reads_only and s.store == "embedded" and not (
        s.graph_db.exists() or s.legacy_graph_file.exists()
    ):
        err.print(
            f"[red]error:[/red] no graph in {s.data_dir}: build one with "
            "'citegraph build PATHS' (or pass --data-dir)"
        )
        raise typer.Exit(EXIT_ERROR)
    embedding = Embedding(s)
    if embeds and s.embed_in_process_ahead:
        # before the store opens (its import is ~0.3 s): the model's load is the longest
        # part of a one-shot add, and everything here runs beside it
        embedding.embedder().load_elsewhere()
    try:
        store = open_store(state.settings, one_shot=True)
    except CitegraphError as exc:
        embedding.close()
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(EXIT_ERROR) from None
    except (OSError, sqlite3.Error) as exc:
        embedding.close()
        raise _fail_os(exc) from None
    except BaseException:
        embedding.close()
        raise
    if reads_only and s.store == "embedded" and not _has_commits(store):
        # a graph.db no write ever finished in: a first build killed or failed after the
        # file was made (its zero counts would read as an empty graph)
        embedding.close()
        store.close()
        err.print(
            f"[red]error:[/red] no graph in {s.data_dir}: no build finished there: build "
            "one with 'citegraph build PATHS' (or pass --data-dir)"
        )
        raise typer.Exit(EXIT_ERROR)
    service = GraphService(state.settings, store, embedding)
    try:
        yield service
        for r in service.resolutions:  # "PaRa" is a concept and a paper: say which was used
            err.print(f"[yellow]note:[/yellow] {escape(r.message())}")
    finally:
        embedding.close()
        store.close()


def _has_commits(store: Any) -> bool:
    """Whether any write finished in the store (stores without a history: assumed)."""
    history = getattr(store, "history", None)
    return not callable(history) or bool(history(1))


class RichProgress:
    """Progress bars on stderr for the pipeline's long stages."""

    def __init__(self) -> None:
        self._bar: Progress | None = None
        self._task: Any = None

    def start(self, stage: str, total: int | None) -> None:
        self.finish()
        if not err.is_terminal:
            return  # bars are for a person at a terminal; in a log each left an empty line
        self._bar = Progress(
            TextColumn("[bold]{task.description:<8}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err,
            transient=True,
        )
        self._bar.start()
        self._task = self._bar.add_task(stage, total=total)

    def advance(self, n: int) -> None:
        if self._bar is not None:
            self._bar.advance(self._task, n)

    def finish(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def message(self, text: str) -> None:
        err.print(f"[yellow]{text}[/yellow]")


def _fail(exc: Exception) -> typer.Exit:
    err.print(f"[red]error:[/red] {exc}")
    return typer.Exit(EXIT_ERROR)


def _fail_os(exc: OSError | sqlite3.Error) -> typer.Exit:
    """One line for a file-system error (an unwritable data dir), not a traceback."""
    data_dir = state.settings.data_dir
    filename = getattr(exc, "filename", None)
    reason = (exc.strerror if isinstance(exc, OSError) else None) or str(exc)
    reason = reason[:1].lower() + reason[1:]
    try:
        inside = filename is None or Path(filename).is_relative_to(data_dir)
    except (TypeError, ValueError):
        inside = False
    if inside:  # the caches and the graph file live in the data dir; sqlite names no file
        message = f"cannot write to {data_dir}: {reason}"
        if filename is not None and Path(filename) != data_dir:
            message += f" ({filename})"
    else:
        message = f"{filename}: {reason}"
    err.print(f"[red]error:[/red] {escape(message)}")
    return typer.Exit(EXIT_ERROR)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the process is, as Ctrl-C is: the same unwinding (the
    embedding child stopped, the write transaction rolled back, the lock let go)."""


@contextmanager
def _sigterm_raises() -> Iterator[None]:
    def stop(signum: int, frame: object) -> None:
        raise _Terminated

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread (a caller of main()): the default stays
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupted(
    exc: KeyboardInterrupt,
    service: GraphService | None,
    before: str | None,
    started: float | None = None,
) -> typer.Exit:
    """One line for a write stopped by Ctrl-C or SIGTERM: what the graph holds now
    (``service`` None: stopped before the graph was opened, so nothing was written;
    ``started``: when the write began, to find its own commit in the store's history)."""
    name, code = ("SIGTERM", 143) if isinstance(exc, _Terminated) else ("Ctrl-C", 130)
    if service is None:
        err.print(f"[red]error:[/red] stopped by {name} before the graph was opened: "
                  "nothing was written")
        return typer.Exit(code)
    try:
        after = service.store.version()
        mine = None if started is None else _committed_here(service, started)
    except (CitegraphError, OSError, sqlite3.Error):
        after = mine = None
    if before is not None and after == before:
        what = "nothing was written; the graph is as it was"
    elif before is not None and after is not None and mine is not None:
        # the signal came after the commit (probe 17: 3 of 5 late ones), or another
        # writer's commit came while this one had not committed: say which
        what = ("this write had committed: the graph holds it whole (its report was not "
                "printed)" if mine else
                "nothing of this write was written; another writer changed the graph "
                "meanwhile")
    elif before is not None and after is not None:
        what = ("the graph changed meanwhile (this write had committed whole, or another "
                "writer's did); never a part of a write")
    else:
        what = "the graph holds what it held before, or this whole write, never a part"
    err.print(f"[red]error:[/red] stopped by {name}: {what}")
    return typer.Exit(code)


def _committed_here(service: GraphService, started: float) -> bool | None:
    """Whether this process committed a write since ``started`` (the store's commit
    history names each commit's process); None: the store keeps no such history."""
    history = getattr(service.store, "history", None)
    if not callable(history):
        return None
    pid = os.getpid()
    return any(row["pid"] == pid and row["at"] >= started for row in history(100))


def _run_pipeline(**kwargs: Any) -> BuildReport:
    # one write, then the process ends: the cyclic collector would only walk the loaded
    # graph's millions of objects (~1 s at 3k papers), and so would the interpreter's
    # teardown (~3 s), which main() skips once the write is done and the store closed
    gc.disable()
    state.exit_at_once = True
    opened: GraphService | None = None
    try:
        with _sigterm_raises(), _service(embeds=bool(kwargs.get("paths"))) as service:
            opened = service
            before = service.store.version()
            started = time.time()
            try:
                return service.write(progress=RichProgress(), **kwargs)
            except KeyboardInterrupt as stopped:
                # a second signal while this reports is the default's: the process ends
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                raise _interrupted(stopped, service, before, started) from None
    except KeyboardInterrupt as stopped:
        # while the store opened or closed (typer would end the process without a word)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise _interrupted(stopped, opened, None) from None
    except CitegraphError as exc:
        raise _fail(exc) from None
    except (OSError, sqlite3.Error) as exc:  # the data dir or its caches cannot be written
        raise _fail_os(exc) from None


def _print_report(report: BuildReport, as_json: bool) -> None:
    if as_json:
        console.print_json(json.dumps(report.as_dict()))
    else:
        for p in report.problems:
            err.print(f"[yellow]{'kept' if p.kept else 'skipped'}[/yellow] {p}")
        rejected = sum(not p.kept for p in report.problems)
        dropped = len(report.problems) - rejected
        console.print(
            f"Read {report.papers_read} papers"
            + (f", merged {report.duplicates} duplicates" if report.duplicates else "")
            + (f", [yellow]rejected {rejected} records[/yellow]" if rejected else "")
            + (f", [yellow]dropped {dropped} fields[/yellow]" if dropped else "")
            + f"; embedded {report.embedded} new texts"
            + (f" ({report.long_texts} longer than the model window)" if report.long_texts else "")
            + "."
        )
        refs = (report.references_resolved, report.references_outside,
                report.references_unparseable)
        if any(refs):
            console.print(
                f"References: {refs[0]} resolved (cite a paper of the graph), {refs[1]} "
                f"outside the corpus (cited outside works), {refs[2]} unparseable (dropped)."
            )
        if report.added or report.removed or report.updated:
            console.print(
                f"Added {len(report.added)} papers, updated {report.updated}, "
                f"removed {len(report.removed)}."
            )
        if report.completed_cut_off:
            console.print(
                "Completed an earlier write that was cut off: wrote "
                f"{report.nodes_written} nodes and {report.edges_written} edges; the graph "
                "is whole again."
            )
        if report.stats is not None:
            _print_stats(report.stats)
        # in the order of a write's main line, total last; each stage is the sum of its
        # parts (a one-shot write makes SIMILAR_TO's lists, part of link, before extract,
        # and interleaves link and write)
        order = {k: i for i, k in enumerate(
            ("read", "embed", "ahead", "load", "extract", "link", "write", "total")
        )}
        stages = ", ".join(
            f"{k} {v:.1f}s"
            for k, v in sorted(report.stage_seconds.items(), key=lambda kv: order.get(kv[0], 6))
        )
        console.print(f"[dim]Time: {stages}[/dim]")
        if state.settings.store == "embedded":
            console.print(f"[dim]Graph database: {state.settings.graph_db}[/dim]")


#: what stats say of a graph that holds part of a write (GraphStats.incomplete)
INCOMPLETE_SAID = (
    "the graph holds part of a write: one committing batch by batch now, or one cut off "
    "(killed, the server gone). Queries answer from what is there; once no write runs, "
    "run the same build or add again to complete it."
)


def _print_stats(s: GraphStats) -> None:
    table = Table(title="citegraph", show_header=True)
    table.add_column("kind")
    table.add_column("label / type")
    table.add_column("count", justify="right")
    for label, n in s.nodes.items():
        table.add_row("node", label, str(n))
    for rel, n in s.edges.items():
        table.add_row("edge", rel, str(n))
    console.print(table)
    if s.incomplete:
        err.print(f"[yellow]warning:[/yellow] {INCOMPLETE_SAID}")


def _exit_for(report: BuildReport) -> None:
    if report.partial:
        raise typer.Exit(EXIT_PARTIAL)


JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


class FileFormat(StrEnum):
    """A reference manager's format for a list of papers (graph.bibliography)."""

    BIBTEX = "bibtex"
    RIS = "ris"


FormatOpt = Annotated[FileFormat | None, typer.Option(
    "--format", case_sensitive=False,
    help="Print the papers of the result as BibTeX or RIS (for Zotero, JabRef, EndNote) "
         "instead of a table; redirect it to a file: > related.bib",
)]


YearFromOpt = Annotated[int | None, typer.Option(
    "--year-from", help="Only papers of this year or later (a paper without a year is left out).")]
YearToOpt = Annotated[int | None, typer.Option(
    "--year-to", help="Only papers of this year or earlier.")]
VenueOpt = Annotated[list[str] | None, typer.Option(
    "--venue", help="Only papers of this venue (exactly as stored, e.g. 'ICLR 2021'); "
    "repeat it for any of several.")]
ConceptOpt = Annotated[list[str] | None, typer.Option(
    "--concept", help="Only papers that mention this concept (id, name or alias); repeat it "
    "for any of several.")]
DatasetOpt = Annotated[list[str] | None, typer.Option(
    "--dataset", help="Only papers that use or introduce this dataset (id, name or alias); "
    "repeat it for any of several.")]
TopicOpt = Annotated[list[str] | None, typer.Option(
    "--topic", help="Only papers in this topic or subtopic (an id such as topic:3 or "
    "topic:3.1, or its label; see citegraph topics); repeat it for any of several.")]
SortOpt = Annotated[str | None, typer.Option(
    "--sort", help="Order by year, title, citations (corpus papers citing it) or importance "
    "(PageRank at the last topic computation); a leading '-' reverses it: -year is newest "
    "first. Papers without the value last, ties by id.")]


@dataclass(frozen=True)
class Filters:
    """The filter options of a list command, as given (see :func:`filtered`)."""

    year_from: int | None = None
    year_to: int | None = None
    venue: list[str] | None = None
    concept: list[str] | None = None
    dataset: list[str] | None = None
    topic: list[str] | None = None


#: the options :func:`filtered` adds, by parameter name (the fields of Filters)
FILTER_OPTIONS: dict[str, Any] = {
    "year_from": YearFromOpt, "year_to": YearToOpt, "venue": VenueOpt, "concept": ConceptOpt,
    "dataset": DatasetOpt, "topic": TopicOpt,
}

NO_FILTERS = Filters()
_Command = TypeVar("_Command", bound=Callable[..., None])


def filtered(command: _Command) -> _Command:
    """A list command that takes --year-from, --year-to, --venue, --concept, --dataset and
    --topic as one ``filters: Filters`` parameter: the options are declared once, here."""
    sig = inspect.signature(command, eval_str=True)
    own = [p for p in sig.parameters.values() if p.name != "filters"]
    added = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None,
                               annotation=option) for name, option in FILTER_OPTIONS.items()]

    @functools.wraps(command)
    def with_filters(*args: Any, **kwargs: Any) -> None:
        given = Filters(**{name: kwargs.pop(name, None) for name in FILTER_OPTIONS})
        command(*args, filters=given, **kwargs)

    # what typer reads: the command's own parameters, then the filter options
    with_filters.__signature__ = sig.replace(parameters=[*own, *added])  # type: ignore[attr-defined]
    with_filters.__annotations__ = {p.name: p.annotation for p in [*own, *added]}
    return cast(_Command, with_filters)


def _keep(service: GraphService, given: Filters) -> PaperFilter:
    """The filter the options say (concepts and datasets looked up by name; a usage error
    when it is empty or names nothing)."""
    try:
        return service.paper_filter(
            year_from=given.year_from, year_to=given.year_to, venues=given.venue or (),
            concepts=given.concept or (), datasets=given.dataset or (),
            topics=given.topic or (), argument="--",
        )
    except CitegraphError as exc:
        raise _fail(exc) from None


def _sort(value: str | None) -> PaperSort | None:
    """--sort year | title | citations | importance, each reversed by a leading -."""
    if value is None:
        return None
    try:
        return PaperSort(PaperOrder(value.lstrip("-").lower()), value.startswith("-"))
    except ValueError:
        raise _fail(ValueError("--sort: choose from year, title, citations, importance (a "
                               "leading - reverses it)")) from None


def _print_papers(fmt: FileFormat, nodes: Sequence[GraphNode]) -> None:
    """The papers among ``nodes`` as a BibTeX or RIS file, on stdout as it is."""
    sys.stdout.write(bibliography.render(fmt.value, bibliography.papers_of(nodes)))
    sys.stdout.flush()


@app.command()
def build(
    paths: Annotated[
        list[Path],
        # a build replaces the graph with what it reads: a mistyped path would delete the
        # papers it held (add only skips it), so it is a usage error before anything runs
        typer.Argument(
            help="Files or folders of abstracts (.txt, .jsonl, .json, .csljson (Zotero's CSL "
            "JSON), .csv, .tsv, .bib, .ris).", exists=True
        ),
    ],
    as_json: JsonOpt = False,
) -> None:
    """Build the graph from PATHS, replacing what the store held.

    Unchanged papers are not embedded again (embeddings are cached), and only what
    changed is written. Exit code 3 means some records were rejected (listed) while
    every good one went in.
    """
    report = _run_pipeline(paths=paths, replace=True)
    _print_report(report, as_json)
    _exit_for(report)


@app.command()
def add(
    paths: Annotated[list[Path], typer.Argument(
        help="Files or folders of abstracts to add (.txt, .jsonl, .json, .csljson, .csv, .tsv, "
             ".bib, .ris); a paper with the DOI or text of another read is merged into it.")],
    as_json: JsonOpt = False,
) -> None:
    """Add papers to the graph; only new papers are embedded and only affected edges change."""
    report = _run_pipeline(paths=paths)
    _print_report(report, as_json)
    _exit_for(report)


@app.command()
def remove(
    ids: Annotated[list[str], typer.Argument(
        help="Paper ids to remove (or a title, label or short name that only one paper "
             "has; one that names several is refused with their ids).")],
    as_json: JsonOpt = False,
) -> None:
    """Remove papers with their edges, and concepts/datasets no other paper mentions."""
    with _service(reads_only=True) as service:
        try:
            resolved = [paper_to_remove(service.store, i).id for i in ids]
        except (NotFoundError, InvalidArgumentError) as exc:
            raise _fail(exc) from None
    report = _run_pipeline(remove=resolved)
    _print_report(report, as_json)


@app.command()
def stats(as_json: JsonOpt = False) -> None:
    """Node counts per label and edge counts per relationship type."""
    with _service(reads_only=True) as service:
        s = service.store.stats()
    if as_json:
        console.print_json(json.dumps(
            {"nodes": dict(s.nodes), "edges": dict(s.edges), "incomplete": s.incomplete}
        ))
        if s.incomplete:
            err.print(f"warning: {INCOMPLETE_SAID}")
    else:
        _print_stats(s)


def _node_row(node: GraphNode) -> dict[str, Any]:
    return {"id": node.id, "kind": node.kind.value, "label": node.label}


def _edge_row(edge: Edge) -> dict[str, Any]:
    row: dict[str, Any] = {
        "source": edge.source,
        "target": edge.target,
        "type": edge.type.value,
        "weight": edge.weight,
    }
    if "terms" in edge.attrs:
        row["terms"] = list(edge.attrs["terms"])
    return row


def _parse_types(values: Sequence[str] | None) -> list[RelType] | None:
    if not values:
        return None
    try:
        return [RelType(v.upper()) for v in values]
    except ValueError:
        raise _fail(
            ValueError(
                f"unknown relationship type; choose from {', '.join(t.value for t in RelType)}"
            )
        ) from None


@app.command()
@filtered
def related(
    paper: Annotated[str | None, typer.Argument(help="Paper id or label.")] = None,
    text: Annotated[
        str | None, typer.Option("--text", help="Free text instead of a paper.")
    ] = None,
    first: Annotated[int, typer.Option("--first", "-n", min=1, max=100)] = 10,
    as_json: JsonOpt = False,
    fmt: FormatOpt = None,
    filters: Filters = NO_FILTERS,
) -> None:
    """Papers related to a paper (or a text), each with the reasons why.

    With --format bibtex or ris, the related papers as a file for a reference manager.
    --year-from, --year-to, --venue, --concept, --dataset and --topic keep only the papers
    they admit.
    """
    if not paper and not text:
        raise _fail(ValueError("give a paper id/label or --text"))
    with _service(reads_only=True) as service:
        keep = _keep(service, filters)
        try:
            seed, results = service.related(paper=paper, text=text, first=first, keep=keep)
        except CitegraphError as exc:
            raise _fail(exc) from None
    if fmt is not None:
        _print_papers(fmt, [r.paper for r in results])
        return
    if as_json:
        console.print_json(
            json.dumps(
                [
                    {
                        "id": r.paper.id,
                        "label": r.paper.label,
                        "score": r.score,
                        "similarity": r.similarity,
                        "reasons": [
                            {"kind": x.kind, "text": x.text, "weight": x.weight} for x in r.reasons
                        ],
                    }
                    for r in results
                ]
            )
        )
        return
    about = f"“{seed.label}”" if seed is not None else "your text"
    table = Table(title=f"Related to {about}", show_lines=False)
    table.add_column("#", justify="right")
    table.add_column("paper")
    table.add_column("score", justify="right")
    table.add_column("why")
    for i, r in enumerate(results, 1):
        why = "; ".join(x.text for x in r.reasons[:4])
        table.add_row(str(i), f"{r.paper.label}\n[dim]{r.paper.id}[/dim]", f"{r.score:.3f}", why)
    console.print(table)


@app.command()
@filtered
def neighbors(
    node: Annotated[
        str, typer.Argument(help="Node id, label or alias (papers, concepts, datasets).")
    ],
    depth: Annotated[int, typer.Option(min=1, max=3)] = 1,
    types: Annotated[
        list[str] | None, typer.Option("--type", "-t", help="Relationship type(s) to follow.")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=2000)] = 50,
    as_json: JsonOpt = False,
    fmt: FormatOpt = None,
    filters: Filters = NO_FILTERS,
) -> None:
    """Nodes within DEPTH hops of a node, with the edges among them.

    With --format bibtex or ris, the papers of the neighbourhood (the start first) as a
    file for a reference manager. The filters (--year-from, --year-to, --venue, --concept,
    --dataset, --topic) drop the papers (and outside works) they refuse; concepts and
    datasets stay.
    """
    with _service(reads_only=True) as service:
        keep = _keep(service, filters)
        try:
            start, sub = service.neighborhood(
                node, depth=depth, rel_types=_parse_types(types), limit=limit, where=keep
            )
        except CitegraphError as exc:
            raise _fail(exc) from None
    if fmt is not None:
        _print_papers(fmt, sub.nodes)
        return
    if as_json:
        console.print_json(
            json.dumps(
                {
                    "nodes": [_node_row(n) for n in sub.nodes],
                    "edges": [_edge_row(e) for e in sub.edges],
                    "truncated": sub.truncated,
                }
            )
        )
        return
    labels = {n.id: n.label for n in sub.nodes}
    table = Table(title=f"Around {start.label} ({len(sub.nodes)} nodes, {len(sub.edges)} edges)")
    for col in ("node", "kind", "joined by"):
        table.add_column(col)
    for n in sub.nodes[1:]:
        links = [
            e
            for e in sub.edges
            if start.id in (e.source, e.target) and n.id in (e.source, e.target)
        ]
        why = "; ".join(hop_reason(e, labels) for e in links) or "(further out)"
        table.add_row(f"{n.label}\n[dim]{n.id}[/dim]", n.kind.value, why)
    console.print(table)
    if sub.truncated:
        console.print(f"[yellow]Cut at {limit} nodes; raise --limit to see more.[/yellow]")


def _print_path(path: GraphPath) -> None:
    labels = {n.id: n.label for n in path.nodes}
    console.print(f"[bold]{path.nodes[0].label}[/bold] [dim]({path.nodes[0].id})[/dim]")
    for n, e in zip(path.nodes[1:], path.edges, strict=True):
        console.print(f"  └─ {hop_reason(e, labels)} ─▶ [bold]{n.label}[/bold] [dim]({n.id})[/dim]")


@app.command()
def path(
    source: Annotated[str, typer.Argument(help="From: node id, label or alias.")],
    target: Annotated[str, typer.Argument(help="To: node id, label or alias.")],
    k: Annotated[int, typer.Option("-k", min=1, max=10, help="How many paths.")] = 1,
    max_hops: Annotated[int, typer.Option(min=1, max=8)] = 4,
    types: Annotated[
        list[str] | None, typer.Option("--type", "-t", help="Relationship type(s) to follow.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """The shortest path(s) between two nodes, each hop with its reason."""
    with _service(reads_only=True) as service:
        try:
            paths = service.paths(source, target, k, _parse_types(types), max_hops)
        except CitegraphError as exc:
            raise _fail(exc) from None
    if as_json:
        console.print_json(
            json.dumps(
                [
                    {
                        "nodes": [_node_row(n) for n in p.nodes],
                        "edges": [_edge_row(e) for e in p.edges],
                    }
                    for p in paths
                ]
            )
        )
        return
    if not paths:
        console.print(f"No path within {max_hops} hops.")
        raise typer.Exit(EXIT_ERROR)
    for i, p in enumerate(paths, 1):
        if len(paths) > 1:
            console.print(f"[dim]path {i} ({p.hops} hops)[/dim]")
        _print_path(p)


@app.command()
@filtered
def search(
    query: Annotated[str, typer.Argument(help="Words to look for.")],
    kind: Annotated[list[str] | None, typer.Option(
        help="Paper, Concept, Dataset or Work (an outside work: cited, not in the corpus).")
    ] = None,
    first: Annotated[int, typer.Option("--first", "-n", min=1, max=100)] = 10,
    mode: Annotated[
        SearchMode,
        typer.Option(
            case_sensitive=False,
            help="keyword (names, titles, abstracts), semantic (papers by meaning; loads "
            "the model) or hybrid (both, fused).",
        ),
    ] = SearchMode.KEYWORD,
    as_json: JsonOpt = False,
    fmt: FormatOpt = None,
    filters: Filters = NO_FILTERS,
) -> None:
    """Search papers, concepts and datasets by keyword, meaning, or both.

    With --format bibtex or ris, the papers found as a file for a reference manager
    (concepts and datasets left out). --year-from, --year-to, --venue, --concept,
    --dataset, --topic find papers only: the best of those they admit.
    """
    try:
        kinds = [NodeKind(k.capitalize()) for k in kind] if kind else None
    except ValueError:
        raise _fail(ValueError("--kind: choose from paper, concept, dataset, work")) from None
    with _service(reads_only=True) as service:
        keep = _keep(service, filters)
        try:
            hits = service.search(query, mode, kinds, first, keep)
        except CitegraphError as exc:
            raise _fail(exc) from None
    if fmt is not None:
        _print_papers(fmt, [h.node for h in hits])
        return
    if as_json:
        console.print_json(json.dumps([{**_node_row(h.node), "score": h.score} for h in hits]))
        return
    table = Table(title=f"Search: {query}")
    for col in ("node", "kind", "score"):
        table.add_column(col)
    for h in hits:
        table.add_row(
            f"{h.node.label}\n[dim]{h.node.id}[/dim]", h.node.kind.value, f"{h.score:.2f}"
        )
    console.print(table)


@app.command()
def export(
    fmt: Annotated[
        str,
        typer.Argument(
            metavar="FORMAT",
            help="graphml (Gephi, yEd, Cytoscape), gexf (Gephi) or cytoscape.json "
            "(Cytoscape, Cytoscape.js).",
        ),
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o",
            help="File to write; '-' writes to stdout. Default: citegraph.FORMAT here.",
        ),
    ] = None,
    around: Annotated[
        str | None, typer.Option(help="Only this node's neighborhood (id, label or alias).")
    ] = None,
    depth: Annotated[int, typer.Option(min=1, max=3, help="Hops around --around.")] = 2,
    path: Annotated[
        list[str] | None,
        typer.Option("--path", help="Only the shortest path between two nodes: --path A --path B."),
    ] = None,
    ids: Annotated[
        list[str] | None,
        typer.Option("--id", help="Only these nodes and the edges among them (repeat it)."),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option(min=1, help="Most nodes for --around (up to "
                     "CITEGRAPH_MAX_NEIGHBORHOOD_NODES, 500 by default)."),
    ] = None,
) -> None:
    """Write the graph (or a neighborhood, a path, a node set) for a graph tool.

    The same files as the server's /export/FORMAT: every node has kind and label, every
    edge type and weight (docs/api.md).
    """
    from graph import export as formats

    if fmt not in formats.FORMATS:
        raise _fail(InvalidArgumentError(
            "FORMAT", f"unknown export format {fmt!r}; use {', '.join(formats.FORMATS)}"
        ))
    if path is not None and len(path) != 2:
        raise _fail(InvalidArgumentError("--path", "give two nodes: --path A --path B"))
    target = output if output is not None else Path(formats.FORMATS[fmt][1])
    if str(target) != "-":
        if target.name in ("", "..") or target.is_dir():
            raise _fail(InvalidArgumentError(
                "--output", f"{str(target)!r} is a folder; give a file name"
            ))
        if not target.parent.is_dir():
            raise _fail(InvalidArgumentError("--output", f"no folder {target.parent}"))
    written = formats.Written()
    with _service(reads_only=True) as service:
        try:
            if around is None and path is None and ids is None:
                # read and written a page at a time: memory holds a page, not the graph
                pieces = formats.whole_graph(fmt, service.store, written)
            else:
                nodes, edges = service.export_parts(
                    around=around, depth=depth, path=path, ids=ids, limit=limit
                )
                pieces = formats.write(fmt, [nodes], [edges], written)
            _write_export(pieces, target)
        except CitegraphError as exc:
            raise _fail(exc) from None
    if written.replaced:
        err.print(f"[yellow]note:[/yellow] {written.replaced} value(s) held invalid Unicode "
                  "(lone surrogates) or characters XML cannot hold, written with U+FFFD in "
                  "their place")
    err.print(f"Wrote {written.nodes} nodes and {written.edges} edges to "
              f"{escape(str(target))} ({fmt}).")


def _write_export(pieces: Iterator[bytes], target: Path) -> None:
    """``pieces`` into ``target`` ('-': stdout) as they come; a file whole or not at all."""
    if str(target) == "-":
        for piece in pieces:
            sys.stdout.buffer.write(piece)
        sys.stdout.buffer.flush()
        return
    try:
        mode = target.stat().st_mode  # through a link: what the link points at
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        # a device, a FIFO, /dev/stdout: written into, never renamed over (that would
        # put a plain file in place of /dev/full or the pipe a reader waits on)
        try:
            with target.open("wb") as f:
                for piece in pieces:
                    f.write(piece)
        except OSError as exc:
            err.print(f"[red]error:[/red] cannot write {escape(str(target))}: "
                      f"{escape(exc.strerror or str(exc))}")
            raise typer.Exit(EXIT_ERROR) from None
        return
    # a link to a file: the file it points at is replaced, the link kept
    dest = Path(os.path.realpath(target)) if target.is_symlink() else target
    # a whole file or none: an export cut off (disk full, a store error, ^C) leaves the
    # old file
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as f:
            for piece in pieces:
                f.write(piece)
        tmp.replace(dest)
    except BaseException as exc:
        with contextlib.suppress(OSError):  # a read-only filesystem refuses this too
            tmp.unlink(missing_ok=True)
        if not isinstance(exc, OSError):
            raise
        err.print(f"[red]error:[/red] cannot write {escape(str(target))}: "
                  f"{escape(exc.strerror or str(exc))}; nothing was written")
        raise typer.Exit(EXIT_ERROR) from None


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Address to bind (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default 8000).")] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1, max=32,
            help="Server processes (default 1, or CITEGRAPH_WORKERS). Each holds the model "
            "and the graph (~0.5 GB with the seeds); with the embedded store they share one "
            "database and see each other's writes.",
        ),
    ] = None,
) -> None:
    """Serve the GraphQL API, the explorer page and exports.

    With no graph yet (embedded store), builds one from the seeds folder first.
    """
    import uvicorn

    from api.app import create_app

    s = state.settings
    if s.store == "embedded" and not (s.graph_db.exists() or s.legacy_graph_file.exists()):
        if not s.seeds_dir.exists():
            raise _fail(
                NotFoundError(f"no graph at {s.graph_db} and no seeds folder {s.seeds_dir}")
            )
        console.print(f"No graph yet: building one from {s.seeds_dir}/ first.")
        report = _run_pipeline(paths=[s.seeds_dir], replace=True)
        _print_report(report, False)
    from citegraph.workers import serve_workers, worker_sockets

    bind_host = host or s.host
    n_workers = workers or s.workers
    try:
        # bound before the app is built: a port in use fails at once, with one worker too
        sockets = worker_sockets(bind_host, s.port if port is None else port, n_workers)
    except CitegraphError as exc:
        raise _fail(exc) from None
    bind_port = sockets[0].getsockname()[1]
    console.print(
        f"Serving on http://{bind_host}:{bind_port}/  "
        f"(GraphQL: /graphql, explorer: /, health: /healthz). Ctrl-C stops."
    )
    if n_workers > 1:
        # each worker builds its app from the environment: hand it the resolved settings
        os.environ["CITEGRAPH_STORE"] = s.store
        os.environ["CITEGRAPH_DATA_DIR"] = str(s.data_dir.resolve())
        console.print(f"[dim]{n_workers} worker processes[/dim]")
        serve_workers(n_workers, sockets)
        return
    try:
        application = create_app(s)
    except CitegraphError as exc:
        for sock in sockets:
            sock.close()
        raise _fail(exc) from None
    config = uvicorn.Config(application, host=bind_host, port=bind_port, log_level="warning")
    uvicorn.Server(config).run(sockets=sockets)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    args = list(argv) if argv is not None else sys.argv[1:]
    for i, arg in enumerate(args, start=1):
        # bytes that are not UTF-8 reach Python as lone surrogates: no store or model can
        # take them, so say which argument, as the API does, instead of a traceback
        bad = next((c for c in arg if "\ud800" <= c <= "\udfff"), None)
        if bad is not None:
            err.print(
                f"[red]error:[/red] argument {i} is not valid UTF-8 (byte "
                f"0x{ord(bad) - 0xDC00:02X}); give the text in UTF-8"
                if "\udc80" <= bad <= "\udcff" else
                f"[red]error:[/red] argument {i} holds a lone surrogate U+{ord(bad):04X}"
            )
            sys.exit(EXIT_USAGE)
    sys.unraisablehook = _quiet_ctrl_c
    try:
        app(args=list(argv) if argv is not None else None)
    except CitegraphError as exc:  # pragma: no cover - commands catch their own
        err.print(f"[red]error:[/red] {exc}")
        sys.exit(EXIT_ERROR)
    except SystemExit as done:
        if argv is None and state.exit_at_once:
            _exit_now(done.code)
        raise


def _quiet_ctrl_c(unraisable: Any) -> None:
    """Say nothing of a Ctrl-C that landed in a callback Python cannot raise from.

    Under load, a Ctrl-C during an import landed in the import lock's weakref callback,
    and Python printed "Exception ignored in ... Traceback ... KeyboardInterrupt" above
    the command's own "stopped by Ctrl-C: nothing was written" (which still came: the
    command sees the interrupt too). Anything else goes to Python's own hook."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        return
    sys.__unraisablehook__(unraisable)


def _exit_now(code: int | str | None) -> None:
    """End a write command's process at once: the store and caches are closed, and
    freeing the loaded graph object by object only delays the shell (~3 s at 3k papers)."""
    if isinstance(code, str):
        err.print(code)
        code = EXIT_ERROR
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code or 0)


# the citation commands (prior, derivative), the list commands (papers, counts) and the
# topic commands (topics, topic) live in their own modules, on this app
import citegraph.cites  # noqa: E402
import citegraph.lists  # noqa: E402
import citegraph.topics  # noqa: E402, F401
