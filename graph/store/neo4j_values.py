"""Citegraph nodes and edges as Neo4j property maps, and back, exactly.

Neo4j stores only scalars and homogeneous lists of scalars (no maps, no nulls inside
lists, no nested or mixed lists; ``[1, 2.5]`` would come back as ``[1.0, 2.5]``). Node
fields are checked and a bad one fails the change before anything is written; an edge
attr that Neo4j cannot store exactly is kept as JSON text, listed in the edge's
``json_keys``, and decoded on read, so attrs round-trip exactly.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from graph.errors import InvalidArgumentError, StoreError
from graph.model import Edge, GraphNode, NodeKind, RelType, node_from_props, node_to_props
from graph.query.search import names_of
from graph.query.text import index_text, search_fields

#: Edge property that lists which properties are the edge's ``attrs`` (``weight`` is
#: both the edge weight and, for some types, an attr; this keeps the round trip exact).
ATTR_KEYS = "attr_keys"
#: Edge property listing the attrs stored as JSON text (values Neo4j cannot store).
JSON_KEYS = "json_keys"
#: Neo4j's integers are 64-bit.
INT64 = (-(2**63), 2**63 - 1)


def decode_node(props: dict[str, Any], labels: Sequence[str]) -> GraphNode:
    kinds = {k.value: k for k in NodeKind}
    kind = next((kinds[lab] for lab in labels if lab in kinds), None)
    if kind is None:
        raise StoreError(f"node with labels {list(labels)} is not a citegraph node")
    return node_from_props(
        kind, {k: v for k, v in props.items() if v is not None and k not in HIDDEN_PROPS}
    )


def decode_edge(source: str, target: str, type_: str, props: dict[str, Any]) -> Edge:
    props = dict(props)
    raw = props.get("weight", 1.0)
    weight = float(raw) if isinstance(raw, int | float) else 1.0
    keys = props.pop(ATTR_KEYS, None)
    as_json = set(props.pop(JSON_KEYS, None) or ())
    if keys is None:  # written by something else: every property but weight is an attr
        attrs = {k: v for k, v in props.items() if k != "weight"}
    else:
        attrs = {k: props[k] for k in keys if k in props}
    for k in as_json & set(attrs):
        attrs[k] = json.loads(attrs[k])
    return Edge(source, target, RelType(type_), weight, attrs)


def scalar_type(value: object) -> type | None:
    """The Neo4j-storable scalar type of ``value`` (bool apart from int), else None."""
    if isinstance(value, bool):
        return bool
    if isinstance(value, int):
        return int if INT64[0] <= value <= INT64[1] else None
    if isinstance(value, float | str | bytes):
        return type(value) if not isinstance(value, bytes) else bytes
    return None


def storable(value: object) -> bool:
    """True when Neo4j stores ``value`` as a property and gives it back unchanged.

    Scalars, and lists whose items all have one scalar type (``[1, 2.5]`` is refused:
    Neo4j would turn the 1 into 1.0). No maps, no nulls, no nested lists.
    """
    if isinstance(value, list | tuple):
        types = {scalar_type(v) for v in value}
        return len(types) <= 1 and None not in types and bytes not in types
    return scalar_type(value) is not None


#: The node properties the fulltext index reads: its search fields as the words every
#: store splits them into (graph.query.text.index_text), never read back as node fields.
SEARCH_PROPS = ("_search_name", "_search_title", "_search_abstract")
#: The node property the name index reads (graph.store.cypher.NAME_INDEX): the keys a
#: lookup finds the node by (graph.query.search.names_of: label/name, title, aliases,
#: whitespace collapsed and case-folded), each one whole, never read back as a field.
NAME_KEYS = "_name_keys"
#: Keys longer than this (UTF-8 bytes) are not indexed (Lucene refuses terms over 32,766);
#: a lookup by such a name scans instead (graph.store.neo4j.Neo4jStore.nodes_named).
NAME_KEY_MAX_BYTES = 8_000
#: properties that are the store's own, not the node's fields
HIDDEN_PROPS = frozenset((*SEARCH_PROPS, NAME_KEYS))


def name_keys(node: GraphNode) -> list[str]:
    """The node's :data:`NAME_KEYS` value."""
    return sorted(k for k in names_of(node) if len(k.encode("utf-8", "surrogatepass"))
                  <= NAME_KEY_MAX_BYTES)


def node_props(node: GraphNode) -> dict[str, Any]:
    """The node's properties, each one checked to be storable (no embedding), its
    :data:`SEARCH_PROPS` and its :data:`NAME_KEYS`."""
    props = node_to_props(node)
    props.pop("embedding", None)
    for key, value in props.items():
        if not storable(value):
            raise InvalidArgumentError(
                "upsert_nodes",
                f"{node.kind.value} {node.id!r} field {key!r} = {value!r:.80}: Neo4j stores "
                "only text, numbers, booleans and lists of one of them, without nulls",
            )
    for prop, text in zip(SEARCH_PROPS, search_fields(node), strict=True):
        props[prop] = index_text(text)
    props[NAME_KEYS] = name_keys(node)
    return props


def edge_props(edge: Edge) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        k: list(v) if isinstance(v, tuple) else v for k, v in edge.attrs.items()
    }
    if "weight" in attrs and not math.isclose(float(attrs["weight"]), edge.weight):
        raise InvalidArgumentError(
            "upsert_edges", f"edge {edge.key} has attrs.weight != weight"
        )
    bad = sorted(k for k, v in attrs.items() if v is None)
    if bad:
        raise InvalidArgumentError("upsert_edges", f"edge {edge.key} has None attrs {bad}")
    reserved = sorted({ATTR_KEYS, JSON_KEYS} & set(attrs))
    if reserved:
        raise InvalidArgumentError("upsert_edges", f"edge {edge.key}: reserved attr {reserved}")
    as_json = sorted(k for k, v in attrs.items() if not storable(v))
    for k in as_json:
        try:
            attrs[k] = json.dumps(attrs[k], sort_keys=True, allow_nan=True)
        except (TypeError, ValueError) as exc:
            raise InvalidArgumentError(
                "upsert_edges", f"edge {edge.key} attr {k!r} is neither storable nor JSON: {exc}"
            ) from exc
    props = {**attrs, "weight": float(edge.weight), ATTR_KEYS: sorted(attrs)}
    if as_json:
        props[JSON_KEYS] = as_json
    return props
