"""The graph (or a query's subgraph) as GraphML, GEXF or Cytoscape.js JSON, written in pieces.

Node ids are the raw store ids (stable across exports); every node carries ``kind`` and
``label``, every edge ``type`` and ``weight`` (and ``terms``, comma-joined, for
SHARES_TERM; ``rank``, ``words`` and ``count`` where stored). Used by the API's
``/export`` route and by ``citegraph export``; which nodes go in is
:meth:`graph.service.GraphService.export_parts` for a subgraph, and every node and edge,
read from the store page by page (:class:`graph.store.base.PagedReads`), for the whole
graph.

The files are the ones networkx's writers make (same elements, attributes, escaping and
indentation, so ``read_graphml``, ``read_gexf`` and ``cytoscape_graph`` read them back to
the same graph), written as they are read: a whole-graph export holds one page of the
store at a time and the set of node ids written (an edge is written only between nodes in
the file), never the document. Two differences: the attribute keys are declared from
:data:`NODE_KEYS` and :data:`EDGE_KEYS` up front (networkx declares the ones it met, which
needs the whole graph first), and a whole-graph file lists nodes by id and edges by
(source, target, type).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import networkx as nx

from graph.model import Edge, GraphNode, Paper
from graph.store.base import PagedReads

#: the attributes a node can carry in an export, and their types (GraphML/GEXF keys)
NODE_KEYS: tuple[tuple[str, type], ...] = (
    ("kind", str), ("label", str), ("title", str), ("venue", str), ("year", int), ("url", str),
)
#: the attributes an edge can carry: SIMILAR_TO's rank in its source's list and word
#: overlap, RELATED_TO's co-mention count, SHARES_TERM's terms
EDGE_KEYS: tuple[tuple[str, type], ...] = (
    ("type", str), ("weight", float), ("rank", int), ("words", float), ("count", int),
    ("terms", str),
)
#: edge attributes exported when present (what a graph tool can filter by: rank <= 3, ...)
SCALAR_EDGE_ATTRS = ("rank", "words", "count")
_SCALAR_TYPES: dict[str, type] = dict(EDGE_KEYS)

#: nodes, and about how many edges, a whole-graph export asks of the store at a time
NODE_PAGE = 1000
EDGE_PAGE = 5000

XML_FORMATS = frozenset({"graphml", "gexf"})


def _number(value: Any, typ: type) -> int | float | None:
    """``value`` as ``typ`` (int or float), None when it is not a number of that kind."""
    if (type(value) is int and typ is int) or (type(value) is float and typ is float):
        return value  # what the export's own attrs hold: no checks to make
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if typ is int:
        if isinstance(value, float) and not value.is_integer():
            return None  # an integer column cannot hold it (citegraph never stores one)
        return int(value)
    return float(value)


def node_attrs(n: GraphNode) -> dict[str, Any]:
    """What a node carries in an export, in :data:`NODE_KEYS` order."""
    attrs: dict[str, Any] = {"kind": n.kind.value, "label": n.label}
    if isinstance(n, Paper):
        if n.title is not None:
            attrs["title"] = n.title
        if n.venue is not None:
            attrs["venue"] = n.venue
        year = _number(n.year, int)
        if year is not None:
            attrs["year"] = year
        if n.urls:
            attrs["url"] = n.urls[0]
    return attrs


def edge_attrs(e: Edge) -> dict[str, Any]:
    """What an edge carries in an export, in :data:`EDGE_KEYS` order."""
    attrs: dict[str, Any] = {"type": e.type.value, "weight": float(e.weight)}
    for name in SCALAR_EDGE_ATTRS:
        value = _number(e.attrs.get(name), _SCALAR_TYPES[name])
        if value is not None:
            attrs[name] = value
    if "terms" in e.attrs:
        attrs["terms"] = ", ".join(str(x) for x in e.attrs["terms"])
    return attrs


def to_networkx(nodes: Iterable[GraphNode], edges: Iterable[Edge]) -> nx.MultiDiGraph:
    """A MultiDiGraph keyed by edge type, with only scalar (writer-safe) attributes."""
    g = nx.MultiDiGraph()
    for n in nodes:
        g.add_node(n.id, **node_attrs(n))
    for e in edges:
        if e.source not in g or e.target not in g:
            continue
        g.add_edge(e.source, e.target, key=e.type.value, **edge_attrs(e))
    return g


# --------------------------------------------------------------------------- text

#: a lone surrogate: text stored before it was checked holds one, and UTF-8 and XML cannot
_SURROGATE = re.compile("[\ud800-\udfff]")
#: that, or what XML 1.0 cannot hold at all, even as a character reference (C0 controls
#: but tab, LF and CR; U+FFFE, U+FFFF): input drops them, but a graph stored before that
#: (or edited by hand) can hold them, and a GraphML/GEXF file with one is not well-formed
_NOT_XML = re.compile("[\ud800-\udfff\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


@dataclass
class Written:
    """What an export wrote: nodes, edges, and values that held invalid Unicode (or, in
    GraphML/GEXF, characters XML cannot hold), written with U+FFFD in their place."""

    nodes: int = 0
    edges: int = 0
    replaced: int = 0


class _Text:
    """Replaces what the format cannot hold by U+FFFD, counting the values it changed."""

    def __init__(self, xml: bool, written: Written) -> None:
        self.bad = _NOT_XML if xml else _SURROGATE
        self.xml = xml
        self.written = written

    def __call__(self, value: Any) -> Any:
        if not isinstance(value, str) or self.bad.search(value) is None:
            return value
        self.written.replaced += 1
        value = value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return _NOT_XML.sub("\ufffd", value) if self.xml else value


# --------------------------------------------------------------------------- formats


def _cdata(text: str) -> str:
    """XML character data, escaped as ElementTree escapes it."""
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    return text


def _attr(text: str) -> str:
    """An XML attribute value (without its quotes), escaped as ElementTree escapes it."""
    text = _cdata(text)
    if '"' in text:
        text = text.replace('"', "&quot;")
    if "\r" in text:
        text = text.replace("\r", "&#13;")
    if "\n" in text:
        text = text.replace("\n", "&#10;")
    if "\t" in text:
        text = text.replace("\t", "&#09;")
    return text


def _value(value: Any, typ: type) -> str | None:
    """``value`` as the text of a key of type ``typ``; None when it is not one."""
    if type(value) is str and typ is str:
        return value
    if typ is str:
        return str(value)
    number = _number(value, typ)
    return None if number is None else str(number)


_XML_TYPES = {str: "string", int: "long", float: "double"}
_XML_HEAD = "<?xml version='1.0' encoding='utf-8'?>\n"


class _Writer(Protocol):
    """One format: the text before, between and after the nodes and edges, and theirs."""

    def head(self) -> str: ...
    def node(self, nid: str, attrs: Mapping[str, Any]) -> str: ...
    def middle(self) -> str: ...
    def edge(self, source: str, target: str, key: str, attrs: Mapping[str, Any]) -> str: ...
    def tail(self) -> str: ...


class _GraphML:
    NS = (
        'xmlns="http://graphml.graphdrawing.org/xmlns" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
        'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd"'
    )

    def __init__(self) -> None:
        keys = [("node", name, typ) for name, typ in NODE_KEYS]
        keys += [("edge", name, typ) for name, typ in EDGE_KEYS]
        self.keys = {(scope, name): (f"d{i}", typ) for i, (scope, name, typ) in enumerate(keys)}

    def head(self) -> str:
        lines = [_XML_HEAD, f"<graphml {self.NS}>\n"]
        for (scope, name), (kid, typ) in self.keys.items():
            lines.append(f'  <key id="{kid}" for="{scope}" attr.name="{name}" '
                         f'attr.type="{_XML_TYPES[typ]}" />\n')
        lines.append('  <graph edgedefault="directed">\n')
        return "".join(lines)

    def _data(self, scope: str, attrs: Mapping[str, Any]) -> list[str]:
        out = []
        for name, value in attrs.items():
            key = self.keys.get((scope, name))
            text = None if key is None else _value(value, key[1])
            if key is None or text is None:
                continue
            # networkx writes an empty value as <data key="dN" />, which reads back as no value
            out.append(f'      <data key="{key[0]}">{_cdata(text)}</data>\n' if text
                       else f'      <data key="{key[0]}" />\n')
        return out

    def node(self, nid: str, attrs: Mapping[str, Any]) -> str:
        data = self._data("node", attrs)
        if not data:
            return f'    <node id="{_attr(nid)}" />\n'
        return f'    <node id="{_attr(nid)}">\n{"".join(data)}    </node>\n'

    def middle(self) -> str:
        return ""

    def edge(self, source: str, target: str, key: str, attrs: Mapping[str, Any]) -> str:
        head = f'    <edge source="{_attr(source)}" target="{_attr(target)}" id="{_attr(key)}"'
        data = self._data("edge", attrs)
        if not data:
            return head + " />\n"
        return f'{head}>\n{"".join(data)}    </edge>\n'

    def tail(self) -> str:
        return "  </graph>\n</graphml>\n"


class _GEXF:
    """GEXF 1.2. Its edge attribute ``type`` is the edge's direction (``directed``,
    ``undirected``, ``mutual``): the relationship type goes in the edge's ``label``
    instead (Gephi's Label column; ``label`` in networkx's ``read_gexf``), so the file is
    valid GEXF. The node's label is its ``label``, the edge's weight its ``weight``; the
    other attributes are attvalues, and ``networkx_key`` (the type again) keeps edges
    between the same two nodes apart when networkx reads the file."""

    NS = (
        'xmlns="http://www.gexf.net/1.2draft" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://www.gexf.net/1.2draft '
        'http://www.gexf.net/1.2draft/gexf.xsd" version="1.2"'
    )
    NODE_VALUES = tuple((n, t) for n, t in NODE_KEYS if n != "label")
    EDGE_VALUES = (*((n, t) for n, t in EDGE_KEYS if n not in ("type", "weight")),
                   ("networkx_key", str))

    def __init__(self) -> None:
        self.node_ids = {name: (str(i), typ) for i, (name, typ) in enumerate(self.NODE_VALUES)}
        first = len(self.NODE_VALUES)
        self.edge_ids = {name: (str(first + i), typ)
                         for i, (name, typ) in enumerate(self.EDGE_VALUES)}
        self.next_edge = 0

    def head(self) -> str:
        lines = [
            _XML_HEAD, f"<gexf {self.NS}>\n",
            f'  <meta lastmodifieddate="{time.strftime("%Y-%m-%d")}">\n',
            "    <creator>citegraph</creator>\n", "  </meta>\n",
            '  <graph defaultedgetype="directed" mode="static" name="">\n',
        ]
        for scope, ids in (("edge", self.edge_ids), ("node", self.node_ids)):
            lines.append(f'    <attributes mode="static" class="{scope}">\n')
            lines += [f'      <attribute id="{aid}" title="{name}" type="{_XML_TYPES[typ]}" />\n'
                      for name, (aid, typ) in ids.items()]
            lines.append("    </attributes>\n")
        lines.append("    <nodes>\n")
        return "".join(lines)

    @staticmethod
    def _values(ids: Mapping[str, tuple[str, type]], attrs: Mapping[str, Any]) -> str:
        out = []
        for name, value in attrs.items():
            key = ids.get(name)
            text = None if key is None else _value(value, key[1])
            if key is not None and text is not None:
                out.append(f'          <attvalue for="{key[0]}" value="{_attr(text)}" />\n')
        if not out:
            return ""
        return f'        <attvalues>\n{"".join(out)}        </attvalues>\n'

    def node(self, nid: str, attrs: Mapping[str, Any]) -> str:
        label = str(attrs.get("label", nid))
        head = f'      <node id="{_attr(nid)}" label="{_attr(label)}"'
        values = self._values(self.node_ids, attrs)
        return f"{head}>\n{values}      </node>\n" if values else head + " />\n"

    def middle(self) -> str:
        return "    </nodes>\n    <edges>\n"

    def edge(self, source: str, target: str, key: str, attrs: Mapping[str, Any]) -> str:
        eid, self.next_edge = self.next_edge, self.next_edge + 1
        head = f'      <edge source="{_attr(source)}" target="{_attr(target)}" id="{eid}"'
        if "type" in attrs:
            head += f' label="{_attr(str(attrs["type"]))}"'
        weight = _number(attrs.get("weight"), float)
        if weight is not None:
            head += f' weight="{weight}"'
        values = self._values(self.edge_ids, {**attrs, "networkx_key": key})
        return f"{head}>\n{values}      </edge>\n" if values else head + " />\n"

    def tail(self) -> str:
        return "    </edges>\n  </graph>\n</gexf>\n"


class _Cytoscape:
    """Cytoscape.js ``elements`` JSON, as networkx's ``cytoscape_data`` makes it."""

    def __init__(self) -> None:
        self.first = True

    def _sep(self) -> str:
        sep, self.first = ("" if self.first else ", "), False
        return sep

    def head(self) -> str:
        return '{"data": [], "directed": true, "multigraph": true, "elements": {"nodes": ['

    def node(self, nid: str, attrs: Mapping[str, Any]) -> str:
        data = {**attrs, "id": nid, "value": nid, "name": attrs.get("label") or nid}
        return self._sep() + json.dumps({"data": data}, ensure_ascii=False)

    def middle(self) -> str:
        self.first = True
        return '], "edges": ['

    def edge(self, source: str, target: str, key: str, attrs: Mapping[str, Any]) -> str:
        data = {**attrs, "source": source, "target": target, "key": key}
        return self._sep() + json.dumps({"data": data}, ensure_ascii=False)

    def tail(self) -> str:
        return "]}}"


