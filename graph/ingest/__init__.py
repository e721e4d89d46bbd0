"""Reading input files into papers: one Reader per format, cleaning, records, dedup.

Modules: ``base`` (the :class:`Reader` protocol, :class:`ReadResult`), one reader per
format (``text``, ``jsonl`` (with ``csljson``'s mapping of CSL items), ``table``,
``bibtex``, ``ris``), ``corpus`` (the registry of readers,
directory walking, :func:`read_corpus`), ``decode`` (bounded file reads, UTF-8 decoding),
``clean`` (TeX/markdown/URL cleaning, :func:`text_hash`), ``records`` (one record to a
:class:`~graph.model.Paper`: field names, coercion, limits) and ``collect`` (the
:class:`Collector` every reader hands its records to; duplicates merge there).

Every reader returns a :class:`ReadResult`: the papers that could be read plus one
:class:`InputProblem` per thing that could not. Bad data never raises; only a bug does.
Every format is read as UTF-8 (a UTF-8 byte-order mark skipped); a file that starts with a
UTF-16 or UTF-32 byte-order mark is decoded as such, and one that looks like UTF-16
without a mark is reported ("not valid UTF-8"), whatever its format.

Formats
    ``.txt``   UTF-8; blank-line separated paragraphs. The first paragraph is a header
               naming the collection ("ICLR 2025 Papers") unless it looks like an
               abstract (more than 25 words, or a sentence of 12+ words). The header
               gives every record its venue ("ICLR 2025") and year (2025).
    ``.jsonl`` one JSON object per line. ``.json``/``.csljson``: an array of objects, one
               object, or an object holding the array under ``papers``/``records``/
               ``data``/``items``. An object that is a CSL item (Zotero's CSL JSON) is
               mapped by graph/ingest/csljson.py.
    ``.csv`` / ``.tsv``  a header row, then one record per row. The delimiter comes from
               the extension (``.csv`` falls back to tab/``;``/``|`` when the header has no
               comma). TSV is read without quote processing (fields cannot hold tabs or
               newlines), so a field that starts with ``"`` keeps its quote.
    ``.bib``   BibTeX; one record per entry, the entry key as id (see graph/ingest/bibtex.py).
    ``.ris``   RIS; one record per ``TY`` … ``ER`` block (see graph/ingest/ris.py).

Fields (names case-insensitive; ``paper_id``→id, ``summary``/``text``→abstract,
``link``/``url``→urls): ``id, title, abstract, authors, year, venue, keywords,
references, doi``. Lists may be JSON arrays or strings split on ``;`` (authors, references)
or on ``;``, else ``,`` (keywords). A reference is a string or an object with ``doi``,
``arxiv``, ``id`` or ``title``, kept as its key (graph/refs.py); one that is none of
these is dropped with a problem and counted (``ReadResult.unparseable_references``). A
``doi`` is folded and stripped of its URL prefix.

Policy for bad fields
    * The record is rejected (an InputProblem, the rest of the file still read) when the
      abstract is unusable: missing/empty, not text, longer than ``MAX_ABSTRACT_CHARS``
      (raw), under 5 words (clean), or contains undecodable bytes; also when an ``id`` is
      given but is not a string or integer (a silently generated id would hide the error);
      when a title or an id is too long for a store to index (``graph.bounds``: a title
      over 1,000 characters, an id over 512, either over 4,000 bytes of UTF-8; dropping
      the title would hide the error).
    * Any other bad field (a year that is not a year, a title that is a number, a list
      element that is an object) is dropped, the record kept, and an InputProblem
      ("year 'soon' is not a year; field dropped") reported, so ``partial`` tells.
    * A JSON object that names a key twice is rejected ("duplicate key 'id'"), and so is
      a record where two names of one field (``id`` and ``paper_id``, ``ID`` and ``id``,
      a CSV column named twice) give different values: JSON keeps the last silently,
      and the first name used to win silently.
    * Links (``url``, ``urls`` and those taken out of the abstract) are kept only when
      they are http(s) URLs; a DOI ("doi:10.1/x", "10.1/x") or an arXiv id
      ("arXiv:2101.00001") becomes its https URL, "www.x.org" https://www.x.org. Any
      other (``javascript:``, ``data:``, ``ftp:``, a path) is dropped with a problem.
    * Empty cells and ``nan``/``null``/``none``/``n/a`` count as missing, silently.
    * A record without a year takes the year named in its venue ("ICLR 2025").

Identity and duplicates
    ``text_hash`` is the sha256 of :func:`normalized_key` of the clean abstract, so it
    ignores whitespace, case, markup and punctuation. A given id is kept; otherwise
    ``id = "p-" + text_hash[:12]``. The outcome does not depend on the order records come
    in (:class:`Collector`): records with the same ``text_hash`` merge into the one
    first by :func:`~graph.ingest.collect.record_order` (a given id before a generated
    one, then by id, then by content), the others filling its missing fields in that
    order; a different given id merged away is reported. An id given to records of
    different texts is reported at each of them, and none is kept. Records with one DOI
    merge as records of one text do (grouped by text or DOI, transitively).

Directories are walked recursively for the extensions above, in sorted order,
skipping hidden files and folders; a file named explicitly with another extension is
reported and skipped. A file given twice (or also inside a given folder) is read once.

Cleaning (:func:`clean_text`) turns TeX/markdown residue into plain text, removes URLs
(returned separately; a "Code is available at <url>." sentence is dropped whole) and
rejoins line-break hyphenation: "chal- lenging" -> "challenging" when the joined word is
known to lemminflect (or either half is not a word), "zero- shot" -> "zero-shot" when
both halves are words, and "task- and domain-agnostic" is left alone.

Line numbers are 1-based physical lines: the paragraph's first line (text), the line
(JSONL), or the record's first line (CSV/TSV, header = line 1; equals the row number
unless a quoted field spans lines).
"""

from graph.bounds import MAX_ID_CHARS, MAX_TITLE_CHARS
from graph.ingest.base import InputProblem, Reader, ReadResult
from graph.ingest.clean import clean_text, normalized_key, text_hash
from graph.ingest.collect import Collector
from graph.ingest.corpus import (
    EXTENSIONS,
    READERS,
    read_bibtex,
    read_corpus,
    read_jsonl,
    read_table,
    read_text,
    reader_for,
)
from graph.ingest.decode import Decoded, decode_file
from graph.ingest.records import (
    MAX_ABSTRACT_CHARS,
    MAX_FIELD_CHARS,
    MIN_ABSTRACT_WORDS,
    paper_from_record,
    placeholder_label,
)
from graph.ingest.text import venue_from_header

__all__ = [
    "EXTENSIONS",
    "MAX_ABSTRACT_CHARS",
    "MAX_FIELD_CHARS",
    "MAX_ID_CHARS",
    "MAX_TITLE_CHARS",
    "MIN_ABSTRACT_WORDS",
    "READERS",
    "Collector",
    "Decoded",
    "InputProblem",
    "ReadResult",
    "Reader",
    "clean_text",
    "decode_file",
    "normalized_key",
    "paper_from_record",
    "placeholder_label",
    "read_bibtex",
    "read_corpus",
    "read_jsonl",
    "read_table",
    "read_text",
    "reader_for",
    "text_hash",
    "venue_from_header",
]
