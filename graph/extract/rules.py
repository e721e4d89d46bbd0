"""The rule-based extractor: the stages put together.

There is no POS tagger: noun phrases come from rules over a word lexicon (lemminflect's),
a stoplist and generic-word lists in ``graph/data``. Per sentence, :mod:`.acronyms` finds
definitions, :mod:`.phrases` the candidate terms, :mod:`.datasets` the named datasets;
:mod:`.labels` names an untitled paper, and :mod:`.resolve` merges many papers.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from graph.bounds import MAX_TERM_CHARS
from graph.extract.acronyms import _find_acronyms
from graph.extract.base import DatasetMention, Extraction, Resolution, TermMention
from graph.extract.datasets import (
    _dataset_spans,
    _eval_list_spans,
    _introduces,
    not_data_after,
)
from graph.extract.incremental import Resolver
from graph.extract.labels import make_label
from graph.extract.lexicon import _DATA_DIR, _TOKEN_RE, _lex
from graph.extract.phrases import _candidates, _chunks
from graph.extract.resolve import resolve
from graph.extract.tokens import (
    _HEAD,
    _acronym_singular,
    _category,
    _dataset_key,
    _fold,
    _is_acronym,
    _key,
    _norm_word,
    _prepare,
    _role,
    _sentences,
    _trim,
)


def extract(text: str) -> Extraction:
    """Concept, dataset and acronym mentions of one abstract (depends on the text only)."""
    lex = _lex()
    clean = _prepare(text)
    sentences = _sentences(clean)
    counts: Counter[str] = Counter()
    surface: dict[str, Counter[str]] = defaultdict(Counter)
    evidence: dict[str, str] = {}
    order: dict[str, int] = {}
    acronyms: dict[str, str] = {}
    acronym_keys: set[str] = set()
    per_sentence: list[tuple[str, list[str]]] = []

    def add(key: str, surf: str, sentence: str) -> None:
        if len(surf) > MAX_TERM_CHARS or len(key) > MAX_TERM_CHARS:
            return  # a 9,000-letter "word" is no term, and a store could not index its name
        counts[key] += 1
        surface[key][surf] += 1
        if key not in evidence:
            evidence[key] = _trim(sentence)
            order[key] = len(order)

    for sentence in sentences:
        tokens = _TOKEN_RE.findall(sentence)
        per_sentence.append((sentence, tokens))
        skip: set[int] = set()
        seen_long: Counter[str] = Counter()
        for short, long, open_i, close_i in _find_acronyms(tokens):
            sf = _acronym_singular(short)
            long_key = _key(long)
            if len(long_key) > MAX_TERM_CHARS:
                continue
            acronyms.setdefault(sf, long_key)
            acronym_keys.add(sf.lower())
            if tokens[open_i + 1] == short and close_i == open_i + 2:
                skip.update((open_i, open_i + 1, close_i))
            add(long_key, " ".join(long), sentence)
            seen_long[long_key] += 1
        for i, tok in enumerate(tokens):
            if i not in skip and _is_acronym(tok) and _role(tok) == _HEAD:
                add(_norm_word(tok, head=True), tok, sentence)
        for chunk in _chunks(tokens, skip):
            for key, surf in _candidates(chunk):
                if len(key.split()) == 1 and _is_acronym(surf):
                    continue  # counted above
                if seen_long[key] > 0:
                    seen_long[key] -= 1  # the definition's long form, counted above
                    continue
                add(key, surf, sentence)

    defined = set(acronym_keys)
    datasets: dict[str, DatasetMention] = {}
    for sentence, tokens in per_sentence:
        spans = _dataset_spans(tokens, defined) + _eval_list_spans(tokens, sentence, defined)
        found: list[tuple[str, int]] = [(" ".join(tokens[s:e]).replace(" 's", "'s"), s)
                                        for s, e in spans if not not_data_after(tokens, e)]
        for pos, tok in enumerate(tokens):
            for cand, canonical in lex.gazetteer_first.get(tok, ()):
                if tuple(tokens[pos : pos + len(cand)]) == cand:
                    if tok.lower() not in defined and not not_data_after(tokens, pos + len(cand)):
                        found.append((canonical, pos))
                    break
        for raw_name, pos in sorted(found, key=lambda f: f[1]):
            name = raw_name.strip(" -")
            if len(name) > MAX_TERM_CHARS:
                continue
            dkey = _dataset_key(name)
            intro = _introduces(sentence, tokens, pos)
            prev = datasets.get(dkey)
            if prev is None:
                datasets[dkey] = DatasetMention(name, dkey, intro, _trim(sentence))
            elif intro and not prev.introduces:
                datasets[dkey] = DatasetMention(prev.name, dkey, True, _trim(sentence))

    # "AIR-BENCH" inside "AIR-BENCH 2024"; "SharedContextBENCH" defining "SCBENCH"
    long_names = {" ".join(_TOKEN_RE.findall(lg)).lower() for lg in acronyms.values()}
    for dkey in sorted(datasets):
        if dkey not in datasets:
            continue
        d = datasets[dkey]
        longer = [k for k in datasets if k != dkey and k.startswith(dkey)]
        if longer or (d.name.lower() in long_names and len(datasets) > 1):
            if longer and d.introduces:
                keep = datasets[min(longer)]
                datasets[keep.key] = DatasetMention(keep.name, keep.key, True, keep.evidence)
            del datasets[dkey]
    dataset_folds = {_fold(k) for k in datasets}
    concepts: list[TermMention] = []
    for key in sorted(counts, key=lambda k: (order[k], k)):
        if _fold(key) in dataset_folds:
            continue
        surf = max(surface[key].items(), key=lambda kv: (kv[1], kv[0]))[0]
        long_form = acronyms.get(surf.upper()) or acronyms.get(surf)
        cat = _category(long_form) if long_form and len(key.split()) == 1 else _category(key)
        concepts.append(TermMention(key, surf, counts[key], evidence[key], cat))
    return Extraction(
        concepts=tuple(concepts),
        datasets=tuple(sorted(datasets.values(), key=lambda d: d.key)),
        acronyms=tuple(sorted(acronyms.items())),
        label=make_label(text),
    )


_PACKAGE = Path(__file__).parent


#: the resolution's modules: what they compute (from the extractions) is not cached, so an
#: edit there must not throw away every cached extraction (a re-extraction of the corpus,
#: ~13 s of the next `citegraph add` on ICLR 2021)
_RESOLUTION = frozenset({"resolve.py", "incremental.py"})


@cache
def _rules_digest() -> str:
    """Hash of the extraction's modules and word lists: any edit to the rules is a new
    version (the resolution's modules are left out: :data:`_RESOLUTION`)."""
    h = hashlib.sha256()
    files = [*sorted(f for f in _PACKAGE.glob("*.py") if f.name not in _RESOLUTION),
             *sorted(_DATA_DIR.glob("*"))]
    for f in files:
        if f.is_file():
            h.update(f.name.encode("utf-8") + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


class RuleExtractor:
    """The rule-based :class:`~graph.extract.base.Extractor` (lexicon, no model)."""

    @property
    def version(self) -> str:
        """``rules-<hash of this package's code and graph/data>``.

        Derived rather than bumped by hand, so that tuning a rule or a word list can
        never serve extractions cached under the old rules.
        """
        return f"rules-{_rules_digest()}"

    def extract(self, text: str) -> Extraction:
        """Concept, dataset and acronym mentions of one abstract, and its label."""
        return extract(text)

    def resolve(self, extractions: Mapping[str, Extraction]) -> Resolution:
        """Corpus-wide concepts, datasets and per-paper terms."""
        return resolve(extractions)

    def resolver(self) -> Resolver:
        """A :class:`~graph.extract.incremental.Resolver`: ``resolve`` kept current."""
        return Resolver()
