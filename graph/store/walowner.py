"""Which database file the write-ahead log beside ``graph.db`` belongs to.

SQLite's WAL (``graph.db-wal``) does not say which database file it was written for. When
``graph.db`` is replaced while a process has it open (a backup moved or copied in), the
old file's WAL stays beside the new file (SQLite keeps it: its file was renamed while
open), and the next process to open the folder reads the old file's pages over the new
file, shows the old graph, and writes them into it at its checkpoint: the new file is
then malformed (docs/reliability.md, probe 9).

So every open and every commit records in ``graph.db.wal-owner`` the WAL's file (device,
inode) with the database file's (inode) and the database's random id (kept in its SQLite
header's ``user_version``, set by its first write). Opening refuses, before SQLite reads
it, a non-empty WAL that is the recorded one while ``graph.db`` is another file (another
inode: moved in), or holds another id in its header (copied over it). A WAL that is not
the recorded file (made anew, or the whole folder copied) says nothing either way and is
opened as it is, as is a folder with no record.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import NamedTuple

from graph.errors import StoreError

#: the header of every SQLite 3 database file
SQLITE_MAGIC = b"SQLite format 3\x00"
#: where the header holds ``PRAGMA user_version`` (4 bytes, big-endian)
ID_OFFSET = 60


def owner_path(path: Path) -> Path:
    return path.with_name(path.name + ".wal-owner")


def new_id() -> int:
    """A random id for a database file (a positive 31-bit integer, user_version's range)."""
    return secrets.randbelow(2**31 - 1) + 1


def header_id(path: Path) -> int | None:
    """The id in ``path``'s header as the file itself holds it (not through its WAL), or
    None: no file, not a SQLite file, or no id."""
    try:
        with path.open("rb") as f:
            head = f.read(ID_OFFSET + 4)
    except OSError:
        return None
    if len(head) < ID_OFFSET + 4 or not head.startswith(SQLITE_MAGIC):
        return None
    return int.from_bytes(head[ID_OFFSET : ID_OFFSET + 4], "big") or None


class _Owner(NamedTuple):
    dev: int
    db_ino: int
    wal_ino: int
    file_id: int  # 0: the file had no id yet


def _wal(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def recorded(path: Path) -> _Owner | None:
    """What ``graph.db.wal-owner`` records, or None."""
    try:
        parts = owner_path(path).read_text(encoding="ascii").split()
    except (OSError, UnicodeDecodeError):
        return None
    if len(parts) != 4 or not all(x.isdigit() for x in parts):
        return None
    return _Owner(*(int(x) for x in parts))


def check(path: Path) -> None:
    """StoreError, before anything reads it, when a non-empty WAL beside ``path`` was
    written for another database file."""
    try:
        wal = _wal(path).stat()
        db = path.stat()
    except OSError:
        return
    if wal.st_size == 0:
        return
    owner = recorded(path)
    if owner is None or owner.dev != wal.st_dev or owner.wal_ino != wal.st_ino:
        return  # not the WAL the record is about
    mine = header_id(path)
    if owner.db_ino == db.st_ino and not (owner.file_id and mine and mine != owner.file_id):
        return
    raise StoreError(
        f"{_wal(path)} belongs to another graph database than {path}: {path.name} was "
        "replaced while a process had the old one open (or after one was killed), and "
        f"its write-ahead log stayed. Reading it would damage {path.name}. Stop every "
        f"citegraph process using {path.parent}, then move {path.name}-wal and "
        f"{path.name}-shm out of the folder (they hold the replaced file's last changes, "
        "not this file's)"
    )


def record(path: Path, file_id: int) -> None:
    """Record the WAL beside ``path`` as ``path``'s (best effort: a folder that cannot be
    written cannot take a write either)."""
    try:
        wal = _wal(path).stat()
        db = path.stat()
    except OSError:
        return
    now = _Owner(wal.st_dev, db.st_ino, wal.st_ino, file_id)
    if recorded(path) == now:
        return
    target = owner_path(path)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError):
        tmp.write_text(" ".join(str(x) for x in now) + "\n", encoding="ascii")
        tmp.replace(target)
