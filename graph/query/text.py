"""Keyword scoring, the same for every store: stores only supply the candidates."""

from __future__ import annotations

import re
from dataclasses import dataclass

from graph.model import GraphNode

_WORD = re.compile(r"[\w][\w\-]*", re.UNICODE)

#: A keyword query is read up to this many characters: longer text is not a keyword query,
#: and scoring every node against 90 KB of it would take seconds.
MAX_QUERY_CHARS = 500


def query_terms(query: str) -> list[str]:
    """Lower-cased words of a keyword query (its first MAX_QUERY_CHARS characters)."""
    return [w.casefold() for w in _WORD.findall(query[:MAX_QUERY_CHARS])]


@dataclass(frozen=True, slots=True)
class SearchText:
    """A node's text as keyword scoring reads it (case-folded once, reusable)."""

    names: tuple[str, ...]  # label/name, then aliases
    title: str
    body: str
    name_text: str  # names and title joined, for word tests

    @classmethod
    def of(cls, node: GraphNode) -> SearchText:
        names = (node.label.casefold(), *(a.casefold() for a in getattr(node, "aliases", ())))
        title = (getattr(node, "title", None) or "").casefold()
        body = (getattr(node, "abstract", None) or "").casefold()
        return cls(names, title, body, " ".join(names) + " " + title)


def keyword_score(query: str, node: GraphNode | SearchText) -> float:
    """Score a node for a keyword query, the same way in every store.

    The whole query in the label/name/alias scores 3 (exact equality 5); each query
    word in the label/aliases scores 1, in title/abstract 0.25. Zero means no hit.
    A store that scores many nodes passes their :class:`SearchText`, made once.
    """
    q = query[:MAX_QUERY_CHARS].strip().casefold()
    if not q:
        return 0.0
    text = node if isinstance(node, SearchText) else SearchText.of(node)
    score = 0.0
    if any(n == q for n in text.names):
        score += 5.0
    elif any(q in n for n in text.names) or q in text.title:
        score += 3.0
    terms = query_terms(q)
    for t in terms:
        if t in text.name_text:
            score += 1.0
        elif t in text.body:
            score += 0.25
    if score and terms and not all(t in text.name_text or t in text.body for t in terms):
        # every word must occur somewhere; partial matches rank but only above zero
        score *= 0.5
    return score
