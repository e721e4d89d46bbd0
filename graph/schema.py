"""The one registry of node kinds and edge types.

Everything that depends on what an edge type *is* reads it here: its endpoints (the
Neo4j store's Cypher), whether its direction means anything (stored source < target
when it does not), how a hop along it is explained to a reader (CLI, API, explorer),
and how the explorer draws it. Adding an edge type is: a :class:`RelType` member and
an :class:`EdgeSpec` here, plus the builder that makes the edges.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graph.model import Edge


class NodeKind(StrEnum):
    """Node labels. The values are the Neo4j labels, so they come from here only."""

    PAPER = "Paper"
    CONCEPT = "Concept"
    DATASET = "Dataset"
    WORK = "Work"  # an outside work: named by a corpus paper's reference, not in the corpus
    TOPIC = "Topic"  # a community of papers (graph.topics), or a subtopic inside one


class RelType(StrEnum):
    """Relationship types. The values are the Neo4j relationship types."""

    SIMILAR_TO = "SIMILAR_TO"  # Paper -> Paper, {score, words, rank}
    SHARES_TERM = "SHARES_TERM"  # Paper -- Paper, {terms, weight}; stored source < target
    MENTIONS = "MENTIONS"  # Paper -> Concept, {weight, evidence}
    USES = "USES"  # Paper -> Dataset, {weight, evidence}
    INTRODUCES = "INTRODUCES"  # Paper -> Dataset, {weight, evidence}
    RELATED_TO = "RELATED_TO"  # Concept -- Concept, {weight, count}; stored source < target
    CITES = "CITES"  # Paper -> Paper, or Paper -> Work (a reference outside the corpus)
    IN_TOPIC = "IN_TOPIC"  # Paper -> Topic, {importance rank}; to its topic and its subtopic
    SUBTOPIC_OF = "SUBTOPIC_OF"  # Topic -> Topic: a subtopic to the topic it splits


Labels = Mapping[str, str]
Explain = Callable[["Edge", Labels], str]


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """How a node kind is shown."""

    kind: NodeKind
    name: str
    color: str
    shape: str


@dataclass(frozen=True, slots=True)
class EdgeSpec:
    """What an edge type joins, whether its direction matters, and how it reads."""

    type: RelType
    source: NodeKind
    target: NodeKind
    undirected: bool
    name: str  # a short phrase for legends ("shares a term")
    color: str  # the explorer's colour
    shown: bool  # drawn by the explorer unless the user turns it off
    explain: Explain  # a hop along it, as a sentence
    also: NodeKind | None = None  # a second kind its target may be (CITES: a Work)


def short(label: str, limit: int = 40) -> str:
    """A label cut to ``limit`` characters at a word boundary."""
    if len(label) <= limit:
        return label
    return label[:limit].rsplit(" ", 1)[0] + "…"


def _verb(verb: str) -> Explain:
    """Directed hops name both ends, so the sentence is right whichever way a path walks."""

    def explain(edge: Edge, labels: Labels) -> str:
        return (
            f"{short(labels.get(edge.source, edge.source))} {verb} "
            f"{short(labels.get(edge.target, edge.target))}"
        )

    return explain


def _similar(edge: Edge, labels: Labels) -> str:
    words = edge.attrs.get("words")
    if isinstance(words, int | float) and words > 0:
        return f"similar abstracts (cosine {edge.weight:.2f}, word overlap {words:.2f})"
    return f"similar abstracts (cosine {edge.weight:.2f})"


def _shares(edge: Edge, labels: Labels) -> str:
    terms = list(edge.attrs.get("terms", []))[:3]
    return "share " + ", ".join(terms) if terms else f"share terms (weight {edge.weight:.2f})"


def _related(edge: Edge, labels: Labels) -> str:
    return f"concepts co-mentioned by {int(edge.attrs.get('count', edge.weight))} papers"


P, C, D, W = NodeKind.PAPER, NodeKind.CONCEPT, NodeKind.DATASET, NodeKind.WORK
T = NodeKind.TOPIC

NODE_KINDS: dict[NodeKind, NodeSpec] = {
    P: NodeSpec(P, "Paper", "#2b6cb0", "round-rectangle"),
    C: NodeSpec(C, "Concept", "#dd6b20", "ellipse"),
    D: NodeSpec(D, "Dataset", "#2f855a", "diamond"),
    W: NodeSpec(W, "Outside work", "#a0aec0", "rectangle"),
    T: NodeSpec(T, "Topic", "#b83280", "hexagon"),
}

EDGE_TYPES: dict[RelType, EdgeSpec] = {
    s.type: s
    for s in (
        EdgeSpec(RelType.SIMILAR_TO, P, P, False, "similar to", "#805ad5", True, _similar),
        EdgeSpec(RelType.SHARES_TERM, P, P, True, "shares a term", "#319795", True, _shares),
        EdgeSpec(RelType.MENTIONS, P, C, False, "mentions", "#ed8936", True, _verb("mentions")),
        EdgeSpec(RelType.USES, P, D, False, "uses dataset", "#38a169", True, _verb("uses")),
        EdgeSpec(
            RelType.INTRODUCES, P, D, False, "introduces dataset", "#22543d", True,
            _verb("introduces"),
        ),
        EdgeSpec(
            RelType.RELATED_TO, C, C, True, "concepts related", "#b7791f", False, _related
        ),
        EdgeSpec(
            RelType.CITES, P, P, False, "cites", "#c53030", True, _verb("cites"), also=W
        ),
        EdgeSpec(RelType.IN_TOPIC, P, T, False, "in topic", "#d53f8c", False, _verb("is in")),
        EdgeSpec(
            RelType.SUBTOPIC_OF, T, T, False, "subtopic of", "#97266d", False,
            _verb("is a subtopic of"),
        ),
    )
}
assert set(EDGE_TYPES) == set(RelType), "every RelType needs an EdgeSpec"

#: Relationship types whose direction carries no meaning; stored with source < target.
UNDIRECTED: frozenset[RelType] = frozenset(t for t, s in EDGE_TYPES.items() if s.undirected)


#: Written by the topic computation (graph.topics), never by the build pipeline, which
#: leaves them as they are: a clustering of the whole corpus, recomputed by its own rule.
TOPIC_TYPES: frozenset[RelType] = frozenset({RelType.IN_TOPIC, RelType.SUBTOPIC_OF})


def endpoints(t: RelType) -> tuple[NodeKind, NodeKind]:
    """(source kind, target kind) of an edge type."""
    spec = EDGE_TYPES[RelType(t)]
    return spec.source, spec.target


def target_kinds(t: RelType) -> tuple[NodeKind, ...]:
    """Every kind the target of an edge of type ``t`` may be."""
    spec = EDGE_TYPES[RelType(t)]
    return (spec.target,) if spec.also is None else (spec.target, spec.also)


def hop_reason(edge: Edge, labels: Labels) -> str:
    """A short sentence saying why two nodes on a path are joined."""
    return EDGE_TYPES[edge.type].explain(edge, labels)
