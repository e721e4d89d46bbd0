"""Concepts, acronyms and datasets from abstracts, and their corpus-wide resolution.

``extract`` reads one abstract and nothing else, so its result can be cached by text
hash. ``resolve`` merges many extractions: acronym definitions found in any paper
join short and long forms, terms seen in one paper only are kept when they look
technical, and every output is sorted so that the same papers in any order give
the same graph.

There is no POS tagger: noun phrases come from rules over a word lexicon
(lemminflect's), a stoplist and generic-word lists in ``graph/data``.
"""

from __future__ import annotations

import itertools
import logging
import math
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

import lemminflect
from wordfreq import zipf_frequency

from graph.model import Concept, Dataset, Edge, RelType, concept_id, dataset_id

logger = logging.getLogger(__name__)

_DATA_DIR = Path(__file__).parent / "data"

# --------------------------------------------------------------------------- public types


@dataclass(frozen=True, slots=True)
class TermMention:
    """A candidate concept in one abstract (before corpus resolution)."""

    key: str  # normalised surface key: lower-case, head singular ("large language model")
    surface: str  # as written ("Large Language Models")
    count: int  # occurrences in this abstract
    evidence: str  # the first sentence it occurs in, <= 300 chars
    category: str  # method | task | model | technique | concept


@dataclass(frozen=True, slots=True)
class DatasetMention:
    """A named dataset or benchmark in one abstract."""

    name: str  # as written ("CelebA-HQ")
    key: str  # normalised key
    introduces: bool  # the paper presents / releases / builds it
    evidence: str


@dataclass(frozen=True, slots=True)
class Extraction:
    """Everything taken from one abstract; depends only on the text.

    ``concepts`` are ordered by first occurrence, so ``concepts[0].evidence`` is the
    first sentence that mentions any term (``resolve`` uses this as the lead sentence).
    """

    concepts: tuple[TermMention, ...]
    datasets: tuple[DatasetMention, ...]
    acronyms: tuple[tuple[str, str], ...]  # (short, long key), e.g. ("LLM", "large language model")
    label: str  # readable label for a paper with no title


@dataclass(frozen=True, slots=True)
class Resolution:
    """Corpus-wide concepts and datasets with the edges from papers to them."""

    concepts: dict[str, Concept]
    datasets: dict[str, Dataset]
    edges: list[Edge]
    paper_terms: dict[str, dict[str, float]]


# --------------------------------------------------------------------------- lexicon


@dataclass(frozen=True, slots=True)
class _Lexicon:
    stop: frozenset[str]
    modifiers: frozenset[str]
    weak_heads: frozenset[str]
    generic: frozenset[str]  # modifiers | weak heads | generic nouns
    gazetteer: dict[str, str]  # spelling -> canonical spelling
    gazetteer_first: dict[str, tuple[tuple[tuple[str, ...], str], ...]]  # token -> (tokens, name)
    not_datasets: frozenset[str]


def _read_sections(name: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = defaultdict(list)
    current = ""
    for raw in (_DATA_DIR / name).read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1]
            continue
        sections[current].append(line)
    return sections


def _words(lines: Iterable[str]) -> frozenset[str]:
    return frozenset(w.lower() for line in lines for w in line.split())


@cache
def _lex() -> _Lexicon:
    stop_sections = _read_sections("stopwords.txt")
    generic_sections = _read_sections("generic_terms.txt")
    data_sections = _read_sections("datasets.txt")
    modifiers = _words(generic_sections["modifiers"])
    heads = _words(generic_sections["heads"])
    gazetteer: dict[str, str] = {}
    for line in data_sections["datasets"]:
        names = [n.strip() for n in line.split("|") if n.strip()]
        for n in names:
            gazetteer[n] = names[0]
    not_datasets = frozenset(
        n.strip() for line in data_sections["not_datasets"] for n in line.split("|") if n.strip()
    )
    first: dict[str, list[tuple[tuple[str, ...], str]]] = defaultdict(list)
    for n in sorted(gazetteer, key=lambda s: (-len(s), s)):
        toks = tuple(_TOKEN_RE.findall(n))
        first[toks[0]].append((toks, gazetteer[n]))
    return _Lexicon(
        stop=_words(stop_sections["function"]) | _words(stop_sections["verbs"]),
        modifiers=modifiers,
        weak_heads=heads,
        generic=modifiers | heads | _words(generic_sections["nouns"]),
        gazetteer=gazetteer,
        gazetteer_first={k: tuple(v) for k, v in first.items()},
        not_datasets=not_datasets,
    )


# --------------------------------------------------------------------------- regexes

