"""How large a text may be where a store indexes it: the one place these bounds live.

Neo4j keeps a range index on ``Paper.id``, ``Paper.label``, ``Concept.id``/``name`` and
``Dataset.id``/``name`` (:func:`graph.store.cypher.schema_statements`). A range index key
holds at most ~8 kB of a value, and one value over it refuses the whole write ("Property
value is too large to index"): one 9,000-character title in a file made ``citegraph add``
fail whole on Neo4j while the embedded store took it (issue 39, finding 2). So every text
that reaches one of those properties is bounded before any store sees it, the same for
every store: a record's id and title at ingest (:mod:`graph.ingest.records`, which the
CLI readers and the API's ``addPapers`` share), a concept's or dataset's name and aliases
at extraction (:mod:`graph.extract.rules`). A ``Paper.label`` is its title or a label
made from a few words of the abstract (under 100 characters).

The character bounds are the ones a person reads in a message; at 4 bytes per character
at most they also keep every value under :data:`MAX_INDEXED_BYTES`, half Neo4j's key limit.
The full-text indexes (SQLite FTS5, Neo4j's Lucene index) split long words and have no
such limit.
"""

from __future__ import annotations

#: UTF-8 bytes any indexed text may take (Neo4j's range index key: 8,167 bytes)
MAX_INDEXED_BYTES = 4_000
#: a title, which becomes the paper's ``label``; real titles stay under ~300 characters
MAX_TITLE_CHARS = 1_000
#: a given paper id
MAX_ID_CHARS = 512
#: a concept's or dataset's name or alias, as extraction finds it in an abstract (real
#: ones are a few words; a 9,000-letter "word" is not a term)
MAX_TERM_CHARS = 200

# a character is at most 4 bytes of UTF-8: the character bounds imply the byte bound
assert 4 * max(MAX_TITLE_CHARS, MAX_ID_CHARS, MAX_TERM_CHARS + 16) <= MAX_INDEXED_BYTES


def over_bound(text: str, max_chars: int) -> str | None:
    """Why ``text`` cannot be indexed ("1200 characters > 1000"), or None when it can."""
    if len(text) > max_chars:
        return f"{len(text)} characters > {max_chars}"
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_INDEXED_BYTES:
        return f"{size} bytes of UTF-8 > {MAX_INDEXED_BYTES}"
    return None
