"""Filtered, sorted pages of papers and paper counts, written once over a Backend.

The filtering, sorting and grouping run in the store (the Backend primitives
``match_papers`` and ``count_papers``); here the arguments are checked and
the ids become nodes. The rules: :mod:`graph.query.filters`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from graph.errors import InvalidArgumentError
from graph.model import GraphNode, NodeKind, Paper
from graph.query.filters import CountBy, GroupCount, PaperFilter, PaperSort
from graph.query.rules import check_count

if TYPE_CHECKING:
    from graph.store.base import Backend

#: the most groups one count answers
MAX_GROUPS = 1000


def papers(
    b: Backend, where: PaperFilter, sort: PaperSort | None, offset: int, limit: int
) -> tuple[list[Paper], int]:
    """A page of the papers ``where`` admits, by ``sort`` then id, and how many match."""
    check_count("offset", offset)
    check_count("limit", limit)
    if not where.admits_kind(NodeKind.PAPER):
        return [], 0
    with b.reading():
        ids, total = b.match_papers(where, sort, offset, limit)
        nodes = b.get_nodes(ids)
    return [n for n in (nodes.get(i) for i in ids) if isinstance(n, Paper)], total


def counts(b: Backend, where: PaperFilter, by: CountBy, limit: int) -> list[GroupCount]:
    """Paper counts by year, venue or concept (:func:`graph.query.filters.ranked_groups`)."""
    if not 1 <= limit <= MAX_GROUPS:
        raise InvalidArgumentError("first", f"must be between 1 and {MAX_GROUPS}")
    if not where.admits_kind(NodeKind.PAPER):
        return []
    with b.reading():
        return b.count_papers(where, CountBy(by), limit)


def kept(b: Backend, where: PaperFilter, nodes: Sequence[GraphNode]) -> list[GraphNode]:
    """Those of ``nodes`` that ``where`` keeps, in order: kinds checked here, the paper
    fields by the store (:meth:`Backend.match_papers` within them) over the papers among them."""
    if where.empty:
        return list(nodes)
    shown = [n for n in nodes if where.admits_kind(n.kind)]
    if not where.paper_fields:
        return shown
    with b.reading():
        ok = set(b.match_papers(where, None, 0, None, within=[n.id for n in shown])[0])
    return [n for n in shown if n.id in ok]


def sorted_papers(
    b: Backend, where: PaperFilter, sort: PaperSort, ids: Sequence[str], limit: int
) -> list[str]:
    """The first ``limit`` of the papers among ``ids`` that ``where`` admits, by ``sort``
    (ties by id), sorted by the store."""
    check_count("limit", limit)
    if not where.admits_kind(NodeKind.PAPER):
        return []
    with b.reading():
        return b.match_papers(where, sort, 0, limit, within=list(ids))[0]
