"""A readable label for a paper with no title."""

from __future__ import annotations

import re

from graph.extract.acronyms import _find_acronyms
from graph.extract.datasets import _INTRO_RE, _MIXED_RE, _looks_like_model
from graph.extract.lexicon import _TOKEN_RE, _lex
from graph.extract.phrases import _sentence_terms
from graph.extract.tokens import (
    _acronym_singular,
    _participle,
    _pos,
    _prepare,
    _sentences,
    _singular,
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
    r"\b(?:called|named|dubbed|termed|coined|denoted\s+as)\s+(?P<name>[A-Z][\w.-]*(?:\s+[A-Z][\w.-]*)*)"
    r"(?:\s*\((?P<paren>[^()]{3,80})\))?"
)
# what the paper makes (preferred), then what it studies; "we revisit X and propose Y"
# has the verb far from its subject, so "and propose" counts too
_LABEL_PHRASE_RE = re.compile(
    r"(?:(?:\b(?:we|this (?:paper|work))\s+(?:\w+\s+){0,2}?|\band\s+|,\s*)"
    r"(?:propose|introduce|present|develop|design)(?:s|d|ed)?"
    r"|\bby\s+(?:introducing|proposing|presenting|developing|designing))\s+"
    r"(?P<rest>[^.;]{8,})",
    re.IGNORECASE,
)
_LABEL_STUDY_RE = re.compile(
    r"(?:\b(?:we|this (?:paper|work|study))\s+(?:\w+\s+){0,2}?|\bto\s+)"
    r"(?:study|investigate|explore|examine|analy[sz]e|characteri[sz]e|focus\s+on|"
    r"give|provide|address(?:\s+the\s+problem\s+of)?)(?:s|es|d|ed)?\s+"
    r"(?P<rest>[^.;]{8,})",
    re.IGNORECASE,
)
# "a pioneer work on layer pruning": the work is the paper, its topic is the label
_WORK_ON_RE = re.compile(
    r"^(?:(?:pioneer(?:ing)?|first|novel|new|systematic|comprehensive)\s+)*"
    r"(?:work|study|attempt|step|investigation|exploration)\s+(?:on|in|of|into|towards?)\s+",
    re.IGNORECASE,
)
# a model family followed by a version, not a new name: GPT-4, Llama-3-8B, LLM-7B
_VERSION_RE = re.compile(r"^[\d.]+[A-Za-z]?$|^v\d|^(?:Instruct|Chat|Base|XL|Large|Small)$", re.I)
_APPOS_RE = re.compile(r"^\s*,\s*(?:which is\s+)?(?:a|an|the)\s+(?P<phrase>[^;]+)")
_PHRASE_CUT_RE = re.compile(
    # words joined by hyphens ("Text-to-Image") are one word, not a clause
    r"\s*(?:,|;|:|—|\s-\s|\bas\s+an?\b|(?<![\w-])(?:that|which|where|who|by|to|via|through|"
    r"using|while|whose|and\s+(?:show|demonstrate|evaluate|achieve|find)\w*)(?![\w-]))"
)
_FLUFF_RE = re.compile(
    r"^(?:(?:simple|novel|new|effective|efficient|general|generic|unified|principled|"
    r"scalable|lightweight|light-weight|flexible|powerful|practical|robust|fast|"
    r"first|pioneering|comprehensive|large-scale|an?|the|and|yet|highly|plug-and-play|"
    r"training-free|versatile|straightforward|theoretically|grounded|innovative|"
    r"specialized|specialised|dedicated|carefully|designed)[\s,]+)+",
    re.IGNORECASE,
)
_LABEL_MAX = 90
_PHRASE_MAX = _LABEL_MAX  # a phrase label may use the room a name would take


