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
     "collection", "competition", "competitions"}
)
# Cue words a typo may hide ("Bechmark", "Benchmak", "datset"): one edit away is still a cue
_FUZZY_CUES = ("benchmark", "dataset")
# "— PromptSet —" names the set just described when the clause before the dash has one of these
_SET_NOUNS = frozenset(
    {"set", "sets", "collection", "suite", "prompts", "questions", "problems", "tasks",
     "examples", "instances", "pairs", "samples", "images", "videos", "queries", "dialogues",
     "conversations", "documents", "annotations", "scenes", "environments"}
) | _DATASET_CUES
_DASHES = frozenset({"—", "–", "-", "--"})
# "MedCaption, a curated set of radiology captions": a named set of data items, no cue word
_SET_HEADS = frozenset({"set", "collection", "compilation", "suite", "pool"})
_DATA_ITEMS = _SET_NOUNS - {"set", "sets", "collection", "suite"} | frozenset(
    {"captions", "sentences", "passages", "texts", "articles", "recordings", "trajectories",
     "demonstrations", "programs", "proofs", "puzzles", "games", "graphs", "molecules",
     "reviews", "posts", "utterances", "photos", "clips", "tables", "records", "papers",
     "abstracts", "transcripts", "episodes", "benchmarks", "datasets", "tasks", "challenges"}
)
# "the NetHack Challenge", "the KDD Cup": a capitalised event word is part of the name
_EVENT_WORDS = frozenset({"Challenge", "Challenges", "Cup"})
_PLURAL_CUES = frozenset({"datasets", "benchmarks", "corpora", "suites", "competitions"})
# a language alone names no dataset ("English and German datasets"); inside a name it may
# ("English Penn Treebank")
_LANGUAGES = frozenset(
    {"English", "German", "French", "Spanish", "Chinese", "Japanese", "Korean", "Arabic",
     "Russian", "Hindi", "Portuguese", "Italian", "Dutch", "Turkish", "Vietnamese",
     "Indonesian", "Polish", "Swahili", "Hebrew", "Greek"}
)
# A name followed by one of these is software, not data ("the Brax simulator", "JAX library")
_NOT_DATA_HEADS = frozenset(
    {"simulator", "simulators", "simulation", "engine", "engines", "library", "libraries",
     "toolkit", "toolkits", "package", "packages", "framework", "frameworks", "platform",
     "software", "api", "compiler", "solver", "model", "models", "architecture", "network",
     "optimizer", "language"}
)


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` is ``b`` with one letter dropped, added, changed or two swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return a == b
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (
            len(diff) == 2 and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


@lru_cache(maxsize=1 << 14)
def _is_cue(low: str) -> bool:
    if low in _DATASET_CUES:
        return True
    word = low[:-1] if low.endswith("s") else low
    return len(word) >= 6 and word[0] in "bd" and any(_one_edit(word, c) for c in _FUZZY_CUES)


def not_data_after(tokens: Sequence[str], end: int) -> bool:
    """Whether the name ending before ``end`` is followed by a software head ("... simulator")."""
    k = end
    while k < len(tokens) and k < end + 3 and tokens[k].lower() in {"physics", "robotics", "game",
                                                                    "open-source", "python"}:
        k += 1
    return k < len(tokens) and tokens[k].lower() in _NOT_DATA_HEADS
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

    def items_follow(k: int) -> bool:
        """``tokens[k:]`` reads "of [up to 4 modifiers] <data items>" ("of 5,000 prompts")."""
        if k >= n or tokens[k].lower() != "of":
            return False
        for j in range(k + 1, min(n, k + 6)):
            w = tokens[j].lower()
            if w in _DATA_ITEMS:
                return True
            if not (_is_word(tokens[j]) or tokens[j] in {"-", ","}) or w in lex.stop:
                return False
        return False

    def coordinated(start: int) -> list[tuple[int, int]]:
        """The names joined to the one at ``start`` before a plural cue ("the Amazon and
        Yelp datasets", "Gibson, Replica and Matterport3D datasets")."""
        out: list[tuple[int, int]] = []
        while start > 0 and tokens[start - 1] in {",", "and", "or"}:
            end = start - 1
            while end > 0 and tokens[end - 1] in {",", "and", "or"}:
                end -= 1
            begin = name_back(end)
            if begin == end or not ok(begin, end):
                break
            out.append((begin, end))
            start = begin
        return out

    def ok(start: int, end: int) -> bool:
        if end <= start or end - start > 6:
            return False
        words = tokens[start:end]
        if len(words) == 1 and words[0] in _LANGUAGES:
            return False
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
        if _is_cue(low):
            # "the COCO2014 dataset", "Allen Institute's Brain Observatory dataset"
            start = name_back(i)
            if start > 1 and tokens[start - 1] == ":" and _strong_name(tokens[start - 2]):
                # "the AlgoPerf: Training Algorithms competition" is AlgoPerf's
                spans.append((name_back(start - 1), start - 1))
            elif start >= 2 and tokens[start - 1].lower() in {"a", "an", "the"} and (
                tokens[start - 2] == "," and ok(name_back(start - 2), start - 2)
            ):
                pass  # "CEB, a Compositional Evaluation Benchmark": the name is before the comma
            elif ok(start, i):
                spans.append((start, i))
                if low in _PLURAL_CUES:
                    spans.extend(coordinated(start))
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
                of_what = w in _SET_HEADS and k + 1 < n and tokens[k + 1].lower() == "of"
                if of_what and not items_follow(k + 1):
                    break  # "Adam, a collection of rules": a set of something that is not data
                if _is_cue(w) or of_what:
                    start = name_back(i)
                    if ok(start, i) and (i - start > 1 or _strong_name(tokens[start])
                                         or _is_cue(w)):
                        spans.append((start, i))
                    break
                if not _is_word(tokens[k]) and tokens[k] not in {"-", ","}:
                    break
                if w in {"of", "for", "with", "that", "which", "to", "on", "in", "by", "from",
                         "and", "or", "is", "are", "approach", "method", "model", "framework"}:
                    break
        elif tok in _DASHES and i > 0 and i + 1 < n and _namey(tokens[i + 1], False):
            # "a curated set of prompts — PromptSet — for ...": the dash names the set
            end = name_fwd(i + 1)
            closes = end >= n or tokens[end] in _DASHES | {",", ".", ";", ":", "(", ")"}
            back = {t.lower() for t in tokens[max(0, i - 8) : i]}
            if closes and end - i - 1 <= 3 and back & _SET_NOUNS and ok(i + 1, end) and (
                end - i - 1 > 1 or _strong_name(tokens[i + 1]) or tokens[i + 1][1:].islower()
            ):
                spans.append((i + 1, end))
        elif tok in _EVENT_WORDS and i > 1:
            # "ranks first in the NetHack Challenge": the event names the benchmark
            start = name_back(i)
            known = any(tuple(tokens[start : start + len(c)]) == c
                        for c, _ in lex.gazetteer_first.get(tokens[start], ()))
            if start < i and ok(start, i + 1) and not known:  # "ImageNet Challenge": ImageNet
                end = i + 1
                while end < n and tokens[end].isdigit():
                    end += 1
                spans.append((start, end))
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
