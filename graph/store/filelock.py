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

from graph.errors import StoreError, StoreWriteError, WriteLockTimeoutError

log = logging.getLogger(__name__)


def _cannot_open(path: Path, exc: OSError) -> StoreWriteError:
    """The lock file could not be opened (a read-only filesystem or folder, EIO, ...):
    the store cannot write now, which is not the caller's fault (a server answers
    STORE_WRITE_FAILED, as for a full disk), and the write can succeed once it can."""
    return StoreWriteError(
        f"cannot open the write lock {path}: {exc.strerror}; nothing was written"
    )


class WriterLock:
    """An exclusive OS lock on a file (``fcntl.flock``), re-entrant within a thread.

    ``flock`` locks the open file, not the path: a lock file deleted (or replaced) while
    a writer holds it lets the next writer lock a new file at the same path and write
    beside it (an outside probe lost edges that way: two adds both said "Added").
    So a writer locks only a file that is still the one at the path (else it opens the
    path again), and :meth:`check` tells a writer, before it commits, whether the file
    it holds is still there."""

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
                raise _cannot_open(self.path, exc) from exc
            told = False
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    if self._is_path(fd):
                        break
                    # locked a file no longer at the path (deleted or replaced meanwhile):
                    # the path's file is the lock now
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    os.close(fd)
                    fd = -1
                    try:
                        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
                    except OSError as exc:
                        raise _cannot_open(self.path, exc) from exc
                    continue
                except OSError as exc:
                    if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                        raise StoreWriteError(
                            f"cannot lock {self.path}: {exc.strerror}; nothing was written"
                        ) from exc
                if not told:
                    holder = self._holder()
                    message = f"waiting for another writer ({holder}) to finish …"
                    if on_wait is not None:
                        on_wait(message)  # the caller says it (once, not also in the log)
                    else:
                        log.warning(message)
                    told = True
                if time.monotonic() >= deadline:
                    raise WriteLockTimeoutError(
                        f"another writer ({self._holder()}) held {self.path} for more than "
                        f"{timeout_s:g} s (CITEGRAPH_WRITE_LOCK_TIMEOUT_S); try again later"
                    )
                time.sleep(0.05)
            # the holder's pid is for a waiting writer's message only: a disk too full to
            # take it must not fail the write here with a bare OSError (the write itself
            # then fails at its first page, saying the disk is full, and changes nothing)
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
                os.write(fd, f"pid {os.getpid()} since {time.strftime('%H:%M:%S')}".encode())
            self._local.depth = 1
            self._local.fd = fd
            try:
                yield
            finally:
                self._local.depth = 0
                self._local.fd = -1
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, 0)
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            if fd >= 0:
                os.close(fd)
            self._thread_lock.release()

    def _is_path(self, fd: int) -> bool:
        """True when the open file ``fd`` is the file at the lock's path now."""
        try:
            at_path = self.path.stat()
        except OSError:
            return False
        mine = os.fstat(fd)
        return (mine.st_dev, mine.st_ino) == (at_path.st_dev, at_path.st_ino)

    def check(self) -> None:
        """Raise :class:`StoreError` when this thread holds the lock on a file that is no
        longer at the lock's path (another writer may hold the path's file now); nothing
        when it holds it rightly or does not hold it."""
        fd = getattr(self._local, "fd", -1)
        if getattr(self._local, "depth", 0) and fd >= 0 and not self._is_path(fd):
            raise StoreError(
                f"the write lock {self.path} was removed or replaced while this write held "
                "it, so another writer may be writing too; nothing was written (run it again)"
            )

    def _holder(self) -> str:
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            text = ""
        return text or "another process"
