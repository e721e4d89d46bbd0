"""DOIs and references: how a paper is named by another, and how a name finds a paper.

A **DOI** is an identifier: :func:`normalize_doi` strips ``https://doi.org/``,
``http://dx.doi.org/`` and ``doi:``, and folds case (DOIs are case-insensitive), so
``DO  - https://doi.org/10.1/ABC`` and ``doi = {10.1/abc}`` are one DOI.

A **reference** (``Paper.references``) is kept as one string, its *reference key*:

* ``doi:<doi>``: a DOI (normalised as above);
* ``arxiv:<id>``: an arXiv id, version dropped (``arXiv:2101.00001v2``, an arxiv.org URL);
* anything else: a paper id or a title, as given (whitespace collapsed).

:func:`reference_key` turns a reference as read (a string, or an object with ``doi``,
``arxiv``, ``id`` or ``title``: the first of those that is usable wins) into its key, or
None when it is unparseable. :func:`reference_target` finds the corpus paper a key names:
a DOI by the papers' DOIs (then as an id), an arXiv id by its arXiv DOI
(``10.48550/arxiv.<id>``) or as an id, anything else as an id, then by title (case and
whitespace folded). Where several papers hold one title or DOI, the highest id wins. The
whole build (graph.citations.citation_edges) and an add (graph.region) both resolve through it,
so they agree.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graph.ids import spellings
from graph.model import Paper

_DOI_PREFIX_RE = re.compile(
    r"^(?:https?://(?:www\.)?(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE
)
_DOI_RE = re.compile(r"10\.\d+(?:\.\d+)*/\S+")
_ARXIV_RE = re.compile(
    r"(?:arxiv:\s*|https?://(?:www\.)?arxiv\.org/(?:abs|pdf)/)"
    r"((?:\d{4}\.\d{4,5}|[a-z][a-z.-]*/\d{7}))(?:v\d+)?(?:\.pdf)?",
    re.IGNORECASE,
)
_BARE_ARXIV_RE = re.compile(r"(\d{4}\.\d{4,5}|[a-z][a-z.-]*/\d{7})(?:v\d+)?", re.IGNORECASE)
#: longest reference kept (the records' bound for a list element)
MAX_REFERENCE_CHARS = 10_000


def normalize_doi(text: str) -> str | None:
    """``text`` as a DOI (prefix stripped, lower-case), or None when it is not one."""
    doi = _DOI_PREFIX_RE.sub("", text.strip()).strip()
    if not _DOI_RE.fullmatch(doi):
        return None
    return doi.lower()


def _arxiv_id(text: str, *, bare: bool) -> str | None:
    m = (_BARE_ARXIV_RE if bare else _ARXIV_RE).fullmatch(text.strip())
    return m.group(1).lower() if m else None


def _string_key(text: str) -> str | None:
    text = " ".join(text.split())
    if not text or len(text) > MAX_REFERENCE_CHARS:
        return None
    if _DOI_PREFIX_RE.match(text) or _DOI_RE.fullmatch(text):
        doi = normalize_doi(text)
        return f"doi:{doi}" if doi else None
    if (arxiv := _arxiv_id(text, bare=False)) is not None:
        return f"arxiv:{arxiv}"
    return text


def _field(obj: Mapping[str, Any], *names: str) -> Any:
    for key, value in obj.items():
        if isinstance(key, str) and key.strip().lower() in names:
            return value
    return None


def reference_key(value: object) -> str | None:
    """The reference key of a reference as read (module docstring), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value) if value.bit_length() < 64 else None
    if isinstance(value, str):
        return _string_key(value)
    if not isinstance(value, Mapping):
        return None
    doi = _field(value, "doi")
    if isinstance(doi, str) and (norm := normalize_doi(doi)):
        return f"doi:{norm}"
    arxiv = _field(value, "arxiv", "arxiv_id", "arxivid", "eprint")
    if isinstance(arxiv, str) and (
        (aid := _arxiv_id(arxiv, bare=True)) or (aid := _arxiv_id(arxiv, bare=False))
    ):
        return f"arxiv:{aid}"
    for name in ("id", "title"):
        given = _field(value, name)
        if isinstance(given, int) and not isinstance(given, bool):
            given = str(given)
        if isinstance(given, str) and (key := " ".join(given.split())) and (
            len(key) <= MAX_REFERENCE_CHARS
        ):
            return key
    return None


# ---------------------------------------------------------------- resolving


def title_key(title: str) -> str:
    """The name key a title is found by (case and whitespace folded)."""
    return "\x00title:" + " ".join(title.casefold().split())


def doi_key(doi: str) -> str:
    """The name key a (normalised) DOI is found by."""
    return "\x00doi:" + doi


def name_keys(paper: Paper) -> list[str]:
    """The keys a reference can find ``paper`` by, besides its id: its title and DOI."""
    keys = [title_key(paper.title)] if paper.title else []
    if paper.doi:
        keys.append(doi_key(paper.doi))
    return keys


def names_of(papers: Iterable[Paper]) -> dict[str, set[str]]:
    """Name key -> the papers holding it (the index :func:`reference_target` reads)."""
    names: dict[str, set[str]] = {}
    for p in papers:
        for key in name_keys(p):
            names.setdefault(key, set()).add(p.id)
    return names


def _split(ref: str) -> tuple[str, str]:
    kind, sep, value = ref.partition(":")
    if sep and kind in ("doi", "arxiv") and value:
        return kind, value
    return "", ref


def _named(names: Mapping[str, Collection[str]], key: str) -> str | None:
    found = names.get(key)
    return max(found) if found else None


def reference_target(
    ref: str, papers: Mapping[str, Any], names: Mapping[str, Collection[str]]
) -> str | None:
    """The id of the paper ``ref`` (a reference key) names, or None (module docstring).

    ``papers``: id -> node (only Paper values count); ``names``: :func:`names_of`.
    """

    def by_id(text: str) -> str | None:
        return next((s for s in spellings(text) if isinstance(papers.get(s), Paper)), None)

    kind, value = _split(ref)
    if kind == "doi":
        return _named(names, doi_key(value)) or by_id(value) or by_id(ref)
    if kind == "arxiv":
        return _named(names, doi_key(f"10.48550/arxiv.{value}")) or by_id(value) or by_id(ref)
    return by_id(ref) or _named(names, title_key(ref))


def dependency_keys(ref: str) -> set[str]:
    """Every id spelling and name key whose coming or going can change what ``ref``
    names (an add recomputes the CITES of the papers holding a key it moved)."""
    keys = set(spellings(ref))
    kind, value = _split(ref)
    if kind == "doi":
        keys.add(doi_key(value))
        keys.update(spellings(value))
    elif kind == "arxiv":
        keys.add(doi_key(f"10.48550/arxiv.{value}"))
        keys.update(spellings(value))
    else:
        keys.add(title_key(ref))
    return keys


@dataclass(frozen=True, slots=True)
class ReferenceCounts:
    """References of the papers read: naming a corpus paper, or well-formed but outside."""

    resolved: int = 0
    outside: int = 0


def count_references(
    papers: Sequence[Paper], corpus: Mapping[str, Any], names: Mapping[str, Collection[str]]
) -> ReferenceCounts:
    """How many of ``papers``' references name a paper of ``corpus`` (itself included)."""
    resolved = outside = 0
    for p in papers:
        for ref in p.references:
            if reference_target(ref, corpus, names) is None:
                outside += 1
            else:
                resolved += 1
    return ReferenceCounts(resolved, outside)
