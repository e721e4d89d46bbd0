"""``/export/{format}``: the graph, a neighbourhood, a path or a node set as a file.

The graph formats are written by :mod:`graph.export`; ``bibtex`` and ``ris`` (the papers
of a neighbourhood, a path or a node set, for a reference manager) by
:mod:`graph.bibliography`, and need one of ``around``, ``path`` or ``ids``. Which nodes go
in is
:meth:`graph.service.GraphService.export_parts`, so ``around=SDE`` finds what
``neighborhood(id: "SDE")`` and ``citegraph neighbors SDE`` find.

The whole graph is streamed (:class:`WholeGraph`): read from the store a page at a time
and sent as it is written, so the server holds a page, not the graph or the file. At
most ``max_concurrent_exports`` run at once in a process (more answer 503 with
Retry-After); a client that goes away stops the reading at the next page; the request has
its own time limit (``export_timeout_s``, :mod:`api.middleware`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Iterator
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool
from starlette.types import Receive, Scope, Send

from api.graphql.errors import client_message, error_code
from api.ids import raw_id
from api.services import BUSY_RETRY_AFTER_S, Services
from graph import bibliography, export
from graph.errors import CitegraphError, InvalidArgumentError, NotFoundError
from graph.model import Edge, GraphNode

log = logging.getLogger(__name__)

#: what a refused whole-graph export is told to wait before it asks again (seconds)
RETRY_AFTER_S = 10

T = TypeVar("T")


def router(services: Services) -> APIRouter:
    """The export route over ``services``."""
    routes = APIRouter()
    slots = ExportSlots(services.settings.max_concurrent_exports)

    @routes.get("/export/{fmt}", summary="The graph or a subgraph for Gephi, Cytoscape, yEd…")
    async def export_graph(
        fmt: str,
        around: str | None = Query(None, description="Node id: export its neighborhood"),
        depth: int = Query(2, description="Hops around `around`"),
        path: Annotated[list[str] | None, Query(
            description="Two node ids 'A,B' (or path=A&path=B): their shortest path"
        )] = None,
        ids: Annotated[list[str] | None, Query(
            description="Node ids 'A,B,C' (or ids=A&ids=B&ids=C, each value one id): "
            "exactly these nodes and the edges among them"
        )] = None,
        limit: int | None = Query(None, description="Most nodes for `around`"),
    ) -> Response:
        if fmt not in export.FORMATS and fmt not in bibliography.FORMATS:
            return _client_error(NotFoundError(
                f"unknown export format {fmt!r}; use graphml, gexf, cytoscape.json, bibtex or ris"
            ))
        media, filename = export.FORMATS.get(fmt) or bibliography.FORMATS[fmt]
        headers = {"Content-Disposition": f'attachment; filename="{filename}"'}
        if around is None and path is None and ids is None:
            if fmt in bibliography.FORMATS:
                return _client_error(InvalidArgumentError(
                    "export", f"{fmt} exports the papers of a selection: give ids, around or path"
                ))
            return WholeGraph(services, slots, fmt, media, headers)
        try:
            nodes, edges = await run_in_threadpool(
                _export_parts, services, around, depth, path, ids, limit
            )
        except CitegraphError as exc:
            return _client_error(exc)
        if fmt in bibliography.FORMATS:
            text = await run_in_threadpool(
                bibliography.render, fmt, bibliography.papers_of(nodes)
            )
            # a lone surrogate stored before it was checked is written as "?"
            return Response(text.encode("utf-8", "replace"), media_type=media, headers=headers)
        # text stored before it was checked (a lone surrogate) cannot be written as UTF-8 or
        # XML: export it with U+FFFD in its place rather than fail, and say so
        body, changed = await run_in_threadpool(export.render, fmt, nodes, edges)
        if changed:
            headers["X-Citegraph-Warning"] = _warning(changed)
        return Response(body, media_type=media, headers=headers)

    return routes


def _warning(changed: int) -> str:
    return (f"{changed} value(s) held invalid Unicode (lone surrogates), exported with "
            "U+FFFD in their place")


class ExportSlots:
    """Whole-graph exports running in this process, at most ``size`` (touched only on the
    event loop's thread)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.taken = 0

    def take(self) -> bool:
        if self.taken >= self.size:
            return False
        self.taken += 1
        return True

    def give(self) -> None:
        self.taken -= 1


async def _next_in_thread(items: Iterator[T]) -> T | None:
    """The next of ``items``, read in a worker thread (a page of the store), or None."""
    return await run_in_threadpool(next, items, None)


class WholeGraph(StreamingResponse):
    """The whole graph as a file, streamed as it is read, a page at a time.

    A slot is taken when the response starts (none free: 503 with Retry-After) and given
    back when it ends, however it ends. Before the file, a read of the nodes counts the
    values written with U+FFFD in their place (the ``X-Citegraph-Warning`` header); a store
    error there is a JSON error, as for any request. The response is cancelled when the
    client disconnects (starlette listens for it) or at the export time limit: each page
    is read in a worker thread and the next is only asked for once the last one was sent,
    so the reading stops after the page under way.
    """

    def __init__(
        self, services: Services, slots: ExportSlots, fmt: str, media: str,
        headers: dict[str, str],
    ) -> None:
        self._services = services
        self._slots = slots
        self._fmt = fmt
        self._written = export.Written()
        self._body = self._pieces()
        super().__init__(self._body, media_type=media, headers=headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._slots.take():
            busy = JSONResponse(
                {"errors": [{
                    "message": f"{self._slots.size} whole-graph export(s) are running "
                               "(CITEGRAPH_MAX_CONCURRENT_EXPORTS); try again shortly",
                    "extensions": {"code": "EXPORT_BUSY"},
                }]},
                status_code=503, headers={"Retry-After": str(RETRY_AFTER_S)},
            )
            await busy(scope, receive, send)
            return
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._slots.give()
            await self._body.aclose()  # when cancelled before it started, or while it sent

    async def _pieces(self) -> AsyncGenerator[bytes, None]:
        pieces = export.whole_graph(self._fmt, self._services.store(), self._written)
        try:
            while (piece := await _next_in_thread(pieces)) is not None:
                yield piece
        finally:
            pieces.close()  # its thread has returned: a cancel waits for the page under way

    async def stream_response(self, send: Send) -> None:
        try:
            replaced = await self._count_replaced()
        except CitegraphError as exc:
            error = _client_error(exc)
            await send({"type": "http.response.start", "status": error.status_code,
                        "headers": error.raw_headers})
            await send({"type": "http.response.body", "body": error.body})
            return
        if replaced:
            self.headers["X-Citegraph-Warning"] = _warning(replaced)
        await send({"type": "http.response.start", "status": self.status_code,
                    "headers": self.raw_headers})
        try:
            async for piece in self._body:
                await send({"type": "http.response.body", "body": piece, "more_body": True})
        except CitegraphError as exc:
            # the file is under way: all that can be said is to stop, short of its end
            log.warning("whole-graph %s export cut off after %d nodes and %d edges: %s",
                        self._fmt, self._written.nodes, self._written.edges, exc)
            return
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        log.info("whole-graph %s export: %d nodes, %d edges", self._fmt,
                 self._written.nodes, self._written.edges)

    async def _count_replaced(self) -> int:
        """Node values the file will hold with U+FFFD in their place, page by page."""
        pages = export.node_pages(self._services.store())
        replaced = 0
        try:
            while (page := await _next_in_thread(pages)) is not None:
                replaced += export.replaced_in(self._fmt, page)
        finally:
            pages.close()
        return replaced


def _client_error(exc: CitegraphError) -> JSONResponse:
    code = error_code(exc) or "BAD_REQUEST"
    status = {"NOT_FOUND": 404, "STORE_UNAVAILABLE": 503, "STORE_REPLACED": 503,
              "STORE_ERROR": 500, "TIMEOUT": 504, "BUSY": 503}.get(code, 400)
    err: dict[str, Any] = {"message": client_message(exc), "extensions": {"code": code}}
    headers = {"Retry-After": str(BUSY_RETRY_AFTER_S)} if code == "BUSY" else None
    return JSONResponse({"errors": [err]}, status_code=status, headers=headers)


def _export_parts(
    services: Services,
    around: str | None,
    depth: int,
    path: list[str] | None,
    ids: list[str] | None = None,
    limit: int | None = None,
) -> tuple[list[GraphNode], list[Edge]]:
    """Nodes and edges for an export (global ids accepted wherever a raw id is).

    A parameter given once is a comma list (global ids hold no comma); given several
    times, each value is one id, so an id holding a comma can be named.
    """

    def raw_list(values: list[str] | None) -> list[str] | None:
        if values is None:
            return None
        if len(values) == 1:
            parts = values[0].split(",")
            raw = [raw_id(v.strip()) for v in parts]
            # untouched unless it lists global ids: "a, b" may be one id, spaces and all
            return [",".join(raw)] if raw != [v.strip() for v in parts] else values
        return [raw_id(v.strip()) for v in values]

    # a whole graph, a neighbourhood or a path: an expensive query (Services.expensive_slot)
    return services.serving(
        lambda service: service.export_parts(
            around=raw_id(around) if around is not None else None,
            depth=depth, path=raw_list(path), ids=raw_list(ids), limit=limit,
        ),
        expensive=True,
    )
