"""``/export/{format}``: the graph, a neighbourhood, a path or a node set as a file.

The formats are written by :mod:`graph.export`; which nodes go in is
:meth:`graph.service.GraphService.export_parts`, so ``around=SDE`` finds what
``neighborhood(id: "SDE")`` and ``citegraph neighbors SDE`` find.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from api.graphql.errors import error_code
from api.ids import raw_id
from api.services import Services
from graph import export
from graph.errors import CitegraphError, NotFoundError
from graph.model import Edge, GraphNode


def router(services: Services) -> APIRouter:
    """The export route over ``services``."""
    routes = APIRouter()

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
        if fmt not in export.FORMATS:
            return _client_error(
                NotFoundError(f"unknown export format {fmt!r}; use graphml, gexf or cytoscape.json")
            )
        try:
            nodes, edges = await run_in_threadpool(
                _export_parts, services, around, depth, path, ids, limit
            )
        except CitegraphError as exc:
            return _client_error(exc)
        media, filename = export.FORMATS[fmt]
        headers = {"Content-Disposition": f'attachment; filename="{filename}"'}
        # text stored before it was checked (a lone surrogate) cannot be written as UTF-8 or
        # XML: export it with U+FFFD in its place rather than fail, and say so
        body, changed = await run_in_threadpool(export.render, fmt, nodes, edges)
        if changed:
            headers["X-Citegraph-Warning"] = (
                f"{changed} value(s) held invalid Unicode (lone surrogates), exported with "
                "U+FFFD in their place"
            )
        return Response(body, media_type=media, headers=headers)

    return routes


def _client_error(exc: CitegraphError) -> JSONResponse:
    code = error_code(exc) or "BAD_REQUEST"
    status = {"NOT_FOUND": 404, "STORE_UNAVAILABLE": 503, "STORE_REPLACED": 503}.get(code, 400)
    err: dict[str, Any] = {"message": str(exc), "extensions": {"code": code}}
    return JSONResponse({"errors": [err]}, status_code=status)


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

    return services.service().export_parts(
        around=raw_id(around) if around is not None else None,
        depth=depth, path=raw_list(path), ids=raw_list(ids), limit=limit,
    )
