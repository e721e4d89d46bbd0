"""Topics on every store: computed from the stored graph, written in one change, read
back identically, kept by an add below the recompute threshold and redone above it.

The graph: three groups of papers, each group's papers SIMILAR_TO one another and
mentioning the group's own concepts (and one concept every paper mentions), so the
communities, their labels and the papers' importance are known in advance.
"""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from graph.model import (
    Concept,
    Dataset,
    Edge,
    GraphChange,
    MentionAttrs,
    NodeKind,
    Paper,
    RelType,
    Topic,
)
from graph.settings import Settings
from graph.store.base import GraphStore
from graph.topics import after_write, recompute, stored_topics
from tests.contract.test_store_contract import KINDS

GROUPS = {"graphs": 8, "vision": 7, "speech": 6}
SETTINGS = Settings(topic_subtopic_min=100, topic_recompute_fraction=0.2)


def _paper(pid: str, year: int) -> Paper:
    return Paper(pid, pid, f"abstract of {pid}", f"h-{pid}", year=year)


def topic_graph() -> GraphChange:
    """Three groups (module docstring); ``graphs-0`` is its group's hub."""
    nodes: list[object] = [Concept("concept:common", "model")]
    edges: list[Edge] = []
    for g, n in GROUPS.items():
        nodes += [Concept(f"concept:{g}-a", f"{g} alpha"), Concept(f"concept:{g}-b", f"{g} beta")]
        nodes.append(Dataset(f"dataset:{g}", f"{g} set"))
        ids = [f"{g}-{i}" for i in range(n)]
        nodes += [_paper(p, 2019 + i % 3) for i, p in enumerate(ids)]
        for a, b in itertools.permutations(ids, 2):
            hub = a.endswith("-0") or b.endswith("-0")
            edges.append(Edge(a, b, RelType.SIMILAR_TO, 0.9 if hub else 0.6, {}))
        for p in ids:
            for c in (f"concept:{g}-a", f"concept:{g}-b", "concept:common"):
                edges.append(Edge(p, c, RelType.MENTIONS, 1.0, MentionAttrs("e", 1)))
            edges.append(Edge(p, f"dataset:{g}", RelType.USES, 1.0, MentionAttrs("e", 1)))
    return GraphChange(upsert_nodes=tuple(nodes), upsert_edges=tuple(edges))  # type: ignore[arg-type]


def _read(store: GraphStore) -> tuple[list[Topic], list[tuple[str, str]], dict[str, float]]:
    topics = [dataclasses.replace(t, version=None) for t in stored_topics(store)]
    ids = [t.id for t in topics]
    member = sorted((e.source, e.target) for e in store.edges_of(ids, [RelType.IN_TOPIC]))
    papers = store.get_nodes(sorted({p for p, _ in member}))
    imp = {p: n.importance for p, n in papers.items() if isinstance(n, Paper)}
    return topics, member, imp  # type: ignore[return-value]


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Topic], list, dict]:
    from graph.store.memory import NetworkxStore

    store = NetworkxStore()
    store.apply(topic_graph())
    recompute(store, SETTINGS)
    return _read(store)


def test_expected_topics_are_the_groups(expected: tuple[list[Topic], list, dict]) -> None:
    topics, member, imp = expected
    assert [t.size for t in topics] == [8, 7, 6]
    by_group = {t.papers[0].split("-")[0]: t for t in topics}
    assert set(by_group) == set(GROUPS)
    for g, t in by_group.items():
        assert t.name == f"{g} alpha, {g} beta"  # the shared "model" is no one's label
        assert t.papers[0] == f"{g}-0"  # the hub is the most important paper
        assert t.datasets == (f"dataset:{g}",)
        assert sum(t.year_counts) == t.size and t.corpus == 21 and t.level == 1
    assert len(member) == 21 and all(v is not None and v > 0 for v in imp.values())


