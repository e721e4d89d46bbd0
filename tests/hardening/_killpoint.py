"""Run the citegraph CLI and SIGKILL it at a chosen point of the save path.

    python tests/hardening/_killpoint.py POINT citegraph-args...

POINT is one of ``apply`` (before the store applies the diff, or begins a write in
parts), ``part`` (the first part of a write in parts written inside the SQLite
transaction, the rest not yet made), ``write`` (every row of the change written inside
the SQLite transaction, COMMIT not yet sent), ``commit``
(just after COMMIT, before the in-memory graph takes the change), or ``none``. The
process kills itself with SIGKILL, as the OOM killer or ``kill -9`` would: no handler,
no cleanup. ``stop`` is ``write`` with SIGSTOP instead: the process stalls inside its
commit, holding both write locks, until someone sends it SIGCONT or SIGKILL;
``stop-part`` stalls it so after the first part of a write in parts. ``int-write`` and
``int-commit`` send the process SIGINT (Ctrl-C) at ``write`` and at ``commit``: it
unwinds as it does for a Ctrl-C that lands just before or just after its COMMIT.
"""

from __future__ import annotations

import os
import pathlib
import signal
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

POINTS = (
    "apply", "part", "write", "commit", "stop", "stop-part", "int-write", "int-commit", "none"
)


def _die(*_args: object, **_kwargs: object) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _stall(*_args: object, **_kwargs: object) -> None:
    os.kill(os.getpid(), signal.SIGSTOP)


def _interrupt(*_args: object, **_kwargs: object) -> None:
    os.kill(os.getpid(), signal.SIGINT)


def install(point: str) -> None:
    """Patch the one call at which this process should die."""
    from graph.store.embedded import EmbeddedStore

    if point == "apply":
        EmbeddedStore.apply = _die  # type: ignore[method-assign]
        EmbeddedStore.write_in_parts = _die  # type: ignore[method-assign]
    elif point in ("part", "stop-part"):
        from graph.store.embedded import _SqlParts

        first = _SqlParts.apply
        then = _die if point == "part" else _stall
        calls = []

        def _one_then(self: _SqlParts, change: object) -> None:
            first(self, change)  # type: ignore[arg-type]
            calls.append(1)
            if len(calls) == 1:  # after the first part only (probe 12 F3)
                then()

        _SqlParts.apply = _one_then  # type: ignore[method-assign]
    elif point == "write":
        EmbeddedStore._before_commit = _die  # type: ignore[method-assign]
    elif point == "stop":
        EmbeddedStore._before_commit = _stall  # type: ignore[method-assign]
    elif point == "commit":
        EmbeddedStore._after_commit = _die  # type: ignore[method-assign]
    elif point in ("int-write", "int-commit"):
        # a job started in the background ignores SIGINT, and its children inherit that
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if point == "int-write":
            EmbeddedStore._before_commit = _interrupt  # type: ignore[method-assign]
        else:
            EmbeddedStore._after_commit = _interrupt  # type: ignore[method-assign]
    elif point != "none":
        raise SystemExit(f"unknown kill point {point!r}; choose from {', '.join(POINTS)}")


if __name__ == "__main__":
    install(sys.argv[1])
    from citegraph.cli import main

    main(sys.argv[2:])
