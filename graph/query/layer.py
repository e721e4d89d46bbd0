"""The GraphStore reads every store inherits: thin methods over graph.query's functions."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from graph import deadline
from graph.model import (
    CitationLink,
    Edge,
    GraphNode,
    GraphPath,
    NodeKind,
    Paper,
    RelType,
    SearchHit,
    Subgraph,
)
from graph.query import citations, papers, search, traverse
from graph.query.filters import ANY, CountBy, GroupCount, PaperFilter, PaperSort

if TYPE_CHECKING:
    from graph.store.base import Backend


class QueryLayer:
    """Mixin: the query half of :class:`~graph.store.base.GraphStore`.

    Every read checks the deadline of the work it serves first (graph.deadline): a
    request that ran past its time limit stops at its next read.

    A store inherits it and says, in :meth:`read_backend`, which
    :class:`~graph.store.base.Backend` answers its reads (itself, or a mirror).
    """

    def read_backend(self) -> Backend:
        """The backend reads go to (kept current by the store)."""
        raise NotImplementedError

    def find_node(self, name: str, kinds: Collection[NodeKind] | None = None) -> GraphNode | None:
        """Exact lookup by id, then a name/label/title/alias match; ties by lowest id."""
        deadline.check()
        return search.find_node(self.read_backend(), name, kinds)

    def list_nodes(
        self,
        kind: NodeKind,
        *,
        offset: int = 0,
        limit: int = 50,
        venue: str | None = None,
        year: int | None = None,
        neighbor: str | None = None,
    ) -> tuple[list[GraphNode], int]:
        """A page of nodes of one kind ordered by id, and the total count."""
        deadline.check()
        return search.list_nodes(
            self.read_backend(), kind, offset=offset, limit=limit, venue=venue, year=year,
            neighbor=neighbor,
        )

    def edges_of(self, ids: Sequence[str], types: Collection[RelType] | None = None) -> list[Edge]:
        """Every edge touching any of ``ids`` (either direction), by (source, target, type)."""
        deadline.check()
        return traverse.edges_of(self.read_backend(), ids, types)

    def edges_and_ends(
        self, ids: Sequence[str], types: Collection[RelType] | None = None
    ) -> tuple[list[Edge], dict[str, GraphNode]]:
        """:meth:`edges_of`, and the nodes at the ends of those edges (one round trip on
        a server store)."""
        deadline.check()
        return traverse.edges_and_ends(self.read_backend(), ids, types)

    def neighborhood(
        self,
        ids: Sequence[str],
        depth: int = 1,
        rel_types: Collection[RelType] | None = None,
        node_kinds: Collection[NodeKind] | None = None,
        limit: int = 200,
    ) -> Subgraph:
        """Nodes within ``depth`` hops of ``ids`` (the ordering contract in store/base.py)."""
        deadline.check()
        return traverse.neighborhood(self.read_backend(), ids, depth, rel_types, node_kinds, limit)

    def shortest_path(
        self,
        source: str,
        target: str,
        rel_types: Collection[RelType] | None = None,
        max_hops: int = 6,
    ) -> GraphPath | None:
        """The shortest path, or None if none within ``max_hops``."""
        deadline.check()
        return traverse.shortest_path(self.read_backend(), source, target, rel_types, max_hops)

    def k_paths(
        self,
        source: str,
        target: str,
        k: int = 3,
        rel_types: Collection[RelType] | None = None,
        max_hops: int = 4,
    ) -> list[GraphPath]:
        """Up to ``k`` simple paths, ordered by path_sort_key."""
        deadline.check()
        return traverse.k_paths(self.read_backend(), source, target, k, rel_types, max_hops)

    def keyword_search(
        self, query: str, kinds: Collection[NodeKind] | None = None, limit: int = 10
    ) -> list[SearchHit]:
        """Keyword hits over labels, names, aliases, titles and abstracts."""
        deadline.check()
        return search.keyword_search(self.read_backend(), query, kinds, limit)

    def vector_search(
        self, vector: Sequence[float], limit: int = 10, exclude: Collection[str] = ()
    ) -> list[SearchHit]:
        """Papers by cosine similarity of their embedding to ``vector``."""
        deadline.check()
        return search.vector_search(self.read_backend(), vector, limit, exclude)

    def coupled(
        self, ids: Sequence[str], limit: int = 20, keep: PaperFilter = ANY,
        sort: PaperSort | None = None,
    ) -> list[CitationLink]:
        """Papers bibliographically coupled to ``ids`` (graph.query.citations)."""
        deadline.check()
        return citations.overlap(self.read_backend(), ids, coupling=True, limit=limit,
                                 keep=keep, sort=sort)

    def cocited(
        self, ids: Sequence[str], limit: int = 20, papers_only: bool = True,
        keep: PaperFilter = ANY, sort: PaperSort | None = None,
    ) -> list[CitationLink]:
        """Papers (``papers_only``: else outside works too) co-cited with ``ids``."""
        deadline.check()
        return citations.overlap(self.read_backend(), ids, coupling=False, limit=limit,
                                 papers_only=papers_only, keep=keep, sort=sort)

    def prior_works(
        self, ids: Sequence[str], limit: int = 20, keep: PaperFilter = ANY,
        sort: PaperSort | None = None,
    ) -> list[CitationLink]:
        """The works ``ids`` cite most, outside works included."""
        deadline.check()
        return citations.prior_works(self.read_backend(), ids, limit, keep, sort)

    def derivative_works(
        self, ids: Sequence[str], limit: int = 20, keep: PaperFilter = ANY,
        sort: PaperSort | None = None,
    ) -> list[CitationLink]:
        """The corpus papers that cite ``ids`` most."""
        deadline.check()
        return citations.derivative_works(self.read_backend(), ids, limit, keep, sort)

    def papers(
        self, where: PaperFilter = ANY, sort: PaperSort | None = None, *, offset: int = 0,
        limit: int = 50,
    ) -> tuple[list[Paper], int]:
        """A page of the papers ``where`` admits, by ``sort`` then id, and how many match."""
        deadline.check()
        return papers.papers(self.read_backend(), where, sort, offset, limit)

    def paper_counts(
        self, by: CountBy, where: PaperFilter = ANY, limit: int = 20
    ) -> list[GroupCount]:
        """Paper counts by year, venue or concept under ``where``."""
        deadline.check()
        return papers.counts(self.read_backend(), where, by, limit)

    def kept(self, where: PaperFilter, nodes: Sequence[GraphNode]) -> list[GraphNode]:
        """Those of ``nodes`` that ``where`` keeps, in order (the store checks the papers)."""
        deadline.check()
        return papers.kept(self.read_backend(), where, nodes)