@pytest.mark.parametrize("kind", KINDS)
def test_topics_written_and_read_back_identically(
    make_store: object, kind: str, expected: tuple[list[Topic], list, dict]
) -> None:
    store: GraphStore = make_store(kind)  # type: ignore[operator]
    store.apply(topic_graph())
    before = store.version()
    done = recompute(store, SETTINGS)
    assert done.recomputed and done.topics == 3
    topics, member, imp = _read(store)
    assert topics == expected[0]
    assert member == expected[1]
    assert imp == pytest.approx(expected[2])
    assert all(t.version == before for t in stored_topics(store))
    assert store.stats().nodes[NodeKind.TOPIC.value] == 3
    # a recompute of an unchanged graph finds the same topics and writes nothing
    version = store.version()
    recompute(store, SETTINGS)
    assert store.version() == version
    assert all(t.version == before for t in stored_topics(store))

    # an add below the threshold (1 of 22 < 20%): the paper joins its neighbours' topic
    new = _paper("vision-new", 2021)
    store.apply(GraphChange(upsert_nodes=(new,), upsert_edges=tuple(
        Edge("vision-new", f"vision-{i}", RelType.SIMILAR_TO, 0.7, {}) for i in range(3)
    )))
    done2 = after_write(store, SETTINGS, ["vision-new"], 1)
    assert done2 is not None and not done2.recomputed and done2.assigned == 1
    vision = next(t for t in stored_topics(store) if t.papers[0] == "vision-0")
    assert vision.size == 8 and vision.changed == 1 and vision.year_counts[-1] >= 1
    assert ("vision-new", vision.id) in {
        (e.source, e.target) for e in store.edges_of(["vision-new"], [RelType.IN_TOPIC])
    }
    # past it (1 + 4 of 22 >= 20%): recomputed, and the ids of the groups kept
    done3 = after_write(store, SETTINGS, [], 4)
    assert done3 is not None and done3.recomputed
    again = stored_topics(store)
    assert [t.id for t in again] == [t.id for t in topics]
    assert all(t.changed == 0 for t in again)


@pytest.mark.parametrize("kind", KINDS)
def test_removing_every_paper_removes_the_topics(make_store: object, kind: str) -> None:
    """probe: a graph whose papers were all removed kept its Topic nodes (sizes and top
    papers of removed papers), and `topics --recompute` left them: "Recomputed 0 topics"."""
    store: GraphStore = make_store(kind)  # type: ignore[operator]
    store.apply(topic_graph())
    recompute(store, SETTINGS)
    papers = [f"{g}-{i}" for g, n in GROUPS.items() for i in range(n)]
    store.apply(GraphChange(delete_nodes=tuple(papers)))
    done = after_write(store, SETTINGS, [], len(papers))
    assert done is not None and done.recomputed and done.topics == 0
    assert stored_topics(store) == []
    assert NodeKind.TOPIC.value not in store.stats().nodes or (
        store.stats().nodes[NodeKind.TOPIC.value] == 0)
    # and a recompute of a graph with stale topics but no papers drops them too
    store.apply(GraphChange(upsert_nodes=(Topic("topic:9", "stale", level=1, size=1),)))
    assert recompute(store, SETTINGS).topics == 0 and stored_topics(store) == []


@pytest.mark.parametrize("kind", KINDS)
def test_a_topic_emptied_below_the_threshold_is_dropped(make_store: object, kind: str) -> None:
    """probe: removing every paper of one topic, below the recompute threshold, left it
    listed with 0 papers (and its label's concepts and datasets gone)."""
    store: GraphStore = make_store(kind)  # type: ignore[operator]
    store.apply(topic_graph())
    settings = Settings(topic_subtopic_min=100, topic_recompute_fraction=0.9)
    recompute(store, settings)
    speech = next(t for t in stored_topics(store) if t.papers[0] == "speech-0")
    gone = tuple(f"speech-{i}" for i in range(GROUPS["speech"]))
    store.apply(GraphChange(delete_nodes=gone))
    done = after_write(store, settings, [], len(gone))  # 6 of 15 < 90%: no recompute
    assert done is not None and not done.recomputed
    left = stored_topics(store)
    assert speech.id not in {t.id for t in left}
    assert sorted(t.size for t in left) == [7, 8] and all(t.changed == 6 for t in left)
