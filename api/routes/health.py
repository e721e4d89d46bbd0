"""Liveness (``/healthz``: the process answers) and readiness (``/readyz``: the store does)."""

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
        ok, detail = await run_in_threadpool(services.ready)
        body = {"status": "ready" if ok else "unavailable", "store": detail}
        return JSONResponse(body, status_code=200 if ok else 503)

    return routes
