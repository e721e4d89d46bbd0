"""The FastAPI app: GraphQL at /graphql (GraphiQL in a browser), exports, health, explorer.

:func:`create_app` is the API's composition root: it builds the services from
the settings, opens the store in the lifespan (a store that is down does not
stop the app; /readyz says so and requests say "store unavailable" until it is
back), and wires the routes and the limits. What each part does lives in its module:

* ``api/graphql/``: the schema (``schema.py``), its types, loaders, limits and the
  error codes (an Extension), and the HTTP router with its GraphiQL page;
* ``api/routes/``: health, exports, the explorer page;
* ``api/middleware.py``: body size and request time limits (exports have their own);
* ``api/services.py``: what the app holds for its lifetime (store, model, pipeline).
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.to_thread
from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from starlette.concurrency import run_in_threadpool
from starlette.routing import Route, WebSocketRoute

from api.graphql.context import API_KEY_HEADER
from api.graphql.router import CitegraphGraphQL, ide_page
from api.graphql.schema import build_schema
from api.middleware import LimitsMiddleware
from api.routes import explorer, health
from api.routes import export as export_route
from api.services import (
    Services,
    StoreOpener,
    limit_blas_threads,
    thread_lock_for_progress_bars,
)
from graph.settings import Settings
from graph.store import open_store

log = logging.getLogger(__name__)


#: seconds a closing app waits for worker threads still busy for requests already
#: answered (a query cut at the time limit goes on in its thread, in torch or SQLite):
#: closing the store under them, or exiting with a thread inside torch, crashes the process
DRAIN_S = 20.0


async def _drain_threads(timeout_s: float) -> None:
    """Wait (bounded) until no thread of the default pool is working."""
    limiter = anyio.to_thread.current_default_thread_limiter()
    deadline = time.monotonic() + timeout_s
    while limiter.borrowed_tokens > 0 and time.monotonic() < deadline:
        await anyio.sleep(0.02)
    if limiter.borrowed_tokens > 0:
        log.warning("closing with %d worker threads still busy", limiter.borrowed_tokens)


def create_app(settings: Settings, *, opener: StoreOpener = open_store) -> FastAPI:
    """The app for ``settings``; ``opener`` builds the store (tests pass their own)."""
    services = Services(settings, opener)
    schema = build_schema(settings)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        limit_blas_threads()
        thread_lock_for_progress_bars()
        await run_in_threadpool(services.open)
        # the model takes seconds to load: start now, in the background, not on a request
        services.start_warm_up()
        try:
            yield
        finally:
            await _drain_threads(DRAIN_S)
            await run_in_threadpool(services.close)

    app = FastAPI(
        title="citegraph",
        description="A knowledge graph of papers, concepts and datasets. GraphQL at /graphql.",
        lifespan=lifespan,
    )
    app.state.services = services
    app.state.schema = schema

    graphql = CitegraphGraphQL(
        schema, services=services, graphql_ide="graphiql", ide_html=ide_page()
    )
    # an ASGI app as the endpoint: starlette hands it the request as it comes
    app.router.routes += [
        Route("/graphql", graphql, methods=["GET", "POST"]),
        WebSocketRoute("/graphql", graphql),
    ]
    app.include_router(health.router(services))
    app.include_router(export_route.router(services))
    explorer.mount(app)

    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware, allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST"], allow_headers=["Content-Type", API_KEY_HEADER],
        )
    app.add_middleware(
        LimitsMiddleware, max_body_bytes=settings.max_body_bytes,
        timeout_s=settings.request_timeout_s, export_timeout_s=settings.export_timeout_s,
    )
    return app


__all__ = ["create_app"]
