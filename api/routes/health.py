"""Liveness (``/healthz``: the process answers) and readiness (``/readyz``: the store
answers and the warm-up has read the graph and loaded the model)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from api.services import Services


def router(services: Services) -> APIRouter:
    """The health routes over ``services``."""
    routes = APIRouter(include_in_schema=False)

    @routes.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @routes.get("/readyz")
    async def readyz() -> JSONResponse:
        ready = await run_in_threadpool(services.ready)
        body = {"status": ready.status, "store": ready.store}
        if ready.warming:
            body["warming"] = ready.warming
        if ready.detail:
            body["detail"] = ready.detail
        return JSONResponse(body, status_code=200 if ready.ok else 503)

    return routes
