"""GEXF keeps the relationship type of every edge, and is valid GEXF (probe 9).

GEXF's edge attribute ``type`` is the edge's *direction* (``directed``, ``undirected`` or
``mutual`` in the 1.2 schema's ``edgetype-type``); networkx's writer puts an edge attribute
named ``type`` there. The export wrote ``type="SIMILAR_TO"``: a file the schema refuses,
whose relationship type Gephi's importer reads as a (bad) direction and networkx's reader
drops from the edge's data.
"""

from __future__ import annotations

import io
from xml.etree import ElementTree as ET

import networkx as nx

from graph.export import gexf, to_networkx
from graph.model import Concept, Edge, Paper, RelType

HOSTILE = ['q"uote', "lt<gt>amp&", "cdata]]>end", "rtl-\u05e9\u05dc\u05d5\u05dd",
           "emoji-\U0001F600"]


def _graph() -> nx.MultiDiGraph:
    papers = [Paper(id=pid, label=f'T {pid} <b>&amp; "q" ]]>', abstract="a b c d e f",
                    text_hash="h") for pid in HOSTILE]
    concept = Concept(id="concept:x", name="x & <y>")
    edges = [Edge(HOSTILE[0], HOSTILE[1], RelType.SIMILAR_TO, 0.5, {"rank": 1, "words": 0.1}),
             Edge(HOSTILE[1], HOSTILE[0], RelType.SIMILAR_TO, 0.5, {"rank": 1, "words": 0.1}),
             Edge(HOSTILE[0], HOSTILE[1], RelType.SHARES_TERM, 2.0, {"terms": ["a", "b"]}),
             Edge(HOSTILE[2], "concept:x", RelType.MENTIONS, 1.0, {"count": 1}),
             Edge(HOSTILE[3], HOSTILE[4], RelType.CITES, 1.0, {})]
    return to_networkx([*papers, concept], edges)


def test_gexf_edge_type_attribute_is_a_direction() -> None:
    root = ET.fromstring(gexf(_graph()))
    edges = [el for el in root.iter() if el.tag.endswith("}edge")]
    assert len(edges) == 5
    assert {el.get("type", "directed") for el in edges} <= {"directed", "undirected", "mutual"}


def test_gexf_reads_back_with_every_relationship_type_and_hostile_text() -> None:
    g = _graph()
    back = nx.read_gexf(io.BytesIO(gexf(g)))
    assert set(back.nodes) == set(g.nodes)
    for n in g.nodes:
        assert back.nodes[n]["label"] == g.nodes[n]["label"]
    want = sorted((u, v, d["type"]) for u, v, d in g.edges(data=True))
    got = sorted((u, v, d.get("label")) for u, v, d in back.edges(data=True))
    assert got == want
