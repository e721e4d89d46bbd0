"""``.jsonl`` (one object a line) and ``.json`` / ``.csljson`` (an array, an object, or a
wrapper); an object that is a CSL item (Zotero's CSL JSON) is read by
:mod:`graph.ingest.csljson`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from graph.ingest.collect import Collector
from graph.ingest.csljson import csl_record, looks_like_csl
from graph.ingest.decode import decode_file
from graph.ingest.records import _show, _type_name


class _Object(dict[str, Any]):
    """A JSON object that named a key twice: JSON keeps the last value without a word."""

    repeated: str = ""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    out = _Object(obj)
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            out.repeated = key
            break
        seen.add(key)
    return out


_DECODER = json.JSONDecoder(object_pairs_hook=_object)


def _loads(text: str) -> Any:
    return _DECODER.decode(text)


def _record_into(col: Collector, item: Any, name: str, line: int | None, where: str) -> None:
    prefix = f"{where.lstrip(': ')}{': ' if where else ''}"
    if not isinstance(item, dict):
        col.problem(name, line, f"{prefix}not a JSON object (got {_type_name(item)})")
    elif isinstance(item, _Object):  # for any key, not only the id
        col.problem(name, line, f"{prefix}duplicate key {_show(item.repeated, 40)}")
    elif looks_like_csl(item):
        notes: list[str] = []
        record = csl_record(item, notes)
        col.record(record, name, line, where=where, notes=notes)
    else:
        col.record(item, name, line, where=where)


_WRAPPERS = ("papers", "records", "data", "items")


def _json_items(text: str, value: Any) -> list[tuple[int | None, str, Any]]:
    """(line, where, item) for each record of a whole-file JSON document."""
    if isinstance(value, dict):
        if isinstance(value, _Object) and value.repeated in _WRAPPERS:
            return [(1, "", value)]  # which of its lists? said as a duplicate key
        for key in _WRAPPERS:
            if isinstance(value.get(key), list):
                return [(None, f": {key}[{i}]", v) for i, v in enumerate(value[key])]
        return [(1, "", value)]
    if not isinstance(value, list):
        return [(1, "", value)]
    # The document parsed, so walking it item by item cannot fail; it gives line numbers.
    items: list[tuple[int | None, str, Any]] = []
    pos = text.index("[") + 1
    ws = re.compile(r"[\s,]*")
    while True:
        pos = ws.match(text, pos).end()  # type: ignore[union-attr]
        if text[pos] == "]":
            return items
        item, end = _DECODER.raw_decode(text, pos)
        items.append((text.count("\n", 0, pos) + 1, "", item))
        pos = end


def _read_jsonl_into(path: Path, col: Collector) -> None:
    decoded = decode_file(path, col)
    if decoded is None:
        return
    name = str(path)
    if path.suffix.lower() in (".json", ".csljson") and not decoded.bad:
        text = "\n".join(decoded.lines)
        try:
            value = _loads(text)
        except (ValueError, RecursionError):
            value = None  # perhaps JSON Lines under a .json name
        else:
            items = _json_items(text, value)
            for line, where, item in items:
                _record_into(col, item, name, line, where)
            if not items:
                col.problem(name, None, "no records")
            return
    count = 0
    for number, text_line in enumerate(decoded.lines, start=1):
        if not text_line.strip():
            continue
        count += 1
        if bad := decoded.bad_in(number, number):
            col.problem(name, number, bad)
            continue
        try:
            item = _loads(text_line)
        except ValueError as exc:
            col.problem(name, number, f"not valid JSON: {exc}")
            continue
        except RecursionError:
            col.problem(name, number, "not valid JSON: nested too deeply")
            continue
        _record_into(col, item, name, number, "")
    if count == 0:
        col.problem(name, None, "no records")


class JsonReader:
    """``.jsonl``: one object a line; ``.json``, ``.csljson``: an array, an object or a
    wrapper of them. CSL items (graph.ingest.csljson) are told from plain records."""

    suffixes: tuple[str, ...] = (".jsonl", ".json", ".csljson")

    def read_into(self, path: Path, sink: Collector) -> None:
        """Read every record of ``path`` into ``sink``."""
        _read_jsonl_into(path, sink)
