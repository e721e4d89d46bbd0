"""The GraphQL HTTP endpoint: strawberry's ASGI view, answering in JSON throughout, and its
GraphiQL page served from bundled assets."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import orjson

# strawberry's router raises cross-web's HTTPException (a declared dependency)
from cross_web import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL

from api.graphql.context import API_KEY_HEADER, Context
from api.middleware import error_body
from api.routes.explorer import STATIC_DIR
from api.services import Services

log = logging.getLogger(__name__)


class CitegraphGraphQL(GraphQL[Context, None]):
    """Strawberry's ASGI view, with JSON (not plain-text) answers to requests it cannot
    read, and the request :class:`Context` made here.

    Served as a plain route (a starlette ``Route``), not through strawberry's FastAPI router:
    that router makes the context through FastAPI's dependency injection, which solved
    four dependencies per request, ~0.1 ms of CPU (docs/benchmarks.md, issue 11 round 8);
    nothing here needs it. The codes of GraphQL errors are set by
    :mod:`api.graphql.extension`.
    """

    def __init__(self, *args: Any, services: Services, ide_html: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._services = services
        self._ide_html = ide_html

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> Context:
        context = Context(
            self._services, api_key=request.headers.get(API_KEY_HEADER), scope=request.scope
        )
        # what strawberry's FastAPI router set on a BaseContext
        context.request = request
        context.response = response if isinstance(response, Response) else None
        return context

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
                error_body(exc.reason, code), status_code=exc.status_code,
                media_type="application/json",
            )

    def encode_json(self, data: object) -> str | bytes:
        """orjson: a 2,000-node neighbourhood (3.8 MB) in 12 ms where json took 47 ms.

        Text stored before input was checked may hold a lone surrogate, which orjson
        refuses; the standard library escapes it, as before.
        """
        try:
            return orjson.dumps(data)
        except TypeError:
            return json.dumps(data, separators=(",", ":"))

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


def ide_page() -> str:
    """The GraphiQL page, or a short page saying why it is unavailable."""
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
