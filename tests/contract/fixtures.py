"""A small hand-made graph for the store contract suite.

8 papers with 384-d embeddings, 6 concepts with aliases, 2 datasets, every RelType,
and deliberate ties: p3/p4 have the same embedding (vector tie, broken by id), two
equally short p1 -> p6 paths of equal strength (broken by node ids), two neighbours
of p1 reached with equal weight (broken by id), and a pair of papers joined by two
edge types (the path uses the stronger one).
"""

from __future__ import annotations

import hashlib

import numpy as np

from graph.model import (
    Concept,
    Dataset,
    Edge,
    GraphChange,
    GraphData,
    Paper,
    RelType,
)

DIM = 384
MODEL = "test-model"
#: A name made to break a query that concatenated it; must round-trip as data.
HOSTILE = "x') DETACH DELETE n //"
HOSTILE2 = "a\"}) MATCH (m) DETACH DELETE m RETURN 1 //"


def _vec(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(DIM).astype(np.float32)
    return (v / np.linalg.norm(v)).astype(np.float32)


def _paper(pid: str, label: str, abstract: str, **kw: object) -> Paper:
    h = hashlib.sha1(abstract.encode()).hexdigest()[:16]
    return Paper(id=pid, label=label, abstract=abstract, text_hash=h, **kw)  # type: ignore[arg-type]


PAPERS = [
    _paper("p1", "Graph attention networks", "We propose graph attention networks (GAT) "
           "for node classification on citation graphs like Cora.",
           title="Graph Attention Networks", venue="ICLR", year=2018,
           authors=("Ann", "Bob"), keywords=("graphs", "attention"),
           doi="10.48550/arxiv.1710.10903"),
    _paper("p2", "Semi-supervised GCN", "Graph convolutional networks for semi-supervised "
           "classification evaluated on Cora and Citeseer.",
           title="Semi-Supervised Classification with GCN", venue="ICLR", year=2017),
    _paper("p3", "Transformers for graphs", "A transformer with attention over graph "
           "neighbourhoods.", venue="NeurIPS", year=2020),
    _paper("p4", "Attention is all you need", "The transformer architecture relies on "
           "self-attention only.", venue="NeurIPS", year=2017, references=("p3",)),
    _paper("p5", "BERT", "Pre-training of deep bidirectional transformers for language "
           "understanding.", venue="NAACL", year=2019),
    _paper("p6", "Graph pooling", "Hierarchical pooling for graph neural networks.",
           venue="ICLR", year=2019),
    _paper("p7", HOSTILE, "A paper whose label tries Cypher injection.", year=2021),
    _paper("p8", "Lonely paper", "Nothing links to this abstract about weather.", year=2022),
]

CONCEPTS = [
    Concept("concept:gnn", "graph neural network", ("GNN", "GNNs"), "model"),
    Concept("concept:attention", "attention", ("self-attention",), "technique"),
    Concept("concept:transformer", "transformer", ("Transformers",), "model"),
    Concept("concept:gcn", "graph convolutional network", ("GCN",), "model"),
    Concept("concept:node-classification", "node classification", (), "task"),
    Concept("concept:hostile", HOSTILE2, ("x' OR 1=1 --",), "concept"),
]

DATASETS = [
    Dataset("dataset:cora", "Cora", ("Cora citation",)),
    Dataset("dataset:citeseer", "Citeseer", ()),
]


def _e(s: str, t: str, typ: RelType, w: float = 1.0, **attrs: object) -> Edge:
    return Edge(s, t, typ, w, dict(attrs))


EDGES = [
    # p1 - p6 by two equally short, equally strong routes: via p2 and via p3
    _e("p1", "p2", RelType.SIMILAR_TO, 0.8, score=0.8, rank=1),
    _e("p1", "p3", RelType.SIMILAR_TO, 0.8, score=0.8, rank=2),
    _e("p2", "p6", RelType.SIMILAR_TO, 0.5, score=0.5, rank=1),
    _e("p3", "p6", RelType.SIMILAR_TO, 0.5, score=0.5, rank=1),
    _e("p3", "p4", RelType.SIMILAR_TO, 0.9, score=0.9, rank=1),
    # p4 - p5 joined twice: a path uses the stronger SHARES_TERM edge
    _e("p4", "p5", RelType.SIMILAR_TO, 0.4, score=0.4, rank=1),
    _e("p4", "p5", RelType.SHARES_TERM, 1.7, weight=1.7, terms=["transformer", "attention"],
       term_ids=["concept:transformer", "concept:attention"], term_weights=[0.9, 0.8]),
    # stored undirected with source > target on input: the store must flip it
    _e("p3", "p1", RelType.SHARES_TERM, 1.2, weight=1.2, terms=["graph"],
       term_ids=["concept:gnn"], term_weights=[1.2]),
    _e("p4", "p3", RelType.CITES),
    _e("p7", "p1", RelType.CITES),
    _e("p1", "concept:gnn", RelType.MENTIONS, 2.0, evidence="graph attention networks"),
    _e("p1", "concept:attention", RelType.MENTIONS, 1.0, evidence="attention"),
    _e("p1", "concept:node-classification", RelType.MENTIONS, 1.0,
       evidence="node classification"),
    _e("p2", "concept:gcn", RelType.MENTIONS, 2.0, evidence="graph convolutional networks"),
    _e("p3", "concept:transformer", RelType.MENTIONS, 1.0, evidence="transformer"),
    _e("p4", "concept:transformer", RelType.MENTIONS, 1.0, evidence="transformer"),
    _e("p4", "concept:attention", RelType.MENTIONS, 1.5, evidence="self-attention"),
    _e("p7", "concept:hostile", RelType.MENTIONS, 1.0, evidence=HOSTILE),
    _e("p1", "dataset:cora", RelType.USES, 1.0, evidence="Cora"),
    _e("p2", "dataset:cora", RelType.USES, 1.0, evidence="Cora"),
    _e("p2", "dataset:citeseer", RelType.INTRODUCES, 1.0, evidence="Citeseer"),
    _e("concept:gnn", "concept:gcn", RelType.RELATED_TO, 2.0, count=2, npmi=0.5),
    _e("concept:transformer", "concept:attention", RelType.RELATED_TO, 3.0, count=3, npmi=0.7),
]


def embeddings() -> tuple[list[str], np.ndarray]:
    """Paper ids and their vectors; p3 and p4 share one vector (a tie); p8 has none."""
    ids = ["p1", "p2", "p3", "p4", "p5", "p6", "p7"]
    rows = [_vec(1), _vec(2), _vec(3), _vec(3), _vec(5), _vec(6), _vec(7)]
    # p2 and p6 lean towards p1 so similarity rankings are meaningful
    rows[1] = rows[1] + 0.8 * rows[0]
    rows[5] = rows[5] + 0.4 * rows[0]
    m = np.asarray(rows, dtype=np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return ids, m.astype(np.float32)


def graph_data() -> GraphData:
    """The whole fixture graph as GraphData."""
    data = GraphData(embedding_model=MODEL)
    for n in [*PAPERS, *CONCEPTS, *DATASETS]:
        data.nodes[n.id] = n
    for e in EDGES:
        data.add_edge(e)
    data.embedding_ids, data.embeddings = embeddings()
    return data


def full_change() -> GraphChange:
    """A change that loads the fixture graph into an empty store."""
    ids, m = embeddings()
    return GraphChange(
        upsert_nodes=(*PAPERS, *CONCEPTS, *DATASETS),
        upsert_edges=tuple(EDGES),
        embedding_ids=tuple(ids),
        embeddings=m,
        embedding_model=MODEL,
    )
