"""Concepts, acronyms and datasets from abstracts, and their corpus-wide resolution.

:class:`Extractor` is the seam (``graph/extract/base.py``); :class:`RuleExtractor` is the
rule-based one the pipeline uses by default, composed of stage modules: ``lexicon`` and
``tokens`` (word lists, sentences, part-of-speech rules), ``acronyms``, ``phrases``,
``datasets``, ``labels`` and ``resolve``. ``extract`` reads one abstract and nothing else,
so its result can be cached by text hash; ``resolve`` merges many extractions: acronym
definitions found in any paper join short and long forms, terms seen in one paper only
are kept when they look technical, and every output is sorted so that the same papers in
any order give the same graph. Resolution returns terms; ``graph.link`` makes the edges.
"""

from graph.extract.base import (
    DatasetMention,
    Extraction,
    Extractor,
    IncrementalResolution,
    PaperTerm,
    Resolution,
    TermMention,
    extraction_from_json,
    extraction_to_json,
)
from graph.extract.labels import make_label
from graph.extract.resolve import resolve
from graph.extract.rules import RuleExtractor, extract

__all__ = [
    "DatasetMention",
    "Extraction",
    "Extractor",
    "IncrementalResolution",
    "PaperTerm",
    "Resolution",
    "RuleExtractor",
    "TermMention",
    "extract",
    "extraction_from_json",
    "extraction_to_json",
    "make_label",
    "resolve",
]
