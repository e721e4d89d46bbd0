"""The FastAPI app: GraphQL at /graphql (GraphiQL in a browser), exports, health, explorer.

:func:`create_app` is the API's composition root: it builds the services from
the settings, opens the store in the lifespan (a store that is down does not
stop the app; /readyz says so and requests say "store unavailable" until it is
back), and wires the routes and the limits. What each part does lives in its module:

* ``api/graphql/``: the schema (``schema.py``), its types, loaders, limits and the
  error codes (an Extension), and the HTTP router with its GraphiQL page;
* ``api/routes/``: health, exports, the explorer page;
* ``api/middleware.py``: body size and request time limits;
* ``api/services.py``: what the app holds for its lifetime (store, model, pipeline).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from starlette.concurrency import run_in_threadpool

from api.graphql.context import API_KEY_HEADER, Context
from api.graphql.router import CitegraphRouter, ide_page
from api.graphql.schema import build_schema
from api.middleware import LimitsMiddleware
from api.routes import explorer, health
from api.routes import export as export_route
from api.services import Services, StoreOpener, limit_blas_threads
from graph.settings import Settings
from graph.store import open_store

log = logging.getLogger(__name__)


def create_app(settings: Settings, *, opener: StoreOpener = open_store) -> FastAPI:
    """The app for ``settings``; ``opener`` builds the store (tests pass their own)."""
    services = Services(settings, opener)
    schema = build_schema(settings)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        limit_blas_threads()
        await run_in_threadpool(services.open)
        # the model takes seconds to load: start now, in the background, not on a request
        services.start_warm_up()
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
        return Context(services, api_key=request.headers.get(API_KEY_HEADER), scope=request.scope)

    app.include_router(
        CitegraphRouter(
            schema, context_getter=get_context, graphql_ide="graphiql", ide_html=ide_page()
        ),
        prefix="/graphql",
    )
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
        timeout_s=settings.request_timeout_s,
    )
    return app


__all__ = ["create_app"]
