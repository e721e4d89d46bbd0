"""Papers as a reference manager's file: BibTeX (bibtexparser) or RIS (rispy).

What a result list (related papers, a search, a neighbourhood) gives back to Zotero,
JabRef or EndNote; the readers (graph/ingest/bibtex.py, graph/ingest/ris.py) read these
files back to the same papers (id, title, DOI, authors, year, venue, abstract, keywords).

BibTeX: one ``@article`` per paper, the paper id as key (characters a key cannot hold,
``, {}()"#%~=`` and whitespace, become ``_``); ``title``, ``author`` (" and "-joined,
each name as stored), ``year``, ``journal`` (the venue), ``abstract``, ``keywords``,
``doi``, ``url`` (the first link that is not the DOI's). Braces and backslashes in a
value are escaped, so every value is one balanced group.

RIS: one ``TY  - JOUR`` record per paper: ``ID``, ``TI``, ``AU`` ("Last, First"),
``PY``, ``T2`` (the venue), ``AB``, ``KW``, ``DO``, ``UR``; a value's line breaks become
spaces (a RIS value is one line).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import rispy
from bibtexparser.entrypoint import write_string
from bibtexparser.library import Library
from bibtexparser.model import Entry, Field

from graph.ingest.ris import ris_name
from graph.model import GraphNode, Paper

#: format -> (media type, download file name)
FORMATS: dict[str, tuple[str, str]] = {
    "bibtex": ("application/x-bibtex; charset=utf-8", "citegraph.bib"),
    "ris": ("application/x-research-info-systems; charset=utf-8", "citegraph.ris"),
}
_KEY_BAD_RE = re.compile(r'[\s,{}()"#%~=\\]')
_LINE_RE = re.compile(r"\s*[\r\n]+\s*")


def papers_of(nodes: Iterable[GraphNode]) -> list[Paper]:
    """The papers among ``nodes`` (a neighbourhood holds concepts too), in their order."""
    return [n for n in nodes if isinstance(n, Paper)]


def _brace_safe(text: str) -> str:
    return text.replace("\\", "\\textbackslash ").replace("{", "\\{").replace("}", "\\}")


def _other_url(p: Paper) -> str | None:
    doi_url = f"https://doi.org/{p.doi}" if p.doi else None
    return next((u for u in p.urls if u.lower() != (doi_url or "")), None)


def to_bibtex(papers: Sequence[Paper]) -> str:
    """The papers as one BibTeX document."""
    library = Library()
    used: set[str] = set()
    for p in papers:
        key = _KEY_BAD_RE.sub("_", p.id) or "paper"
        while key in used:  # two ids that differ only in characters a key cannot hold
            key += "_"
        used.add(key)
        values: list[tuple[str, Any]] = [
            ("title", p.title), ("author", " and ".join(p.authors) or None),
            ("year", str(p.year) if p.year is not None else None), ("journal", p.venue),
            ("abstract", p.abstract), ("keywords", ", ".join(p.keywords) or None),
            ("doi", p.doi), ("url", _other_url(p)),
        ]
        # bibtexparser encloses each value in braces itself
        fields = [Field(name, _brace_safe(v)) for name, v in values if v]
        library.add(Entry("article", key, fields))
    return str(write_string(library))


def to_ris(papers: Sequence[Paper]) -> str:
    """The papers as one RIS document."""
    entries: list[dict[str, Any]] = []
    for p in papers:
        entry: dict[str, Any] = {"type_of_reference": "JOUR", "id": p.id}
        for name, value in (("title", p.title), ("secondary_title", p.venue),
                            ("abstract", p.abstract), ("doi", p.doi)):
            if value:
                entry[name] = _LINE_RE.sub(" ", value)
        if p.year is not None:
            entry["year"] = str(p.year)
        if p.authors:
            entry["authors"] = [ris_name(a) for a in p.authors]
        if p.keywords:
            entry["keywords"] = list(p.keywords)
        urls = [u for u in p.urls if not p.doi or u.lower() != f"https://doi.org/{p.doi}"]
        if urls:
            entry["urls"] = urls
        entries.append(entry)
    return str(rispy.dumps(entries))


def render(fmt: str, papers: Sequence[Paper]) -> str:
    """``papers`` in ``fmt`` (a key of :data:`FORMATS`)."""
    return to_bibtex(papers) if fmt == "bibtex" else to_ris(papers)
