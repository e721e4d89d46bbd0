"""A stored value holding a character XML 1.0 cannot hold (probe 11).

Input drops C0 controls, but a graph stored before that, or edited by hand, can hold one;
networkx writes it as is, and the GraphML/GEXF file was not well-formed (exit 0). They are
written as U+FFFD, like a lone surrogate; the JSON export keeps them (JSON can).
"""

from __future__ import annotations

import io
import json

import networkx as nx

from graph.export import render
from graph.model import Edge, Paper, RelType

TITLE = "bell \x07 nul \x00 vt \x0b us \x1f nonchar \uffff tab\tok"


def _parts() -> tuple[list[Paper], list[Edge]]:
    papers = [Paper(id="p\x01", label=TITLE, title=TITLE, abstract="a b c d e f",
                    text_hash="h"),
              Paper(id="q", label="plain", abstract="a b c d e f", text_hash="h")]
    return papers, [Edge("p\x01", "q", RelType.SHARES_TERM, 2.0, {"terms": ["x\x02"]})]


def test_graphml_and_gexf_with_control_characters_read_back() -> None:
    want = "bell \ufffd nul \ufffd vt \ufffd us \ufffd nonchar \ufffd tab\tok"
    for fmt, read in (("graphml", nx.read_graphml), ("gexf", nx.read_gexf)):
        body, changed = render(fmt, *_parts())
        assert changed == 5  # the id (a node, an edge end), the title, the label, the terms
        g = read(io.BytesIO(body))
        assert set(g.nodes) == {"p\ufffd", "q"}
        assert g.nodes["p\ufffd"]["title"] == want
        (_, _, data), = g.edges(data=True)
        assert data["terms"] == "x\ufffd"


def test_json_keeps_control_characters() -> None:
    body, changed = render("cytoscape.json", *_parts())
    assert changed == 0
    nodes = {n["data"]["id"]: n["data"] for n in json.loads(body)["elements"]["nodes"]}
    assert nodes["p\x01"]["title"] == TITLE
