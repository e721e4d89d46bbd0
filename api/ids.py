"""Global (Relay) ids: base64 of ``"<Kind>:<raw id>"``; raw ids are accepted everywhere too."""

from __future__ import annotations

import base64

from graph.errors import InvalidArgumentError
from graph.model import NodeKind

_KINDS = {k.value: k for k in NodeKind}
MAX_CURSOR_DIGITS = 12  # offsets up to a trillion: far past any graph


def to_global_id(kind: NodeKind, raw: str) -> str:
    """The opaque id a ``Node`` shows, e.g. ``UGFwZXI6cC0xMjM=`` for paper ``p-123``."""
    # surrogatepass: an id stored before text was checked still shows (and exports)
    return base64.b64encode(f"{kind.value}:{raw}".encode("utf-8", "surrogatepass")).decode("ascii")


def from_global_id(value: str) -> tuple[NodeKind, str] | None:
    """(kind, raw id) when ``value`` is a global id, else None."""
    if not value or len(value) % 4 or ":" in value or not value.isascii():
        return None
    try:
        text = base64.b64decode(value, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):  # binascii.Error is a ValueError
        return None
    kind, sep, raw = text.partition(":")
    if not sep or not raw or kind not in _KINDS:
        return None
    return _KINDS[kind], raw


def raw_id(value: str) -> str:
    """The store id behind a global id, or ``value`` itself when it is already raw."""
    decoded = from_global_id(value)
    return decoded[1] if decoded else value


def encode_cursor(offset: int) -> str:
    return base64.b64encode(f"offset:{offset}".encode()).decode("ascii")


def offset_of(after: str | None) -> int:
    """The offset a connection's ``after`` cursor points past (0 for None)."""
    if after is None:
        return 0
    offset = decode_cursor(after)
    if offset is None:
        shown = repr(after) if len(after) <= 100 else f"a {len(after)}-character string"
        raise InvalidArgumentError("after", f"not a cursor from this API: {shown}")
    return offset


def decode_cursor(cursor: str) -> int | None:
    if not cursor.isascii():
        return None
    try:
        text = base64.b64decode(cursor, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):  # binascii.Error is a ValueError
        return None
    prefix, _, num = text.partition(":")
    # the length cap keeps int() from refusing (over 4,300 digits) and offsets sane
    if prefix != "offset" or not (num.isascii() and num.isdigit()) or len(num) > MAX_CURSOR_DIGITS:
        return None
    return int(num)
