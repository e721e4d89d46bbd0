"""``citegraph serve --workers N``: uvicorn's supervisor, with one listening socket a worker.

uvicorn binds one socket and every worker accepts from it. A worker that wakes accepts
everything queued, so keep-alive clients that connect together end up on one worker:
in bench/load.py's 32-client mix on two workers, mid-round splits were 32/0, 26/6 and
2/30, and the busy worker's CPU a request rose with its queue (9.1 ms against ~5) while
the other idled. On Linux each worker here listens on its own ``SO_REUSEPORT`` socket,
bound to the same address, and the kernel spreads new connections across the listening
sockets by a hash of the address pair. Elsewhere (no such balancing) the workers share
one socket as before.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
from typing import Any

import uvicorn
from uvicorn.supervisors.multiprocess import Multiprocess, Process

from graph.errors import CitegraphError

log = logging.getLogger(__name__)

APP = "citegraph.workers:worker_app"
#: the supervisor's pid, handed to its workers through the environment
MASTER_ENV = "CITEGRAPH_SUPERVISOR_PID"


class ListenError(CitegraphError):
    """The address to serve on cannot be bound (in use, or not this machine's)."""


def balanced() -> bool:
    """Whether the kernel balances connections across sockets bound to one address."""
    return sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")


def worker_sockets(
    host: str, port: int, workers: int, backlog: int = 2048
) -> list[socket.socket]:
    """One listening socket a worker in a ``SO_REUSEPORT`` group; one bound one elsewhere.

    ``SO_REUSEPORT`` lets any socket of the same user that sets it join the group, so a
    second server started on the same port would take half the connections in silence
    where it should fail with "address in use". Hence a plain bind first, and the group
    listening at once: from then on a plain bind of the port fails. A connection that
    reaches a worker still starting waits in its socket's queue until the worker serves.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    probe = socket.socket(family)
    try:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))
        port = probe.getsockname()[1]  # port 0: the one the kernel chose, for every socket
    except OSError as exc:
        probe.close()
        raise ListenError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    if workers < 2 or not balanced():
        probe.set_inheritable(True)
        return [probe]
    probe.close()
    sockets: list[socket.socket] = []
    try:
        for _ in range(workers):
            sock = socket.socket(family)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind((host, port))
            sock.listen(backlog)
            sock.set_inheritable(True)
    except OSError as exc:  # someone took the port between the probe and here
        for sock in sockets:
            sock.close()
        raise ListenError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sockets


class Supervisor(Multiprocess):
    """uvicorn's supervisor: worker i serves socket i; a stop refuses new connections at once.

    A worker started later (one replaced after it died, SIGHUP, SIGTTIN) is given every
    socket, so a socket whose worker is gone is still served. Connections the kernel
    hashes to it meanwhile wait in its queue until the replacement serves (8.5 s on the
    ICLR graph, for 1 of 30 connections in a probe), rather than being reset: a fresh
    socket for the replacement was tried, and reset what was queued on the old one.
    """

    def init_processes(self) -> None:
        if len(self.sockets) != self.processes_num:
            super().init_processes()
            return
        for sock in self.sockets:
            process = Process(self.config, [sock])
            process.start()
            self.processes.append(process)

    def terminate_all(self) -> None:
        # uvicorn's supervisor keeps its copies of the listening sockets until every worker
        # has drained and exited: connections made meanwhile were accepted by the kernel,
        # queued for no one and reset when it exited (clients saw ReadError, as if a
        # request in flight had been dropped: 10 of 10 in the probe). Closed first, they
        # are refused (ConnectError: surely not sent, safe to retry), as with one worker.
        for sock in self.sockets:
            sock.close()  # the workers hold their own copies until they have drained
        super().terminate_all()


def worker_app() -> Any:
    """One worker's app (a uvicorn factory). The worker stops with its supervisor: a
    SIGKILL'd supervisor's workers went on serving and held the port, so the next
    ``serve`` failed with "address in use" (2 of 2 trials in the outside probe)."""
    from api.main import create_app_from_env
    from graph.embed import die_with_parent

    parent = int(os.environ.get(MASTER_ENV) or 0)
    if parent:
        die_with_parent(parent, signal.SIGTERM)
    return create_app_from_env()


def serve_workers(workers: int, sockets: list[socket.socket]) -> None:
    """Run ``workers`` server processes on ``sockets`` (:func:`worker_sockets`) until
    SIGINT or SIGTERM."""
    host, port = sockets[0].getsockname()[:2]
    config = uvicorn.Config(
        APP, factory=True, workers=workers, host=host, port=port, log_level="warning"
    )
    os.environ[MASTER_ENV] = str(os.getpid())
    log.debug("%d workers on %d socket(s)", workers, len(sockets))
    Supervisor(config, sockets=sockets).run()
