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
  spelling first given is the one kept, so a graph from before this rule opens and
  answers unchanged. Why one paper: the two look the same everywhere a person reads
  or types an id, and the text fields are already NFC (``clean_text``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Container


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
