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
# _Name_ (Markdown emphasis): the underscores go; snake_case and x_i keep theirs
_UNDERSCORE_EMPH_RE = re.compile(r"(?<!\w)_+(?=[^\W_])|(?<=[^\W_])_+(?!\w)")
_SPACE_RE = re.compile(r"\s+")
_ABBREV_RE = re.compile(r"\b(e\.g|i\.e|et al|etc|vs|cf|approx|resp|Fig|Eq|Sec|No)\.", re.IGNORECASE)
_SENT_SPLIT_RE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_ACRONYM_RE = re.compile(r"^[A-Za-z][A-Za-z0-9.-]{1,11}$")
_ACRONYM_PART_RE = re.compile(r"^(?=(?:.*[A-Z]){2}|.*[A-Z].*\d|.*\d.*[A-Z])[A-Za-z0-9.]+$")
_ACRONYM_PLURAL_RE = re.compile(r"^(.*[A-Z0-9])s$")
# "GFlowNets", "ResNets": a CamelCase name whose last part is a plural word
_CAMEL_PLURAL_RE = re.compile(r"^(.*[A-Z][a-z]+[a-rt-z])s$")
_DIGIT_ONLY_RE = re.compile(r"^\d[\d.,]*[KkMmBb%]?$")
_EVIDENCE_MAX = 300
_VERB_SUFFIXES = ("ize", "ise", "ate", "ify")
# "recently-developed", "widely-used": the first part says how new or how common, not what
_EVALUATIVE_ADVERBS = frozenset(
    {"recently", "newly", "widely", "commonly", "highly", "increasingly", "successfully",
     "extensively", "previously", "frequently", "heavily", "carefully", "relatively",
     "surprisingly", "remarkably", "notably", "particularly", "extremely", "overly",
     "reasonably", "well", "popularly", "traditionally", "originally", "currently"}
)


def _evaluative(tok: str) -> bool:
    """A modifier like "recently-developed" or "well-studied" (a judgement, not a kind)."""
    first, dash, _ = tok.lower().partition("-")
    return bool(dash) and first in _EVALUATIVE_ADVERBS
_BREAK, _MOD, _HEAD = 0, 1, 2


_STATE_OF_ART_RE = re.compile(r"\bstate[ -]of[ -]the[ -]art\b", re.IGNORECASE)