_WRITERS: dict[str, Callable[[], _Writer]] = {
    "graphml": _GraphML, "gexf": _GEXF, "cytoscape.json": _Cytoscape,
}

#: format -> (media type, default file name)
FORMATS = {
    "graphml": ("application/graphml+xml", "citegraph.graphml"),
    "gexf": ("application/gexf+xml", "citegraph.gexf"),
    "cytoscape.json": ("application/json", "citegraph.cytoscape.json"),
}

NodeRow = tuple[str, Mapping[str, Any]]
EdgeRow = tuple[str, str, str, Mapping[str, Any]]


def _rows(
    fmt: str,
    node_pages: Iterable[Iterable[NodeRow]],
    edge_pages: Iterable[Iterable[EdgeRow]],
    written: Written,
) -> Generator[bytes, None, None]:
    """The document of ``fmt``, one piece per page; an edge whose ends are not both among
    the nodes written is left out (as networkx's graph would not hold it)."""
    out = _WRITERS[fmt]()
    fix = _Text(fmt in XML_FORMATS, written)
    kept: set[str] = set()
    yield out.head().encode("utf-8")
    for nodes in node_pages:
        piece = []
        for nid, attrs in nodes:
            if nid in kept:
                continue
            kept.add(nid)
            piece.append(out.node(fix(nid), {k: fix(v) for k, v in attrs.items()}))
        written.nodes += len(piece)
        if piece:
            yield "".join(piece).encode("utf-8")
    yield out.middle().encode("utf-8")
    for edges in edge_pages:
        piece = [
            out.edge(fix(u), fix(v), key, {k: fix(x) for k, x in attrs.items()})
            for u, v, key, attrs in edges if u in kept and v in kept
        ]
        written.edges += len(piece)
        if piece:
            yield "".join(piece).encode("utf-8")
    yield out.tail().encode("utf-8")


