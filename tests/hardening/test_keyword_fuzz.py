"""Keyword search with hostile text: no FTS5 or Lucene syntax error, ever, on any store.

The query reaches SQLite FTS5 (embedded, memory) and Lucene (Neo4j) only as quoted
letter-and-digit terms (graph/query/text.py query_terms). These throw at it what each
query language would read as syntax: quotes, NEAR, AND/OR/NOT, * and ^, column filters,
parentheses, NUL, lone surrogates, 10 kB strings, and random mixtures of all of them.
A hit must be a real node of the graph, and a word of the graph must still be found
when hostile text surrounds it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graph.model import NodeKind
from graph.store.base import GraphStore
from tests.contract import fixtures as fx
from tests.hardening._hyp import fuzz_settings

HOSTILE = [
    '"', '""', '"attention', 'attention"', "'", "NEAR(attention graph)", "attention NEAR graph",
    "NEAR", "AND", "OR", "NOT", "attention AND", "OR attention", "NOT attention", "- attention",
    "attention*", "*", "^attention", "attention^2", "title:attention", "name:graph",
    "abstract:", "{name title}: graph", "(attention", "attention)", "()", "((((", "\x00",
    "atten\x00tion", "\ud800", "attention \udfff graph", "\\", "attention\\", "~attention",
    "attention~2", "[a TO z]", "/regex.*/", "+attention -graph", "&&", "||", "!attention",
    "?", "field:(a OR b)", "x" * 10_000, ("attention " * 1500)[:10_000], "🙂 attention 🙂",
    "\u200b\u200battention", "ǅ", "İstanbul",
]
#: characters either query language gives a meaning, plus control and surrogate code points
SYNTAX = st.sampled_from([
    *'"\'*^:()[]{}~+-!&|\\/?\x00\ud800\udfff ',
    " NEAR ", " AND ", " OR ", " NOT ", "title:", "name:", "abstract:", "NEAR(", "attention",
])


@pytest.fixture(scope="module", params=["memory", "embedded"])
def fuzz_store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GraphStore]:
    if request.param == "memory":
        from graph.store.memory import NetworkxStore

        store: Any = NetworkxStore()
    else:
        from graph.store.embedded import EmbeddedStore

        store = EmbeddedStore(tmp_path_factory.mktemp("kwfuzz") / "graph.db")
    store.apply(fx.full_change())
    yield store
    store.close()


IDS = {n.id for n in [*fx.PAPERS, *fx.CONCEPTS, *fx.DATASETS]}


def _check(store: GraphStore, text: str) -> None:
    for kinds in (None, [NodeKind.PAPER]):
        hits = store.keyword_search(text, kinds, 10)
        assert all(h.node.id in IDS and h.score > 0 for h in hits), text
        if kinds:
            assert all(h.node.kind is NodeKind.PAPER for h in hits)


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_never_raises(fuzz_store: GraphStore, text: str) -> None:
    _check(fuzz_store, text)


@pytest.mark.parametrize(
    "text", ["NEAR(attention", 'title:"attention', "attention*)^", "\x00attention\ud800"]
)
def test_a_word_inside_hostile_text_is_still_found(fuzz_store: GraphStore, text: str) -> None:
    hits = fuzz_store.keyword_search(text, None, 5)
    assert "concept:attention" in {h.node.id for h in hits[:3]}


@fuzz_settings(300)
@given(st.lists(st.one_of(SYNTAX, st.text(max_size=12)), max_size=40).map("".join))
def test_random_hostile_text(fuzz_store: GraphStore, text: str) -> None:
    _check(fuzz_store, text)


@pytest.mark.bolt
def test_hostile_text_on_neo4j(make_store: Any) -> None:
    store = make_store("neo4j")
    store.apply(fx.full_change())
    for text in HOSTILE:
        _check(store, text)
    hits = store.keyword_search("NEAR(attention", None, 5)
    assert "concept:attention" in {h.node.id for h in hits[:3]}