_TEX_CMD_RE = re.compile(r"\\[A-Za-z]+\{([^{}]*)\}")
_URL_RE = re.compile(r"(?:https?://|www\.)\S+|\S+\.(?:github\.io|com|org|net)\S*|\bgithub\S*")
_MARKUP_RE = re.compile(r"[*$\\{}]+")
_SPACE_RE = re.compile(r"\s+")
_ABBREV_RE = re.compile(r"\b(e\.g|i\.e|et al|etc|vs|cf|approx|resp|Fig|Eq|Sec|No)\.", re.IGNORECASE)
_SENT_SPLIT_RE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_TOKEN_RE = re.compile(r"[^\W_]+(?:-[^\W_]+|\.\d+(?=[^\w.]|$))*|['’]s\b|\S")
_ACRONYM_RE = re.compile(r"^[A-Za-z][A-Za-z0-9.-]{1,11}$")
_ACRONYM_PART_RE = re.compile(r"^(?=(?:.*[A-Z]){2}|.*[A-Z].*\d|.*\d.*[A-Z])[A-Za-z0-9.]+$")
_DIM_RE = re.compile(r"^\d+D$|^[IVX]+$")
_MODEL_SIZE_RE = re.compile(r"\d(?:\.\d+)?[BbMm]\b|-(?:Instruct|Chat|Base)\b")
_ACRONYM_PLURAL_RE = re.compile(r"^(.*[A-Z0-9])s$")
_DIGIT_ONLY_RE = re.compile(r"^\d[\d.,]*[KkMmBb%]?$")
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
_LABEL_NAMED_RE = re.compile(
    r"\b(?i:we|this (?:paper|work)|here,? we)\s+(?:\w+\s+){0,2}?"
    r"(?:propose|introduce|present|develop|design|build|construct|release|establish|"
    r"curate|create|contribute|call|name|dub|term)(?:s|d|ed)?\s+"
    r"(?:a\s+\w+\s+(?:\w+\s+)?(?:called|named|dubbed|termed)\s+)?"
    r"(?P<name>[A-Z][\w.-]*(?:\s+\d[\w.]*)?)"
    r"(?:\s*\((?P<paren>[^()]{3,80})\))?"
    r"(?P<rest>[^.;]*)",
)
_LABEL_CALLED_RE = re.compile(
    r"\b(?:called|named|dubbed|termed|coined)\s+(?P<name>[A-Z][\w.-]*(?:\s+[A-Z][\w.-]*)*)"
    r"(?:\s*\((?P<paren>[^()]{3,80})\))?"
)
_LABEL_PHRASE_RE = re.compile(
    r"\b(?:we|this (?:paper|work))\s+(?:\w+\s+){0,2}?"
    r"(?:propose|introduce|present|develop|design|study|investigate|explore)(?:s|d|ed)?\s+"
    r"(?P<rest>[^.;]{8,})",
    re.IGNORECASE,
)
_APPOS_RE = re.compile(r"^\s*,\s*(?:which is\s+)?(?:a|an|the)\s+(?P<phrase>[^;]+)")
_PHRASE_CUT_RE = re.compile(
    r"\s*(?:,|;|:|—|\s-\s|\b(?:that|which|where|who|by|to|via|through|using|while|whose|"
    r"and\s+(?:show|demonstrate|evaluate|achieve|find)\w*)\b)"
)
_FLUFF_RE = re.compile(
    r"^(?:(?:simple|novel|new|effective|efficient|general|generic|unified|principled|"
    r"scalable|lightweight|light-weight|flexible|powerful|practical|robust|fast|"
    r"first|pioneering|comprehensive|large-scale|an?|the|and|yet|highly|plug-and-play|"
    r"training-free|versatile|straightforward|theoretically|grounded|innovative)[\s,]+)+",
    re.IGNORECASE,
)

_EVIDENCE_MAX = 300
_LABEL_MAX = 90
_MAX_NGRAM = 4
_WEIGHT_CAP = 3.0

