"""One-shot SQL reads against the in-memory mirror, on random graphs with hostile names.

The CLI's query commands read the embedded database through SQL
(graph/store/sqlreads.py); a server reads a networkx mirror. Both must give the same
answer to every query, whatever the ids and names hold: SQL wildcards and quotes,
brackets, separators, NUL, non-Latin text, case and width variants that fold together,
and more ids in one ring than one SQL statement takes.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from graph.model import Concept, Edge, GraphChange, NodeKind, Paper, RelType
from graph.store.embedded import EmbeddedStore
from tests.hardening._hyp import fuzz_settings

HOSTILE = ["%", "_", "'", '"', "\\", "?", ":1", "[", "(", "*", "\x00", "\x1f", " ", "é", "ß",
           "ＧＮＮ", "İ", "—", "\u200b", ";DROP TABLE nodes;--", "' OR 1=1 --", "{ids}"]
text = st.lists(st.sampled_from([*HOSTILE, "gnn", "GNN", "graph", "a", "b"]), min_size=1,
                max_size=4).map("".join)
TYPES = [RelType.CITES, RelType.SIMILAR_TO, RelType.MENTIONS, RelType.SHARES_TERM]


@st.composite
def graphs(draw: Any) -> GraphChange:
    n_papers = draw(st.integers(2, 9))
    pids = draw(st.lists(text, min_size=n_papers, max_size=n_papers, unique=True))
    cids = draw(st.lists(text.map(lambda t: "concept:" + t), min_size=1, max_size=4, unique=True))
    papers = [
        Paper(id=p, label=draw(text), abstract=draw(text), text_hash=f"h{i}",
              title=draw(st.none() | text), venue=draw(st.sampled_from([None, "ICLR", "%"])))
        for i, p in enumerate(pids)
    ]
    concepts = [Concept(c, draw(text), tuple(draw(st.lists(text, max_size=2))), "concept")
                for c in cids]
    edges: dict[tuple[str, str, RelType], Edge] = {}
    pairs = list(itertools.permutations(pids, 2))
    for s, t in draw(st.lists(st.sampled_from(pairs), max_size=14)):
        typ = draw(st.sampled_from([RelType.CITES, RelType.SIMILAR_TO, RelType.SHARES_TERM]))
        if typ is RelType.SHARES_TERM and s > t:
            s, t = t, s
        edges[(s, t, typ)] = Edge(s, t, typ, draw(st.sampled_from([0.5, 1.0, 2.0])), {})
    for p in pids:
        for c in draw(st.lists(st.sampled_from(cids), max_size=2, unique=True)):
            edges[(p, c, RelType.MENTIONS)] = Edge(p, c, RelType.MENTIONS, 1.0, {})
    rng = np.random.default_rng(len(pids))
    vectors = rng.standard_normal((len(pids), 8)).astype(np.float32)
    return GraphChange(
        upsert_nodes=(*papers, *concepts), upsert_edges=tuple(edges.values()),
        embedding_ids=tuple(pids), embeddings=vectors, embedding_model="m",
    )


def _answers(store: EmbeddedStore, change: GraphChange) -> dict[str, Any]:
    ids = [n.id for n in change.upsert_nodes]
    names = [x for n in change.upsert_nodes for x in (n.label, *getattr(n, "aliases", ()))]
    out: dict[str, Any] = {}
    for nid in [*ids, "missing", "%", "_"]:
        for depth in (1, 2):
            out[f"nb {nid!r} {depth}"] = store.neighborhood([nid], depth=depth, limit=5)
        out[f"typed {nid!r}"] = store.neighborhood([nid], 2, rel_types=[RelType.CITES])
        out[f"kinds {nid!r}"] = store.neighborhood([nid], 1, node_kinds=[NodeKind.CONCEPT])
        out[f"edges {nid!r}"] = store.edges_of([nid])
    for a, b in itertools.islice(itertools.permutations(ids, 2), 12):
        out[f"sp {a!r} {b!r}"] = store.shortest_path(a, b)
        out[f"kp {a!r} {b!r}"] = store.k_paths(a, b, k=3, max_hops=3)
    for name in [*names, "gnn", "%", "_", "' OR 1=1 --"]:
        out[f"find {name!r}"] = store.find_node(name)
    for kind in NodeKind:
        for venue in (None, "ICLR", "%"):
            out[f"page {kind} {venue}"] = store.list_nodes(kind, venue=venue, limit=3, offset=1)
    for nid in ids:
        out[f"neighbor page {nid!r}"] = store.list_nodes(NodeKind.CONCEPT, neighbor=nid)
    assert change.embeddings is not None
    for i in range(len(change.embedding_ids)):
        out[f"vec {i}"] = store.vector_search(change.embeddings[i].tolist(), limit=3)
    out["many ids"] = store.neighborhood([*ids, *(f"x{i}" for i in range(1200))], 1)
    return out


@fuzz_settings(25)
@given(change=graphs())
def test_sql_reads_answer_as_the_mirror(tmp_path_factory: Any, change: GraphChange) -> None:
    folder: Path = tmp_path_factory.mktemp("sqlfuzz")
    writer = EmbeddedStore(folder / "graph.db")
    try:
        writer.apply(change)
        reader = EmbeddedStore(folder / "graph.db", reads="sql")
        try:
            mirror, sql = _answers(writer, change), _answers(reader, change)
            diff = {k: (mirror[k], sql[k]) for k in mirror if mirror[k] != sql[k]}
            assert not diff, f"{len(diff)} answers differ, e.g. {next(iter(diff.items()))}"
            assert reader._mirror is None
        finally:
            reader.close()
    finally:
        writer.close()
