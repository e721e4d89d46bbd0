"""``.txt``: blank-line separated abstracts after an optional header paragraph."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from graph.ingest.clean import clean_text
from graph.ingest.collect import Collector
from graph.ingest.decode import decode_file

_HEADER_NOISE_RE = re.compile(
    r"(?i)\b(?:accepted\s+)?(?:papers?(?:\s+list)?|list\s+of\s+papers|abstracts?|"
    r"proceedings|publications|collection|corpus)\b|论文列表|论文集|论文|列表|摘要|文章"
)


def venue_from_header(header: str) -> str | None:
    """'ICLR 2025 Papers' -> 'ICLR 2025'; None when nothing but filler words is left."""
    venue = _HEADER_NOISE_RE.sub(" ", clean_text(header)[0])
    venue = re.sub(r"(?i)^\s*(?:from|of|at|in)\b", " ", venue)
    venue = re.sub(r"(?i)\b(?:from|of|at|in)\s*$", " ", venue)
    venue = " ".join(venue.split()).strip(" :-–—|,.;()[]#*")
    return venue or None


def _looks_like_header(text: str, n_lines: int) -> bool:
    words = text.split()
    if len(words) > 25 or n_lines > 2:
        return False
    return not (len(words) >= 12 and re.search(r"[.!?。]\s*$", text))


def _paragraphs(lines: list[str]) -> Iterator[tuple[int, int, str]]:
    start: int | None = None
    for number, line in enumerate([*lines, ""], start=1):
        if line.strip():
            if start is None:
                start = number
        elif start is not None:
            yield start, number - 1, "\n".join(lines[start - 1 : number - 1])
            start = None


def _read_text_into(path: Path, col: Collector) -> None:
    decoded = decode_file(path, col)
    if decoded is None:
        return
    name = str(path)
    venue: str | None = None
    count = 0
    for index, (first, last, text) in enumerate(_paragraphs(decoded.lines)):
        bad = decoded.bad_in(first, last)
        if index == 0 and not bad and _looks_like_header(text, last - first + 1):
            venue = venue_from_header(text)
            continue
        count += 1
        if bad:
            col.problem(name, first, bad)
            continue
        col.record({"abstract": text}, name, first, default_venue=venue)
    if count == 0:
        col.problem(name, None, "no records")


class TextReader:
    """``.txt``: an optional header paragraph naming the collection, then one abstract each."""

    suffixes: tuple[str, ...] = (".txt",)

    def read_into(self, path: Path, sink: Collector) -> None:
        """Read every record of ``path`` into ``sink``."""
        _read_text_into(path, sink)