def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Head words that make a multiword phrase technical, by category.
_CATEGORY_HEADS: dict[str, frozenset[str]] = {
    "model": _wordset(
        "model network net transformer autoencoder encoder decoder architecture llm lm vlm "
        "lvlm mllm gan vae mlp cnn rnn lstm gnn bert gpt agent classifier generator "
        "discriminator backbone estimator predictor embedding-model policy operator "
        "kernel machine perceptron"
    ),
    "task": _wordset(
        "generation detection classification segmentation retrieval translation recognition "
        "answering prediction understanding estimation tracking synthesis summarization "
        "captioning editing forecasting planning navigation completion reasoning "
        "reconstruction localization personalization control discovery identification "
        "matching parsing ranking recommendation imputation verification search "
        "manipulation grounding inpainting super-resolution denoising restoration "
        "attribution explanation interpretability evaluation"
    ),
    "technique": _wordset(
        "attention regularization dropout augmentation normalization distillation pruning "
        "quantization embedding tuning fine-tuning finetuning prompting prompt sampling decoding "
        "pooling encoding initialization compression unlearning adaptation decomposition "
        "convolution tokenization masking watermarking steering calibration guidance "
        "ensemble ensembling mechanism loss objective regularizer sparsity "
        "alignment merging routing caching retrieval-augmentation chain-of-thought "
        "autoencoding"
    ),
    "method": _wordset(
        "optimization learning algorithm descent search training pretraining pre-training "
        "inference programming propagation feedback method approach framework "
        "game-theory bandit clustering boosting filtering privacy"
    ),
}
_HEAD_CATEGORY: dict[str, str] = {
    w: cat for cat in ("method", "technique", "task", "model") for w in _CATEGORY_HEADS[cat]
}
_TECH_HEADS = frozenset(_HEAD_CATEGORY) - {"method", "approach", "framework", "evaluation"}
# Gerunds the lexicon knows only as verbs but that name things on their own.
_GERUND_NOUNS = _wordset(
    "reasoning planning prompting clustering forecasting captioning tracking parsing hashing "
    "pruning boosting unlearning pretraining finetuning fine-tuning pre-training "
    "distillation grounding inpainting denoising watermarking steering"
)
# Nouns whose -s is not a plural.
_KEEP_S = _wordset(
    "data series analysis species physics mathematics dynamics graphics robotics statistics "
    "linguistics economics ethics news bias process loss class gas lens corpus chaos axis "
    "basis thesis hypothesis diagnosis synthesis diffusion mechanics kinematics genomics "
    "proteomics optics semantics pragmatics logistics metrics"
) - {"metrics"}

# A single word at least this common in general English is too vague to be a concept ...
_COMMON_ZIPF = 4.3
# ... unless it is one of these.
_TECH_SINGLE = _wordset(
    "attention privacy memory safety security reasoning planning reward speech audio bias "
    "noise fairness robustness"
)
# After these, a word that can be a verb is one ("we train", "to increase").
_VERB_CONTEXT = _wordset(
    "to we they can could may might will would should must not also often cannot does do "
    "did it"
)

_ADJ_SUFFIXES = ("able", "ible", "ian", "al", "ive", "ous", "ic", "ful", "less", "ary", "wise")
_NOUN_SUFFIXES = ("ial", "rial", "tional")  # still adjectives, but kept out of the noun test

_BREAK, _MOD, _HEAD = 0, 1, 2


# --------------------------------------------------------------------------- text helpers


