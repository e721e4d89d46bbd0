"""Text preparation, sentences, tokens and the part-of-speech rules over them."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

import lemminflect
from wordfreq import zipf_frequency

from graph.extract.lexicon import (
    _ADJ_SUFFIXES,
    _COMMON_ZIPF,
    _GERUND_NOUNS,
    _HEAD_CATEGORY,
    _KEEP_S,
    _NOUN_SUFFIXES,
    _TECH_SINGLE,
    _VERB_CONTEXT,
    _lex,
)

_TEX_CMD_RE = re.compile(r"\\[A-Za-z]+\{([^{}]*)\}")
_URL_RE = re.compile(r"(?:https?://|www\.)\S+|\S+\.(?:github\.io|com|org|net)\S*|\bgithub\S*")
_MARKUP_RE = re.compile(r"[*$\\{}]+")
_SPACE_RE = re.compile(r"\s+")
_ABBREV_RE = re.compile(r"\b(e\.g|i\.e|et al|etc|vs|cf|approx|resp|Fig|Eq|Sec|No)\.", re.IGNORECASE)
_SENT_SPLIT_RE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_ACRONYM_RE = re.compile(r"^[A-Za-z][A-Za-z0-9.-]{1,11}$")
_ACRONYM_PART_RE = re.compile(r"^(?=(?:.*[A-Z]){2}|.*[A-Z].*\d|.*\d.*[A-Z])[A-Za-z0-9.]+$")
_ACRONYM_PLURAL_RE = re.compile(r"^(.*[A-Z0-9])s$")
_DIGIT_ONLY_RE = re.compile(r"^\d[\d.,]*[KkMmBb%]?$")
_EVIDENCE_MAX = 300
_BREAK, _MOD, _HEAD = 0, 1, 2


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
