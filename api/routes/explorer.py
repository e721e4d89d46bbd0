"""The explorer: ``/`` serves its page, ``/static`` its script, styles and vendored code.

The page reads everything it shows from the public API, the node kinds and edge types
with their colours and wording included (``Query.nodeKinds``, ``Query.edgeTypes``).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).parent.parent / "static"


def mount(app: FastAPI) -> None:
    """Serve the explorer from ``app`` (a plain-text index when the page is not installed)."""
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