def _node_rows(nodes: Iterable[GraphNode]) -> Iterator[NodeRow]:
    return ((n.id, node_attrs(n)) for n in nodes)


def _edge_rows(edges: Iterable[Edge]) -> Iterator[EdgeRow]:
    return ((e.source, e.target, e.type.value, edge_attrs(e)) for e in edges)


def write(
    fmt: str,
    node_pages: Iterable[Iterable[GraphNode]],
    edge_pages: Iterable[Iterable[Edge]],
    written: Written | None = None,
) -> Generator[bytes, None, None]:
    """The file of format ``fmt`` (a key of FORMATS) in pieces, one per page of nodes or
    edges, as the pages come; ``written`` is kept up to date as it goes."""
    return _rows(
        fmt, (_node_rows(p) for p in node_pages), (_edge_rows(p) for p in edge_pages),
        written if written is not None else Written(),
    )


def render(fmt: str, nodes: Iterable[GraphNode], edges: Iterable[Edge]) -> tuple[bytes, int]:
    """The file of format ``fmt`` (a key of FORMATS) at once, and how many values held
    invalid Unicode, or for GraphML/GEXF characters XML cannot hold (written with U+FFFD
    in their place rather than failing the export or writing a file no XML reader opens)."""
    written = Written()
    return b"".join(write(fmt, [nodes], [edges], written)), written.replaced


