"""The typed per-request context strawberry hands to every resolver."""

from __future__ import annotations

import hmac
from collections.abc import Callable, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from strawberry.fastapi import BaseContext

from api.graphql.loaders import Loaders, in_thread, make_loaders
from api.middleware import WRITE_UNDER_WAY
from api.services import Services
from graph.deadline import unbounded
from graph.errors import CitegraphError
from graph.lookup import Resolution
from graph.service import GraphService
from graph.settings import Settings
from graph.store import GraphStore

if TYPE_CHECKING:
    from graph.build import BuildReport
    from graph.model import Paper

T = TypeVar("T")


class ForbiddenError(CitegraphError):
    """A mutation without a valid API key, or with mutations disabled."""


API_KEY_HEADER = "X-API-Key"


class Context(BaseContext):
    """Services, settings and fresh DataLoaders for one request."""

    def __init__(
        self,
        services: Services,
        api_key: str | None = None,
        scope: MutableMapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.services = services
        self._scope = scope
        self.settings: Settings = services.settings
        self.loaders: Loaders = make_loaders(services.reading)
        self._api_key = api_key
        #: names that named several nodes in this request (see api/graphql/resolutions.py)
        self.resolutions: list[Resolution] = []

    async def on_store(self, fn: Callable[[GraphStore], T], *, expensive: bool = False) -> T:
        """``fn(store)`` in a worker thread; ``expensive``: in one of the server's slots
        for expensive queries (BUSY when none frees in time; Services.expensive_slot).

        The store is fetched in that thread too: while it is down, fetching it may try
        to re-open it, which blocks.
        """
        return await in_thread(lambda: self.services.reading(fn, expensive=expensive))

    async def on_service(
        self, fn: Callable[[GraphService], T], *, expensive: bool = False
    ) -> T:
        """``fn(service)`` in a worker thread: the use cases the CLI calls too."""
        return await in_thread(lambda: self.services.serving(fn, expensive=expensive))

    async def write(
        self, *, papers: Sequence[Paper] = (), remove: Sequence[str] = ()
    ) -> BuildReport:
        """A write in a worker thread. The request is marked as writing first, so the time
        limit (api.middleware) waits for its real outcome instead of answering TIMEOUT
        while the write goes on and commits."""
        if self._scope is not None:
            self._scope[WRITE_UNDER_WAY] = True
        # never cut short once started: a write runs under no deadline (graph.deadline)
        return await in_thread(
            lambda: unbounded(lambda: self.services.write(papers=papers, remove=remove))
        )

    def require_api_key(self) -> None:
        """Raise ForbiddenError unless the request carries the configured API key."""
        configured = self.settings.api_key
        if configured is None or not configured.get_secret_value():
            raise ForbiddenError(
                "mutations are disabled: no API key is configured (set CITEGRAPH_API_KEY)"
            )
        given = self._api_key or ""
        if not hmac.compare_digest(given.encode(), configured.get_secret_value().encode()):
            raise ForbiddenError(f"mutations need a valid API key in the {API_KEY_HEADER} header")
