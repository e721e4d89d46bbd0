"""Topics in a store: computed from its graph, written back as one change, kept up to
date by the recompute rule.

**The rule.** ``citegraph build`` recomputes topics always. After an add or a remove,
the papers changed since the last computation (added, updated or removed; counted on the
Topic nodes as ``changed``) are compared with the corpus: at
``Settings.topic_recompute_fraction`` of it or more, topics are recomputed; below it, each
added paper joins the topic (and subtopic) most of its SIMILAR_TO neighbours are in, and
the topics' sizes, top papers and years are counted again (their labels, concepts and
datasets stay as computed). ``citegraph topics --recompute`` recomputes them at any time.

What a computation writes, in one transaction: the Topic nodes (with the store version
and paper count they were computed at), IN_TOPIC (a paper to its topic and to its
subtopic, ``rank`` its importance's rank inside that topic), SUBTOPIC_OF, and each
paper's ``importance``. Old topics that matched no new community are deleted.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from graph.model import (
    Concept,
    Edge,
    GraphChange,
    GraphData,
    GraphNode,
    NodeKind,
    Paper,
    RelType,
    Topic,
)
from graph.schema import TOPIC_TYPES
from graph.settings import Settings
from graph.store.base import GraphStore
from graph.topics.cluster import Community, TopicInputs, TopicResult, assign, compute_topics

log = logging.getLogger(__name__)

#: how many concept names a label joins
LABEL_CONCEPTS = 3
#: every topic is read in one page (topics are tens to hundreds, not thousands)
MAX_TOPICS = 100_000


@dataclass(frozen=True, slots=True)
class TopicsUpdate:
    """What a write's topic step did: ``recomputed``, or ``assigned`` papers joined."""

    recomputed: bool
    topics: int
    assigned: int = 0
    seconds: float = 0.0


def inputs_of(data: GraphData) -> TopicInputs:
    """The topic inputs of a whole graph."""
    papers = sorted(nid for nid, n in data.nodes.items() if isinstance(n, Paper))
    similar, cites = [], []
    mentions: dict[str, dict[str, int]] = defaultdict(dict)
    datasets: dict[str, list[str]] = defaultdict(list)
    for e in data.edges.values():
        if e.type is RelType.SIMILAR_TO:
            similar.append((e.source, e.target, e.weight))
        elif e.type is RelType.CITES:
            cites.append((e.source, e.target))
        elif e.type is RelType.MENTIONS:
            mentions[e.source][e.target] = int(e.attrs.get("count", 1) or 1)
        elif e.type in (RelType.USES, RelType.INTRODUCES):
            datasets[e.source].append(e.target)
    years = {p: n.year for p in papers if isinstance(n := data.nodes[p], Paper)}
    return TopicInputs(papers, similar, cites, mentions, datasets, years)


def members_of(edges: Sequence[Edge]) -> dict[str, frozenset[str]]:
    """Each topic's papers, from IN_TOPIC edges."""
    out: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        if e.type is RelType.IN_TOPIC:
            out[e.target].add(e.source)
    return {k: frozenset(v) for k, v in out.items()}


def label_of(concepts: Sequence[str], names: Mapping[str, str], fallback: str) -> str:
    """A topic's label: its most distinctive concepts' names, best first. A name that
    holds a single word picked before takes its place ("graph neural network" for
    "graph": more specific); one that holds, or is held by, a longer name picked before
    is left out ("reinforcement learning algorithm" after "reinforcement learning")."""
    picked: list[str] = []
    for cid in concepts:
        name = names.get(cid, cid.split(":", 1)[-1].replace("-", " "))
        low = name.casefold()
        near = [i for i, p in enumerate(picked) if low in p.casefold() or p.casefold() in low]
        if near:
            i = near[0]
            if len(near) == 1 and " " not in picked[i] and picked[i].casefold() in low:
                picked[i] = name
            continue
        if len(picked) == LABEL_CONCEPTS:
            break
        picked.append(name)
    return ", ".join(picked) if picked else fallback