def _prepare(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = _URL_RE.sub(" ", text)
    text = _TEX_CMD_RE.sub(r"\1", text)
    text = _MARKUP_RE.sub(" ", text)
    return _SPACE_RE.sub(" ", text).strip()


def _sentences(text: str) -> list[str]:
    protected = _ABBREV_RE.sub(lambda m: m.group(0).replace(".", "\x00"), text)
    return [s.replace("\x00", ".").strip() for s in _SENT_SPLIT_RE.split(protected) if s.strip()]


def _trim(sentence: str, limit: int = _EVIDENCE_MAX) -> str:
    if len(sentence) <= limit:
        return sentence
    cut = sentence[: limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",;: ") + "…"


@lru_cache(maxsize=1 << 17)
def _pos(word: str) -> frozenset[str]:
    """Universal POS tags the lexicon knows for ``word`` (cached; lemminflect copies)."""
    return frozenset(lemminflect.getAllLemmas(word))


def _is_word(tok: str) -> bool:
    return tok[0].isalnum()


@lru_cache(maxsize=1 << 16)
def _is_acronym(tok: str) -> bool:
    """LLM, LoRA, T2I, GPT-4, CR-DPO; not Self-Guided."""
    if not _ACRONYM_RE.match(tok):
        return False
    return any(_ACRONYM_PART_RE.match(part) for part in tok.split("-"))


def _acronym_singular(tok: str) -> str:
    m = _ACRONYM_PLURAL_RE.match(tok)
    if m and m.group(1)[-1].isupper() and sum(c.isupper() for c in m.group(1)) >= 2:
        return m.group(1)
    return tok


@lru_cache(maxsize=1 << 16)
def _singular(word: str) -> str:
    """Singular of a lower-case noun (last part of a hyphen compound)."""
    if "-" in word:
        head, _, last = word.rpartition("-")
        return f"{head}-{_singular(last)}"
    if word in _KEEP_S or len(word) < 4 or not word.endswith(("s", "a", "i")):
        return word
    lemmas = lemminflect.getLemma(word, upos="NOUN")
    if not lemmas:
        return word
    lemma = str(lemmas[0])
    if lemma == "datum":
        return "data"
    if word.endswith("ss") or word.endswith(("us", "is")):
        return word
    return lemma


@lru_cache(maxsize=1 << 16)
def _role(tok: str) -> int:
    """Whether a token ends a phrase, may only modify, or may head a noun phrase."""
    if not _is_word(tok):
        return _BREAK
    low = tok.lower()
    lex = _lex()
    if low in lex.stop or _DIGIT_ONLY_RE.match(tok):
        return _BREAK
    if _is_acronym(tok):
        return _HEAD
    last = low.rsplit("-", 1)[-1]
    if not last.isalpha():
        return _HEAD
    if "-" in low and last in {"based", "aware", "free", "like", "specific", "level", "wise"}:
        return _MOD
    pos = _pos(last)
    if not pos:
        if last.endswith("ly") and "-" not in low:
            return _BREAK
        return _MOD if last.endswith("ed") or _adjective_like(last) else _HEAD
    if "NOUN" in pos or "PROPN" in pos:
        return _HEAD
    if "ADJ" in pos:
        return _MOD
    if "VERB" in pos:
        if last.endswith("ing"):
            return _HEAD
        if last.endswith("ed") or last.endswith("en"):
            return _MOD
        return _BREAK
    return _BREAK


@lru_cache(maxsize=1 << 16)
def _can_be_verb(tok: str) -> bool:
    low = tok.lower()
    return not _is_acronym(tok) and "VERB" in _pos(low)


def _verb_after(prev: str, tok: str) -> bool:
    if prev not in _VERB_CONTEXT or not _can_be_verb(tok):
        return False
    # "applied to images": after "to" a plural noun is no infinitive
    return not (prev == "to" and tok.lower().endswith("s"))


def _adjective_like(word: str) -> bool:
    """Unknown words with adjective endings: "learnable", "Bayesian", "agentic"."""
    return word.endswith(_ADJ_SUFFIXES) and not word.endswith(_NOUN_SUFFIXES)


@lru_cache(maxsize=1 << 16)
def _participle(tok: str) -> bool:
    low = tok.lower().rsplit("-", 1)[-1]
    return low.endswith("ed") and _pos(low) == {"VERB"}


@lru_cache(maxsize=1 << 16)
def _single_ok(tok: str) -> bool:
    """A one-word term may be a concept (acronym, noun, unknown word, known gerund)."""
    if _is_acronym(tok):
        return True
    low = tok.lower()
    if low in _lex().generic or len(low) < 3:
        return False
    last = low.rsplit("-", 1)[-1]
    if low in _GERUND_NOUNS or last in _GERUND_NOUNS:
        return True
    sing = _singular(low)
    if sing in _lex().generic:
        return False
    if sing not in _TECH_SINGLE and zipf_frequency(sing, "en") >= _COMMON_ZIPF:
        return False  # everyday English ("space", "change", "target") names no concept alone
    pos = _pos(last)
    if not pos:
        return not last.endswith(("ing", "ed", "ly")) and not _adjective_like(last)
    if "ADJ" in pos or "ADV" in pos:
        return False
    return "NOUN" in pos and not (last.endswith("ing") and "VERB" in pos)


@lru_cache(maxsize=1 << 17)
def _norm_word(word: str, head: bool) -> str:
    if _is_acronym(word):
        word = _acronym_singular(word) if head else word
        return word.lower()
    low = word.lower().replace("’", "'")
    return _singular(low) if head else low


def _key(words: Sequence[str]) -> str:
    """Normalised key of a phrase: lower-case, head noun singular."""
    head_at = len(words) - 1
    # long forms like "learning from human feedback": the head is before "from"
    for i, w in enumerate(words):
        if i > 0 and w.lower() in _lex().stop:
            head_at = i - 1
            break
    return " ".join(_norm_word(w, i == head_at) for i, w in enumerate(words))


def _fold(key: str) -> str:
    """Merge key for spelling variants: "fine-tuning" == "finetuning"."""
    return key.replace("-", "").replace(" ", "")


def _head_of(key: str) -> str:
    words = key.split()
    stop = _lex().stop
    for i, w in enumerate(words):
        if i > 0 and w in stop:
            return words[i - 1]
    return words[-1] if words else ""


def _category(key: str) -> str:
    head = _head_of(key)
    cat = _HEAD_CATEGORY.get(head) or _HEAD_CATEGORY.get(head.rsplit("-", 1)[-1])
    if cat:
        return cat
    if head.endswith(("net", "former", "gpt", "bert")):
        return "model"
    return "concept"


def _dataset_key(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "", name.lower().replace("'s", "")) or name.lower()


# --------------------------------------------------------------------------- acronyms


def _sh_start(short: str, words: Sequence[str]) -> int | None:
    """Schwartz & Hearst: index of the first word of ``words`` that ``short`` abbreviates."""
    chars = [c.lower() for c in short if c.isalnum()]
    if len(chars) < 2 or not chars[0].isalpha():
        return None
    parts: list[str] = []
    for w in words:
        low = w.lower()
        if "2" in chars:
            low = re.sub(r"(?:(?<=-)|^)to(?=-|$)", "2", low)
        if "4" in chars:
            low = re.sub(r"(?:(?<=-)|^)for(?=-|$)", "4", low)
        parts.append(low)
    long = " ".join(parts)
    li = len(long) - 1
    for si in range(len(chars) - 1, -1, -1):
        c = chars[si]
        while li >= 0 and (
            long[li] != c or (si == 0 and li > 0 and long[li - 1].isalnum())
        ):
            li -= 1
        if li < 0:
            return None
        li -= 1
    start_char = li + 1
    return long.count(" ", 0, start_char)


def _find_acronyms(tokens: Sequence[str]) -> list[tuple[str, list[str], int, int]]:
    """(short as written, long-form words, paren start, paren end) for "long (SF)" / "SF (long)"."""
    found: list[tuple[str, list[str], int, int]] = []
    stop = _lex().stop
    for i, tok in enumerate(tokens):
        if tok != "(":
            continue
        try:
            close = tokens.index(")", i + 1, i + 14)
        except ValueError:
            continue
        inner = tokens[i + 1 : close]
        if len(inner) == 1 and _is_acronym(inner[0]):
            short = inner[0]
            n_letters = len(_acronym_singular(short))
            max_words = min(n_letters + 5, 2 * n_letters)
            window: list[str] = []
            j = i - 1
            while j >= 0 and len(window) < max_words and _is_word(tokens[j]):
                window.insert(0, tokens[j])
                j -= 1
            start = _sh_start(short, window)
            if start is None:
                continue
            long = window[start:]
            if not long or long[0].lower() in stop or (len(long) == 1 and long[0] == short):
                continue
            found.append((short, long, i, close))
        elif i > 0 and _is_acronym(tokens[i - 1]) and 1 <= len(inner) <= 10 and all(
            _is_word(t) for t in inner
        ):
            # "LoRA (Low-Rank Adaptation)", "SCBENCH (SharedContextBENCH)"
            if len(inner) == 1 and len(inner[0]) <= len(tokens[i - 1]) + 3:
                continue
            short = tokens[i - 1]
            start = _sh_start(short, inner)
            if start == 0:
                found.append((short, list(inner), i, close))
    return found


# --------------------------------------------------------------------------- concepts


def _chunks(tokens: Sequence[str], skip: set[int]) -> list[list[str]]:
    chunks: list[list[str]] = []
    cur: list[str] = []
    roles: list[int] = []
    for i, tok in enumerate(tokens):
        if i in skip:
            continue
        role = _role(tok)
        if role != _BREAK and i > 0 and _verb_after(tokens[i - 1].lower(), tok):
            role = _BREAK
        if role == _BREAK:
            if cur:
                chunks.append(cur)
            cur, roles = [], []
            continue
        if role == _MOD and roles and roles[-1] == _HEAD and _participle(tok):
            chunks.append(cur)  # "contexts sourced from": a reduced relative clause starts here
            cur, roles = [], []
        cur.append(tok)
        roles.append(role)
    if cur:
        chunks.append(cur)
    return chunks


def _candidates(chunk: Sequence[str]) -> Iterable[tuple[str, str]]:
    """(key, surface) for the 1..4-word spans of a chunk that end on a possible head."""
    lex = _lex()
    for end in range(len(chunk)):
        head = chunk[end]
        if _role(head) != _HEAD:
            continue
        head_low = head.lower()
        if head_low in lex.weak_heads or _singular(head_low) in lex.weak_heads:
            continue
        for start in range(max(0, end - _MAX_NGRAM + 1), end + 1):
            span = chunk[start : end + 1]
            first = span[0].lower()
            if first in lex.modifiers or (_participle(span[0]) and len(span) == 1):
                continue
            if any(w.lower() in lex.modifiers for w in span[1:]):
                continue
            if len(span) == 1 and not _single_ok(head):
                continue
            key = _key(span)
            if all(w in lex.generic or _singular(w) in lex.generic for w in key.split()):
                continue
            yield key, " ".join(span)


# --------------------------------------------------------------------------- datasets


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


# --------------------------------------------------------------------------- label


def _clean_phrase(rest: str) -> str:
    m = _PHRASE_CUT_RE.search(rest)
    phrase = rest[: m.start()] if m else rest
    phrase = _FLUFF_RE.sub("", phrase.strip())
    words = phrase.split()
    stop = _lex().stop
    for i, w in enumerate(words):
        bare = w.strip(",;:()").lower()
        nxt = words[i + 1].lower() if i + 1 < len(words) else ""
        if i >= 1 and (
            (bare.endswith("ly") and not _pos(bare) - {"ADV"})
            or _participle(bare)
            or (bare == "and" and nxt in stop)
        ):
            words = words[:i]
            break
    while words and words[-1].lower().strip(",;:") in stop:
        words.pop()
    return " ".join(words).strip(" ,;:-")


def _fit(label: str, limit: int = 80) -> str:
    label = label.strip()
    if len(label) <= limit:
        return label
    cut = label[:limit].rsplit(" ", 1)[0].rstrip(",;: ")
    for tail in (" of", " for", " and", " with", " in", " on", " to", " the", " a", " an"):
        if cut.endswith(tail):
            cut = cut[: -len(tail)]
    return cut + "…"


def _capitalise(phrase: str) -> str:
    return phrase[:1].upper() + phrase[1:] if phrase else phrase


def _named_label(sentence: str) -> str | None:
    for rx in (_LABEL_NAMED_RE, _LABEL_CALLED_RE):
        m = rx.search(sentence)
        if not m:
            continue
        name = m.group("name").rstrip(".,")
        looks_new = bool(_MIXED_RE.search(name)) or name.isupper()
        called_words = rx is _LABEL_CALLED_RE and " " in name
        if name.lower() in _lex().stop or not (looks_new or called_words):
            continue
        if _looks_like_model(_acronym_singular(name)):
            continue  # "the LLM prompting paradigm": a known family, not this paper's name
        if called_words:
            return _fit(name, _LABEL_MAX)
        paren = m.group("paren")
        if paren and len(paren.split()) >= 2:
            return f"{name}: {_fit(paren, _LABEL_MAX - len(name) - 2)}"
        rest = m.groupdict().get("rest") or ""
        am = _APPOS_RE.match(rest)
        if am:
            phrase = _clean_phrase(am.group("phrase"))
            generic = _lex().generic | _lex().stop
            if phrase and all(
                w.lower() in generic or _singular(w.lower()) in generic for w in phrase.split()
            ):
                # "MMAU, a novel benchmark designed to evaluate audio understanding models"
                after = am.group("phrase")
                after = after[after.find(phrase) + len(phrase) :]
                topic = next(iter(_sentence_terms(after)), "")
                if topic:
                    phrase = f"{phrase} for {topic}"
            if phrase:
                return f"{name}: {_fit(phrase, _LABEL_MAX - len(name) - 2)}"
        return name
    return None


def make_label(text: str) -> str:
    """A readable label for an untitled paper: the introduced name plus a short phrase."""
    sentences = _sentences(_prepare(text))
    if not sentences:
        return "Untitled abstract"
    for sentence in sentences:
        for short, long, _, _ in _find_acronyms(_TOKEN_RE.findall(sentence)):
            # "we propose Self-Guided Confidence Reasoning (SCR)": a new name is title-cased
            titled = all(w[0].isupper() for w in long if w.lower() not in _lex().stop)
            if titled and _INTRO_RE.search(sentence) and len(long) >= 2:
                intro = _INTRO_RE.search(sentence)
                if intro and sentence.find(" ".join(long[:1])) > intro.start():
                    named = _named_label(sentence)
                    if named and ":" in named:
                        return named
                    return f"{_acronym_singular(short)}: {_fit(' '.join(long), 80)}"
        named = _named_label(sentence)
        if named:
            return named
    for sentence in sentences:
        m = _LABEL_PHRASE_RE.search(sentence)
        if m:
            phrase = _clean_phrase(m.group("rest"))
            words = [w.lower().strip("()") for w in phrase.split()]
            generic = _lex().generic | _lex().stop
            if (
                len(words) >= 2
                and words[0] not in _lex().stop
                and words[0] not in {"how", "why", "whether", "what", "when"}
                and not all(w in generic or _singular(w) in generic for w in words)
            ):
                return _fit(_capitalise(phrase))
    ex_terms = _sentence_terms(sentences[0])
    if len(ex_terms) < 2 and len(sentences) > 1:
        ex_terms += [t for t in _sentence_terms(sentences[1]) if t not in ex_terms]
    if ex_terms:
        return _fit(_capitalise(", ".join(ex_terms[:3])))
    return _fit(sentences[0])


def _sentence_terms(sentence: str) -> list[str]:
    """Longest technical phrases of a sentence, in order (for fallback labels)."""
    tokens = _TOKEN_RE.findall(sentence)
    out: list[str] = []
    for chunk in _chunks(tokens, set()):
        best = ""
        for key, surface in _candidates(chunk):
            if len(key.split()) >= 2 and len(surface) > len(best):
                best = surface
        if best and best.lower() not in {o.lower() for o in out}:
            out.append(best)
    return out


# --------------------------------------------------------------------------- extract


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
                                        for s, e in spans]
        for pos, tok in enumerate(tokens):
            for cand, canonical in lex.gazetteer_first.get(tok, ()):
                if tuple(tokens[pos : pos + len(cand)]) == cand:
                    if tok.lower() not in defined:
                        found.append((canonical, pos))
                    break
        for raw_name, pos in sorted(found, key=lambda f: f[1]):
            name = raw_name.strip(" -")
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


