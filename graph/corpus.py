"""Corpus readers (seed text, JSONL/JSON, CSV/TSV) and abstract cleaning.

Every reader returns a :class:`ReadResult`: the papers that could be read plus one
:class:`InputProblem` per thing that could not. Bad data never raises; only a bug does.

Formats
    ``.txt``   UTF-8; blank-line separated paragraphs. The first paragraph is a header
               naming the collection ("ICLR 2025 Papers") unless it looks like an
               abstract (more than 25 words, or a sentence of 12+ words). The header
               gives every record its venue ("ICLR 2025") and year (2025).
    ``.jsonl`` one JSON object per line. ``.json``: an array of objects, one object, or
               an object holding the array under ``papers``/``records``/``data``/``items``.
    ``.csv`` / ``.tsv``  a header row, then one record per row. The delimiter comes from
               the extension (``.csv`` falls back to tab/``;``/``|`` when the header has no
               comma). TSV is read without quote processing (fields cannot hold tabs or
               newlines), so a field that starts with ``"`` keeps its quote.
    ``.bib``   BibTeX; one record per entry, the entry key as id (see graph/bibtex.py).

Fields (names case-insensitive; ``paper_id``→id, ``summary``/``text``→abstract,
``link``/``url``→urls): ``id, title, abstract, authors, year, venue, keywords,
references``. Lists may be JSON arrays or strings split on ``;`` (authors, references)
or on ``;``, else ``,`` (keywords).

Policy for bad fields
    * The record is rejected (an InputProblem, the rest of the file still read) when the
      abstract is unusable: missing/empty, not text, longer than ``MAX_ABSTRACT_CHARS``
      (raw), under 5 words (clean), or contains undecodable bytes; also when an ``id`` is
      given but is not a string or integer (a silently generated id would hide the error).
    * Any other bad field (a year that is not a year, a title that is a number, a list
      element that is an object) is dropped, the record kept, and an InputProblem
      ("year 'soon' is not a year; field dropped") reported, so ``partial`` tells.
    * Empty cells and ``nan``/``null``/``none``/``n/a`` count as missing, silently.
    * A record without a year takes the year named in its venue ("ICLR 2025").

Identity and duplicates
    ``text_hash`` is the sha256 of :func:`normalized_key` of the clean abstract, so it
    ignores whitespace, case, markup and punctuation. A given id is kept; otherwise
    ``id = "p-" + text_hash[:12]``. Records with the same ``text_hash`` merge: the first
    wins, later ones fill its missing fields, and a given id replaces a generated one.
    A given id seen again with different text is reported and the later record dropped.

Directories are walked recursively for the five extensions above, in sorted order,
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

from __future__ import annotations

import contextlib
import csv
import dataclasses
import errno
import functools
import hashlib
import json
import logging
import math
import os
import re
import stat
import sys
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graph.errors import InputError
from graph.model import Paper, reserved_paper_id
from graph.settings import DEFAULT_MAX_INPUT_FILE_BYTES

logger = logging.getLogger(__name__)

MAX_ABSTRACT_CHARS = 100_000
MAX_FIELD_CHARS = 10_000  # a title, a venue, or one author, keyword, url or reference
MAX_ID_CHARS = 512
MIN_ABSTRACT_WORDS = 5
LABEL_WORDS = 8
EXTENSIONS: tuple[str, ...] = (".txt", ".jsonl", ".json", ".csv", ".tsv", ".bib")


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class InputProblem:
    """One thing in the input that could not be read, with where it is."""

    path: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.path}: {self.reason}"
        return f"{self.path}:{self.line}: {self.reason}"


@dataclass
class ReadResult:
    """Papers read, problems met, and how many records merged into an earlier one."""

    papers: list[Paper] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    duplicates: int = 0

    @property
    def partial(self) -> bool:
        """True when some input could not be read."""
        return bool(self.problems)


# --------------------------------------------------------------------------- cleaning

_LINK = "\ue000"  # private-use marker left where a link was, so its sentence can be judged
_LBRACE, _RBRACE = "\ue001", "\ue002"  # escaped braces, protected from brace stripping

_URL_BODY = r"[^\s<>\"'{}\[\]()\\" + _LINK + r"]+"
# No \b before the scheme: scraped text glues links to words ("available athttps://...").
_URL_RE = re.compile(r"(?:(?:https?|ftp)://|\bwww\.)" + _URL_BODY, re.IGNORECASE)
_HREF_RE = re.compile(r"\\href\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_TEXURL_RE = re.compile(r"\\url\s*\{([^{}]*)\}")
_MDLINK_RE = re.compile(r"\[([^\[\]]*)\]\(\s*(" + _URL_RE.pattern + r")\s*\)", re.IGNORECASE)
_ANGLE_URL_RE = re.compile(r"<(" + _URL_RE.pattern + r")>", re.IGNORECASE)
_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?])\s+")
_DANGLING_RE = re.compile(
    r"(?:\b(?:at|available|here|page|website|site|repository|repo|github|via|from|on|in|see|"
    r"link|url|under|to|this\s+(?:link|url|page|website|repository|repo))|:)$",
    re.IGNORECASE,
)

_DROP_CMD_RE = re.compile(
    r"[\s~]*\\(?:cite[a-zA-Z]*|ref|eqref|autoref|cref|Cref|label|footnote|vspace|hspace)\*?"
    r"(?:\[[^\]]*\])*\{[^{}]*\}"
)
_STYLE_CMD_RE = re.compile(
    r"\\(?:textbf|textit|textsl|emph|textsc|texttt|textrm|textsf|textup|textnormal|underline|"
    r"mathrm|mathbf|mathit|mathcal|mathbb|mathsf|mathtt|mathfrak|mathscr|boldsymbol|bm|text|"
    r"operatorname|mbox|hbox|textmd)\s*\{([^{}]*)\}"
)
_BRACE_STYLE_RE = re.compile(r"\{\\(?:bf|em|it|sc|tt|rm|sf)\s+([^{}]*)\}")
_ACCENT_RE = re.compile(r"\\(tilde|hat|bar|widetilde|widehat|overline|vec|dot|ddot)\s*\{([^{}]*)\}")
_ACCENTS = {
    "tilde": "\u0303", "widetilde": "\u0303", "hat": "\u0302", "widehat": "\u0302",
    "bar": "\u0304", "overline": "\u0304", "vec": "\u20d7", "dot": "\u0307", "ddot": "\u0308",
}
_LETTER_ACCENT_RE = re.compile(
    r"\\([\"'^`~=.]|[Hvcuk](?=\s*\{))\s*(?:\{\s*([A-Za-z])\s*\}|([A-Za-z]))"
)
_LETTER_ACCENTS = {
    '"': "\u0308", "'": "\u0301", "^": "\u0302", "`": "\u0300", "~": "\u0303", "=": "\u0304",
    ".": "\u0307", "H": "\u030b", "v": "\u030c", "c": "\u0327", "u": "\u0306", "k": "\u0328",
}
# Commands that lost their backslash somewhere upstream: "OLCOtextsubscript{3}", "emph{x}".
_BARE_STYLE_RE = re.compile(
    r"(?:textbf|textit|textsc|texttt|textsubscript|textsuperscript|emph|mathrm|mathbf|"
    r"mathcal|\bbf)\{([^{}]*)\}"
)
_FRAC_RE = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_SQRT_RE = re.compile(r"\\sqrt\s*\{([^{}]*)\}")
_SCRIPT_RE = re.compile(r"([_^])\{([^{}]*)\}")
_CMD_RE = re.compile(r"\\([A-Za-z]+)\*?")
_ESCAPES = {
    "\\%": "%", "\\&": "&", "\\_": "_", "\\#": "#", "\\$": "$",
    "\\\\": " ", "\\{": _LBRACE, "\\}": _RBRACE,
    "\\,": " ", "\\;": " ", "\\:": " ", "\\!": "", "\\ ": " ",
}
_ESCAPE_RE = re.compile("|".join(re.escape(k) for k in _ESCAPES))
_SYMBOLS = {
    "times": "×", "approx": "≈", "sim": "∼", "simeq": "≃", "leq": "≤", "le": "≤", "geq": "≥",
    "ge": "≥", "neq": "≠", "ne": "≠", "pm": "±", "mp": "∓", "cdot": "·", "cdots": "…",
    "ldots": "…", "dots": "…", "infty": "∞", "rightarrow": "→", "to": "→", "leftarrow": "←",
    "Rightarrow": "⇒", "Leftarrow": "⇐", "leftrightarrow": "↔", "mapsto": "↦", "in": "∈",
    "notin": "∉", "subset": "⊂", "subseteq": "⊆", "cup": "∪", "cap": "∩", "propto": "∝",
    "partial": "∂", "nabla": "∇", "sum": "∑", "prod": "∏", "int": "∫", "forall": "∀",
    "exists": "∃", "ell": "ℓ", "circ": "∘", "star": "⋆", "ast": "*", "mid": "|", "ll": "≪",
    "gg": "≫", "equiv": "≡", "log": "log", "exp": "exp", "max": "max", "min": "min",
    "arg": "arg", "sin": "sin", "cos": "cos", "lim": "lim", "det": "det", "LaTeX": "LaTeX",
    "TeX": "TeX", "quad": " ", "qquad": " ", "newline": " ", "linebreak": " ", "noindent": "",
    "par": " ", "hfill": "", "left": "", "right": "", "big": "", "Big": "", "bigg": "",
    "textasciitilde": "~", "textbackslash": "\\",
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ϵ", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ",
    "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ",
    "tau": "τ", "upsilon": "υ", "phi": "ϕ", "varphi": "φ", "chi": "χ", "psi": "ψ",
    "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ",
    "Pi": "Π", "Sigma": "Σ", "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
}
# $...$ with no space before the closing dollar, so "costs $5 and $10" is left alone.
_MATH_RES = (
    re.compile(r"(?<!\\)\$\$(.+?)(?<!\\)\$\$", re.DOTALL),
    re.compile(r"(?<![\\$])\$(?!\$)((?:[^$\\]|\\.){0,300}?)(?<![\s\\])\$(?!\$)"),
    re.compile(r"\\\((.+?)\\\)", re.DOTALL),
    re.compile(r"\\\[(.+?)\\\]", re.DOTALL),
)
_MD_RES = (
    re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*"),
    re.compile(r"(?<![\w_])__(?=\S)(.+?)(?<=\S)__(?![\w_])"),
    re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])"),
    re.compile(r"`([^`\n]+)`"),
)
# A line-break hyphen: "chal- lenging". Not "task- and domain-agnostic", not "T2I- based".
_HYPHEN_RE = re.compile(r"(?<![\w-])([a-z]+)-\s+([a-z]+)\b")
_NOT_A_WORD_END = frozenset({
    "and", "or", "nor", "to", "vs", "versus", "but", "than", "as", "via", "with", "into",
    "from", "of", "the", "a", "an", "in", "on", "for", "at", "by", "then", "through", "over",
    "under",
})
_LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st"})
_INVISIBLE_RE = re.compile("[\u00ad\u200b\u200c\u200d\u2060\ufeff]")
# Characters XML 1.0 cannot hold (the GraphML/GEXF exports would not parse) and no paper
# field needs: C0 controls but tab, LF and CR; DEL and the C1 controls; U+FFFE, U+FFFF.
_CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff]")
# In an id even tab and line breaks are refused: an id is matched exactly, never cleaned.
_ID_CONTROL_RE = re.compile("[\x00-\x1f\x7f-\x9f\ufffe\uffff]")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def _strip_url(raw: str) -> str:
    return raw.rstrip(".,;:!?'\"")


def _extract_links(text: str, urls: list[str]) -> str:
    """Replace every link by its text (if any) plus a marker, collecting the URLs."""

    def keep(url: str) -> None:
        url = _strip_url(url.strip())
        if url and url not in urls:
            urls.append(url)

    def href(m: re.Match[str]) -> str:
        keep(m.group(1))
        return m.group(2) + _LINK

    def md(m: re.Match[str]) -> str:
        keep(m.group(2))
        label = m.group(1)
        return ("" if _URL_RE.fullmatch(label.strip()) else label) + _LINK

    def bare(m: re.Match[str]) -> str:
        url = m.group(0)
        core = _strip_url(url)
        keep(core)
        return _LINK + url[len(core):]

    text = _HREF_RE.sub(href, text)
    text = _MDLINK_RE.sub(md, text)
    text = _TEXURL_RE.sub(lambda m: m.group(1), text)
    text = _ANGLE_URL_RE.sub(lambda m: m.group(1), text)
    return _URL_RE.sub(bare, text)


def _drop_link_sentences(text: str) -> str:
    """Drop "Code is available at <url>." sentences; elsewhere just remove the link."""
    if _LINK not in text:
        return text
    kept: list[str] = []
    for sentence in _SENTENCE_SPLIT_RE.split(text):
        if _LINK in sentence:
            rest = sentence.replace(_LINK, " ")
            rest = re.sub(r"\s+", " ", rest)
            tail = re.sub(r"\\[A-Za-z]+|[{}]", " ", rest)
            tail = re.sub(r"[\s.,;!?'\"()\[\]*]+$", "", tail)
            tail = re.sub(r"(\(|\[)\s*$", "", tail).rstrip()
            if tail and not _DANGLING_RE.search(tail):
                kept.append(rest)
        else:
            kept.append(sentence)
    return " ".join(kept)


def _math(m: re.Match[str]) -> str:
    body = m.group(1)
    body = _ESCAPE_RE.sub(lambda e: _ESCAPES[e.group(0)], body)
    body = _tex_commands(body)
    for _ in range(3):
        new = _SCRIPT_RE.sub(
            lambda s: s.group(1) + (s.group(2) if len(s.group(2)) <= 1 else f"({s.group(2)})"),
            body,
        )
        if new == body:
            break
        body = new
    body = body.replace("{", "").replace("}", "")
    body = re.sub(r"\s+", " ", body).strip()
    body = re.sub(r"\s*×\s*", "×", body)
    return re.sub(r"(?<=\w)×(?=\w)", " × ", body)


def _accent(m: re.Match[str]) -> str:
    arg = m.group(2).strip()
    if len(arg) == 1:
        return unicodedata.normalize("NFC", arg + _ACCENTS[m.group(1)])
    return arg


def _letter_accent(m: re.Match[str]) -> str:
    letter = m.group(2) or m.group(3)
    return unicodedata.normalize("NFC", letter + _LETTER_ACCENTS[m.group(1)])


def _tex_commands(text: str) -> str:
    text = _LETTER_ACCENT_RE.sub(_letter_accent, text)
    for _ in range(4):  # nested \textbf{\emph{x}}
        new = _DROP_CMD_RE.sub("", text)
        new = _STYLE_CMD_RE.sub(r"\1", new)
        new = _BRACE_STYLE_RE.sub(r"\1", new)
        new = _ACCENT_RE.sub(_accent, new)
        new = _FRAC_RE.sub(r"\1/\2", new)
        new = _SQRT_RE.sub(lambda s: "√" + (s.group(1) if len(s.group(1)) <= 1
                                            else f"({s.group(1)})"), new)
        if new == text:
            break
        text = new
    text = _CMD_RE.sub(lambda c: _SYMBOLS.get(c.group(1), c.group(1)), text)
    return _BARE_STYLE_RE.sub(r"\1", text)


_PREFIXES = frozenset({
    "meta", "neuro", "multi", "pre", "post", "non", "self", "semi", "sub", "co", "anti",
    "inter", "intra", "cross", "mid", "bi", "tri", "uni", "auto", "hyper", "super",
})


@functools.cache
def _is_word(word: str) -> bool:
    try:
        from lemminflect import getAllLemmas
    except ImportError:  # pragma: no cover - lemminflect is a dependency; degrade to joining
        return False
    return bool(getAllLemmas(word))


def _join_hyphen(m: re.Match[str]) -> str:
    """"chal- lenging" -> "challenging"; "zero- shot" -> "zero-shot"."""
    left, right = m.group(1), m.group(2)
    if right in _NOT_A_WORD_END:
        return m.group(0)
    joined = left + right
    if _is_word(joined):
        return joined
    if _is_word(right) and (_is_word(left) or left in _PREFIXES):
        return f"{left}-{right}"
    return joined


def clean_text(text: str) -> tuple[str, tuple[str, ...]]:
    """Strip TeX/markdown residue, join line-break hyphens, remove URLs: (text, urls)."""
    text, urls = _clean_once(text)
    # Removing one layer of markup can expose another ("**\\textbf{x}**"); repeat until
    # stable, so that cleaning clean text changes nothing and text_hash(abstract) holds.
    for _ in range(4):
        if not _RESIDUE_RE.search(text):
            break
        again, more = _clean_once(text)
        if again == text:
            break
        text, urls = again, urls + tuple(u for u in more if u not in urls)
    return text, urls


_TEX_QUOTE_RE = re.compile(r"(?<![`\w])`(?=\w)([^`'\n]{1,200}?)'(?!\w)")
_NBSP_RE = re.compile(r"(?<=[^\s(\[{~])~(?=\S)")  # TeX non-breaking space
_DASH3_RE = re.compile(r"(?<!-)---(?!-)")
_DASH2_RE = re.compile(r"(?<!-)--(?!-)")
_SPACE_RE = re.compile(r"\s+")
_SPACE_BEFORE_RE = re.compile(r"\s+([,.;:!?)\]])")
_SPACE_AFTER_RE = re.compile(r"([(\[])\s+")
_EMPTY_BRACKETS_RE = re.compile(r"\(\)|\[\]")
_RESIDUE_RE = re.compile(r"[$\\*`{}_]|--|''|\S~|[a-z]-\s|\s[,.;:!?)\]]|[(\[]\s|\(\)|\[\]")


def _clean_once(text: str) -> tuple[str, tuple[str, ...]]:
    # Each step is guarded by a cheap membership test: most abstracts need few of them.
    urls: list[str] = []
    text = _CONTROL_RE.sub(" ", text)
    text = unicodedata.normalize("NFC", text)
    if not text.isascii():
        text = _INVISIBLE_RE.sub("", text.translate(_LIGATURES))
    if "://" in text or "www." in text.lower() or "\\url" in text or "\\href" in text:
        original = text
        text = _extract_links(text, urls)
        urls.sort(key=original.find)  # in order of appearance, whatever the link syntax
        text = _drop_link_sentences(text)
    if "`" in text or "''" in text:
        text = text.replace("``", "“").replace("''", "”")
        text = _TEX_QUOTE_RE.sub(r"‘\1’", text)
    if "\\" in text:
        text = _DROP_CMD_RE.sub("", text)
    if "$" in text or "\\" in text:
        for math_re in _MATH_RES:
            text = math_re.sub(_math, text)
    if "\\" in text:
        text = _ESCAPE_RE.sub(lambda e: _ESCAPES[e.group(0)], text)
    if "\\" in text or "{" in text:
        text = _tex_commands(text)
    if "~" in text:
        text = _NBSP_RE.sub(" ", text)
    if "*" in text or "_" in text or "`" in text:
        for md_re in _MD_RES:
            text = md_re.sub(r"\1", text)
    if "{}" in text:
        text = text.replace("{}", "")
    if "--" in text:
        text = _DASH2_RE.sub("–", _DASH3_RE.sub("—", text))
    text = _HYPHEN_RE.sub(_join_hyphen, text)
    if not text.isascii():
        text = text.replace(_LINK, " ").replace(_LBRACE, "{").replace(_RBRACE, "}")
    text = _SPACE_RE.sub(" ", text)
    text = _SPACE_BEFORE_RE.sub(r"\1", text)
    text = _SPACE_AFTER_RE.sub(r"\1", text)
    if "()" in text or "[]" in text:
        text = _SPACE_RE.sub(" ", _EMPTY_BRACKETS_RE.sub("", text))
    text = text.strip()
    return text, tuple(urls)


def normalized_key(text: str) -> str:
    """Casefolded words only (no punctuation, markup symbols or extra whitespace)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.sub(r"[\W_]+", " ", text).split())