def _node(c: Community, names: Mapping[str, str], version: str | None, corpus: int) -> Topic:
    return Topic(
        id=c.id, name=label_of(c.concepts, names, c.id), level=1 if c.parent is None else 2,
        parent=c.parent, size=len(c.members), concepts=c.concepts,
        concept_names=tuple(names.get(x, x) for x in c.concepts), papers=c.papers,
        datasets=c.datasets, years=tuple(y for y, _ in c.years),
        year_counts=tuple(n for _, n in c.years), version=version, corpus=corpus,
    )


def result_change(
    data: GraphData, result: TopicResult, version: str | None
) -> GraphChange:
    """The change that replaces ``data``'s topics by ``result``'s."""
    names = {nid: n.name for nid, n in data.nodes.items() if isinstance(n, Concept)}
    corpus = sum(1 for n in data.nodes.values() if isinstance(n, Paper))
    topics = [_node(c, names, version, corpus) for c in result.topics]
    edges: dict[tuple[str, str, RelType], Edge] = {}
    for c in result.topics:
        ranked = sorted(c.members, key=lambda p: (-result.importance.get(p, 0.0), p))
        for rank, p in enumerate(ranked, 1):
            e = Edge(p, c.id, RelType.IN_TOPIC, 1.0, {"rank": rank})
            edges[e.key] = e
        if c.parent is not None:
            e = Edge(c.id, c.parent, RelType.SUBTOPIC_OF, 1.0, {})
            edges[e.key] = e
    papers: list[GraphNode] = []
    for nid, n in sorted(data.nodes.items()):
        if isinstance(n, Paper):
            imp = result.importance.get(nid)
            if n.importance is None or imp is None or abs(n.importance - imp) > 1e-12:
                papers.append(dataclasses.replace(n, importance=imp))
    new_ids = {t.id for t in topics}
    old_topics = [nid for nid, n in data.nodes.items() if n.kind is NodeKind.TOPIC]
    upsert_edges = [
        e for k, e in sorted(edges.items(), key=lambda kv: _key(kv[0]))
        if (old := data.edges.get(k)) is None or old != e
    ]
    delete_edges = sorted(
        (k for k in data.edges
         if k[2] in TOPIC_TYPES and k not in edges
         and k[0] not in set(old_topics) - new_ids and k[1] not in set(old_topics) - new_ids),
        key=_key,
    )
    same = not (papers or upsert_edges or delete_edges or set(old_topics) - new_ids) and all(
        isinstance(was := data.nodes.get(t.id), Topic)
        and dataclasses.replace(t, version=was.version) == was
        for t in topics
    )
    if same:
        # the same topics as stored: nothing to write (a build that changed nothing
        # commits nothing), and their version stays the one they were computed at
        return GraphChange()
    return GraphChange(
        upsert_nodes=(*topics, *papers),
        delete_nodes=tuple(sorted(set(old_topics) - new_ids)),
        upsert_edges=tuple(upsert_edges),
        delete_edges=tuple(delete_edges),
    )


def _key(k: tuple[str, str, RelType]) -> tuple[str, str, str]:
    return (k[0], k[1], k[2].value)


def compute(data: GraphData, settings: Settings) -> TopicResult:
    """Topics of a whole graph, with the ids of its stored topics kept where they match."""
    previous = members_of([e for e in data.edges.values() if e.type is RelType.IN_TOPIC])
    return compute_topics(
        inputs_of(data), resolution=settings.topic_resolution, seed=settings.topic_seed,
        subtopic_min=settings.topic_subtopic_min,
        subtopic_resolution=settings.topic_subtopic_resolution,
        cites_weight=settings.topic_cites_weight,
        coupling_weight=settings.topic_coupling_weight, previous=previous,
    )


def recompute(store: GraphStore, settings: Settings) -> TopicsUpdate:
    """Compute the store's topics afresh and write them in one transaction."""
    t0 = time.perf_counter()
    with store.writer():
        data = store.snapshot()
        version = store.version()
        if not any(isinstance(n, Paper) for n in data.nodes.values()):
            # no papers left: no topics either (the old ones would list removed papers)
            stale = sorted(nid for nid, n in data.nodes.items() if n.kind is NodeKind.TOPIC)
            if stale:
                store.apply(GraphChange(delete_nodes=tuple(stale)))
            return TopicsUpdate(True, 0)
        result = compute(data, settings)
        change = result_change(data, result, version)
        if not change.empty:
            store.apply(change)
    n = sum(1 for c in result.topics if c.parent is None)
    return TopicsUpdate(True, n, seconds=time.perf_counter() - t0)


