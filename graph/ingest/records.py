"""One record (a mapping of fields) to a Paper: field names, coercion, limits."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias
from urllib.parse import urlsplit

from graph.bounds import MAX_ID_CHARS, MAX_TITLE_CHARS, over_bound
from graph.errors import InputError
from graph.ids import has_visible, strip_id
from graph.ingest.clean import (
    _CONTROL_RE,
    _ID_CONTROL_RE,
    _SURROGATE_RE,
    clean_text,
    text_hash,
)
from graph.model import Paper, reserved_paper_id
from graph.refs import normalize_doi, reference_key

MAX_ABSTRACT_CHARS = 100_000
MAX_FIELD_CHARS = 10_000  # a venue, or one author, keyword, url or reference
# a title and an id are indexed: their bounds are graph.bounds' (MAX_TITLE_CHARS, MAX_ID_CHARS)
MIN_ABSTRACT_WORDS = 5
LABEL_WORDS = 8
_ALIASES = {
    "paper_id": "id", "paperid": "id",
    "summary": "abstract", "text": "abstract",
    "link": "url", "links": "urls",
    "author": "authors", "keyword": "keywords", "refs": "references",
}
_MISSING = frozenset({"", "nan", "none", "null", "n/a", "na"})
_YEAR_RE = re.compile(r"(?<!\d)(1[89]\d\d|2[01]\d\d)(?!\d)")
_CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff"
_WORD_RE = re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")


def _canonical_key(key: object) -> str:
    name = re.sub(r"[\s\-]+", "_", str(key).strip().lower())
    return _ALIASES.get(name, name)


#: a record: a mapping, or (name, value) pairs where a name may come twice (a CSV header)
Record: TypeAlias = Mapping[str, Any] | Sequence[tuple[str, Any]]


def _canonical(record: Record) -> dict[str, Any]:
    """Fields by canonical name; InputError when two names of one field ("id" and
    "paper_id", "ID" and "id", a CSV column twice) give it different values: one of them
    would be lost without a word."""
    pairs = record.items() if isinstance(record, Mapping) else record
    out: dict[str, Any] = {}
    named: dict[str, object] = {}
    for key, value in pairs:
        name = _canonical_key(key)
        if name not in out or _is_missing(out[name]):
            out[name], named[name] = value, key
        elif not _is_missing(value) and value != out[name]:
            raise InputError(
                f"fields {_show(named[name], 30)} and {_show(key, 30)} both give the {name}, "
                "with different values"
            )
    return out


_DOI_RE = re.compile(r"(?:doi:\s*)?(10\.\d+(?:\.\d+)*/\S+)", re.IGNORECASE)
_ARXIV_RE = re.compile(
    r"arxiv:\s*((?:\d{4}\.\d{4,5}|[a-z][a-z.-]*/\d{7})(?:v\d+)?)", re.IGNORECASE
)
# not in a URL (RFC 3986), and what would let one break out of an HTML attribute
_NOT_IN_URL_RE = re.compile(r'[\s"<>\\^`{|}]')


def link(text: str) -> str | None:
    """``text`` as a link that is safe to serve, or None: an http(s) URL with a host, as
    given but for the characters a URL cannot hold (a space, a quote, ``<``), which are
    percent-encoded; a DOI ("doi:10.1/x", "10.1/x") or an arXiv id ("arXiv:2101.00001")
    as its https URL; "www.x.org" as "https://www.x.org". Anything else (``javascript:``,
    ``data:``, ``file:``, ``ftp:``, a relative path, a host holding such a character) is
    None."""
    text = text.strip()
    if m := _DOI_RE.fullmatch(text):
        return "https://doi.org/" + m.group(1)
    if m := _ARXIV_RE.fullmatch(text):
        return "https://arxiv.org/abs/" + m.group(1)
    if text[:4].lower() == "www.":
        text = "https://" + text
    try:
        parts = urlsplit(text)
        host = parts.hostname
    except ValueError:  # "http://[::1" and the like
        return None
    if (parts.scheme.lower() not in ("http", "https") or not host
            or _NOT_IN_URL_RE.search(parts.netloc)):
        return None
    return _NOT_IN_URL_RE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), text)


def _links(values: Sequence[str], name: str, notes: list[str], into: list[str]) -> None:
    for value in values:
        url = link(value)
        if url is None:
            notes.append(f"{name}: dropped {_show(value)}: not an http(s), DOI or arXiv link")
        elif url not in into:
            into.append(url)


def _is_missing(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and value.strip().lower() in _MISSING


def _type_name(value: object) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean"}.get(
        type(value), type(value).__name__
    )


def _show(value: object, limit: int = 60) -> str:
    """A short repr for a problem message; safe for any value (a huge int, a long text)."""
    if isinstance(value, str) and len(value) > limit:
        value = value[:limit]
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # an int over 4300 digits; a self-nested list
        return f"<{_type_name(value)}>"
    return text if len(text) <= limit else text[:limit] + "…"


def _checked(text: str, name: str) -> str:
    """``text`` without control characters; InputError when it holds a lone surrogate.

    Every string that ends up in a Paper passes through here (or through clean_text,
    after this check), so none can break a UTF-8 save or an XML export.
    """
    if m := _SURROGATE_RE.search(text):
        raise InputError(f"field {name!r}: contains an unpaired surrogate U+{ord(m.group()):04X}")
    return _CONTROL_RE.sub(" ", text) if _CONTROL_RE.search(text) else text


def _as_list(value: object, name: str, notes: list[str], *, commas: bool) -> tuple[str, ...]:
    if _is_missing(value):
        return ()
    if isinstance(value, str):
        text = _checked(value, name).strip()
        if text.startswith("["):
            with contextlib.suppress(ValueError, RecursionError):
                value = json.loads(text)
        if isinstance(value, str):
            sep = ";" if (";" in text or not commas) else ","
            value = text.split(sep)
    if not isinstance(value, list | tuple):
        notes.append(f"{name} is not a list or string (got {_type_name(value)}); field dropped")
        return ()
    items: list[str] = []
    seen: set[str] = set()  # a set: a list of a million authors must not take n² steps
    for item in value:
        if isinstance(item, bool) or not isinstance(item, str | int):
            notes.append(f"{name}: dropped a {_type_name(item)} element")
            continue
        if isinstance(item, int):
            try:
                item = str(item)
            except ValueError:  # over Python's 4300-digit limit
                notes.append(f"{name}: dropped an integer element too large to read")
                continue
        text = " ".join(_checked(item, name).split())
        if len(text) > MAX_FIELD_CHARS:
            notes.append(
                f"{name}: dropped an element of {len(text)} characters (> {MAX_FIELD_CHARS})"
            )
            continue
        if text and text not in seen:
            seen.add(text)
            items.append(text)
    return tuple(items)


def _as_references(
    value: object, notes: list[str], unparsed: list[str] | None
) -> tuple[str, ...]:
    """Reference keys (graph.refs); each element that is not a reference is dropped with
    a note and, when ``unparsed`` is given, its repr added there (the build counts them)."""
    if _is_missing(value):
        return ()
    if isinstance(value, str):
        text = _checked(value, "references").strip()
        if text.startswith("["):
            with contextlib.suppress(ValueError, RecursionError):
                value = json.loads(text)
        if isinstance(value, str):
            value = text.split(";")
    if not isinstance(value, list | tuple):
        notes.append(f"references is not a list or string (got {_type_name(value)}); "
                     "field dropped")
        if unparsed is not None:
            unparsed.append(_show(value))
        return ()
    keys: list[str] = []
    seen: set[str] = set()
    for item in value:
        if isinstance(item, str) and not item.strip():
            continue
        if isinstance(item, str):
            item = _checked(item, "references")
        elif isinstance(item, Mapping):
            try:
                item = {k: _checked(v, "references") if isinstance(v, str) else v
                        for k, v in item.items()}
            except InputError:  # a lone surrogate in an object: that reference only
                item = None
        key = reference_key(item)
        if key is None:
            notes.append(f"references: dropped {_show(item)}: not a DOI, arXiv id, id or "
                         "title (an object needs one of doi, arxiv, id, title)")
            if unparsed is not None:
                unparsed.append(_show(item))
            continue
        if key not in seen:
            seen.add(key)
            keys.append(key)
    return tuple(keys)


def _as_doi(value: object, notes: list[str]) -> str | None:
    if _is_missing(value):
        return None
    if not isinstance(value, str):
        notes.append(f"doi is not text (got {_type_name(value)}); field dropped")
        return None
    doi = normalize_doi(_checked(value, "doi"))
    if doi is None or len(doi) > MAX_FIELD_CHARS:
        notes.append(f"doi {_show(value)} is not a DOI (10.<registrant>/<suffix>); "
                     "field dropped")
        return None
    return doi


def _as_year(value: object, notes: list[str]) -> int | None:
    if _is_missing(value):
        return None
    year: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        year = value
    elif isinstance(value, float) and value.is_integer():
        year = int(value)
    elif isinstance(value, str):
        m = re.fullmatch(r"\s*(\d{4})(?:\.0+|-\d\d(?:-\d\d)?)?\s*", _checked(value, "year"))
        year = int(m.group(1)) if m else None
    if year is None or not 1800 <= year <= 2199:
        notes.append(f"year {_show(value)} is not a year; field dropped")
        return None
    return year


def _as_text(
    value: object, name: str, notes: list[str], *, max_chars: int | None = MAX_FIELD_CHARS
) -> str | None:
    if _is_missing(value):
        return None
    if not isinstance(value, str):
        notes.append(f"{name} is not text (got {_type_name(value)}); field dropped")
        return None
    text = clean_text(_checked(value, name))[0]
    if max_chars is not None and len(text) > max_chars:
        notes.append(f"{name} too long: {len(text)} characters > {max_chars}; field dropped")
        return None
    return text or None


def _as_title(value: object, notes: list[str]) -> str | None:
    """A title, or None; InputError when it is over the indexed bound (it becomes the
    paper's ``label``, which the stores index: dropping it would hide the error)."""
    title = _as_text(value, "title", notes, max_chars=None)
    if title is not None and (too_long := over_bound(title, MAX_TITLE_CHARS)):
        raise InputError(f"title too long to index: {too_long}")
    return title


def _as_id(value: object) -> str | None:
    """The given id, or None; InputError when it is unusable (never silently replaced)."""
    if _is_missing(value):
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InputError(f"id must be a string or integer (got {_type_name(value)})")
    if isinstance(value, int):
        if value.bit_length() > 3 * MAX_ID_CHARS:  # far more digits than MAX_ID_CHARS
            raise InputError(f"field 'id': longer than {MAX_ID_CHARS} characters")
        value = str(value)
    text = strip_id(value)
    if m := _SURROGATE_RE.search(text):
        raise InputError(f"field 'id': contains an unpaired surrogate U+{ord(m.group()):04X}")
    if m := _ID_CONTROL_RE.search(text):
        raise InputError(f"field 'id': contains the control character U+{ord(m.group()):04X}")
    if text and not has_visible(text):
        shown = " ".join(f"U+{ord(c):04X}" for c in text[:8])
        raise InputError(
            f"field 'id': has no visible character ({shown}); give an id a person can read"
        )
    if too_long := over_bound(text, MAX_ID_CHARS):
        raise InputError(f"field 'id': too long to index: {too_long}")
    if text and (reason := reserved_paper_id(text)):
        raise InputError(f"field 'id': {text!r} is reserved: {reason}")
    return text or None


def placeholder_label(abstract: str) -> str:
    """First few words of the abstract and an ellipsis; replaced by a real label later."""
    words = abstract.split()
    label = " ".join(words[:LABEL_WORDS])
    cut = len(words) > LABEL_WORDS
    if len(label) > 80:
        label, cut = label[:80], True
    return label.rstrip(" ,;:.–—-") + "…" if cut else label


def paper_from_record(
    record: Record,
    *,
    source: str,
    default_venue: str | None = None,
    notes: list[str] | None = None,
    unparsed: list[str] | None = None,
) -> Paper:
    """Build a Paper from one record; raises InputError(reason) when it is unusable.

    ``notes`` (optional) collects the fields that were dropped for a bad value;
    ``unparsed`` (optional) the references that are not a DOI, arXiv id, id or title. A lone
    surrogate in any field, or an unusable id, rejects the whole record (one InputError
    naming the field); control characters are replaced by spaces (or refused, in an id).
    """
    notes = notes if notes is not None else []
    rec = _canonical(record)
    raw = rec.get("abstract")
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raise InputError("empty abstract" if "abstract" in rec else "no abstract")
    if not isinstance(raw, str):
        raise InputError(f"abstract is not text (got {_type_name(raw)})")
    if len(raw) > MAX_ABSTRACT_CHARS:
        raise InputError(f"abstract too long: {len(raw)} characters > {MAX_ABSTRACT_CHARS}")
    abstract, found = clean_text(_checked(raw, "abstract"))
    if not abstract:
        raise InputError("empty abstract")
    n_words = len(_WORD_RE.findall(abstract))
    if n_words < MIN_ABSTRACT_WORDS:
        raise InputError(f"abstract too short: {n_words} words (minimum {MIN_ABSTRACT_WORDS})")
    given_id = _as_id(rec.get("id"))
    digest = text_hash(abstract, clean=True)

    urls: list[str] = []
    for key in ("url", "urls"):
        _links(_as_list(rec.get(key), key, notes, commas=True), key, notes, urls)
    _links(found, "abstract", notes, urls)  # the links cleaning took out of the text

    title = _as_title(rec.get("title"), notes)
    venue = _as_text(rec.get("venue"), "venue", notes)
    if venue is None and default_venue:
        venue = _checked(default_venue, "venue")
    year = _as_year(rec.get("year"), notes)
    if year is None and venue and (m := _YEAR_RE.search(venue)):
        year = int(m.group(1))
    values: dict[str, Any] = {
        "title": title,
        "venue": venue,
        "year": year,
        "authors": _as_list(rec.get("authors"), "authors", notes, commas=False),
        "keywords": _as_list(rec.get("keywords"), "keywords", notes, commas=True),
        "urls": tuple(urls),
        "references": _as_references(rec.get("references"), notes, unparsed),
        "doi": _as_doi(rec.get("doi"), notes),
    }
    return Paper(
        id=given_id or f"p-{digest[:12]}",
        label=title or placeholder_label(abstract),
        abstract=abstract,
        text_hash=digest,
        source=_display(source),
        # a field left out, empty or dropped for a bad value gives nothing: an update
        # of a stored paper keeps its stored value (the text is always given)
        given=frozenset(["text_hash", *(["id"] if given_id else []),
                         *(k for k, v in values.items() if v not in (None, ()))]),
        **values,
    )


def _display(name: str | os.PathLike[str]) -> str:
    """A path (or source) as printable UTF-8 text: undecodable bytes and controls escaped.

    A file name holding the byte 0xff reaches Python as a lone surrogate; kept as is in
    a paper's ``source`` it would make the graph file unsavable.
    """
    text = os.fspath(name)
    if _SURROGATE_RE.search(text):
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a surrogate that no file name decodes to
            raw = text.encode("utf-8", "backslashreplace")
        text = raw.decode("utf-8", "backslashreplace")
    if _ID_CONTROL_RE.search(text):
        text = _ID_CONTROL_RE.sub(lambda m: repr(m.group())[1:-1], text)
    return text