# --------------------------------------------------------------------------- whole graph


def node_pages(
    store: PagedReads, size: int = NODE_PAGE
) -> Generator[list[GraphNode], None, None]:
    """Every node of ``store``, a page at a time, by id."""
    after: str | None = None
    while page := store.node_page(after, size):
        yield page
        after = page[-1].id


def edge_pages(store: PagedReads, size: int = EDGE_PAGE) -> Generator[list[Edge], None, None]:
    """Every edge of ``store``, a page at a time, by (source, target, type)."""
    after: str | None = None
    while page := store.edge_page(after, size):
        yield page
        after = page[-1].source


def whole_graph(
    fmt: str, store: PagedReads, written: Written | None = None
) -> Generator[bytes, None, None]:
    """The whole graph as a file of ``fmt``, in pieces, read from ``store`` a page at a time
    (memory: a page and the ids of the nodes written). Pages are separate reads: a write
    committed during the export shows in the pages read after it, and an edge is written
    only when both its ends were."""
    return write(fmt, node_pages(store), edge_pages(store), written)


def replaced_in(fmt: str, nodes: Iterable[GraphNode]) -> int:
    """How many values of ``nodes`` a file of ``fmt`` holds with U+FFFD in their place (what
    a server says in a header before the file: edges are not read for it)."""
    written = Written()
    fix = _Text(fmt in XML_FORMATS, written)
    for nid, attrs in _node_rows(nodes):
        fix(nid)
        for value in attrs.values():
            fix(value)
    return written.replaced


# --------------------------------------------------------------------------- networkx graphs


def _of_graph(fmt: str, g: nx.MultiDiGraph) -> bytes:
    return b"".join(_rows(
        fmt, [g.nodes(data=True)], [g.edges(keys=True, data=True)], Written()
    ))


def graphml(g: nx.MultiDiGraph) -> bytes:
    """GraphML of a graph made by :func:`to_networkx`."""
    return _of_graph("graphml", g)


def gexf(g: nx.MultiDiGraph) -> bytes:
    """GEXF 1.2 of a graph made by :func:`to_networkx` (see :class:`_GEXF`)."""
    return _of_graph("gexf", g)


def cytoscape(g: nx.MultiDiGraph) -> bytes:
    """Cytoscape.js ``elements`` JSON of a graph made by :func:`to_networkx`."""
    return _of_graph("cytoscape.json", g)
