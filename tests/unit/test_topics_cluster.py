"""The topic algorithm on hand-made inputs: determinism, two levels, ids kept across a
small change, c-TF-IDF as BERTopic defines it, coupling, the new papers' assignment."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

from graph.topics.cluster import (
    TopicInputs,
    assign,
    compute_topics,
    coupling_pairs,
    ctfidf,
    match_ids,
)


def blocks(sizes: dict[str, int], seed: int = 1, between: float = 0.02) -> TopicInputs:
    """Groups of papers, dense SIMILAR_TO inside a group and a few weak edges across;
    a group's papers mention its concept and one shared by all."""
    rng = random.Random(seed)
    papers, similar, mentions = [], [], {}
    for g, n in sizes.items():
        ids = [f"{g}{i:02d}" for i in range(n)]
        papers += ids
        for a, b in itertools.combinations(ids, 2):
            if rng.random() < 0.6:
                similar.append((a, b, 0.5 + rng.random() / 2))
        for p in ids:
            mentions[p] = {f"concept:{g}": 1, "concept:all": 1}
    for a, b in itertools.combinations(papers, 2):
        if a[0] != b[0] and rng.random() < between:
            similar.append((a, b, 0.31))
    return TopicInputs(papers, similar, mentions=mentions)


def run(inputs: TopicInputs, **kw: object) -> list[tuple[str, frozenset[str], str | None]]:
    res = compute_topics(inputs, resolution=1.0, seed=42, subtopic_min=kw.pop("sub", 1000),  # type: ignore[arg-type]
                         **kw)  # type: ignore[arg-type]
    return [(c.id, c.members, c.parent) for c in res.topics]


def test_groups_found_and_deterministic() -> None:
    inputs = blocks({"a": 30, "b": 25, "c": 20})
    first = run(inputs)
    assert first == run(inputs)  # seeded: the same run twice
    assert sorted(len(m) for _, m, _ in first) == [20, 25, 30]
    assert {frozenset(p[0] for p in m) for _, m, _ in first} == {
        frozenset("a"), frozenset("b"), frozenset("c")}
    assert [i for i, _, _ in first] == ["topic:1", "topic:2", "topic:3"]  # biggest first


def test_two_levels_subtopics_inside_a_big_topic() -> None:
    # "a" is two halves with weak ties between them, the rest is apart: at the top one
    # topic holds both halves only if its ties are strong enough; the subtopics split it
    inputs = blocks({"a": 20, "b": 20}, between=0.0)
    extra = [(f"a{i:02d}", f"b{j:02d}", 0.9) for i in range(20) for j in range(20)
             if (i + j) % 3 == 0]
    merged = TopicInputs(inputs.papers, [*inputs.similar, *extra], mentions=inputs.mentions)
    res = compute_topics(merged, resolution=0.3, seed=42, subtopic_min=20,
                         subtopic_resolution=1.0)
    tops = [c for c in res.topics if c.parent is None]
    subs = [c for c in res.topics if c.parent is not None]
    assert len(tops) == 1 and len(tops[0].members) == 40
    assert len(subs) >= 2
    assert all(c.id.startswith(tops[0].id + ".") and c.members <= tops[0].members for c in subs)


def test_ids_kept_across_a_recompute_with_a_small_change() -> None:
    inputs = blocks({"a": 30, "b": 25, "c": 20})
    before = run(inputs)
    previous = {i: m for i, m, _ in before}
    # reversed numbering on purpose: matching by overlap, not by order, keeps the ids
    renamed = dict(zip(sorted(previous), sorted(previous, reverse=True), strict=True))
    previous = {renamed[k]: v for k, v in previous.items()}
    changed = TopicInputs(
        [p for p in inputs.papers if p != "a00"] + ["d00"],
        [(s, t, w) for s, t, w in inputs.similar if "a00" not in (s, t)]
        + [("d00", f"b{i:02d}", 0.9) for i in range(5)],
        mentions=inputs.mentions,
    )
    after = compute_topics(changed, resolution=1.0, seed=42, subtopic_min=1000,
                           previous=previous)
    got = {c.id: c.members for c in after.topics}
    for tid, members in previous.items():
        assert len(got[tid] & members) >= len(members) - 1
    assert "d00" in next(m for m in got.values() if "b00" in m)


def test_match_ids_fresh_ids_after_the_highest() -> None:
    old = {"topic:1": frozenset("abc"), "topic:4": frozenset("xyz")}
    new = [frozenset("xyw"), frozenset("mno"), frozenset("abc")]
    assert match_ids(old, new, "topic:") == ["topic:4", "topic:5", "topic:1"]


def test_ctfidf_is_bertopics_formula() -> None:
    classes = {"x": Counter({"gnn": 3, "model": 1}), "y": Counter({"cnn": 2, "model": 2})}
    scores = {k: dict(v) for k, v in ctfidf(classes).items()}
    avg = (4 + 4) / 2
    assert math.isclose(scores["x"]["gnn"], 3 / 4 * math.log(1 + avg / 3))
    assert math.isclose(scores["x"]["model"], 1 / 4 * math.log(1 + avg / 3))
    assert math.isclose(scores["y"]["model"], 2 / 4 * math.log(1 + avg / 3))
    assert [t for t, _ in ctfidf(classes)["x"]] == ["gnn", "model"]


def test_labels_from_the_distinctive_concepts() -> None:
    res = compute_topics(blocks({"a": 12, "b": 12}), resolution=1.0, seed=42,
                         subtopic_min=1000)
    for c in res.topics:
        group = next(iter(c.members))[0]
        assert c.concepts == (f"concept:{group}",)  # "concept:all" is in every class alike


def test_coupling_is_saltons_cosine() -> None:
    cites = [("p", "w1"), ("p", "w2"), ("q", "w2"), ("q", "w3"), ("q", "w4"), ("r", "w9")]
    assert coupling_pairs(cites) == [("p", "q", 1 / math.sqrt(2 * 3))]


def test_importance_follows_citations_when_the_corpus_cites_itself() -> None:
    inputs = blocks({"a": 10})
    cited = TopicInputs(inputs.papers, inputs.similar,
                        cites=[(p, "a05") for p in inputs.papers if p != "a05"],
                        mentions=inputs.mentions)
    res = compute_topics(cited, resolution=1.0, seed=42, subtopic_min=1000)
    assert max(res.importance, key=lambda p: res.importance[p]) == "a05"
    assert next(c for c in res.topics if "a05" in c.members).papers[0] == "a05"


def test_assign_joins_the_neighbours_topic() -> None:
    topic_of = {"a": "topic:1", "b": "topic:1", "c": "topic:2"}
    nb = {"n1": [("a", 0.5), ("b", 0.4), ("c", 0.8)], "n2": [("zz", 0.9)]}
    assert assign(["n1", "n2"], nb, topic_of) == {"n1": "topic:1"}


def test_label_prefers_the_specific_phrase() -> None:
    from graph.topics.update import label_of

    names = {"a": "graph", "b": "node", "c": "graph neural network", "d": "neural network",
             "e": "reinforcement learning", "f": "reinforcement learning algorithm", "g": "x"}
    assert label_of(["a", "b", "c", "d", "g"], names, "t") == "graph neural network, node, x"
    assert label_of(["e", "f", "b"], names, "t") == "reinforcement learning, node"
    assert label_of([], names, "topic:9") == "topic:9"
