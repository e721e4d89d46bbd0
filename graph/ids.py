"""One rule for ids, shared by ingest and every route that takes one.

* An id is trimmed of outer white space (``str.strip``) wherever it is given; what is
  left is the id, with no other cleaning. Nothing left: the id is *empty* (at ingest,
  a missing id, made from the text; on a route, "must not be empty").
* A new id must show at least one visible character: an id of zero-width spaces
  alone could not be told from an empty one in any listing. A graph written before
  this rule may hold one; every route still finds it by its exact text.
* Canonically equivalent spellings are one id (``café`` typed with the one character
  é, NFC, or with e and a combining accent, NFD, as macOS file names and some
  keyboards give it): a lookup tries the text as given, then its NFC and NFD forms,
  and an add whose id is another spelling of a stored id updates that paper. The
  stored spelling is the one kept, so a graph from before this rule opens and answers
  unchanged (of two spellings in one input, the NFC one: the same in any order). Why
  one paper: the two look the same everywhere a person reads or types an id, and the
  text fields are already NFC (``clean_text``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Container, Iterable, Mapping


def strip_id(text: str) -> str:
    """``text`` as an id: outer white space removed, nothing else changed."""
    return text.strip()


def is_empty_id(text: str) -> bool:
    """Whether ``text`` names no id at all (white space only)."""
    return not text.strip()


def has_visible(text: str) -> bool:
    """Whether ``text`` shows anything: a printable character that is not white space."""
    return any(c.isprintable() and not c.isspace() for c in text)


def id_key(text: str) -> str:
    """The identity of an id: equal keys are one paper (NFC of the trimmed text)."""
    text = text.strip()
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def spellings(ref: str) -> tuple[str, ...]:
    """The texts a lookup of ``ref`` tries, in order: as given, trimmed, NFC, NFD."""
    trimmed = ref.strip()
    forms = [ref, trimmed]
    if not trimmed.isascii():
        forms += [unicodedata.normalize("NFC", trimmed), unicodedata.normalize("NFD", trimmed)]
    return tuple(dict.fromkeys(f for f in forms if f))


def stored_spelling(ref: str, stored: Container[str]) -> str | None:
    """The first of ``ref``'s :func:`spellings` that ``stored`` holds, or None."""
    return next((s for s in spellings(ref) if s in stored), None)


def odd_spellings(ids: Iterable[str]) -> dict[str, str]:
    """:func:`id_key` -> id, for the ids that are not their own key (kept as first given:
    an NFD, half-composed or compatibility-sign spelling, or untrimmed from before this
    rule): what finding a stored id by its key needs besides the ids themselves. Most
    corpora have none (an ASCII id is its own key once trimmed)."""
    out: dict[str, str] = {}
    for pid in ids:
        if pid.isascii() and pid == pid.strip():
            continue
        key = id_key(pid)
        if key != pid:
            out.setdefault(key, pid)
    return out


def find_id(ref: str, stored: Container[str], odd: Mapping[str, str]) -> str | None:
    """The stored id that ``ref`` names: the first of its :func:`spellings` stored, else
    the stored id with its key (``odd``: :func:`odd_spellings` of the stored ids), or None."""
    got = stored_spelling(ref, stored)
    if got is None:
        got = odd.get(id_key(ref))
        if got is not None and got not in stored:
            got = None
    return got
