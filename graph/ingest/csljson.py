"""CSL-JSON items (Zotero's "CSL JSON" export) as paper records.

A ``.json`` (or ``.csljson``) file is read by :mod:`graph.ingest.jsonl`; each object that
:func:`looks_like_csl` (a ``type`` string and one of an ``author`` list of name objects,
``issued``, ``container-title``, ``DOI``, ``citation-key``) is mapped here, every other
object is read as a plain record. So one file may mix both, and a plain record that
happens to have a ``type`` field is not mistaken for CSL.

==========================================  ======================================
CSL-JSON field                              record field
==========================================  ======================================
``citation-key``, else ``id``               ``id``
``title``, ``abstract``                     ``title``, ``abstract``
``author``: ``[{family, given}]``           ``authors``, each as "given family"
                                            (``non-dropping-particle``, ``suffix``
                                            kept; ``literal`` as is)
``issued``: ``{date-parts: [[y, m, d]]}``   ``year`` (``raw`` or ``literal`` read as a
                                            year when ``date-parts`` is absent)
``container-title``, else ``event-title``   ``venue``
``keyword`` (comma-separated)               ``keywords``
``DOI``                                     ``doi`` (folded, prefix stripped)
``URL``                                     ``urls``
``references`` (not CSL; where present)     ``references`` (strings or objects)
==========================================  ======================================

A name or ``issued`` that cannot be read is dropped with a problem at the item (the
record kept); a missing abstract rejects the item, as in every format.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graph.ingest.records import _show, _type_name

_MARKERS = ("issued", "container-title", "DOI", "citation-key")


def looks_like_csl(item: Mapping[str, Any]) -> bool:
    """Whether a JSON object is a CSL item rather than a plain paper record."""
    if not isinstance(item.get("type"), str):
        return False
    author = item.get("author")
    if isinstance(author, list) and any(isinstance(a, Mapping) for a in author):
        return True
    return any(k in item for k in _MARKERS)


def _name(person: object, notes: list[str]) -> str | None:
    if isinstance(person, str):
        return person
    if not isinstance(person, Mapping):
        notes.append(f"author: dropped a {_type_name(person)} element")
        return None
    literal = person.get("literal")
    if isinstance(literal, str) and literal.strip():
        return literal
    parts = [person.get(k) for k in ("given", "non-dropping-particle", "family", "suffix")]
    if not isinstance(person.get("family"), str) or not all(
        p is None or isinstance(p, str) for p in parts
    ):
        notes.append(f"author: dropped {_show(dict(person))}: no family name")
        return None
    return " ".join(p.strip() for p in parts if isinstance(p, str) and p.strip())


def _year(issued: object, notes: list[str]) -> Any:
    """The year of ``issued``, as a value for the record's year field, or None."""
    if isinstance(issued, Mapping):
        parts = issued.get("date-parts")
        if parts is not None:
            if (isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]
                    and isinstance(parts[0][0], int | str) and not isinstance(parts[0][0], bool)):
                return parts[0][0]
        else:
            for key in ("raw", "literal"):
                if isinstance(issued.get(key), str):
                    return issued[key][:4] if issued[key][:4].isdigit() else issued[key]
    elif isinstance(issued, int | str) and not isinstance(issued, bool):
        return issued
    notes.append(f"issued {_show(issued)} is not a date (expected {{\"date-parts\": "
                 "[[year, month, day]]}); year dropped")
    return None


def csl_record(item: Mapping[str, Any], notes: list[str]) -> dict[str, Any]:
    """The paper record of one CSL item; fields it cannot read go to ``notes``."""
    record: dict[str, Any] = {}
    key = item.get("citation-key")
    record["id"] = key if isinstance(key, str) and key.strip() else item.get("id")
    for name in ("title", "abstract", "references"):
        if name in item:
            record[name] = item[name]
    author = item.get("author")
    if isinstance(author, list):
        record["authors"] = [n for a in author if (n := _name(a, notes))]
    elif author is not None:
        notes.append(f"author is not a list (got {_type_name(author)}); field dropped")
    if "issued" in item:
        record["year"] = _year(item["issued"], notes)
    venue = item.get("container-title") or item.get("event-title")
    if venue is not None:
        record["venue"] = venue
    if "keyword" in item:
        record["keywords"] = item["keyword"]
    if "DOI" in item:
        record["doi"] = item["DOI"]
    if "URL" in item:
        record["urls"] = item["URL"]
    return record
