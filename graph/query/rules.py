"""The ordering rules and argument checks every store answers by (see graph/store/base.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from operator import attrgetter

from graph.errors import InvalidArgumentError
from graph.model import Edge, GraphPath, NodeKind, RelType, SearchHit

#: the most hops a path query walks, on every store (a bound on the work one query does)
MAX_HOPS = 20
#: k_paths ranks at most this many candidate paths (beyond that, see the contract)
MAX_PATH_CANDIDATES = 1000


def path_sort_key(path: GraphPath) -> tuple[int, float, tuple[str, ...], tuple[str, ...]]:
    """Fewest hops, then strongest (highest summed weight), then node ids, then edge types.

    Between two nodes joined by several edges a path uses the strongest one (ties by
    type name), so paths are told apart by their node sequence.
    """
    return (
        path.hops,
        -round(path.strength, 9),
        tuple(n.id for n in path.nodes),
        tuple(e.type.value for e in path.edges),
    )


def best_edge(edges: Iterable[Edge]) -> Edge:
    """The edge a path uses between two nodes: highest weight, then type name, then
    (source, target) (two CITES, one each way, would otherwise tie)."""
    return min(edges, key=lambda e: (-e.weight, e.type.value, e.source, e.target))


#: (source, target, type name) of an edge: a RelType is a str, so it sorts as its name
#: without the enum's ``.value`` lookup (a descriptor call per edge, ~40% of a big sort);
#: an ``attrgetter`` builds the tuple in C (a depth-2 neighbourhood sorts ~2,500 edges)
edge_sort_key: Callable[[Edge], tuple[str, str, str]] = attrgetter("source", "target", "type")


def hit_sort_key(hit: SearchHit) -> tuple[float, str]:
    return (-round(hit.score, 9), hit.node.id)


def name_key(name: str) -> str:
    """A name as lookups compare it: whitespace collapsed, case-folded."""
    return " ".join(name.split()).casefold()


def name_variants(name: str) -> list[str]:
    """Case-folded lookup keys for a name: itself, then its singular ("LLMs" -> "llm")."""
    key = name_key(name)
    out = [key]
    if len(key) > 3 and key.endswith("s") and not key.endswith("ss"):
        out.append(key[:-1])
    return out


def check_count(argument: str, value: int) -> int:
    """``value`` as a count (an int >= 0); InvalidArgumentError naming ``argument``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgumentError(argument, "must be an integer")
    if value < 0:
        raise InvalidArgumentError(argument, "must be >= 0")
    return value


def check_hops(value: int) -> int:
    """``max_hops`` between 1 and :data:`MAX_HOPS`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgumentError("max_hops", "must be an integer")
    if not 1 <= value <= MAX_HOPS:
        raise InvalidArgumentError("max_hops", f"must be between 1 and {MAX_HOPS}")
    return value


def kinds_filter(kinds: Iterable[NodeKind | str] | None) -> frozenset[NodeKind] | None:
    """Node kinds as a set (None: every kind); InvalidArgumentError for an unknown one."""
    if kinds is None:
        return None
    try:
        return frozenset(NodeKind(k) for k in kinds)
    except ValueError:
        raise InvalidArgumentError(
            "kinds", f"unknown node kind; choose from {', '.join(k.value for k in NodeKind)}"
        ) from None


def types_filter(types: Iterable[RelType | str] | None) -> frozenset[RelType] | None:
    """Relationship types as a set (None: every type); InvalidArgumentError if unknown."""
    if types is None:
        return None
    try:
        return frozenset(RelType(t) for t in types)
    except ValueError:
        raise InvalidArgumentError(
            "rel_types",
            f"unknown relationship type; choose from {', '.join(t.value for t in RelType)}",
        ) from None
