"""BibTeX (``.bib``) entries as paper records, with bibtexparser 2.

Each ``@article``/``@inproceedings``/… entry becomes one record for
:func:`graph.ingest.records.paper_from_record` (which cleans and checks every field, as for
any other format):

==============================  ==========================================
BibTeX field                    record field
==============================  ==========================================
entry key                       ``id``
``title``, ``abstract``         ``title``, ``abstract``
``author``                      ``authors``: split on ``and`` (not inside braces),
                                each name as "First von Last Jr."; ``others`` dropped
``year``                        ``year``
``journal``, else ``booktitle``  ``venue``
``keywords``                    ``keywords`` (split on ``;``, else ``,``)
``url``, ``doi``                ``urls`` (a DOI as ``https://doi.org/<doi>``)
==============================  ==========================================

Braces that protect case or group a name (``{GNN}s``, ``M{\\"u}ller``) are removed and
TeX accents decoded; ``@string`` macros are resolved. An entry that does not parse (or
repeats an earlier key) is one problem at its line, and the entries after it are still
read. ``@comment``, ``@preamble`` and text between entries are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bibtexparser import middlewares
from bibtexparser.entrypoint import parse_string
from bibtexparser.library import Library
from bibtexparser.middlewares.names import (
    InvalidNameError,
    parse_single_name_into_parts,
    split_multiple_persons_names,
)
from bibtexparser.model import (
    DuplicateBlockKeyBlock,
    DuplicateFieldKeyBlock,
    Entry,
    ExplicitComment,
    ImplicitComment,
    ParsingFailedBlock,
    Preamble,
)
from bibtexparser.model import String as StringBlock

from graph.ingest.clean import clean_text
from graph.ingest.collect import Collector
from graph.ingest.decode import decode_file
from graph.ingest.records import _show

_DOI_PREFIX_RE = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)
# A brace right after a command ("\emph{", "\"{", "\frac{a}{") holds its argument.
_COMMAND_BEFORE_RE = re.compile(r"\\(?:[A-Za-z]+|[^A-Za-z\s])\s*$")


@dataclass
class BibEntry:
    """One entry: a record for paper_from_record, or the reason it has none.

    ``line`` is the 1-based line of its ``@``; ``last_line`` the last line before the
    next block. ``notes`` are fields dropped on the way (a name that does not parse).
    """

    line: int
    last_line: int
    key: str | None
    record: dict[str, Any] | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)


def strip_braces(text: str) -> str:
    """Remove BibTeX's grouping braces, keeping command arguments and escaped braces."""
    if "{" not in text and "}" not in text:
        return text
    out: list[str] = []
    stack: list[bool] = []  # per open brace: kept (a command's argument) or dropped
    last_kept_close = -2  # where the last kept group closed: "\frac{a}{b}" keeps "{b}"
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in "{}":
            out.append(text[i : i + 2])
            i += 2
            continue
        if ch == "{":
            keep = bool(_COMMAND_BEFORE_RE.search(text, 0, i)) or last_kept_close == i - 1
            stack.append(keep)
            if keep:
                out.append(ch)
        elif ch == "}":
            if stack and stack.pop():
                out.append(ch)
                last_kept_close = i
        else:
            out.append(ch)
        i += 1
    return "".join(out)


# Dotless i and j, as in {\'\i}: dropped to plain letters so the accent lands on them.
_DOTLESS_RE = re.compile(r"\\([ij])(?![A-Za-z])")


def _name_text(name: str) -> str:
    return clean_text(strip_braces(_DOTLESS_RE.sub(r"\1", name)))[0]


def _names(value: str, notes: list[str]) -> list[str]:
    authors: list[str] = []
    for raw in split_multiple_persons_names(value):
        name = raw.strip()
        if not name or name.lower() in {"others", "and"}:
            continue
        try:
            merged = parse_single_name_into_parts(name).merge_first_name_first
        except InvalidNameError as exc:
            notes.append(f"authors: dropped {name[:60]!r} ({exc})")
            continue
        authors.append(_name_text(merged))
    return authors


