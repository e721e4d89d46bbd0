"""Named datasets and benchmarks in a sentence, and whether the paper introduces them."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from functools import lru_cache

from graph.extract.lexicon import _CATEGORY_HEADS, _lex
from graph.extract.tokens import _acronym_singular, _is_word

_DIM_RE = re.compile(r"^\d+D$|^[IVX]+$")
_MODEL_SIZE_RE = re.compile(r"\d(?:\.\d+)?[BbMm]\b|-(?:Instruct|Chat|Base)\b")
_MIXED_RE = re.compile(r"[a-z][A-Z]|[A-Z].*\d|\d.*[A-Za-z]|^[A-Z]{2,}")
_BENCH_NAME_RE = re.compile(
    r"^[A-Za-z0-9-]*[a-z0-9-](?:Bench|BENCH)[A-Za-z0-9-]*$|^[A-Z][A-Za-z0-9]*-?(?:Bench|BENCH)$"
)
_INTRO_RE = re.compile(
    r"\b(?:we|this (?:paper|work|study)|our (?:work|paper))\b[^.;]*?\b("
    r"present|introduce|propose|release|build|construct|curate|collect|create|develop"
    r"|establish|contribute|open-source|provide|design|compile|assemble|gather|annotate"
    r")(?:s|d|ed|es)?\b",
    re.IGNORECASE,
)
_INTRO_BLOCK = frozenset(
    {"on", "using", "with", "across", "over", "from", "against", "via", "to", "by", "in", "into",
     "upon", "through", "than", "like", "including", "evaluated", "tested", "trained"}
)
_DATASET_CUES = frozenset(
    {"dataset", "datasets", "benchmark", "benchmarks", "corpus", "corpora", "suite", "testbed",
     "collection"}
)
_LIST_INTRO = frozenset({"such", "including", "like", ":", "(", "namely"})
_EVAL_CONTEXT_RE = re.compile(
    r"\b(experiment|evaluat|result|outperform|benchmark|test|train|achiev|accuracy|fine-tun)",
    re.IGNORECASE,
)


def _namey(tok: str, initial: bool) -> bool:
    if not _is_word(tok) or tok.lower() in _lex().stop:
        return False
    if _MIXED_RE.search(tok):
        return True
    return tok[0].isupper() and not initial


@lru_cache(maxsize=1 << 14)
def _looks_like_model(tok: str) -> bool:
    """GPT-4o, Llama-3-8B, ResNet-50: model names, not datasets."""
    if _MODEL_SIZE_RE.search(tok):
        return True
    low = tok.lower()
    return any(low == n.lower() or low.startswith(n.lower() + "-") for n in _lex().not_datasets)


def _strong_name(tok: str) -> bool:
    """CIFAR-10, ImageNet, GSM8K; not all-caps words (GPU, II), which need the gazetteer."""
    has_alpha = any(c.isalpha() for c in tok)
    has_digit = any(c.isdigit() for c in tok)
    inner_mix = any(a.islower() and b.isupper() for a, b in itertools.pairwise(tok))
    return has_alpha and (has_digit or inner_mix)


def _dataset_spans(
    tokens: Sequence[str], defined: set[str]
) -> list[tuple[int, int]]:
    """Token spans [start, end) of dataset names cued in one sentence."""
    lex = _lex()
    spans: list[tuple[int, int]] = []
    n = len(tokens)

    def name_back(end: int) -> int:
        start = end
        while start > 0:
            t = tokens[start - 1]
            if t in {"'s", "’s"} and start - 1 > 0 and _namey(tokens[start - 2], start - 2 == 0):
                start -= 2
                continue
            if _namey(t, start - 1 == 0) or (
                t.isdigit() and start >= 2 and _namey(tokens[start - 2], start - 2 == 0)
            ):
                start -= 1
                continue
            break
        return start

    def name_fwd(begin: int) -> int:
        end = begin
        while end < n and (
            _namey(tokens[end], end == 0) or (end > begin and tokens[end].isdigit())
        ):
            end += 1
        return end

    def ok(start: int, end: int) -> bool:
        if end <= start or end - start > 6:
            return False
        words = tokens[start:end]
        if _looks_like_model(words[0]) or _looks_like_model(words[-1]):
            return False
        if _DIM_RE.match(words[0]):
            return False
        if any(_BENCH_NAME_RE.match(w) for w in words):
            return True
        if all(w in lex.not_datasets or _acronym_singular(w) in lex.not_datasets
               or _acronym_singular(w).lower() in defined for w in words if _is_word(w)):
            return False
        return not (len(words) == 1 and words[0].isdigit())

    for i, tok in enumerate(tokens):
        low = tok.lower()
        if low in _DATASET_CUES:
            # "the COCO2014 dataset", "Allen Institute's Brain Observatory dataset"
            start = name_back(i)
            if ok(start, i):
                spans.append((start, i))
            # "datasets such as X, Y and Z", "benchmark, FashionMT", "dataset called X"
            j = i + 1
            if j < n and tokens[j] in {",", "called", "named", "dubbed", "termed"}:
                k = j + 1
                if k < n and tokens[k] in {"called", "named", "dubbed"}:
                    k += 1
                end = name_fwd(k)
                if ok(k, end):
                    spans.append((k, end))
            if j < n and tokens[j].lower() in _LIST_INTRO:
                k = j + 2 if tokens[j].lower() == "such" else j + 1
                while k < n:
                    end = name_fwd(k)
                    if not ok(k, end):
                        break
                    spans.append((k, end))
                    k = end
                    while k < n and tokens[k] in {",", "and", "or"}:
                        k += 1
                    if k >= n or not _namey(tokens[k], False):
                        break
        elif tok == "," and i > 0 and i + 1 < n and tokens[i + 1].lower() in {"a", "an", "the"}:
            # "MMAU, a novel benchmark ...": appositive naming a dataset
            for k in range(i + 2, min(n, i + 10)):
                w = tokens[k].lower()
                if w in _DATASET_CUES:
                    start = name_back(i)
                    if ok(start, i):
                        spans.append((start, i))
                    break
                if not _is_word(tokens[k]) and tokens[k] not in {"-", ","}:
                    break
                if w in {"of", "for", "with", "that", "which", "to", "on", "in", "by", "from",
                         "and", "or", "is", "are", "approach", "method", "model", "framework"}:
                    break
        elif _BENCH_NAME_RE.match(tok) and ok(i, i + 1):
            spans.append((i, name_fwd(i + 1) if i + 1 < n and tokens[i + 1].isdigit() else i + 1))
    # keep the longest of overlapping spans ("AIR-BENCH 2024" over "AIR-BENCH")
    spans = sorted(set(spans), key=lambda sp: (sp[0] - sp[1], sp[0]))
    kept: list[tuple[int, int]] = []
    for sp in spans:
        if not any(k[0] <= sp[0] and sp[1] <= k[1] for k in kept):
            kept.append(sp)
    return sorted(kept)


def _eval_list_spans(
    tokens: Sequence[str], sentence: str, defined: set[str]
) -> list[tuple[int, int]]:
    """Strong names listed after "on"/"across" in an evaluation sentence ("on SVHN and X")."""
    if not _EVAL_CONTEXT_RE.search(sentence):
        return []
    spans: list[tuple[int, int]] = []
    n = len(tokens)
    for i, tok in enumerate(tokens):
        if tok.lower() not in {"on", "across"}:
            continue
        k = i + 1
        if k < n and tokens[k].lower() == "the":
            k += 1
        while k < n:
            t = tokens[k]
            single = _acronym_singular(t)
            if not (_strong_name(t) and single == t and not _looks_like_model(t)
                    and not _DIM_RE.match(t)
                    and t.lower() not in defined and not _CATEGORY_HEADS["model"] & {t.lower()}):
                break
            spans.append((k, k + 1))
            k += 1
            while k < n and tokens[k] in {",", "and", "or"}:
                k += 1
    return spans


def _introduces(sentence: str, tokens: Sequence[str], start: int) -> bool:
    m = _INTRO_RE.search(sentence)
    if not m:
        return False
    verb = m.group(1).lower()
    try:
        v = next(i for i, t in enumerate(tokens) if t.lower().startswith(verb))
    except StopIteration:
        return False
    if v >= start or start - v > 25:
        return False
    return not any(t.lower() in _INTRO_BLOCK for t in tokens[v + 1 : start])