def _prepare(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    # "state of the art representation learning" is no "art representation learning"
    text = _STATE_OF_ART_RE.sub("state-of-the-art", text)
    text = _URL_RE.sub(" ", text)
    text = _TEX_CMD_RE.sub(r"\1", text)
    text = _MARKUP_RE.sub(" ", text)
    text = _UNDERSCORE_EMPH_RE.sub("", text)
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


#: a lower-case word rarer than this in English (wordfreq's Zipf scale) may be an acronym
#: written in lower case: "llm" 2.3, "lora" 2.6, "vit" 2.6, "nerf" 2.9; not "gan" 3.1,
#: "rag" 3.6, "clip" 4.3, "map" 4.8
_LOWER_ACRONYM_ZIPF = 3.0


@lru_cache(maxsize=1 << 16)
def _lower_acronym(tok: str) -> bool:
    """"llm", "lora": a short lower-case word rare in English, which expands like the
    acronym it may be when the paper or the corpus defines that acronym (an abstract
    written all in lower case made "llm" a concept beside "large language model"). The
    resolver asks it of the word as written and of its key ("meshes" is rare, "mesh" not:
    not the MESH a paper of ICLR 2021 defines)."""
    return (2 <= len(tok) <= 6 and tok.isascii() and tok.isalpha() and tok.islower()
            and zipf_frequency(tok, "en") < _LOWER_ACRONYM_ZIPF)


def _acronym_singular(tok: str) -> str:
    m = _ACRONYM_PLURAL_RE.match(tok)
    if m and m.group(1)[-1].isupper() and sum(c.isupper() for c in m.group(1)) >= 2:
        return m.group(1)
    m = _CAMEL_PLURAL_RE.match(tok)
    if m and "-" not in tok and sum(c.isupper() for c in m.group(1)) >= 2:
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
    if low in lex.stop or _DIGIT_ONLY_RE.match(tok) or (len(tok) == 1 and tok.islower()):
        return _BREAK  # a stray letter ("the sphere s") is no word of a term
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
        if _prefixed_verb(last):
            return _BREAK  # "overfit", "underperform", "upsample": verbs the lexicon lacks
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


_VERB_PREFIXES = ("under", "over", "up", "re", "mis", "out")


def _prefixed_verb(word: str) -> bool:
    """An unknown word that is a known verb behind a prefix ("overfit" = over + fit)."""
    for p in _VERB_PREFIXES:
        rest = word[len(p):]
        if word.startswith(p) and len(rest) >= 3 and "VERB" in _pos(rest) and not rest.endswith(
            ("ing", "ed", "tion", "er", "ion")
        ):
            return True
    return False


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


_EVERYDAY_ZIPF = 3.6


@lru_cache(maxsize=1 << 16)
def _everyday_word(name: str) -> bool:
    """One plain English word ("node", "barrier"), common enough to mean many things, and not
    one of the technical heads or single terms ("classification", "robustness", "fairness")."""
    if " " in name or "-" in name or _is_acronym(name):
        return False
    low = name.lower()
    if low in _TECH_SINGLE or low in _HEAD_CATEGORY or low in _GERUND_NOUNS:
        return False
    return zipf_frequency(low, "en") >= _EVERYDAY_ZIPF


@lru_cache(maxsize=1 << 16)
def _verb_ing(tok: str) -> bool:
    """An -ing form the lexicon knows only as a verb ("extracting", "maximizing", "covering"
    is also a noun and stays), and no gerund that names a technique on its own."""
    low = tok.lower().rsplit("-", 1)[-1]
    if not low.endswith("ing") or low in _GERUND_NOUNS or low in _HEAD_CATEGORY:
        return False
    pos = _pos(low)
    return pos == {"VERB"} or (not pos and low.endswith(("izing", "ising", "ating")))


@lru_cache(maxsize=1 << 16)
def _single_ok(tok: str) -> bool:
    """A one-word term may be a concept (acronym, noun, unknown word, known gerund)."""
    if _is_acronym(tok):
        return True
    low = tok.lower()
    if low in _lex().generic or low in _lex().not_alone or len(low) < 3:
        return False
    last = low.rsplit("-", 1)[-1]
    if low in _GERUND_NOUNS or last in _GERUND_NOUNS:
        return True
    if "-" in low and last in _HEAD_CATEGORY and low.split("-", 1)[0] not in _lex().generic:
        return True  # "meta-learning", "pre-training": a hyphen compound on a technical head
    sing = _singular(low)
    if sing in _lex().generic:
        return False
    tech = sing in _TECH_SINGLE or sing in _HEAD_CATEGORY or last in _HEAD_CATEGORY
    if not tech and not _pos(last) and last.endswith(_VERB_SUFFIXES):
        return False  # "quantize", "correlate": verbs the lexicon does not know
    if sing not in _TECH_SINGLE and zipf_frequency(sing, "en") >= _COMMON_ZIPF:
        return False  # everyday English ("space", "change", "target") names no concept alone
    pos = _pos(last)
    if not pos:
        return not last.endswith(("ing", "ed", "ly")) and not _adjective_like(last)
    if "ADJ" in pos or "ADV" in pos:
        return False
    return "NOUN" in pos and not (last.endswith("ing") and "VERB" in pos)


_TELLING_POS = frozenset({"NOUN", "PROPN", "ADJ"})


@lru_cache(maxsize=1 << 16)
def _telling_word(word: str) -> bool:
    lex = _lex()
    if len(word) < 2 or word in lex.generic or word in lex.stop or _evaluative(word):
        return False
    sing = _singular(word)
    if sing != word and sing in lex.generic and sing not in lex.modifiers:
        return False  # "models", "results"; but "priors" is no "prior" (a modifier)
    pos = _pos(word.rsplit("-", 1)[-1])
    # "effectively", "arising", "outperforms": how or what a paper does, not what it is about
    return not pos or bool(pos & _TELLING_POS)


def telling(gram: str) -> bool:
    """Whether a shared word or word pair tells a reader what two texts share.

    "diffusion", "priors", "text sampling" do; "novel", "models", "efficiency",
    "effectively", "arising" and "novel approach" (generic vocabulary, adverbs, verb
    forms) do not: quoted as a reason they would only make the reason look arbitrary.
    """
    return any(_telling_word(w) for w in gram.casefold().split())


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
    """Merge key for spelling variants: "fine-tuning" == "finetuning", "Fréchet" == "Frechet"."""
    key = key.replace("-", "").replace(" ", "")
    return key if key.isascii() else _unaccented(key)


@lru_cache(maxsize=65536)
def _unaccented(key: str) -> str:
    # NFKD splits "é" into "e" + a combining accent; the accent goes
    return "".join(c for c in unicodedata.normalize("NFKD", key) if not unicodedata.combining(c))


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
