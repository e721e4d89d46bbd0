"""The app built from the environment alone: what each server worker process imports.

``citegraph serve --workers N`` runs N processes (uvicorn's supervisor); each builds its
app here from ``CITEGRAPH_*`` variables, which the CLI sets from its options. With the
embedded store the workers share one database: each reads through its own in-memory
graph, and a write by any of them reaches the others within a fraction of a second.
"""

from __future__ import annotations

from fastapi import FastAPI

from api.app import create_app
from graph.settings import Settings


def create_app_from_env() -> FastAPI:
    """``create_app`` with settings read from the environment (a uvicorn factory)."""
    from_env: dict[str, object] = {}  # BaseSettings reads CITEGRAPH_* in __init__
    return create_app(Settings(**from_env))  # type: ignore[arg-type]
