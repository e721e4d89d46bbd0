"""The GraphQL HTTP endpoint: strawberry's FastAPI router, answering in JSON throughout,
and its GraphiQL page served from bundled assets."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import orjson

# strawberry's router raises cross-web's HTTPException (a declared dependency)
from cross_web import HTTPException
from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from strawberry.fastapi import GraphQLRouter

from api.graphql.context import Context
from api.middleware import error_body
from api.routes.explorer import STATIC_DIR

log = logging.getLogger(__name__)


class CitegraphRouter(GraphQLRouter[Context, None]):
    """Strawberry's router, with JSON (not plain-text) answers to requests it cannot read.

    The codes of GraphQL errors are set by :mod:`api.graphql.extension`.
    """

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