# --------------------------------------------------------------------------- resolve


def _weight(count: int, lead: bool, introduced: bool) -> float:
    w = 1.0 + math.log(max(count, 1))
    if lead:
        w *= 1.25
    if introduced:
        w *= 1.5
    return round(min(w, _WEIGHT_CAP), 6)


def _label_name(label: str) -> str:
    head = label.split(":", 1)[0].strip()
    return head if head and " " not in head else ""


def _proper(word: str) -> bool:
    return _is_acronym(word)


def _canonical(surfaces: Counter[str], keys: Counter[str], acronym_keys: set[str]) -> str:
    """Most common long form (lower-case but for acronym-like words), else the acronym."""
    long_forms = [k for k in keys if k not in acronym_keys]
    if long_forms:
        best = max(long_forms, key=lambda k: (keys[k], k))
        # restore the case of acronym-like words from the most common matching surface
        matching = [s for s in surfaces if _key(s.split()) == best]
        if matching:
            surf = max(matching, key=lambda s: (surfaces[s], s)).split()
            words = best.split()
            if len(surf) == len(words):
                return " ".join(
                    (_acronym_singular(s) if i == len(words) - 1 else s) if _proper(s) else w
                    for i, (s, w) in enumerate(zip(surf, words, strict=True))
                )
        return best
    single = [s for s in surfaces if _proper(s)]
    if single:
        return max(single, key=lambda s: (surfaces[s], s))
    return max(keys, key=lambda k: (keys[k], k))


