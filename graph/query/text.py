"""What keyword search indexes and how a query becomes terms, the same for every store.

Stores rank with BM25 from a real inverted index (SQLite FTS5 in the embedded and
memory stores, Lucene's fulltext index in Neo4j). This module only says which text
each node offers (:func:`search_fields`), how the fields are weighted
(:data:`COLUMN_WEIGHTS`) and which words of the user's text are searched for
(:func:`query_terms`). The terms are letters and digits only, so a store can quote
them into its query language without any of the user's text reading as syntax.
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

from graph.model import GraphNode

#: a run of letters and digits: FTS5's unicode61 and Lucene's standard tokenizer both
#: split on everything else, so no term carries quotes, operators or control characters
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

#: A keyword query is read up to this many characters: longer text is not a keyword query.
MAX_QUERY_CHARS = 500
#: ... and up to this many distinct words (each one is an OR branch of the index query).
MAX_QUERY_TERMS = 32

#: Lucene's English stop words (EnglishAnalyzer, which the Neo4j index uses): dropped from
#: the query on every store, so every store matches the same documents; BM25 gives them
#: nearly no weight anyway, but each matches most papers and costs a scan of its postings.
STOP_WORDS = frozenset([
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with",
])


class SearchFields(NamedTuple):
    """A node's text as the index holds it: one column each."""

    name: str  # label (papers) or name (concepts, datasets), then aliases
    title: str
    abstract: str


#: BM25 column weights (name, title, abstract). A word in the name or title counts
#: twice a word in the abstract, so a paper named by the query, or a concept called it,
#: outranks papers whose abstracts mention it. 2/2/1 is what bench/ranking.py (git history) measured
#: for the HYBRID fusion on ICLR 2021 (P@1 0.866 titles from labels; 1/1/1 0.869 and
#: 5/5/1 0.859: heavier weights let one-word concept names crowd out titles).
COLUMN_WEIGHTS: tuple[float, float, float] = (2.0, 2.0, 1.0)


def search_fields(node: GraphNode) -> SearchFields:
    """The three indexed columns of ``node``."""
    names = [node.label, *getattr(node, "aliases", ())]
    return SearchFields(
        "\n".join(n for n in names if n),
        getattr(node, "title", None) or "",
        getattr(node, "abstract", None) or "",
    )


def _latin(c: str) -> bool:
    o = ord(c)
    return o < 0x250 or 0x1E00 <= o < 0x1F00


def fold(word: str) -> str:
    """``word`` without the diacritics of its Latin letters ("Ångström" -> "Angstrom"),
    as SQLite FTS5's unicode61 tokenizer folds them (remove_diacritics); other scripts'
    marks (a Devanagari vowel sign) are part of the word and stay."""
    if word.isascii():
        return word
    out: list[str] = []
    for c in unicodedata.normalize("NFD", word):
        if unicodedata.category(c) == "Mn" and out and _latin(out[-1]):
            continue
        out.append(c)
    return unicodedata.normalize("NFC", "".join(out))


def index_text(text: str) -> str:
    """``text`` as the folded words :func:`query_terms` would find in it, one space apart.

    What a store indexes when its own tokenizer splits words otherwise than FTS5's
    unicode61: Lucene's standard tokenizer keeps "10.5", "U.S" and "models.However" as
    one token and its English analyzer drops possessives, so "U.S." matched 31 papers of
    ICLR 2021 on Neo4j and 474 on the embedded store (probe 18, finding 7). Indexing
    these words instead, every store splits the same text into the same words.
    """
    return " ".join(fold(w) for w in _WORD.findall(text))


def query_terms(query: str) -> list[str]:
    """The words a keyword query searches for, in order, each once (case-insensitively).

    Read from the first MAX_QUERY_CHARS characters, stop words dropped (a query of stop
    words only finds nothing, on every store), at most MAX_QUERY_TERMS. Terms keep their
    case: each index folds them with its own analyzer, as it folded the documents.
    """
    # the first MAX_QUERY_CHARS, but never cut inside a word: a word that runs past the
    # limit is kept whole (a 600-letter word is still one word to look for)
    head = query[:MAX_QUERY_CHARS]
    if len(query) > MAX_QUERY_CHARS:
        tail = _WORD.match(query, MAX_QUERY_CHARS)
        head += tail.group() if tail else ""
    words = _WORD.findall(head)
    seen: dict[str, str] = {}
    for w in words:
        seen.setdefault(w.casefold(), w)
    return [w for k, w in seen.items() if k not in STOP_WORDS][:MAX_QUERY_TERMS]
