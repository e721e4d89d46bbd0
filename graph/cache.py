"""A small key -> bytes cache in SQLite (crash-safe, no pickle), with a memory layer for
what the file does not hold."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

log = logging.getLogger(__name__)

_CHUNK = 500  # SQLite's host-parameter limit is 999 on old builds


class BlobCache:
    """Bytes by (namespace, key); ``path`` None keeps them in memory only.

    With a file, the memory layer holds only what the file could not take (a failed
    write, a write after :meth:`close`): values read or written are not kept twice. A
    build reads every paper's vector, words and extraction once (~700 MB at 100k papers),
    and the long-lived pipeline keeps what it needs of them itself.
    """

    def __init__(self, path: Path | None, table: str, *, keep_first: bool = False) -> None:
        """``keep_first``: a key the file holds already keeps its value (the first process
        to write it wins), for values that are a function of their key up to noise: every
        reader then gets the same bytes for it. Otherwise a write replaces it (a damaged
        row found and made again)."""
        if not table.isidentifier():
            raise ValueError(f"bad table name {table!r}")
        self._table = table
        self._insert = "INSERT OR IGNORE" if keep_first else "INSERT OR REPLACE"
        self._mem: dict[tuple[str, str], bytes] = {}
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._path = path
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path), check_same_thread=False)
            self._db.execute(
                f"CREATE TABLE IF NOT EXISTS {table} (ns TEXT, key TEXT, value BLOB,"
                " PRIMARY KEY (ns, key))"
            )
            self._db.commit()

    def get_many(self, namespace: str, keys: Sequence[str]) -> dict[str, bytes]:
        """The cached values among ``keys``."""
        found = {k: self._mem[(namespace, k)] for k in keys if (namespace, k) in self._mem}
        missing = [k for k in keys if k not in found]
        if not missing:
            return found
        # every use of the connection, and its close, under the one lock: SQLite's
        # connection closed under a running query crashes the process (it did, in CI)
        with self._lock:
            for start in range(0, len(missing), _CHUNK):
                if self._db is None:
                    break
                part = missing[start : start + _CHUNK]
                marks = ",".join("?" * len(part))
                rows = self._db.execute(
                    f"SELECT key, value FROM {self._table} WHERE ns = ? AND key IN ({marks})",  # noqa: S608 - table name checked, values bound
                    [namespace, *part],
                )
                for key, value in rows:
                    found[key] = bytes(value)
        return found

    def put_many(self, namespace: str, items: Mapping[str, bytes]) -> None:
        """Store ``items`` (one transaction)."""
        if not items:
            return
        with self._lock:
            if self._db is None:
                self._remember(namespace, items)
                return
            try:
                with self._db:
                    self._db.executemany(
                        f"{self._insert} INTO {self._table} VALUES (?, ?, ?)",
                        [(namespace, k, v) for k, v in items.items()],
                    )
            except sqlite3.Error as exc:
                # a cache, not the graph: a file that cannot take the rows (a full disk, a
                # data folder deleted under the server: "readonly database") must not fail
                # the write it serves; the values stay in memory
                log.warning("cache %s not written (%s); kept in memory", self._path, exc)
                self._remember(namespace, items)
                return
            # written (or, keep_first, held already): an older copy kept from a failed
            # write must not shadow it
            for k in items:
                self._mem.pop((namespace, k), None)

    def _remember(self, namespace: str, items: Mapping[str, bytes]) -> None:
        for k, v in items.items():
            self._mem[(namespace, k)] = v

    def close(self) -> None:
        """Close the database (after a read or write under way); the memory layer stays
        usable."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