_Group = list[tuple[TermMention, str]]


def resolve(extractions: Mapping[str, Extraction]) -> Resolution:
    """Merge per-paper extractions into concepts, datasets and paper edges (order-free)."""
    lex = _lex()
    papers = sorted(extractions)

    # acronym short key -> long key, by how many papers define it that way
    defs: dict[str, Counter[str]] = defaultdict(Counter)
    for pid in papers:
        for short, long in extractions[pid].acronyms:
            defs[short.lower()][long] += 1
    global_long = {s: max(c.items(), key=lambda kv: (kv[1], kv[0]))[0] for s, c in defs.items()}
    long_keys = set(global_long.values())

    def expand(m: TermMention, local: Mapping[str, str]) -> str:
        """The key with acronym words (as written: "LLMs") replaced by their long forms."""
        words = m.key.split()
        surf = m.surface.split()
        if len(surf) != len(words):
            return m.key
        return " ".join(
            (local.get(w) or global_long.get(w) or w) if _is_acronym(sw) else w
            for w, sw in zip(words, surf, strict=True)
        )

    dataset_folds: set[str] = set()
    for pid in papers:
        dataset_folds.update(_fold(d.key) for d in extractions[pid].datasets)

    # paper -> group fold -> (mention, key with acronyms expanded)
    per_paper: dict[str, dict[str, _Group]] = {}
    df: Counter[str] = Counter()
    for pid in papers:
        ex = extractions[pid]
        local = {s.lower(): lg for s, lg in ex.acronyms}
        groups: dict[str, _Group] = defaultdict(list)
        for m in ex.concepts:
            full = expand(m, local)
            g = _fold(full)
            if g in dataset_folds or _fold(m.key) in dataset_folds:
                continue
            groups[g].append((m, full))
        per_paper[pid] = groups
        df.update(groups.keys())

    defined_folds = {_fold(k) for k in long_keys} | {_fold(s) for s in defs}

    def maximal(m: TermMention, ex: Extraction) -> bool:
        inner = f" {m.key} "
        return not any(
            o.count >= m.count and inner in f" {o.key} " and o.key != m.key for o in ex.concepts
        )

    # group-level statistics over the whole corpus
    g_keys: dict[str, Counter[str]] = defaultdict(Counter)
    g_acr: dict[str, set[str]] = defaultdict(set)  # expanded keys seen only as acronyms
    g_surf: dict[str, Counter[str]] = defaultdict(Counter)
    g_cat: dict[str, Counter[str]] = defaultdict(Counter)
    kept: dict[str, dict[str, _Group]] = {}
    for pid in papers:
        ex = extractions[pid]
        intro = _label_name(ex.label)
        keep: dict[str, _Group] = {}
        for g, ms in per_paper[pid].items():
            if g in defined_folds or df[g] >= 2 or (
                bool(intro) and any(m.surface == intro for m, _ in ms)
            ):
                keep[g] = ms
                continue
            # a one-paper phrase counts when technical and maximal in its paper
            # ("small generation" inside "small generation space" is not)
            if any(
                " " in full and _head_of(full) in _TECH_HEADS and maximal(m, ex) for m, full in ms
            ):
                keep[g] = ms
        # drop a term that only occurs inside a longer kept term of the same paper
        names = {
            g: f" {max(ms, key=lambda mf: (mf[0].count, mf[1]))[1]} " for g, ms in keep.items()
        }
        totals = {g: sum(m.count for m, _ in ms) for g, ms in keep.items()}
        for g in sorted(keep):
            inner = names[g]
            if any(o != g and inner in names[o] and totals[g] <= totals[o] for o in keep):
                del keep[g]
        kept[pid] = keep
        for g, ms in keep.items():
            for m, full in ms:
                g_keys[g][full] += m.count
                g_surf[g][m.surface] += m.count
                g_cat[g][m.category] += m.count
                if " " not in m.key and _is_acronym(m.surface) and full == m.key:
                    g_acr[g].add(full)

    short_forms: dict[str, set[str]] = defaultdict(set)
    for pid in papers:
        for sf, _ in extractions[pid].acronyms:
            short_forms[_fold(global_long[sf.lower()])].add(sf)
    concepts: dict[str, Concept] = {}
    group_id: dict[str, str] = {}
    for g in sorted(g_keys):
        canonical = _canonical(g_surf[g], g_keys[g], g_acr[g])
        cid = concept_id(canonical)
        group_id[g] = cid
        aliases = set(g_surf[g])
        aliases |= short_forms.get(g, set())
        if _head_of(canonical) in _HEAD_CATEGORY or len(canonical.split()) > 1:
            category = _category(canonical)
        else:
            category = max(g_cat[g].items(), key=lambda kv: (kv[1], kv[0]))[0]
        prev = concepts.get(cid)
        if prev is not None:
            aliases |= set(prev.aliases)
        aliases.discard(canonical)
        concepts[cid] = Concept(cid, canonical, tuple(sorted(aliases)), category)

    # datasets
    d_names: dict[str, Counter[str]] = defaultdict(Counter)
    for pid in papers:
        for d in extractions[pid].datasets:
            d_names[_fold(d.key)][d.name] += 1
    datasets: dict[str, Dataset] = {}
    dataset_group: dict[str, str] = {}
    for g in sorted(d_names):
        name = max(d_names[g].items(), key=lambda kv: (kv[1], -len(kv[0]), kv[0]))[0]
        did = dataset_id(name)
        dataset_group[g] = did
        aliases = set(d_names[g]) - {name}
        if did in datasets:
            aliases |= set(datasets[did].aliases)
        datasets[did] = Dataset(did, name, tuple(sorted(aliases)))

    edges: list[Edge] = []
    paper_terms: dict[str, dict[str, float]] = {}
    for pid in papers:
        ex = extractions[pid]
        lead_sentence = ex.concepts[0].evidence if ex.concepts else ""
        intro = _label_name(ex.label)
        terms: dict[str, float] = {}
        merged: dict[str, tuple[float, str, int]] = {}
        for g, mfs in kept[pid].items():
            cid = group_id[g]
            mentions = [m for m, _ in mfs]
            count = sum(m.count for m in mentions)
            first = min(mentions, key=lambda m: (m.evidence != lead_sentence, -m.count, m.key))
            w = _weight(count, any(m.evidence == lead_sentence for m in mentions),
                        any(m.surface == intro for m in mentions))
            old = merged.get(cid)
            if old is None:
                merged[cid] = (w, first.evidence, count)
            else:  # two groups with one canonical name: keep the stronger evidence
                best = max((w, first.evidence), (old[0], old[1]))
                merged[cid] = (best[0], best[1], count + old[2])
        for cid, (w, ev, count) in sorted(merged.items()):
            edges.append(Edge(pid, cid, RelType.MENTIONS, w, {"evidence": ev, "count": count}))
            terms[cid] = w
        d_edges: dict[str, Edge] = {}
        for d in ex.datasets:
            did = dataset_group[_fold(d.key)]
            rel = RelType.INTRODUCES if d.introduces else RelType.USES
            w = 1.5 if d.introduces else 1.0
            if did in d_edges and d_edges[did].weight >= w:
                continue
            d_edges[did] = Edge(pid, did, rel, w, {"evidence": d.evidence, "count": 1})
            terms[did] = w
        edges.extend(d_edges[did] for did in sorted(d_edges))
        paper_terms[pid] = dict(sorted(terms.items()))
    edges.sort(key=lambda e: (e.source, e.target, e.type.value))
    logger.info(
        "resolved %d papers: %d concepts, %d datasets, %d edges",
        len(papers), len(concepts), len(datasets), len(edges),
    )
    del lex
    return Resolution(
        concepts=dict(sorted(concepts.items())),
        datasets=dict(sorted(datasets.items())),
        edges=edges,
        paper_terms=dict(sorted(paper_terms.items())),
    )
