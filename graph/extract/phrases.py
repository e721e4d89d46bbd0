"""Noun-phrase chunks and the candidate terms in them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from graph.extract.lexicon import _TOKEN_RE, _lex
from graph.extract.tokens import (
    _BREAK,
    _HEAD,
    _MOD,
    _key,
    _participle,
    _role,
    _single_ok,
    _singular,
    _verb_after,
)

_MAX_NGRAM = 4


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
