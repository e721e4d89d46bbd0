"""A query's deadline, checked by the query layer between units of work.

An API request runs its resolvers in worker threads; when the request's time limit
passes, the request is answered (504) and its task cancelled, but a thread already
computing cannot be interrupted from outside. So the request carries a
:class:`Deadline` in a context variable (set by ``api.middleware``; anyio copies the
context into each worker thread it starts), and the query layer calls :func:`check`
between units of work: each store read, each ring of a walk, each phase of a related()
call, each batch of texts encoded. A stopped deadline raises
:class:`~graph.errors.QueryCancelledError` there, so the thread stops within one unit.
A store that sends work elsewhere (Neo4j) bounds each round trip by :func:`remaining`,
so the database stops too.

No deadline is set outside a request (the CLI, the warm-up, writes): :func:`check` then
does nothing. A write is never cut short (it runs under :func:`unbounded`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

from graph.errors import QueryCancelledError

T = TypeVar("T")

#: seconds past its time a deadline nobody stopped stops by itself: the owner (the
#: request's time limit) normally stops it first, and answers for it
GRACE_S = 1.0


class Deadline:
    """Stopped by its owner (:meth:`stop`), or by itself ``GRACE_S`` after ``seconds``."""

    __slots__ = ("_stopped", "at")

    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds
        self._stopped = threading.Event()

    def stop(self) -> None:
        """Stop the work under this deadline at its next check (from any thread)."""
        self._stopped.set()

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set() or time.monotonic() >= self.at + GRACE_S

    def remaining(self) -> float:
        """Seconds until the deadline stops by itself (0 once stopped)."""
        if self._stopped.is_set():
            return 0.0
        return max(self.at + GRACE_S - time.monotonic(), 0.0)

    def check(self) -> None:
        """Raise QueryCancelledError once stopped."""
        if self.stopped:
            raise QueryCancelledError(
                "the query was stopped: its request ran past the time limit"
            )


_current: ContextVar[Deadline | None] = ContextVar("citegraph_deadline", default=None)


def current() -> Deadline | None:
    """The deadline of the work running here, if any."""
    return _current.get()


def check() -> None:
    """Raise QueryCancelledError if the work running here was stopped; else nothing."""
    d = _current.get()
    if d is not None:
        d.check()


def remaining() -> float | None:
    """Seconds the work running here may still take (None: unbounded)."""
    d = _current.get()
    return None if d is None else d.remaining()


@contextmanager
def bounded(deadline: Deadline | None) -> Iterator[None]:
    """Run the block (and the threads it starts through anyio) under ``deadline``."""
    token = _current.set(deadline)
    try:
        yield
    finally:
        _current.reset(token)


def unbounded(fn: Callable[[], T]) -> T:
    """``fn()`` under no deadline: work that must finish once started (a write)."""
    with bounded(None):
        return fn()