def _clean_phrase(rest: str) -> str:
    m = _PHRASE_CUT_RE.search(rest)
    phrase = rest[: m.start()] if m else rest
    phrase = _FLUFF_RE.sub("", phrase.strip())
    phrase = _FLUFF_RE.sub("", _WORK_ON_RE.sub("", phrase))
    words = phrase.split()
    stop = _lex().stop
    for i, w in enumerate(words):
        bare = w.strip(",;:()").lower()
        nxt = words[i + 1].lower() if i + 1 < len(words) else ""
        # "function vector guided training": a participle between nouns is part of the name;
        # "a CI test designed to ...": before a stop word it starts a clause
        if i >= 1 and (
            (bare.endswith("ly") and not _pos(bare) - {"ADV"})
            or (_participle(bare) and (not nxt or nxt in stop))
            or (bare == "and" and nxt in stop)
        ):
            words = words[:i]
            break
    while words and words[-1].lower().strip(",;:") in stop:
        words.pop()
    phrase = " ".join(words).strip(" ,;:-")
    # a cut inside brackets or quotes ("pruning of DNN elements (e.g."): drop the open part
    for open_, close in (("(", ")"), ("“", "”"), ("[", "]")):
        at = phrase.rfind(open_)
        if at > 0 and phrase.find(close, at) < 0:
            kept = phrase[:at].split()
            while kept and kept[-1].lower().strip(",;:") in stop:
                kept.pop()
            phrase = " ".join(kept).rstrip(" ,;:-")
    return phrase


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


def _family_version(name: str) -> bool:
    """A known model family, alone or with a version (GPT-4, Llama-3-8B), not a new name.

    "LLM-Streamline" is a new name built on a family's; "LLM-7B" is the family."""
    if not _looks_like_model(name):
        return False
    low = name.lower()
    for family in _lex().not_datasets:
        f = family.lower()
        if low.startswith(f + "-"):
            rest = name[len(f) + 1 :].split("-")
            return all(_VERSION_RE.match(r) for r in rest if r)
    return True


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
        if _family_version(_acronym_singular(name)):
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
                if not topic:
                    return name  # "STRATEGIST, a new approach": the name says more alone
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
    kind_of: tuple[str, set[str]] | None = None  # "a novel SDE framework": a kind, kept aside
    for sentence in sentences:
        for short, long, _, end in _find_acronyms(tokens := _TOKEN_RE.findall(sentence)):
            # "we propose Self-Guided Confidence Reasoning (SCR)": a new name is title-cased
            titled = all(w[0].isupper() for w in long if w.lower() not in _lex().stop)
            if titled and _INTRO_RE.search(sentence) and len(long) >= 2:
                intro = _INTRO_RE.search(sentence)
                if intro and sentence.find(" ".join(long[:1])) > intro.start():
                    named = _named_label(sentence)
                    label = (
                        named
                        if named and ":" in named
                        else f"{_acronym_singular(short)}: {_fit(' '.join(long), 80)}"
                    )
                    words = {_singular(w.lower()) for w in long}
                    if kind_of is not None and kind_of[1] <= words:
                        # "… SDE framework … we introduce Latent Graph Neural SDEs (LGNSDE)"
                        return label
                    after = tokens[end + 1].lower() if end + 1 < len(tokens) else ""
                    if kind_of is None and _singular(after) in _KIND_HEADS:
                        kind_of = (label, words)
                        continue
                    return kind_of[0] if kind_of else label
        named = _named_label(sentence)
        if named and kind_of is None:
            return named
    if kind_of is not None:
        return kind_of[0]
    for rx in (_LABEL_PHRASE_RE, _LABEL_STUDY_RE):
        for sentence in sentences:
            phrase = _contribution(rx, sentence)
            if phrase:
                return _fit(_capitalise(_about(phrase, text)), _PHRASE_MAX)
    ex_terms = _sentence_terms(sentences[0])
    if len(ex_terms) < 2 and len(sentences) > 1:
        ex_terms += [t for t in _sentence_terms(sentences[1]) if t not in ex_terms]
    if ex_terms:
        return _fit(_capitalise(", ".join(ex_terms[:3])))
    return _fit(sentences[0])


# the head nouns after which an acronym names the kind of thing proposed, not the thing
_KIND_HEADS = frozenset({"framework", "approach", "method", "model", "architecture", "paradigm"})
# "a method to learn X" / "an approach for learning X": the purpose is the contribution
_PURPOSE_RE = re.compile(
    r"^(?:an?\s+)?(?:(?:new|novel|simple|general|principled|unified)\s+)*"
    r"(?:method|framework|approach|technique|algorithm|procedure|strategy|way)\s+"
    r"(?:to\s+(?:[a-z]+ly\s+)?(?P<verb>[a-z]+)|for\s+(?P<gerund>[a-z]+ing))\s+(?P<object>.+)",
    re.IGNORECASE,
)


