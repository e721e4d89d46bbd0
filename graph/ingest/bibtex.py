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
``doi``                         ``doi`` (the paper's identifier: folded, prefix stripped)
==============================  ==========================================

No field gives references (BibTeX has no standard one): a paper read from BibTeX cites
nothing unless another file gives its references.

Braces that protect case or group a name (``{GNN}s``, ``M{\\"u}ller``) are removed, TeX
accents and letters decoded (``{\\ss}`` ß, ``\\AA ngstr{\\"o}m`` Ångström, ``{\\L}`` Ł).

A value is read as BibTeX reads it: ``{...}``, ``"..."``, a number or an ``@string``
macro (case-insensitive; ``jan`` … ``dec`` are predefined), joined with ``#``. A macro
that is not defined, or whose definition comes back to itself, leaves the field unread:
the field is dropped with a problem naming it at the entry's line (the record is kept),
and for the abstract the record is rejected with that reason, as for any unusable field.

``crossref = {key}`` inherits from the entry ``key`` (anywhere in the file) every field
the entry lacks, but the parent's ``title``, which becomes the ``booktitle`` (a paper
in a proceedings volume; biblatex's rule). A parent that is not there, or a chain of
crossrefs that loops, is a problem of the entry.

An entry that does not parse (or repeats an earlier key) is one problem at its line, and
the entries after it are still read. ``@comment``, ``@preamble`` and text between entries
are ignored. A line that starts with ``@misc{`` inside a braced or quoted value is part of
the value (bibtexparser would start a new entry there) when the entry closes after it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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

from graph.ingest.clean import clean_text, tex_letters
from graph.ingest.collect import Collector
from graph.ingest.decode import decode_file
from graph.ingest.records import _show
from graph.refs import normalize_doi

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


def _name_text(name: str) -> str:
    return clean_text(strip_braces(tex_letters(name)))[0]


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


# ---------------------------------------------------------------- values and macros

#: the macros every BibTeX style defines
_MONTHS = {
    name[:3].lower(): name for name in (
        "January", "February", "March", "April", "May", "June", "July", "August",
        "September", "October", "November", "December",
    )
}
_MACRO_RE = re.compile(r"[^\s\"#%'(),={}\d][^\s\"#%'(),={}]*")


class _UnreadableError(Exception):
    """A value that cannot be read: an undefined macro, a macro loop."""


def _pieces(raw: str) -> list[str]:
    """The ``#``-joined pieces of a raw value (``"Proc. " # neurips``), as BibTeX splits
    it: not inside braces or quotes, a backslash escaping the character after it."""
    if "#" not in raw:
        return [raw.strip()]
    pieces: list[str] = []
    depth, quoted, start, i = 0, False, 0, 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
        elif ch == '"' and depth == 0:
            quoted = not quoted
        elif ch == "#" and depth == 0 and not quoted:
            pieces.append(raw[start:i])
            start = i + 1
        i += 1
    pieces.append(raw[start:])
    return [p.strip() for p in pieces]


class _Macros:
    """A file's ``@string`` macros, each expanded once, loops and unknown names caught."""

    def __init__(self, blocks: list[StringBlock]) -> None:
        self._raw = {b.key.lower(): b.value for b in blocks if isinstance(b.value, str)}
        self._done: dict[str, str] = {}

    def value(self, raw: str, _using: tuple[str, ...] = ()) -> str:
        """The text of a raw field value; _UnreadableError when a macro in it is not."""
        out: list[str] = []
        for piece in _pieces(raw):
            if len(piece) >= 2 and (
                (piece[0] == "{" and piece[-1] == "}") or (piece[0] == '"' and piece[-1] == '"')
            ):
                out.append(piece[1:-1])
            elif _MACRO_RE.fullmatch(piece):
                out.append(self._macro(piece, _using))
            else:  # a number, or what bibtexparser took as a value: as written
                out.append(piece)
        return "".join(out)

    def _macro(self, name: str, using: tuple[str, ...]) -> str:
        key = name.lower()
        if key in self._done:
            return self._done[key]
        if key in using:
            loop = " -> ".join([*using[using.index(key):], key])
            raise _UnreadableError(f"@string macros refer to one another in a loop ({loop})")
        raw = self._raw.get(key)
        if raw is None:
            if key in _MONTHS:
                return _MONTHS[key]
            raise _UnreadableError(f"undefined @string macro {_show(name, 40)}")
        text = self._done[key] = self.value(raw, (*using, key))
        return text


# ---------------------------------------------------------------- "@" inside values

_AT = "\ue003"  # private use: stands for an "@" that starts a line inside a value
_SCAN_RE = re.compile(r'(?<!\\)[{}"()]|@\w*[ \t]*(?=[{(])')


def _at_line_start(text: str, pos: int) -> bool:
    start = text.rfind("\n", 0, pos) + 1
    return not text[start:pos].strip()


def _hide_inner_blocks(text: str) -> str:
    """``text`` with each ``@`` that starts a line inside an entry's value replaced by
    :data:`_AT`, where the entry closes after it. bibtexparser starts a new block at any
    line-start ``@type{``, inside a value too: an abstract holding a line "@misc{ ..."
    became two broken entries. An entry that never closes is left to its recovery.

    Scanned as bibtexparser's splitter reads: outside a block any ``@type{`` or
    ``@type(`` opens one; inside, braces nest, quotes count only outside braces (and
    braces do not count inside quotes), and the block ends at its closing delimiter.
    """
    if "\n" not in text or _AT in text:
        return text
    hide: list[int] = []
    pending: list[int] = []  # line-start "@"s inside the current block's values
    inside = values = quoted = False
    closer, depth = "}", 0
    for m in _SCAN_RE.finditer(text):
        tok, at = m.group(0), m.start()
        if tok[0] == "@":
            if inside and not _at_line_start(text, at):
                continue  # "LeQua @ {CLEF}": text, for bibtexparser too
            if inside and values and (depth > 0 or quoted):
                pending.append(at)
                continue
            # a block starts (one before it that did not close is abandoned, as there)
            inside, values, quoted, pending = True, tok[1:].strip().lower() != "comment", \
                False, []
            closer, depth = ("}" if text[m.end()] == "{" else ")"), -1
        elif not inside:
            continue
        elif depth < 0:
            depth = 0  # the block's own opening delimiter
        elif quoted:
            if tok == '"' and text[at - 1] + text[m.end() : m.end() + 1] != "{}":
                quoted = False  # ({"} is a quote inside a quoted value)
        elif tok == "{":
            depth += 1
        elif tok == "}" and depth > 0:
            depth -= 1
        elif tok == '"' and depth == 0 and values:
            quoted = True
        elif tok == closer and depth == 0:
            hide.extend(pending)
            inside, pending = False, []
    if not hide:
        return text
    chars = list(text)
    for pos in hide:
        chars[pos] = _AT
    return "".join(chars)


# ---------------------------------------------------------------- entries


def _fields(entry: Entry) -> dict[str, str]:
    return {f.key.lower(): f.value for f in entry.fields if isinstance(f.value, str)}


def _inherit(
    key: str, fields: dict[str, str], parents: dict[str, Entry], macros: _Macros,
    notes: list[str], chain: tuple[str, ...] = (),
) -> dict[str, str]:
    """``fields`` with what its ``crossref`` parent (and the parent's own) gives."""
    raw = fields.get("crossref")
    if raw is None:
        return fields
    try:
        ref = strip_braces(macros.value(raw)).strip()
    except _UnreadableError as exc:
        notes.append(f"crossref: {exc}; nothing inherited")
        return fields
    chain = (*chain, key.lower())
    parent = parents.get(ref.lower())
    if parent is None:
        notes.append(f"crossref {_show(ref, 40)}: no entry with that key; nothing inherited")
        return fields
    if ref.lower() in chain:
        notes.append(f"crossref {_show(ref, 40)}: the crossrefs loop back to this entry")
        return fields
    inherited = _inherit(parent.key, _fields(parent), parents, macros, notes, chain)
    out = dict(fields)
    for name, value in inherited.items():
        if name == "title":
            out.setdefault("booktitle", value)
        elif name not in ("crossref", "ids"):
            out.setdefault(name, value)
    return out


#: the fields a record reads (a macro in any other is never expanded, nor reported)
_READ = ("title", "abstract", "year", "keywords", "journal", "booktitle", "author", "url",
         "doi")


def _record(
    entry: Entry, parents: dict[str, Entry], macros: _Macros, notes: list[str]
) -> dict[str, Any]:
    """The record of one entry; _UnreadableError when its abstract cannot be read."""
    raw = _inherit(entry.key, _fields(entry), parents, macros, notes)
    values: dict[str, str] = {}
    for name in _READ:
        if name not in raw:
            continue
        try:
            value = macros.value(raw[name]).replace(_AT, "@")
        except _UnreadableError as exc:
            if name == "abstract":
                raise _UnreadableError(f"abstract: {exc}") from None
            notes.append(f"{name}: {exc}; field dropped")
            continue
        values[name] = value if name == "author" else strip_braces(tex_letters(value))

    record: dict[str, Any] = {"id": entry.key}
    for name in ("title", "abstract", "year", "keywords"):
        if name in values:
            record[name] = values[name]
    venue = values.get("journal") or values.get("booktitle")
    if venue is not None:
        record["venue"] = venue
    if "author" in values:
        record["authors"] = _names(values["author"], notes)
    urls = [u for u in (values.get("url"),) if u and u.strip()]
    doi = values.get("doi")
    if doi and doi.strip():
        # "doi:" + the DOI: graph.ingest.records.link makes it https://doi.org/<doi>, or
        # drops it with a problem when it is not a DOI
        urls.append("doi:" + _DOI_PREFIX_RE.sub("", doi.strip()))
        if normalize_doi(doi):  # the paper's identifier too; a bad one is reported once, above
            record["doi"] = doi.strip()
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
    library: Library = parse_string(_hide_inner_blocks(text), parse_stack=[])
    macros = _Macros(library.strings)
    parents = {e.key.lower(): e for e in library.entries}
    blocks = sorted(library.blocks, key=lambda b: b.start_line or 0)
    starts = [(b.start_line or 0) + 1 for b in blocks] + [n_lines + 1]
    for block, line, following in zip(blocks, starts, starts[1:], strict=False):
        if isinstance(block, _IGNORED):
            continue
        last = max(line, following - 1)
        if isinstance(block, Entry):
            notes: list[str] = []
            try:
                record = _record(block, parents, macros, notes)
            except _UnreadableError as exc:
                yield BibEntry(line, last, block.key, error=f"entry {_show(block.key)}: {exc}")
                continue
            missing = [n for n in notes if n.startswith("crossref")]
            if "abstract" not in record and missing:
                # "no abstract" alone would hide why: its parent was to give one
                yield BibEntry(line, last, block.key,
                               error=f"entry {_show(block.key)}: no abstract; {missing[0]}")
                continue
            yield BibEntry(line, last, block.key, record, notes=notes)
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
        first = min(decoded.bad, default=None)
        # undecodable bytes where no entry was found: said as the other formats say it
        bad = decoded.bad_in(first, first) if first is not None else None
        col.problem(name, first, bad or "no records")


class BibtexReader:
    """``.bib``: one record per entry, the entry key as its id."""

    suffixes: tuple[str, ...] = (".bib",)

    def read_into(self, path: Path, sink: Collector) -> None:
        """Read every entry of ``path`` into ``sink``."""
        _read_bibtex_into(path, sink)