def stored_topics(store: GraphStore) -> list[Topic]:
    """Every Topic node, by id."""
    nodes, _ = store.list_nodes(NodeKind.TOPIC, limit=MAX_TOPICS)
    return sorted((n for n in nodes if isinstance(n, Topic)), key=lambda t: t.id)


def after_write(
    store: GraphStore, settings: Settings, added: Sequence[str], changed: int
) -> TopicsUpdate | None:
    """The topic step of an add or a remove (the rule in this module's docstring).
    ``changed``: papers added, updated or removed by the write. None: no topics yet."""
    topics = stored_topics(store)
    if not topics:
        return None
    corpus = store.stats().nodes.get(NodeKind.PAPER.value, 0)
    pending = max(t.changed for t in topics) + changed
    if corpus == 0 or pending >= settings.topic_recompute_fraction * corpus:
        return recompute(store, settings)
    t0 = time.perf_counter()
    with store.writer():
        topics = stored_topics(store)
        change, joined = _assign_change(store, topics, added, pending)
        store.apply(change)
    return TopicsUpdate(False, sum(1 for t in topics if t.level == 1), joined,
                        time.perf_counter() - t0)


def _assign_change(
    store: GraphStore, topics: Sequence[Topic], added: Sequence[str], pending: int
) -> tuple[GraphChange, int]:
    """New papers join their neighbours' topics; every topic counted again."""
    ids = [t.id for t in topics]
    members = {k: set(v) for k, v in members_of(store.edges_of(ids, [RelType.IN_TOPIC])).items()}
    level = {t.id: t.level for t in topics}
    top_of = {p: t for t, ps in members.items() if level.get(t) == 1 for p in ps}
    sub_of = {p: t for t, ps in members.items() if level.get(t) == 2 for p in ps}
    fresh = [p for p in added if p not in top_of]
    neighbours: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for e in store.edges_of(fresh, [RelType.SIMILAR_TO]) if fresh else []:
        neighbours[e.source].append((e.target, e.weight))
        neighbours[e.target].append((e.source, e.weight))
    joined = assign(fresh, neighbours, top_of)
    edges = [Edge(p, t, RelType.IN_TOPIC, 1.0, {}) for p, t in joined.items()]
    for p, tid in joined.items():
        members.setdefault(tid, set()).add(p)
        inside = {q: s for q, s in sub_of.items() if s.startswith(tid + ".")}
        sub = assign([p], neighbours, inside).get(p)
        if sub is not None:
            edges.append(Edge(p, sub, RelType.IN_TOPIC, 1.0, {}))
            members.setdefault(sub, set()).add(p)
    everyone = sorted({p for ps in members.values() for p in ps})
    papers = {k: n for k, n in store.get_nodes(everyone).items() if isinstance(n, Paper)}
    nodes: list[GraphNode] = []
    emptied: list[str] = []
    for t in topics:
        ps = [p for p in members.get(t.id, set()) if p in papers]
        if not ps:
            # every paper of it removed: a topic of none would still be listed, labelled
            # by concepts and datasets that may be gone with its papers
            emptied.append(t.id)
            continue
        years = Counter(y for p in ps if (y := papers[p].year) is not None)
        ranked = sorted(ps, key=lambda p: (-(papers[p].importance or 0.0), p))
        nodes.append(dataclasses.replace(
            t, size=len(ps), papers=tuple(ranked[: len(t.papers) or 10]),
            years=tuple(sorted(years)), year_counts=tuple(years[y] for y in sorted(years)),
            changed=pending,
        ))
    return GraphChange(upsert_nodes=tuple(nodes), delete_nodes=tuple(emptied),
                       upsert_edges=tuple(edges)), len(joined)