_DETERMINERS = frozenset({"the", "a", "an", "its", "their", "our", "these", "this", "each"})


def _purpose(rest: str) -> str | None:
    """ "a method to learn low-dimensional representations of …" -> "learning low-…"."""
    m = _PURPOSE_RE.match(rest.strip())
    if not m:
        return None
    gerund = m.group("gerund")
    if gerund is None:
        from lemminflect import getInflection, getLemma

        verb = m.group("verb").lower()
        lemmas = getLemma(verb, upos="VERB")  # "to constructing": the text's own slip
        forms = getInflection(lemmas[0], tag="VBG") if lemmas else ()
        if not forms or "VERB" not in _pos(verb):
            return None
        gerund = forms[0]
    rest = m.group("object")
    if rest.split()[0].lower() in {"and", "or"}:
        return None  # "to retrain and rerun inference": two verbs, no one object
    # "to learn the terminal cost and update the MPC parameters": the first verb's object
    for am in re.finditer(r"\s+and\s+([a-z]+)\s+(\w+)", rest):
        tags = _pos(am.group(1))
        if tags == {"VERB"} or ("VERB" in tags and am.group(2).lower() in _DETERMINERS):
            rest = rest[: am.start()]
            break
    obj = _clean_phrase(rest)
    words = {w.lower() for w in obj.split()}
    if len(words) < 2 or _ANAPHORA & words:  # "overcoming this limitation": which?
        return None
    return f"{gerund.lower()} {obj}"


def _contribution(rx: re.Pattern[str], sentence: str) -> str | None:
    """The phrase after "we propose/study …" when it says something specific."""
    m = rx.search(sentence)
    if not m:
        return None
    purpose = _purpose(m.group("rest"))
    if purpose is not None:
        return purpose
    phrase = _clean_phrase(m.group("rest"))
    words = [w.lower().strip("()") for w in phrase.split()]
    generic = _lex().generic | _lex().stop
    if (
        len(words) >= 2
        and words[0] not in _lex().stop
        and words[0] not in {"how", "why", "whether", "what", "when"}
        and not all(w in generic or _singular(w) in generic for w in words)
        and not _ANAPHORA & set(words)  # "the underpinnings of this transition": of what?
    ):
        return phrase
    return None


_ANAPHORA = frozenset({"this", "these", "those", "such", "it", "its", "their", "them", "they"})


_SHORT_FORM_RE = re.compile(r"\b[A-Z][A-Za-z]*[A-Z][A-Za-z]*\b")


def _about(phrase: str, text: str) -> str:
    """A short phrase gains what the abstract is about when it does not say it.

    "Regularization techniques" for a paper that names DPO seven times reads as
    "Regularization techniques for DPO"; "Counterfactual approach" as "Counterfactual
    approach for chatbot fairness" (the first sentence's topic); a longer phrase, or one
    that already names something, stays.
    """
    words = phrase.split()
    if len(words) > 3 or _SHORT_FORM_RE.search(phrase) or all(w[:1].isupper() for w in words):
        return phrase  # long enough, or it names something ("Depth Any Video")
    counts: dict[str, int] = {}
    shown: dict[str, dict[str, int]] = {}
    for m in _SHORT_FORM_RE.finditer(text):
        word = _acronym_singular(m.group())
        if (len(word) >= 2 and word.isupper()) or any(c.isdigit() for c in word):
            counts[word] = counts.get(word, 0) + 1
            forms = shown.setdefault(word, {})
            forms[m.group()] = forms.get(m.group(), 0) + 1
    if counts:
        top, n = max(counts.items(), key=lambda kv: (kv[1], kv[0]))
        if n >= 3:
            form = max(shown[top].items(), key=lambda kv: (kv[1], kv[0]))[0]
            return f"{phrase} for {form}"
    head = _singular(words[-1].lower())
    if head in _lex().generic:
        first = _sentences(_prepare(text))[:1]
        topic = next(iter(_sentence_terms(first[0])), "") if first else ""
        if topic and topic.lower() not in phrase.lower():
            lead = topic if topic[:2].isupper() else topic[:1].lower() + topic[1:]
            return f"{phrase} for {lead}"
    return phrase
