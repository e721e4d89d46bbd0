"""A file's bytes, bounded and checked, decoded to lines (undecodable lines marked)."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from graph.ingest.collect import Collector


@dataclass
class Decoded:
    lines: list[str]
    bad: dict[int, int]  # 1-based line -> byte offset of its first undecodable byte

    def bad_in(self, first: int, last: int) -> str | None:
        for line in range(first, last + 1):
            if line in self.bad:
                return (
                    f"not valid UTF-8 (first bad byte at offset {self.bad[line]}, "
                    f"line {line}); record skipped"
                )
        return None


def _file_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _read_bytes(path: Path, col: Collector) -> bytes | None:
    """The bytes of a regular file of at most ``col.max_file_bytes``; else a problem.

    Opened with O_NONBLOCK, so that a FIFO answers at once instead of waiting for a
    writer, then checked with fstat (the file itself, not what its name pointed at a
    moment before). The read is bounded too: a file may grow, /proc files claim size 0.
    """
    name = str(path)
    limit = col.max_file_bytes
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        dangling = path.is_symlink()
        col.problem(name, None, "dangling symlink (its target does not exist)" if dangling
                    else "no such file or directory")
        return None
    except PermissionError:
        col.problem(name, None, "permission denied")
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            reason = "symlink loop (too many levels of symbolic links)"
        elif exc.errno == errno.ENXIO:  # what opening a socket gives
            reason = "a socket, not a regular file; skipped"
        else:
            reason = f"cannot read: {exc.strerror or exc}"
        col.problem(name, None, reason)
        return None
    except ValueError:  # a NUL byte in the path
        col.problem(name, None, "cannot read: the path holds a NUL character")
        return None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            col.problem(name, None, "is a directory, not a file")
            return None
        if not stat.S_ISREG(info.st_mode):
            col.problem(name, None, f"{_file_kind(info.st_mode)}, not a regular file; skipped")
            return None
        if info.st_size > limit:
            col.problem(name, None, f"larger than {limit} bytes ({info.st_size}); skipped")
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        col.problem(name, None, f"cannot read: {exc.strerror or exc}")
        return None
    finally:
        os.close(fd)
    if len(data) > limit:
        col.problem(name, None, f"larger than {limit} bytes (it grew while read); skipped")
        return None
    return data


# UTF-32's byte-order marks first: UTF-32-LE's begins with UTF-16-LE's
_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32-le", "UTF-32"), (b"\x00\x00\xfe\xff", "utf-32-be", "UTF-32"),
    (b"\xff\xfe", "utf-16-le", "UTF-16"), (b"\xfe\xff", "utf-16-be", "UTF-16"),
)


def _utf16_no_bom(data: bytes) -> bool:
    """Every other byte NUL: ASCII text written as UTF-16, without a byte-order mark."""
    head = data[:64]
    return len(head) >= 4 and (not any(head[1::2]) or not any(head[0::2]))


def _decode_wide(path: Path, data: bytes, col: Collector) -> Decoded | None:
    """A UTF-16 or UTF-32 file (what Windows tools save as "Unicode"): decoded when it
    starts with a byte-order mark; without one, reported (its byte order would be a
    guess). Every format reads through here: a UTF-16 .bib was "no records" where the
    other formats said "not valid UTF-8" (issue 39)."""
    for bom, codec, name in _WIDE_BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom):].decode(codec)
            except UnicodeDecodeError as exc:
                col.problem(str(path), None, f"not valid {name} (it starts with a {name} "
                            f"byte-order mark; bad bytes at offset {exc.start + len(bom)})")
                return None
            return Decoded([line.removesuffix("\r") for line in text.split("\n")], {})
    col.problem(str(path), None, "not valid UTF-8 (it looks like UTF-16 without a "
                "byte-order mark); save it as UTF-8")
    return None


def decode_file(path: Path, col: Collector) -> Decoded | None:
    """Read and decode a file, reporting (not raising) what goes wrong."""
    data = _read_bytes(path, col)
    if data is None:
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")) or _utf16_no_bom(data):
        return _decode_wide(path, data, col)
    raw_lines = data.split(b"\n")
    bad: dict[int, int] = {}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="surrogateescape")
        offset = 0
        for number, raw in enumerate(raw_lines, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                bad[number] = offset + exc.start
            offset += len(raw) + 1
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    return Decoded(lines, bad)
