"""The embedded store's write lock: an OS file lock held across processes."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from graph.errors import StoreError, WriteLockTimeoutError

log = logging.getLogger(__name__)


class WriterLock:
    """An exclusive OS lock on a file (``fcntl.flock``), re-entrant within a thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._thread_lock = threading.Lock()

    @contextlib.contextmanager
    def hold(
        self, timeout_s: float, on_wait: Callable[[str], None] | None = None
    ) -> Iterator[None]:
        depth = getattr(self._local, "depth", 0)
        if depth:
            self._local.depth = depth + 1
            try:
                yield
            finally:
                self._local.depth -= 1
            return
        deadline = time.monotonic() + timeout_s
        if not self._thread_lock.acquire(timeout=max(timeout_s, 0.0)):
            raise WriteLockTimeoutError(
                f"another writer in this process held the write lock for {timeout_s:g} s"
            )
        fd = -1
        try:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            except OSError as exc:
                raise StoreError(f"cannot open the write lock {self.path}: {exc.strerror}") from exc
            told = False
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                        raise StoreError(f"cannot lock {self.path}: {exc.strerror}") from exc
                if not told:
                    holder = self._holder()
                    message = f"waiting for another writer ({holder}) to finish …"
                    log.warning(message)
                    if on_wait is not None:
                        on_wait(message)
                    told = True
                if time.monotonic() >= deadline:
                    raise WriteLockTimeoutError(
                        f"another writer ({self._holder()}) held {self.path} for more than "
                        f"{timeout_s:g} s (CITEGRAPH_WRITE_LOCK_TIMEOUT_S); try again later"
                    )
                time.sleep(0.05)
            os.ftruncate(fd, 0)
            os.write(fd, f"pid {os.getpid()} since {time.strftime('%H:%M:%S')}".encode())
            self._local.depth = 1
            try:
                yield
            finally:
                self._local.depth = 0
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, 0)
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            if fd >= 0:
                os.close(fd)
            self._thread_lock.release()

    def _holder(self) -> str:
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            text = ""
        return text or "another process"
