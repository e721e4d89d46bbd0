"""The graph (or a query's subgraph) as GraphML, GEXF or Cytoscape.js JSON.

Written with networkx's own writers. Node ids are the raw store ids (stable
across exports); every node carries ``kind`` and ``label``, every edge ``type``
and ``weight`` (and ``terms``, comma-joined, for SHARES_TERM). Used by the API's
``/export`` route and by ``citegraph export``; which nodes go in is
:meth:`graph.service.GraphService.export_parts`.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable
from typing import Any

import networkx as nx

from graph.model import Edge, GraphNode, Paper

#: edge attributes exported when present: SIMILAR_TO's rank in its source's list and word
#: overlap, RELATED_TO's co-mention count
SCALAR_EDGE_ATTRS = ("rank", "words", "count")


def to_networkx(nodes: Iterable[GraphNode], edges: Iterable[Edge]) -> nx.MultiDiGraph:
    """A MultiDiGraph keyed by edge type, with only scalar (writer-safe) attributes."""
    g = nx.MultiDiGraph()
    for n in nodes:
        attrs: dict[str, Any] = {"kind": n.kind.value, "label": n.label}
        if isinstance(n, Paper):
            for name in ("title", "venue", "year"):
                value = getattr(n, name)
                if value is not None:
                    attrs[name] = value
            if n.urls:
                attrs["url"] = n.urls[0]
        g.add_node(n.id, **attrs)
    for e in edges:
        if e.source not in g or e.target not in g:
            continue
        attrs = {"type": e.type.value, "weight": float(e.weight)}
        for name in SCALAR_EDGE_ATTRS:  # what a graph tool can filter by (rank <= 3, ...)
            value = e.attrs.get(name)
            if isinstance(value, int | float) and not isinstance(value, bool):
                attrs[name] = value
        if "terms" in e.attrs:
            attrs["terms"] = ", ".join(str(x) for x in e.attrs["terms"])
        g.add_edge(e.source, e.target, key=e.type.value, **attrs)
    return g


def graphml(g: nx.MultiDiGraph) -> bytes:
    buf = io.BytesIO()
    nx.write_graphml(g, buf, encoding="utf-8")
    return buf.getvalue()


def gexf(g: nx.MultiDiGraph) -> bytes:
    """GEXF 1.2. Its edge attribute ``type`` is the edge's direction (``directed``,
    ``undirected``, ``mutual``), and networkx writes an edge attribute named ``type``
    there: the relationship type goes in the edge's ``label`` instead (Gephi's Label
    column; ``label`` in networkx's ``read_gexf``), so the file is valid GEXF."""
    out = nx.MultiDiGraph()
    out.add_nodes_from(g.nodes(data=True))
    for u, v, key, data in g.edges(keys=True, data=True):
        attrs = dict(data)
        if "type" in attrs:
            attrs["label"] = attrs.pop("type")
        out.add_edge(u, v, key=key, **attrs)
    buf = io.BytesIO()
    nx.write_gexf(out, buf, encoding="utf-8")
    return buf.getvalue()


def cytoscape(g: nx.MultiDiGraph) -> bytes:
    """Cytoscape.js ``elements`` JSON (networkx's cytoscape_data)."""
    data = nx.cytoscape_data(g, name="label", ident="id")
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


FORMATS = {
    "graphml": (graphml, "application/graphml+xml", "citegraph.graphml"),
    "gexf": (gexf, "application/gexf+xml", "citegraph.gexf"),
    "cytoscape.json": (cytoscape, "application/json", "citegraph.cytoscape.json"),
}


#: a lone surrogate: text stored before it was checked holds one, and UTF-8 and XML cannot
_SURROGATE = re.compile("[\ud800-\udfff]")
#: what XML 1.0 cannot hold at all, even as a character reference (C0 controls but tab, LF
#: and CR; U+FFFE, U+FFFF): input drops them, but a graph stored before that (or edited by
#: hand) can hold them, and a GraphML/GEXF file with one is not well-formed
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")

XML_FORMATS = frozenset({"graphml", "gexf"})


def valid_unicode(g: nx.MultiDiGraph, xml: bool = False) -> tuple[nx.MultiDiGraph, int]:
    """``g``, or a copy with lone surrogates (and, for ``xml``, the characters XML 1.0
    cannot hold) replaced by U+FFFD; how many values changed."""

    def bad(value: Any) -> bool:
        return isinstance(value, str) and (
            _SURROGATE.search(value) is not None
            or (xml and _NOT_XML.search(value) is not None)
        )

    if not any(bad(n) or any(bad(v) for v in a.values()) for n, a in g.nodes(data=True)) and \
            not any(any(bad(v) for v in a.values()) for *_, a in g.edges(keys=True, data=True)):
        return g, 0
    changed = 0

    def fix(value: Any) -> Any:
        nonlocal changed
        if not bad(value):
            return value
        changed += 1
        value = value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return _NOT_XML.sub("\ufffd", value) if xml else value

    out = nx.MultiDiGraph()
    for n, attrs in g.nodes(data=True):
        out.add_node(fix(n), **{k: fix(v) for k, v in attrs.items()})
    for a, b, key, attrs in g.edges(keys=True, data=True):
        out.add_edge(fix(a), fix(b), key=key, **{k: fix(v) for k, v in attrs.items()})
    return out, changed


def render(fmt: str, nodes: Iterable[GraphNode], edges: Iterable[Edge]) -> tuple[bytes, int]:
    """The file of format ``fmt`` (a key of FORMATS), and how many values held invalid
    Unicode, or for GraphML/GEXF characters XML cannot hold (written with U+FFFD in their
    place rather than failing the export or writing a file no XML reader opens)."""
    writer = FORMATS[fmt][0]
    g, changed = valid_unicode(to_networkx(nodes, edges), xml=fmt in XML_FORMATS)
    return writer(g), changed
