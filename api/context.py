"""The typed per-request context strawberry hands to every resolver."""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Any, TypeVar

from strawberry.fastapi import BaseContext

from api.loaders import Loaders, in_thread, make_loaders
from api.services import Services
from graph.errors import CitegraphError
from graph.settings import Settings
from graph.store import GraphStore

T = TypeVar("T")


class ForbiddenError(CitegraphError):
    """A mutation without a valid API key, or with mutations disabled."""


API_KEY_HEADER = "X-API-Key"


class Context(BaseContext):
    """Services, settings and fresh DataLoaders for one request."""

    def __init__(self, services: Services, api_key: str | None = None) -> None:
        super().__init__()
        self.services = services
        self.settings: Settings = services.settings
        self.loaders: Loaders = make_loaders(services.store)
        self._api_key = api_key

    def store(self) -> GraphStore:
        return self.services.store()

    async def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """``store.<method>(*args, **kwargs)`` in a worker thread."""
        return await in_thread(lambda: getattr(self.services.store(), method)(*args, **kwargs))

    async def call_fn(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in a worker thread (library code that calls the store)."""
        return await in_thread(fn, *args, **kwargs)

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
