"""Abstract cleaning: TeX and markdown residue, URLs, line-break hyphens; the text hash."""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata

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
# Invisible characters, and the bidirectional embeddings, overrides and isolates: a title
# holding U+202E is shown reversed from there on in every listing and export ("Trojan
# source" spoofing; probe4 N3). Marks that only hint a direction (U+200E, U+200F) stay.
_INVISIBLE_RE = re.compile("[\u00ad\u200b\u200c\u200d\u2060\ufeff\u202a-\u202e\u2066-\u2069]")


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


@functools.cache
def _letter_macros() -> tuple[re.Pattern[str], dict[str, str]]:
    """TeX's letters that are commands (``\\ss`` ß, ``\\AA`` Å, ``\\L`` Ł, ``\\o`` ø, ``\\ae`` æ …),
    from pylatexenc's table (what bibtexparser decodes LaTeX with): every macro there that
    stands for one Latin letter, but ``\\i``/``\\j`` (a dotless i or j is written only to
    carry an accent, ``\\'\\i``: plain i and j here, so the accent lands on them)."""
    from pylatexenc.latex2text import get_default_latex_context_db

    letters = {"i": "i", "j": "j"}
    db = get_default_latex_context_db()
    for spec in db.iter_macro_specs(["latex-base", "advanced-symbols"]):
        name, text = spec.macroname, spec.simplify_repl
        if (
            isinstance(text, str) and len(text) == 1 and text.isalpha() and name.isalpha()
            and unicodedata.name(text, "").startswith("LATIN")
            and not name.startswith("text") and name not in ("hbar", "eth", "i", "j")
        ):
            letters[name] = text
    names = "|".join(sorted(letters, key=lambda n: (-len(n), n)))
    # TeX ends a command word at the first non-letter and eats the spaces after it:
    # "\\AA ngstr\\"om" is "Ångström" ("\\ss{}" ends it with an empty group instead)
    return re.compile(rf"\\({names})(?![A-Za-z])(?:\{{\}}|[ \t\n]*)"), letters


def tex_letters(text: str) -> str:
    """``text`` with TeX's letter commands as letters ("{\\ss}" -> "{ß}")."""
    if "\\" not in text:
        return text
    pattern, letters = _letter_macros()
    return pattern.sub(lambda m: letters[m.group(1)], text)


def _tex_commands(text: str) -> str:
    text = tex_letters(text)
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


def text_hash(text: str, *, clean: bool = False) -> str:
    """sha256 hex of the normalized key of the cleaned text (raw or clean input alike).

    ``clean=True`` says ``text`` is already :func:`clean_text`'s output (a Paper's
    abstract), which saves cleaning it again; the hash is the same either way.
    """
    if not clean:
        text = clean_text(text)[0]
    return hashlib.sha256(normalized_key(text).encode("utf-8")).hexdigest()
