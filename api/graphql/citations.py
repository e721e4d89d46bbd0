"""GraphQL types of the citation reads: prior and derivative works, coupled and co-cited
papers (graph.query.citations; the resolvers are on ``Query`` in api.graphql.schema)."""

from __future__ import annotations

import strawberry

from api.graphql import types as t
from graph import model
from graph.query.citations import Relation, reason_text


@strawberry.type(description="A paper or outside work joined to the seeds through citations.")
class CitationLink:
    node: t.Node = strawberry.field(description="A Paper, or a Work (outside work).")
    strength: float = strawberry.field(
        description="Coupled / co-cited: Salton's cosine, shared / sqrt(n_a x n_b), the mean "
                    "over the seeds. Prior / derivative: count over the number of seeds."
    )
    count: int = strawberry.field(
        description="Coupled: works cited by both; co-cited: papers citing both; prior: "
                    "seeds citing it; derivative: seeds it cites."
    )
    shared: list[t.Node] = strawberry.field(
        description="The first few of those (by id): works, citing papers or seeds."
    )
    reason: str = strawberry.field(description="The link as a sentence.")


DESCRIPTIONS = {
    Relation.PRIOR: "Prior works of seed papers (Connected Papers): the works they cite "
    "most, outside works included, by how many seeds cite each.",
    Relation.DERIVATIVE: "Derivative works of seed papers or outside works (Connected "
    "Papers): the corpus papers that cite them most.",
    Relation.COUPLED: "Papers bibliographically coupled to seed papers: they cite the "
    "same works (outside ones included), by Salton's cosine.",
    Relation.COCITED: "Papers co-cited with seed papers or outside works: cited together "
    "by corpus papers, by Salton's cosine.",
}


def citation_link(x: model.CitationLink, relation: Relation) -> CitationLink:
    """The GraphQL object of one answer of a citation read."""
    if relation in (Relation.COUPLED, Relation.COCITED):
        reason = reason_text(x, relation is Relation.COUPLED)
    else:
        seeds = ", ".join(n.label for n in x.shared)
        more = f" and {x.count - len(x.shared)} more" if x.count > len(x.shared) else ""
        verb = "cited by" if relation is Relation.PRIOR else "cites"
        reason = f"{verb} {seeds}{more}"
    return CitationLink(
        node=t.to_node(x.node), strength=x.strength, count=x.count,
        shared=[t.to_node(n) for n in x.shared], reason=reason,
    )
