"""Finding a node the way a person names it, shared by the CLI and the API."""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterator
from dataclasses import dataclass

from graph.errors import InvalidArgumentError, NotFoundError
from graph.ids import spellings
from graph.model import GraphNode, NodeKind, Paper
from graph.store.base import GraphStore

PAGE = 5000  # papers read a page at a time


@dataclass(frozen=True, slots=True)
class Resolution:
    """A name that named more than one node: which was picked, and the others."""

    argument: str
    ref: str
    picked: GraphNode
    others: tuple[GraphNode, ...]

    def message(self) -> str:
        """One line for a person: what the name was taken as, and how to get the others."""
        also = "; ".join(f"{_what(n)} (id {n.id})" for n in self.others)
        return f"{self.argument} {self.ref!r} taken as {_what(self.picked)}; it also names {also}"


def _what(node: GraphNode) -> str:
    return f"the {node.kind.value.lower()} {node.label!r}"


class ShortNames:
    """Which label prefixes ending in ":" some paper has, kept per store version.

    A cheap "no" for :func:`_short_named`: most names (every concept's) are no paper's
    short name, and finding that out by keyword search cost ~20 ms a lookup on ICLR
    2021, paid by every query that names a concept. A store that cannot say when it
    changed (version None) is always asked.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version: str | None = None
        self._prefixes: frozenset[str] = frozenset()

    def may_name(self, store: GraphStore, prefix: str) -> bool:
        """False only when no paper's case-folded label starts with ``prefix``."""
        version = store.version()
        if version is None:
            return True
        with self._lock:
            if version != self._version:
                self._prefixes = frozenset(_prefixes(store))
                self._version = version
            return prefix in self._prefixes


def _prefixes(store: GraphStore) -> Iterator[str]:
    offset = 0
    while True:
        page, total = store.list_nodes(NodeKind.PAPER, offset=offset, limit=PAGE)
        for node in page:
            label = node.label.casefold()
            yield from (label[: i + 1] for i, c in enumerate(label) if c == ":")
        offset += len(page)
        if not page or offset >= total:
            return


def find(
    store: GraphStore,
    ref: str,
    kinds: Collection[NodeKind] | None = None,
    short_names: ShortNames | None = None,
) -> GraphNode | None:
    """A node by id, name, label, title or alias; a paper also by its short name.

    The short name is a label's part before ":" — "LocoVR" finds the paper labelled
    "LocoVR: dataset of …" when no node is *named* LocoVR among ``kinds``.
    """
    node = store.find_node(ref, kinds)
    if node is not None or (kinds is not None and NodeKind.PAPER not in kinds):
        return node
    short = _short_named(store, ref, short_names)
    return short[0] if short else None


def matches(
    store: GraphStore,
    ref: str,
    kinds: Collection[NodeKind] | None = None,
    short_names: ShortNames | None = None,
) -> list[GraphNode]:
    """Every node ``ref`` names, the one :func:`find` picks first.

    "PaRa" names the concept PaRa and the paper labelled "PaRa: …" (its method's short
    name); a caller picks the first and can offer the others.
    """
    first = find(store, ref, kinds, short_names)
    if first is None:
        return []
    out = [first]
    if first.id in spellings(ref):
        # an id names one node, but may be another node's name too: a paper with id "LLM"
        # took the name from the concept with that alias in silence (outside probe)
        others = [k for k in (kinds or list(NodeKind)) if k is not first.kind]
        named = store.find_node(ref, others) if others else None
        if named is not None and named.id != first.id:
            out.append(named)
        return out
    if kinds is None or NodeKind.PAPER in kinds:
        out += [n for n in _short_named(store, ref, short_names) if n.id != first.id]
    if first.kind is NodeKind.PAPER:
        others = [k for k in (kinds or list(NodeKind)) if k is not NodeKind.PAPER]
        other = store.find_node(ref, others) if others else None
        if other is not None and other.id != first.id:
            out.append(other)
    return out


def _short_named(
    store: GraphStore, ref: str, short_names: ShortNames | None = None
) -> list[GraphNode]:
    """Papers whose label's part before ":" is ``ref`` (any case), best keyword hit first."""
    prefix = " ".join(ref.split()).casefold() + ":"
    if prefix == ":" or len(prefix) > 200:  # no label is that long
        return []
    if short_names is not None and not short_names.may_name(store, prefix):
        return []
    return [
        hit.node
        for hit in store.keyword_search(ref, [NodeKind.PAPER], limit=20)
        if hit.node.label.casefold().startswith(prefix)
    ]


def resolve_paper(store: GraphStore, ref: str) -> Paper:
    """A paper by id, label, title or short name; NotFoundError otherwise."""
    node = find(store, ref, [NodeKind.PAPER])
    if not isinstance(node, Paper):
        raise NotFoundError(f"no paper with id or label {ref!r}")
    return node


def paper_to_remove(store: GraphStore, ref: str, argument: str = "id") -> Paper:
    """The one paper ``ref`` names for a removal: its id, or a title, label or short name
    that no other paper shares. A name that names two papers in any of these ways is
    refused (with their ids), so a removal never picks one of them by id order."""
    forms = spellings(ref)
    by_id = store.get_nodes(list(forms)) if forms else {}
    for form in forms:
        if isinstance(exact := by_id.get(form), Paper):
            return exact
    node = resolve_paper(store, ref)
    said = " ".join(ref.casefold().split())
    # every paper the name names: by title or label, and by short name ("Zeta" for
    # "Zeta: sparse …" and "Zeta: dense …"; "Kappa" as one's title and another's short name)
    same = {node.id} | {n.id for n in matches(store, ref, [NodeKind.PAPER])}
    for hit in store.keyword_search(ref, [NodeKind.PAPER], 50):
        p = hit.node
        if isinstance(p, Paper) and said in (
            " ".join((p.title or "").casefold().split()), " ".join(p.label.casefold().split())
        ):
            same.add(p.id)
    if len(same) > 1:
        shown = ", ".join(sorted(same)[:5])
        raise InvalidArgumentError(
            argument,
            f"{ref!r} names {len(same)} papers ({shown}): give the id of the one to remove",
        )
    return node
