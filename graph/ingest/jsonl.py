"""``.jsonl`` (one object a line) and ``.json`` (an array, an object, or a wrapper)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from graph.ingest.collect import Collector
from graph.ingest.decode import decode_file
from graph.ingest.records import _type_name


def _json_items(text: str, value: Any) -> list[tuple[int | None, str, Any]]:
    """(line, where, item) for each record of a whole-file JSON document."""
    if isinstance(value, dict):
        for key in ("papers", "records", "data", "items"):
            if isinstance(value.get(key), list):
                return [(None, f": {key}[{i}]", v) for i, v in enumerate(value[key])]
        return [(1, "", value)]
    if not isinstance(value, list):
        return [(1, "", value)]
    # The document parsed, so walking it item by item cannot fail; it gives line numbers.
    decoder = json.JSONDecoder()
    items: list[tuple[int | None, str, Any]] = []
    pos = text.index("[") + 1
    ws = re.compile(r"[\s,]*")
    while True:
        pos = ws.match(text, pos).end()  # type: ignore[union-attr]
        if text[pos] == "]":
            return items
        item, end = decoder.raw_decode(text, pos)
        items.append((text.count("\n", 0, pos) + 1, "", item))
        pos = end


def _read_jsonl_into(path: Path, col: Collector) -> None:
    decoded = decode_file(path, col)
    if decoded is None:
        return
    name = str(path)
    if path.suffix.lower() == ".json" and not decoded.bad:
        text = "\n".join(decoded.lines)
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            value = None  # perhaps JSON Lines under a .json name
        else:
            items = _json_items(text, value)
            for line, where, item in items:
                if isinstance(item, dict):
                    col.record(item, name, line, where=where)
                else:
                    col.problem(name, line, f"{where.lstrip(': ')}{': ' if where else ''}"
                                f"not a JSON object (got {_type_name(item)})")
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
            item = json.loads(text_line)
        except ValueError as exc:
            col.problem(name, number, f"not valid JSON: {exc}")
            continue
        except RecursionError:
            col.problem(name, number, "not valid JSON: nested too deeply")
            continue
        if not isinstance(item, dict):
            col.problem(name, number, f"not a JSON object (got {_type_name(item)})")
            continue
        col.record(item, name, number)
    if count == 0:
        col.problem(name, None, "no records")


class JsonReader:
    """``.jsonl``: one object a line; ``.json``: an array, an object or a wrapper of them."""

    suffixes: tuple[str, ...] = (".jsonl", ".json")

    def read_into(self, path: Path, sink: Collector) -> None:
        """Read every record of ``path`` into ``sink``."""
        _read_jsonl_into(path, sink)
