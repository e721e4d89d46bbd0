"""Keyword search pruned as MaxScore does (graph/store/fts.py) gives the whole query's answer.

Random corpora with a Zipf vocabulary (a few words in most rows, many rare ones), queries
of 2-12 terms mixing both, kinds filters and limits: the pruned search must return
exactly what the whole query returns (ids, scores, order), before and after changes that
move the term counts, in the memory index and in graph.db changed by another store.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from graph.model import Concept, GraphChange, NodeKind, Paper
from graph.store import fts
from graph.store.embedded import EmbeddedStore

WORDS = [f"w{i}" for i in range(400)]
Query = tuple[list[str], frozenset[NodeKind] | None, int]


@pytest.fixture(autouse=True)
def _prune_small_corpora(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fts, "PRUNE_FROM_ROWS", 0)  # prune whatever the size


def _text(rng: random.Random, n: int) -> str:
    # Zipf-like: word i with weight 1/(i+1): w0..w5 are in most rows, w300+ in few
    return " ".join(rng.choices(WORDS, weights=[1 / (i + 1) for i in range(len(WORDS))], k=n))


def _nodes(rng: random.Random, start: int, n: int, extra: str = "") -> list[Paper | Concept]:
    out: list[Paper | Concept] = []
    for i in range(start, start + n):
        if rng.random() < 0.8:
            title = _text(rng, rng.randint(3, 10)) + extra
            out.append(Paper(f"p{i:05d}", title, _text(rng, rng.randint(20, 60)), f"h{i}",
                             title=title))
        else:
            out.append(Concept(f"c{i:05d}", _text(rng, rng.randint(1, 3))))
    return out


def _queries(rng: random.Random, count: int) -> list[Query]:
    out = []
    for _ in range(count):
        common = rng.sample(WORDS[:10], rng.randint(1, 5))
        rare = rng.sample(WORDS[10:], rng.randint(1, 7))
        terms = list(dict.fromkeys([*common, *rare, *(["absent"] if rng.random() < 0.2 else [])]))
        rng.shuffle(terms)
        kinds = rng.choice([None, frozenset({NodeKind.PAPER}), frozenset({NodeKind.CONCEPT})])
        out.append((terms, kinds, rng.choice([1, 3, 10, 25])))
    return out


def _pruned_answers(db: sqlite3.Connection, counts: fts.TermCounts, queries: list[Query]) -> int:
    """Check every query against the whole query; how many the pruning answered."""
    pruned = 0
    for terms, kinds, limit in queries:
        whole = fts.search(db, terms, kinds, limit)
        assert fts.search(db, terms, kinds, limit, counts) == whole, (terms, kinds, limit)
        values = None if kinds is None else sorted(k.value for k in kinds)
        pruned += fts._pruned(db, terms, values, limit, counts) is not None
    return pruned


@pytest.mark.parametrize("seed", range(4))
def test_pruned_memory_index_answers_as_the_whole_query(seed: int) -> None:
    rng = random.Random(seed)
    nodes = _nodes(rng, 0, 800)
    index = fts.MemoryIndex(nodes)
    counts = index._counts.for_version(index._version)
    assert _pruned_answers(index._db, counts, _queries(rng, 40)) >= 5  # it really pruned
    # a rare word made common and rows removed: the counts must follow
    index.apply(_nodes(rng, 5000, 200, extra=" w399"), [n.id for n in nodes[:150]])
    for terms, kinds, limit in _queries(rng, 30):
        terms = [*terms, "w399"]
        assert index.search(terms, kinds, limit) == fts.search(index._db, terms, kinds, limit)


def test_pruned_search_in_graph_db_follows_another_store(tmp_path: Path) -> None:
    rng = random.Random(9)
    db = tmp_path / "graph.db"
    writer = EmbeddedStore(db)
    writer.apply(GraphChange(upsert_nodes=tuple(_nodes(rng, 0, 600))))
    server = EmbeddedStore(db)  # searches on a connection of its own, counts kept
    queries = _queries(random.Random(1), 25)

    def check() -> None:
        plain = sqlite3.connect(db)
        try:
            for terms, kinds, limit in queries:
                terms = [*terms, "w397"]
                assert server._keyword_hits(terms, kinds, limit) == \
                    fts.search(plain, terms, kinds, limit)
        finally:
            plain.close()

    check()
    # another store's commit makes the rare word w397 common: counts kept from before
    # would bound it too low and prune rows that belong in the answer
    writer.apply(GraphChange(upsert_nodes=tuple(_nodes(rng, 9000, 300, extra=" w397"))))
    check()
    writer.close()
    server.close()