def _record(entry: Entry, notes: list[str]) -> dict[str, Any]:
    fields = {key.lower(): value for key, value in entry.fields_dict.items()}

    def text(name: str) -> Any:
        f = fields.get(name)
        if f is None:
            return None
        return strip_braces(f.value) if isinstance(f.value, str) else f.value

    record: dict[str, Any] = {"id": entry.key}
    for name in ("title", "abstract", "year", "keywords"):
        if (value := text(name)) is not None:
            record[name] = value
    venue = text("journal") or text("booktitle")
    if venue is not None:
        record["venue"] = venue
    if (authors := fields.get("author")) is not None and isinstance(authors.value, str):
        record["authors"] = _names(authors.value, notes)
    urls = [u for u in (text("url"),) if isinstance(u, str) and u.strip()]
    doi = text("doi")
    if isinstance(doi, str) and doi.strip():
        # "doi:" + the DOI: graph.ingest.records.link makes it https://doi.org/<doi>, or
        # drops it with a problem when it is not a DOI
        urls.append("doi:" + _DOI_PREFIX_RE.sub("", doi.strip()))
    if urls:
        record["urls"] = urls
    return record


_KEY_RE = re.compile(r"@\s*\w+\s*[{(]\s*([^\s,{}()]+)\s*,")


def _failed_key(block: ParsingFailedBlock) -> str | None:
    key = getattr(block, "key", None) or getattr(block.ignore_error_block, "key", None)
    if not key and block.raw and (m := _KEY_RE.match(block.raw.lstrip())):
        key = m.group(1)
    return key if isinstance(key, str) else None


def _failure(block: ParsingFailedBlock) -> str:
    if isinstance(block, DuplicateBlockKeyBlock):
        return f"duplicate entry key {block.key!r}; this entry skipped"
    if isinstance(block, DuplicateFieldKeyBlock):
        repeated = ", ".join(sorted(block.duplicate_keys))
        return f"entry {_failed_key(block)!r} repeats the field {repeated!r}; entry skipped"
    error = block.error
    reason = getattr(error, "abort_reason", None) or str(error) or type(error).__name__
    reason = " ".join(str(reason).split())[:200]
    key = _failed_key(block)
    return f"entry {key!r}: unreadable: {reason}" if key else f"unreadable entry: {reason}"


_IGNORED = (ExplicitComment, ImplicitComment, Preamble, StringBlock)


def entries(text: str, n_lines: int) -> Iterator[BibEntry]:
    """The entries of a BibTeX document, in file order, each with its line span."""
    stack = [
        middlewares.ResolveStringReferencesMiddleware(True),
        middlewares.RemoveEnclosingMiddleware(True),
    ]
    library: Library = parse_string(text, parse_stack=stack)
    blocks = sorted(library.blocks, key=lambda b: b.start_line or 0)
    starts = [(b.start_line or 0) + 1 for b in blocks] + [n_lines + 1]
    for block, line, following in zip(blocks, starts, starts[1:], strict=False):
        if isinstance(block, _IGNORED):
            continue
        last = max(line, following - 1)
        if isinstance(block, Entry):
            notes: list[str] = []
            yield BibEntry(line, last, block.key, _record(block, notes), notes=notes)
        elif isinstance(block, ParsingFailedBlock):
            yield BibEntry(line, last, _failed_key(block), error=_failure(block))


def _read_bibtex_into(path: Path, col: Collector) -> None:
    decoded = decode_file(path, col)
    if decoded is None:
        return
    name = str(path)
    count = 0
    for entry in entries("\n".join(decoded.lines), len(decoded.lines)):
        count += 1
        where = f": entry {_show(entry.key)}" if entry.key else ""
        if bad := decoded.bad_in(entry.line, entry.last_line):
            col.problem(name, entry.line, f"{where.lstrip(': ')}{': ' if where else ''}{bad}")
        elif entry.record is None:
            col.problem(name, entry.line, entry.error or "unreadable entry")
        else:
            col.record(entry.record, name, entry.line, where=where, notes=entry.notes)
    if count == 0:
        col.problem(name, None, "no records")


class BibtexReader:
    """``.bib``: one record per entry, the entry key as its id."""

    suffixes: tuple[str, ...] = (".bib",)

    def read_into(self, path: Path, sink: Collector) -> None:
        """Read every entry of ``path`` into ``sink``."""
        _read_bibtex_into(path, sink)
