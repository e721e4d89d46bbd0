"""Acronym definitions: "long form (SF)" and "SF (long form)" (Schwartz & Hearst)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from graph.extract.lexicon import _lex
from graph.extract.tokens import _acronym_singular, _is_acronym, _is_word


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
