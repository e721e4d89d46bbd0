"""A bad edge or vector made in a LATER part of a one-shot build (not an input record):
CITES to a node that does not exist (the last part), a NaN SIMILAR_TO weight (part 4),
a SHARES_TERM edge with an attribute JSON cannot hold (part 2), a NaN vector (part 4).
python probe/bad_later_part.py KIND citegraph-args...   KIND: dangling | nanweight | badattr | nanvector
"""
import math, sys, pathlib
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import numpy as np
import graph.build as b
from graph.model import Edge
from graph.schema import RelType

kind = sys.argv[1]
orig = b.Pipeline._pieces


def pieces(self, *a, **k):
    for p in orig(self, *a, **k):
        if kind == "dangling" and RelType.CITES in p.types and p.edges is not None:
            src = next(iter(p.edges)).source if p.edges else None
            p.edges.append(Edge(p.edges[0].source if p.edges else "x", "no-such-paper", RelType.CITES, 1.0, {}))
        if kind == "nanweight" and RelType.SIMILAR_TO in p.types and p.edges:
            e = p.edges[0]
            p.edges[0] = Edge(e.source, e.target, e.type, float("nan"), e.attrs)
        if kind == "badattr" and RelType.SHARES_TERM in p.types and p.edges:
            e = p.edges[0]
            p.edges[0] = Edge(e.source, e.target, e.type, e.weight, {"terms": [object()]})
        if kind == "nanvector" and RelType.SIMILAR_TO in p.types and p.graph.embeddings is not None:
            p.graph.embeddings = p.graph.embeddings.copy()
            p.graph.embeddings[0, 0] = np.nan
        yield p


b.Pipeline._pieces = pieces
from citegraph.cli import main
main(sys.argv[2:])
