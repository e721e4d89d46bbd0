"""Probe 13 helpers: builds in small SIMILAR_TO pieces vs a fresh build written whole."""
from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any, Callable

import graph.build as gb
from graph.ingest import paper_from_record, read_corpus
from graph.model import GraphData, Paper
from graph.store.embedded import EmbeddedStore, _SqlParts
from tests.support.compare import assert_same_graph
from tests.support.seeds import EMBED_CACHE, ROOT, SEEDS, seed_settings

ICLR = Path("/work/shared/data/iclr2021/paperlist.tsv")


def seed_papers() -> list[Paper]:
    r = read_corpus([SEEDS])
    assert not r.problems
    return sorted(r.papers, key=lambda p: p.id)


def iclr_papers(n: int) -> list[Paper]:
    r = read_corpus([ICLR])
    return r.papers[:n]


def paper(pid: str, text: str, title: str | None = None) -> Paper:
    rec: dict[str, Any] = {"id": pid, "abstract": text}
    if title is not None:
        rec["title"] = title
    return paper_from_record(rec, source=f"probe:{pid}")


def whole(tmp: Path, papers: list[Paper], cache: Path = EMBED_CACHE, **settings: Any) -> GraphData:
    """A fresh one-shot build of ``papers`` into a new database, default piece size."""
    assert gb.SIMILAR_PIECE_EDGES == 250_000, gb.SIMILAR_PIECE_EDGES
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    store = EmbeddedStore(tmp / "whole.db", reads="sql")
    pipe = gb.Pipeline(seed_settings(tmp, **settings), cache_dir=cache, incremental=False)
    try:
        pipe.run(store, add_papers=papers, replace=True)
        return store.snapshot()
    finally:
        pipe.close()
        store.close()


class Parts:
    """Count the parts applied; optionally raise/kill after the Nth."""

    def __init__(self) -> None:
        self.n = 0
        self.changes: list[Any] = []
        self.after: int | None = None
        self.action: Callable[[], None] | None = None

    def install(self, setattr_: Callable[..., Any]) -> None:
        apply = _SqlParts.apply
        me = self

        def counted(self_: _SqlParts, change: Any) -> None:
            apply(self_, change)
            me.n += 1
            me.changes.append(change)
            if me.after is not None and me.n == me.after and me.action is not None:
                me.action()

        setattr_(_SqlParts, "apply", counted)