def text_hash(text: str) -> str:
    """sha256 hex of the normalized key of the cleaned text (raw or clean input alike)."""
    return hashlib.sha256(normalized_key(clean_text(text)[0]).encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- records

_ALIASES = {
    "paper_id": "id", "paperid": "id",
    "summary": "abstract", "text": "abstract",
    "link": "url", "links": "urls",
    "author": "authors", "keyword": "keywords", "refs": "references",
}
_MISSING = frozenset({"", "nan", "none", "null", "n/a", "na"})
_YEAR_RE = re.compile(r"(?<!\d)(1[89]\d\d|2[01]\d\d)(?!\d)")
_CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff"
_WORD_RE = re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")


def _canonical_key(key: object) -> str:
    name = re.sub(r"[\s\-]+", "_", str(key).strip().lower())
    return _ALIASES.get(name, name)


def _canonical(record: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in record.items():
        out.setdefault(_canonical_key(key), value)  # the first of two aliases wins
    return out


def _is_missing(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and value.strip().lower() in _MISSING


def _type_name(value: object) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean"}.get(
        type(value), type(value).__name__
    )


def _show(value: object, limit: int = 60) -> str:
    """A short repr for a problem message; safe for any value (a huge int, a long text)."""
    if isinstance(value, str) and len(value) > limit:
        value = value[:limit]
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # an int over 4300 digits; a self-nested list
        return f"<{_type_name(value)}>"
    return text if len(text) <= limit else text[:limit] + "…"


def _checked(text: str, name: str) -> str:
    """``text`` without control characters; InputError when it holds a lone surrogate.

    Every string that ends up in a Paper passes through here (or through clean_text,
    after this check), so none can break a UTF-8 save or an XML export.
    """
    if m := _SURROGATE_RE.search(text):
        raise InputError(f"field {name!r}: contains an unpaired surrogate U+{ord(m.group()):04X}")
    return _CONTROL_RE.sub(" ", text) if _CONTROL_RE.search(text) else text


def _as_list(value: object, name: str, notes: list[str], *, commas: bool) -> tuple[str, ...]:
    if _is_missing(value):
        return ()
    if isinstance(value, str):
        text = _checked(value, name).strip()
        if text.startswith("["):
            with contextlib.suppress(ValueError, RecursionError):
                value = json.loads(text)
        if isinstance(value, str):
            sep = ";" if (";" in text or not commas) else ","
            value = text.split(sep)
    if not isinstance(value, list | tuple):
        notes.append(f"{name} is not a list or string (got {_type_name(value)}); field dropped")
        return ()
    items: list[str] = []
    seen: set[str] = set()  # a set: a list of a million authors must not take n² steps
    for item in value:
        if isinstance(item, bool) or not isinstance(item, str | int):
            notes.append(f"{name}: dropped a {_type_name(item)} element")
            continue
        if isinstance(item, int):
            try:
                item = str(item)
            except ValueError:  # over Python's 4300-digit limit
                notes.append(f"{name}: dropped an integer element too large to read")
                continue
        text = " ".join(_checked(item, name).split())
        if len(text) > MAX_FIELD_CHARS:
            notes.append(
                f"{name}: dropped an element of {len(text)} characters (> {MAX_FIELD_CHARS})"
            )
            continue
        if text and text not in seen:
            seen.add(text)
            items.append(text)
    return tuple(items)


def _as_year(value: object, notes: list[str]) -> int | None:
    if _is_missing(value):
        return None
    year: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        year = value
    elif isinstance(value, float) and value.is_integer():
        year = int(value)
    elif isinstance(value, str):
        m = re.fullmatch(r"\s*(\d{4})(?:\.0+|-\d\d(?:-\d\d)?)?\s*", _checked(value, "year"))
        year = int(m.group(1)) if m else None
    if year is None or not 1800 <= year <= 2199:
        notes.append(f"year {_show(value)} is not a year; field dropped")
        return None
    return year


def _as_text(value: object, name: str, notes: list[str]) -> str | None:
    if _is_missing(value):
        return None
    if not isinstance(value, str):
        notes.append(f"{name} is not text (got {_type_name(value)}); field dropped")
        return None
    text = clean_text(_checked(value, name))[0]
    if len(text) > MAX_FIELD_CHARS:
        notes.append(f"{name} too long: {len(text)} characters > {MAX_FIELD_CHARS}; field dropped")
        return None
    return text or None


def _as_id(value: object) -> str | None:
    """The given id, or None; InputError when it is unusable (never silently replaced)."""
    if _is_missing(value):
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InputError(f"id must be a string or integer (got {_type_name(value)})")
    if isinstance(value, int):
        if value.bit_length() > 3 * MAX_ID_CHARS:  # far more digits than MAX_ID_CHARS
            raise InputError(f"field 'id': longer than {MAX_ID_CHARS} characters")
        value = str(value)
    text = value.strip()
    if m := _SURROGATE_RE.search(text):
        raise InputError(f"field 'id': contains an unpaired surrogate U+{ord(m.group()):04X}")
    if m := _ID_CONTROL_RE.search(text):
        raise InputError(f"field 'id': contains the control character U+{ord(m.group()):04X}")
    if len(text) > MAX_ID_CHARS:
        raise InputError(f"field 'id': {len(text)} characters, longer than {MAX_ID_CHARS}")
    if text and (reason := reserved_paper_id(text)):
        raise InputError(f"field 'id': {text!r} is reserved: {reason}")
    return text or None


def placeholder_label(abstract: str) -> str:
    """First few words of the abstract and an ellipsis; replaced by a real label later."""
    words = abstract.split()
    label = " ".join(words[:LABEL_WORDS])
    cut = len(words) > LABEL_WORDS
    if len(label) > 80:
        label, cut = label[:80], True
    return label.rstrip(" ,;:.–—-") + "…" if cut else label


def paper_from_record(
    record: Mapping[str, Any],
    *,
    source: str,
    default_venue: str | None = None,
    notes: list[str] | None = None,
) -> Paper:
    """Build a Paper from one record; raises InputError(reason) when it is unusable.

    ``notes`` (optional) collects the fields that were dropped for a bad value. A lone
    surrogate in any field, or an unusable id, rejects the whole record (one InputError
    naming the field); control characters are replaced by spaces (or refused, in an id).
    """
    notes = notes if notes is not None else []
    rec = _canonical(record)
    raw = rec.get("abstract")
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raise InputError("empty abstract" if "abstract" in rec else "no abstract")
    if not isinstance(raw, str):
        raise InputError(f"abstract is not text (got {_type_name(raw)})")
    if len(raw) > MAX_ABSTRACT_CHARS:
        raise InputError(f"abstract too long: {len(raw)} characters > {MAX_ABSTRACT_CHARS}")
    abstract, found = clean_text(_checked(raw, "abstract"))
    if not abstract:
        raise InputError("empty abstract")
    n_words = len(_WORD_RE.findall(abstract))
    if n_words < MIN_ABSTRACT_WORDS:
        raise InputError(f"abstract too short: {n_words} words (minimum {MIN_ABSTRACT_WORDS})")
    given_id = _as_id(rec.get("id"))
    digest = hashlib.sha256(normalized_key(abstract).encode("utf-8")).hexdigest()

    urls: list[str] = []
    for key in ("url", "urls"):
        for url in _as_list(rec.get(key), key, notes, commas=True):
            if url not in urls:
                urls.append(url)
    urls.extend(u for u in found if u not in urls)

    title = _as_text(rec.get("title"), "title", notes)
    venue = _as_text(rec.get("venue"), "venue", notes)
    if venue is None and default_venue:
        venue = _checked(default_venue, "venue")
    year = _as_year(rec.get("year"), notes)
    if year is None and venue and (m := _YEAR_RE.search(venue)):
        year = int(m.group(1))
    return Paper(
        id=given_id or f"p-{digest[:12]}",
        label=title or placeholder_label(abstract),
        abstract=abstract,
        text_hash=digest,
        title=title,
        venue=venue,
        year=year,
        authors=_as_list(rec.get("authors"), "authors", notes, commas=False),
        keywords=_as_list(rec.get("keywords"), "keywords", notes, commas=True),
        urls=tuple(urls),
        references=_as_list(rec.get("references"), "references", notes, commas=False),
        source=_display(source),
    )


# --------------------------------------------------------------------------- collecting


def _generated(paper: Paper) -> bool:
    return paper.id == f"p-{paper.text_hash[:12]}"


def _merge(first: Paper, later: Paper) -> Paper:
    changes: dict[str, Any] = {}
    if first.title is None and later.title is not None:
        changes["title"] = later.title
        changes["label"] = later.title
    for name in ("venue", "year", "authors", "keywords", "references"):
        if not getattr(first, name) and getattr(later, name):
            changes[name] = getattr(later, name)
    extra = tuple(u for u in later.urls if u not in first.urls)
    if extra:
        changes["urls"] = first.urls + extra
    if _generated(first) and not _generated(later):
        changes["id"] = later.id
    return dataclasses.replace(first, **changes) if changes else first


class _Collector:
    """Accumulates papers across files, merging duplicates as they come."""

    def __init__(self, max_file_bytes: int = DEFAULT_MAX_INPUT_FILE_BYTES) -> None:
        self.max_file_bytes = max_file_bytes
        self.result = ReadResult()
        self._by_hash: dict[str, int] = {}
        self._by_id: dict[str, int] = {}

    def problem(self, path: str, line: int | None, reason: str) -> None:
        path = _display(path)
        logger.debug("%s:%s: %s", path, line, reason)
        self.result.problems.append(InputProblem(path, line, reason))

    def add(self, paper: Paper, path: str, line: int | None) -> None:
        papers = self.result.papers
        if paper.id in self._by_id:
            earlier = papers[self._by_id[paper.id]]
            if earlier.text_hash != paper.text_hash:
                self.problem(
                    path, line,
                    f"duplicate id {paper.id!r} with different text (first at {earlier.source})",
                )
                return
        index = self._by_hash.get(paper.text_hash)
        if index is None:
            self._by_hash[paper.text_hash] = self._by_id[paper.id] = len(papers)
            papers.append(paper)
            return
        earlier = papers[index]
        if earlier.id != paper.id and not _generated(earlier) and not _generated(paper):
            self.problem(
                path, line,
                f"id {paper.id!r} has the same text as {earlier.id!r} "
                f"(first at {earlier.source}); merged into it",
            )
        merged = _merge(earlier, paper)
        if merged.id != earlier.id:
            del self._by_id[earlier.id]
            self._by_id[merged.id] = index
        papers[index] = merged
        self.result.duplicates += 1

    def record(
        self, record: Mapping[str, Any], path: str, line: int | None,
        *, default_venue: str | None = None, where: str = "", notes: Sequence[str] = (),
    ) -> None:
        """Add one record's paper, or report why not (once, however many flaws it has)."""
        notes = list(notes)  # fields a reader already dropped, reported if the record stays
        source = f"{path}:{line}" if line is not None else f"{path}{where}"
        try:
            paper = paper_from_record(
                record, source=source, default_venue=default_venue, notes=notes
            )
        except InputError as exc:
            self.problem(path, line, f"{where.lstrip(': ')}{': ' if where else ''}{exc}")
            return
        for note in notes:
            self.problem(path, line, note)
        self.add(paper, path, line)


# --------------------------------------------------------------------------- files


@dataclass
class _Decoded:
    lines: list[str]
    bad: dict[int, int]  # 1-based line -> byte offset of its first undecodable byte

    def bad_in(self, first: int, last: int) -> str | None:
        for line in range(first, last + 1):
            if line in self.bad:
                return (
                    f"not valid UTF-8 (first bad byte at offset {self.bad[line]}, "
                    f"line {line}); record skipped"
                )
        return None


def _display(name: str | os.PathLike[str]) -> str:
    """A path (or source) as printable UTF-8 text: undecodable bytes and controls escaped.

    A file name holding the byte 0xff reaches Python as a lone surrogate; kept as is in
    a paper's ``source`` it would make the graph file unsavable.
    """
    text = os.fspath(name)
    if _SURROGATE_RE.search(text):
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a surrogate that no file name decodes to
            raw = text.encode("utf-8", "backslashreplace")
        text = raw.decode("utf-8", "backslashreplace")
    if _ID_CONTROL_RE.search(text):
        text = _ID_CONTROL_RE.sub(lambda m: repr(m.group())[1:-1], text)
    return text


def _file_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _read_bytes(path: Path, col: _Collector) -> bytes | None:
    """The bytes of a regular file of at most ``col.max_file_bytes``; else a problem.

    Opened with O_NONBLOCK, so that a FIFO answers at once instead of waiting for a
    writer, then checked with fstat (the file itself, not what its name pointed at a
    moment before). The read is bounded too: a file may grow, /proc files claim size 0.
    """
    name = str(path)
    limit = col.max_file_bytes
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        dangling = path.is_symlink()
        col.problem(name, None, "dangling symlink (its target does not exist)" if dangling
                    else "no such file or directory")
        return None
    except PermissionError:
        col.problem(name, None, "permission denied")
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            reason = "symlink loop (too many levels of symbolic links)"
        elif exc.errno == errno.ENXIO:  # what opening a socket gives
            reason = "a socket, not a regular file; skipped"
        else:
            reason = f"cannot read: {exc.strerror or exc}"
        col.problem(name, None, reason)
        return None
    except ValueError:  # a NUL byte in the path
        col.problem(name, None, "cannot read: the path holds a NUL character")
        return None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            col.problem(name, None, "is a directory, not a file")
            return None
        if not stat.S_ISREG(info.st_mode):
            col.problem(name, None, f"{_file_kind(info.st_mode)}, not a regular file; skipped")
            return None
        if info.st_size > limit:
            col.problem(name, None, f"larger than {limit} bytes ({info.st_size}); skipped")
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        col.problem(name, None, f"cannot read: {exc.strerror or exc}")
        return None
    finally:
        os.close(fd)
    if len(data) > limit:
        col.problem(name, None, f"larger than {limit} bytes (it grew while read); skipped")
        return None
    return data


def _load(path: Path, col: _Collector) -> _Decoded | None:
    """Read and decode a file, reporting (not raising) what goes wrong."""
    data = _read_bytes(path, col)
    if data is None:
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    raw_lines = data.split(b"\n")
    bad: dict[int, int] = {}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="surrogateescape")
        offset = 0
        for number, raw in enumerate(raw_lines, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                bad[number] = offset + exc.start
            offset += len(raw) + 1
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    return _Decoded(lines, bad)


_HEADER_NOISE_RE = re.compile(
    r"(?i)\b(?:accepted\s+)?(?:papers?(?:\s+list)?|list\s+of\s+papers|abstracts?|"
    r"proceedings|publications|collection|corpus)\b|论文列表|论文集|论文|列表|摘要|文章"
)


def venue_from_header(header: str) -> str | None:
    """'ICLR 2025 Papers' -> 'ICLR 2025'; None when nothing but filler words is left."""
    venue = _HEADER_NOISE_RE.sub(" ", clean_text(header)[0])
    venue = re.sub(r"(?i)^\s*(?:from|of|at|in)\b", " ", venue)
    venue = re.sub(r"(?i)\b(?:from|of|at|in)\s*$", " ", venue)
    venue = " ".join(venue.split()).strip(" :-–—|,.;()[]#*")
    return venue or None


def _looks_like_header(text: str, n_lines: int) -> bool:
    words = text.split()
    if len(words) > 25 or n_lines > 2:
        return False
    return not (len(words) >= 12 and re.search(r"[.!?。]\s*$", text))


def _paragraphs(lines: list[str]) -> Iterator[tuple[int, int, str]]:
    start: int | None = None
    for number, line in enumerate([*lines, ""], start=1):
        if line.strip():
            if start is None:
                start = number
        elif start is not None:
            yield start, number - 1, "\n".join(lines[start - 1 : number - 1])
            start = None


def _read_text_into(path: Path, col: _Collector) -> None:
    decoded = _load(path, col)
    if decoded is None:
        return
    name = str(path)
    venue: str | None = None
    count = 0
    for index, (first, last, text) in enumerate(_paragraphs(decoded.lines)):
        bad = decoded.bad_in(first, last)
        if index == 0 and not bad and _looks_like_header(text, last - first + 1):
            venue = venue_from_header(text)
            continue
        count += 1
        if bad:
            col.problem(name, first, bad)
            continue
        col.record({"abstract": text}, name, first, default_venue=venue)
    if count == 0:
        col.problem(name, None, "no records")


def _json_items(text: str, value: Any) -> list[tuple[int | None, str, Any]]:
    """(line, where, item) for each record of a whole-file JSON document."""
    if isinstance(value, dict):
        for key in ("papers", "records", "data", "items"):
            if isinstance(value.get(key), list):
                return [(None, f": {key}[{i}]", v) for i, v in enumerate(value[key])]
        return [(1, "", value)]
    if not isinstance(value, list):
        return [(1, "", value)]
    # The document parsed, so walking it item by item cannot fail; it gives line numbers.
    decoder = json.JSONDecoder()
    items: list[tuple[int | None, str, Any]] = []
    pos = text.index("[") + 1
    ws = re.compile(r"[\s,]*")
    while True:
        pos = ws.match(text, pos).end()  # type: ignore[union-attr]
        if text[pos] == "]":
            return items
        item, end = decoder.raw_decode(text, pos)
        items.append((text.count("\n", 0, pos) + 1, "", item))
        pos = end


def _read_jsonl_into(path: Path, col: _Collector) -> None:
    decoded = _load(path, col)
    if decoded is None:
        return
    name = str(path)
    if path.suffix.lower() == ".json" and not decoded.bad:
        text = "\n".join(decoded.lines)
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            value = None  # perhaps JSON Lines under a .json name
        else:
            items = _json_items(text, value)
            for line, where, item in items:
                if isinstance(item, dict):
                    col.record(item, name, line, where=where)
                else:
                    col.problem(name, line, f"{where.lstrip(': ')}{': ' if where else ''}"
                                f"not a JSON object (got {_type_name(item)})")
            if not items:
                col.problem(name, None, "no records")
            return
    count = 0
    for number, text_line in enumerate(decoded.lines, start=1):
        if not text_line.strip():
            continue
        count += 1
        if bad := decoded.bad_in(number, number):
            col.problem(name, number, bad)
            continue
        try:
            item = json.loads(text_line)
        except ValueError as exc:
            col.problem(name, number, f"not valid JSON: {exc}")
            continue
        except RecursionError:
            col.problem(name, number, "not valid JSON: nested too deeply")
            continue
        if not isinstance(item, dict):
            col.problem(name, number, f"not a JSON object (got {_type_name(item)})")
            continue
        col.record(item, name, number)
    if count == 0:
        col.problem(name, None, "no records")


def _csv_limit() -> None:
    limit = sys.maxsize
    while True:
        try:
            csv.field_size_limit(limit)
            return
        except OverflowError:
            limit //= 2


def _open_quote(line: str, delimiter: str) -> bool:
    """Whether ``line`` leaves a CSV quote open (an odd number of quote characters)."""
    return delimiter != "\t" and line.count('"') % 2 == 1


def _read_table_into(path: Path, col: _Collector) -> None:
    decoded = _load(path, col)
    if decoded is None:
        return
    _csv_limit()
    name = str(path)
    head = next((line for line in decoded.lines if line.strip()), "")
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    if delimiter not in head:
        delimiter = next((d for d in ("\t", ",", ";", "|") if d in head), delimiter)
    columns: list[str] | None = None
    count = 0
    start = 0  # index into decoded.lines where the current reader began
    while start < len(decoded.lines):
        # csv's line_num counts the items it is fed; feeding it our own lines keeps it in
        # step with the file's real line numbers (a lone CR inside a cell is not a line).
        lines = (line + "\n" for line in decoded.lines[start:])
        reader = (
            csv.reader(lines, delimiter=delimiter, quoting=csv.QUOTE_NONE)
            if delimiter == "\t"
            else csv.reader(lines, delimiter=delimiter)
        )
        restart: int | None = None
        consumed = start
        while True:
            first = consumed + 1
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                col.problem(name, first, f"unreadable row: {exc}")
                if start + reader.line_num <= consumed:  # no progress: give up on the rest
                    return
                consumed = start + reader.line_num
                continue
            consumed = start + reader.line_num
            if (
                consumed == len(decoded.lines)
                and consumed > first
                and _open_quote(decoded.lines[first - 1], delimiter)
            ):
                # a quote opened on this line never closes: csv read the rest of the file
                # as one cell. Report it and read the following lines as rows again.
                col.problem(name, first, "a quote opened on this line is never closed")
                restart = first
                break
            if not any(cell.strip() for cell in row):
                continue
            if bad := decoded.bad_in(first, consumed):
                col.problem(name, first, bad)
                if columns is None:
                    return
                continue
            if columns is None:
                columns = [_canonical_key(c) for c in row]
                if "abstract" not in columns:
                    col.problem(name, first, f"no abstract column (columns: {', '.join(row)})")
                    return
                continue
            count += 1
            if len(row) != len(columns):
                col.problem(name, first, f"expected {len(columns)} columns, got {len(row)}")
                continue
            record: dict[str, Any] = {}
            for key, value in zip(columns, row, strict=True):
                record.setdefault(key, value)
            col.record(record, name, first)
        if restart is None:
            break
        start = restart
    if count == 0:
        col.problem(name, None, "no records")


def _read_bibtex_into(path: Path, col: _Collector) -> None:
    from graph.bibtex import entries  # bibtexparser is loaded only when a .bib is read

    decoded = _load(path, col)
    if decoded is None:
        return
    name = str(path)
    count = 0
    for entry in entries("\n".join(decoded.lines), len(decoded.lines)):
        count += 1
        where = f": entry {_show(entry.key)}" if entry.key else ""
        if bad := decoded.bad_in(entry.line, entry.last_line):
            col.problem(name, entry.line, f"{where.lstrip(': ')}{': ' if where else ''}{bad}")
        elif entry.record is None:
            col.problem(name, entry.line, entry.error or "unreadable entry")
        else:
            col.record(entry.record, name, entry.line, where=where, notes=entry.notes)
    if count == 0:
        col.problem(name, None, "no records")


_READERS: dict[str, Callable[[Path, _Collector], None]] = {
    ".txt": _read_text_into,
    ".jsonl": _read_jsonl_into,
    ".json": _read_jsonl_into,
    ".csv": _read_table_into,
    ".tsv": _read_table_into,
    ".bib": _read_bibtex_into,
}


def _read_one(
    path: Path | str, reader: Callable[[Path, _Collector], None], max_file_bytes: int
) -> ReadResult:
    col = _Collector(max_file_bytes)
    reader(Path(path), col)
    return col.result


def read_text(
    path: Path | str, *, max_file_bytes: int = DEFAULT_MAX_INPUT_FILE_BYTES
) -> ReadResult:
    """Read a seed text file: optional header paragraph, then one abstract per paragraph."""
    return _read_one(path, _read_text_into, max_file_bytes)


def read_jsonl(
    path: Path | str, *, max_file_bytes: int = DEFAULT_MAX_INPUT_FILE_BYTES
) -> ReadResult:
    """Read JSON Lines (or, for a .json name, a JSON array/object) of paper records."""
    return _read_one(path, _read_jsonl_into, max_file_bytes)


def read_table(
    path: Path | str, *, max_file_bytes: int = DEFAULT_MAX_INPUT_FILE_BYTES
) -> ReadResult:
    """Read a CSV/TSV file with a header row of paper fields."""
    return _read_one(path, _read_table_into, max_file_bytes)


def read_bibtex(
    path: Path | str, *, max_file_bytes: int = DEFAULT_MAX_INPUT_FILE_BYTES
) -> ReadResult:
    """Read a BibTeX file: one record per entry; entries without an abstract are problems."""
    return _read_one(path, _read_bibtex_into, max_file_bytes)


def _walk(root: Path, col: _Collector) -> list[Path]:
    """Input files under ``root``; symlinked folders are followed, loops reported once."""
    found: list[Path] = []
    visited: dict[tuple[int, int], Path] = {}

    def report(exc: OSError) -> None:
        col.problem(str(exc.filename or root), None, f"cannot list directory: {exc.strerror}")

    for folder, dirs, files in os.walk(root, onerror=report, followlinks=True):
        here = Path(folder)
        try:
            info = here.stat()
        except OSError as exc:
            report(exc)
            dirs[:] = []
            continue
        key = (info.st_dev, info.st_ino)
        if key in visited:
            dirs[:] = []
            earlier = visited[key]
            if earlier in here.parents:
                col.problem(folder, None, f"directory loop: leads back to {earlier}; not followed")
            continue  # another name for a folder read already: its files are read once
        visited[key] = here
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(
            here / f for f in files
            if not f.startswith(".") and Path(f).suffix.lower() in _READERS
        )
    return sorted(found)


def read_corpus(
    paths: Sequence[Path | str], *, max_file_bytes: int = DEFAULT_MAX_INPUT_FILE_BYTES
) -> ReadResult:
    """Read files and directories (recursively, sorted) into one deduplicated result.

    Only regular files of at most ``max_file_bytes`` are read; FIFOs, devices, sockets,
    dangling symlinks, loops and bigger files are each reported as a problem.
    """
    col = _Collector(max_file_bytes)
    seen: set[Path] = set()
    for given in paths:
        root = Path(given)
        try:
            is_dir = root.is_dir()
        except (OSError, ValueError) as exc:
            col.problem(str(root), None, f"cannot read: {exc}")
            continue
        if is_dir:
            files = _walk(root, col)
            if not files:
                col.problem(str(root), None, f"no {', '.join(EXTENSIONS)} files")
        else:
            files = [root]
        for path in files:
            try:
                key = path.resolve()
            except (OSError, RuntimeError):  # a symlink loop; read will report it
                key = path.absolute()
            if key in seen:
                continue
            seen.add(key)
            reader = _READERS.get(path.suffix.lower())
            if reader is None:
                if path.exists() or path.is_symlink():
                    col.problem(
                        str(path), None,
                        f"unknown file type {path.suffix or '(none)'!r} "
                        f"(expected {', '.join(EXTENSIONS)}); skipped",
                    )
                else:
                    col.problem(str(path), None, "no such file or directory")
                continue
            before = len(col.result.papers)
            reader(path, col)
            logger.info("%s: %d new papers", path, len(col.result.papers) - before)
    result = col.result
    logger.info(
        "read %d papers (%d duplicates merged, %d problems)",
        len(result.papers), result.duplicates, len(result.problems),
    )
    return result
