"""The FastAPI app: GraphQL at /graphql (GraphiQL in a browser), exports, health, explorer.

:func:`create_app` is the API's composition root: it builds the services from
the settings, opens the store in the lifespan (a store that is down does not
stop the app; /readyz says so and requests say "store unavailable" until it is
back), and wires the limits.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from cross_web import HTTPException  # strawberry's HTTP error (cross-web is its dependency)
from fastapi import FastAPI, Query, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from strawberry.fastapi import GraphQLRouter
from strawberry.http import GraphQLHTTPResponse
from strawberry.types import ExecutionResult

from api import export
from api.context import API_KEY_HEADER, Context
from api.errors import annotate
from api.ids import raw_id
from api.schema import build_schema
from api.services import Services, StoreOpener
from graph.errors import CitegraphError, NotFoundError
from graph.model import GraphNode
from graph.settings import Settings
from graph.store import open_store

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).parent / "static"


class CitegraphRouter(GraphQLRouter[Context, None]):
    """Strawberry's router: ``extensions.code`` on each error, and JSON (not plain-text)
    answers to requests it cannot read."""

    def __init__(self, *args: Any, ide_html: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._ide_html = ide_html

    async def render_graphql_ide(self, request: Request) -> HTMLResponse:
        return HTMLResponse(self._ide_html)

    async def run(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().run(*args, **kwargs)
        except HTTPException as exc:  # strawberry answers these in plain text
            code = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}.get(
                exc.status_code, "BAD_REQUEST"
            )
            return Response(
                _error_body(exc.reason, code), status_code=exc.status_code,
                media_type="application/json",
            )

    def decode_json(self, data: str | bytes) -> object:
        try:
            value = json.loads(data)
        except json.JSONDecodeError:
            raise  # strawberry's own 400
        except UnicodeDecodeError as exc:
            bad = exc.object[exc.start : exc.start + 1]
            raise HTTPException(
                400, f"the request body is not UTF-8 (byte {exc.start} is {bad!r})"
            ) from exc
        except ValueError as exc:  # Python refuses integers of more than 4,300 digits
            raise HTTPException(
                400, "the request body's JSON holds a number with too many digits to read"
            ) from exc
        except RecursionError as exc:
            raise HTTPException(400, "the request body is nested too deeply to parse") from exc
        if not isinstance(value, dict | list):
            kind = {str: "a string", int: "a number", float: "a number", bool: "a boolean"}.get(
                type(value), "null"
            )
            raise HTTPException(
                400, 'the request must be a JSON object like {"query": "...", "variables": '
                f"{{...}}}}, not {kind}",
            )
        return value

    async def process_result(
        self, request: Request, result: ExecutionResult
    ) -> GraphQLHTTPResponse:
        data: GraphQLHTTPResponse = {"data": result.data}
        if result.errors:
            data["errors"] = [annotate(dict(e.formatted), e) for e in result.errors]
        if result.extensions:
            data["extensions"] = result.extensions
        return data


CDN = re.compile(r"https://unpkg\.com/([^\"'\s]+)")
GRAPHIQL_DIR = STATIC_DIR / "graphiql"


def local_graphiql_html() -> tuple[str, list[str]]:
    """Strawberry's GraphiQL page with its CDN assets served from /static/graphiql/.

    Also returns the assets the page names that are not bundled (empty when all are:
    see api/static/graphiql/SOURCES.md).
    """
    from strawberry.http.ides import get_graphql_ide_html

    page = get_graphql_ide_html("graphiql")
    missing = [m for m in CDN.findall(page) if not (GRAPHIQL_DIR / m).is_file()]
    return CDN.sub(r"/static/graphiql/\1", page), missing


def _ide_page() -> str:
    page, missing = local_graphiql_html()
    if missing:
        # never fall back to the CDN: third-party code the operator did not choose
        log.error("GraphiQL assets not bundled in %s: %s", GRAPHIQL_DIR, ", ".join(missing))
        return (
            "<!doctype html><title>GraphiQL unavailable</title><p>This server's GraphiQL "
            "assets do not match its strawberry version (see the server log and "
            "api/static/graphiql/SOURCES.md). POST GraphQL queries to /graphql.</p>"
        )
    return page


def _error_body(message: str, code: str) -> bytes:
    return json.dumps({"errors": [{"message": message, "extensions": {"code": code}}]}).encode()


class LimitsMiddleware:
    """Request body size (413) and per-request time (504), as plain ASGI."""

    def __init__(self, app: ASGIApp, max_body_bytes: int, timeout_s: float) -> None:
        self.app = app
        self.max_body = max_body_bytes
        self.timeout = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body:
            await self._reply(send, 413, self._too_large())
            return
        seen = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    raise _BodyTooLargeError
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await asyncio.wait_for(self.app(scope, limited_receive, tracking_send), self.timeout)
        except _BodyTooLargeError:
            if not started:
                await self._reply(send, 413, self._too_large())
        except TimeoutError:
            log.warning("request to %s ran past %.1fs", scope.get("path"), self.timeout)
            if not started:
                await self._reply(send, 504, _error_body(
                    f"the request took longer than {self.timeout:g} s "
                    "(CITEGRAPH_REQUEST_TIMEOUT_S); narrow it (depth, limit, first, maxHops)",
                    "TIMEOUT",
                ))
        except RecursionError:
            # e.g. a JSON body nested tens of thousands deep (small enough to pass the size
            # limit): json.loads gives up inside strawberry; that is the client's error
            log.warning("request to %s nested too deeply to parse", scope.get("path"))
            if not started:
                await self._reply(send, 400, _error_body(
                    "the request body is nested too deeply to parse", "BAD_REQUEST"
                ))

    def _too_large(self) -> bytes:
        return _error_body(
            f"request body larger than {self.max_body} bytes (CITEGRAPH_MAX_BODY_BYTES)",
            "PAYLOAD_TOO_LARGE",
        )

    @staticmethod
    async def _reply(send: Send, status: int, body: bytes) -> None:
        await send({
            "type": "http.response.start", "status": status,
            "headers": [(b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode())],
        })
        await send({"type": "http.response.body", "body": body})


class _BodyTooLargeError(Exception):
    pass


def create_app(settings: Settings, *, opener: StoreOpener = open_store) -> FastAPI:
    """The app for ``settings``; ``opener`` builds the store (tests pass their own)."""
    services = Services(settings, opener)
    schema = build_schema(settings)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await run_in_threadpool(services.open)
        # the model takes seconds to load: start now, in the background, not on a request
        threading.Thread(target=services.warm_up, name="citegraph-warm-up", daemon=True).start()
        try:
            yield
        finally:
            await run_in_threadpool(services.close)

    app = FastAPI(
        title="citegraph",
        description="A knowledge graph of papers, concepts and datasets. GraphQL at /graphql.",
        lifespan=lifespan,
    )
    app.state.services = services
    app.state.schema = schema

    async def get_context(request: Request) -> Context:
        return Context(services, api_key=request.headers.get(API_KEY_HEADER))

    router = CitegraphRouter(
        schema, context_getter=get_context, graphql_ide="graphiql", ide_html=_ide_page()
    )
    app.include_router(router, prefix="/graphql")

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", include_in_schema=False)
    async def readyz() -> JSONResponse:
        ok, detail = await run_in_threadpool(services.ready)
        body = {"status": "ready" if ok else "unavailable", "store": detail}
        return JSONResponse(body, status_code=200 if ok else 503)

    @app.get("/export/{fmt}", summary="The graph or a subgraph for Gephi, Cytoscape, yEd…")
    async def export_graph(
        fmt: str,
        around: str | None = Query(None, description="Node id: export its neighborhood"),
        depth: int = Query(2, description="Hops around `around`"),
        path: str | None = Query(None, description="Two node ids 'A,B': their shortest path"),
        ids: str | None = Query(
            None, description="Node ids 'A,B,C': exactly these nodes and the edges among them"
        ),
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
        writer, media, filename = export.FORMATS[fmt]
        headers = {"Content-Disposition": f'attachment; filename="{filename}"'}
        # text stored before it was checked (a lone surrogate) cannot be written as UTF-8 or
        # XML: export it with U+FFFD in its place rather than fail, and say so
        g, changed = await run_in_threadpool(_valid_unicode, export.to_networkx(nodes, edges))
        body = await run_in_threadpool(writer, g)
        if changed:
            headers["X-Citegraph-Warning"] = (
                f"{changed} value(s) held invalid Unicode (lone surrogates), exported with "
                "U+FFFD in their place"
            )
        return Response(body, media_type=media, headers=headers)

    if STATIC_DIR.is_dir():
        app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    @app.get("/", include_in_schema=False)
    async def index() -> Response:
        page = STATIC_DIR / "index.html"
        if page.is_file():
            return HTMLResponse(page.read_text(encoding="utf-8"))
        return PlainTextResponse(
            "citegraph API\n\nGraphQL (GraphiQL in a browser): /graphql\n"
            "Exports: /export/graphml, /export/gexf, /export/cytoscape.json\n"
            "Health: /healthz, /readyz\n"
        )

    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware, allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST"], allow_headers=["Content-Type", API_KEY_HEADER],
        )
    app.add_middleware(
        LimitsMiddleware, max_body_bytes=settings.max_body_bytes,
        timeout_s=settings.request_timeout_s,
    )
    return app


def _valid_unicode(g: Any) -> tuple[Any, int]:
    """``g``, or a copy with lone surrogates replaced by U+FFFD; how many values changed."""
    import networkx as nx

    from api.arguments import bad_text

    def bad(value: Any) -> bool:
        return isinstance(value, str) and bad_text(value) is not None

    if not any(bad(n) or any(bad(v) for v in a.values()) for n, a in g.nodes(data=True)) and \
            not any(any(bad(v) for v in a.values()) for *_, a in g.edges(keys=True, data=True)):
        return g, 0
    changed = 0

    def fix(value: Any) -> Any:
        nonlocal changed
        if not bad(value):
            return value
        changed += 1
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")

    out = nx.MultiDiGraph()
    for n, attrs in g.nodes(data=True):
        out.add_node(fix(n), **{k: fix(v) for k, v in attrs.items()})
    for a, b, key, attrs in g.edges(keys=True, data=True):
        out.add_edge(fix(a), fix(b), key=key, **{k: fix(v) for k, v in attrs.items()})
    return out, changed


def _client_error(exc: CitegraphError) -> JSONResponse:
    from api.errors import error_code

    code = error_code(exc) or "BAD_REQUEST"
    status = {"NOT_FOUND": 404, "STORE_UNAVAILABLE": 503}.get(code, 400)
    err: dict[str, Any] = {"message": str(exc), "extensions": {"code": code}}
    return JSONResponse({"errors": [err]}, status_code=status)


def _export_parts(
    services: Services,
    around: str | None,
    depth: int,
    path: str | None,
    ids: str | None = None,
    limit: int | None = None,
) -> tuple[list[GraphNode], list[Any]]:
    """Nodes and edges for an export (global ids accepted wherever a raw id is)."""

    def raw_list(value: str | None) -> str | None:
        return None if value is None else ",".join(raw_id(v.strip()) for v in value.split(","))

    return services.service().export_parts(
        around=raw_id(around) if around is not None else None,
        depth=depth, path=raw_list(path), ids=raw_list(ids), limit=limit,
    )


__all__ = ["create_app"]

