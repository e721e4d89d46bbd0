"""An extraction read back from the cache: equal to what was written, and its repeated
strings (one sentence, the evidence of several mentions) held once, as the extractor
made them."""

from __future__ import annotations

from graph.extract import RuleExtractor
from graph.extract.base import extraction_from_json, extraction_to_json

ABSTRACT = (
    "We propose graph neural networks with contrastive learning for molecule property "
    "prediction. Graph neural networks trained by contrastive learning beat baselines on "
    "MoleculeNet and QM9. We also study message passing."
)


def test_round_trip_is_equal_and_shares_repeated_strings() -> None:
    made = RuleExtractor().extract(ABSTRACT)
    back = extraction_from_json(extraction_to_json(made))
    assert back == made
    mentions = [*back.concepts, *back.datasets]
    # the sentence that is the evidence of several mentions is one object again
    by_text: dict[str, set[int]] = {}
    for m in mentions:
        by_text.setdefault(m.evidence, set()).add(id(m.evidence))
    assert any(len([m for m in mentions if m.evidence == t]) > 1 for t in by_text)
    assert all(len(ids) == 1 for ids in by_text.values())


def test_hostile_values_round_trip_unchanged() -> None:
    made = RuleExtractor().extract(ABSTRACT)
    text = extraction_to_json(made)
    # the same string as a key and as a value, numbers that look like strings: only
    # equal strings are shared, nothing else changes
    back = extraction_from_json(text.replace('"method"', '"1"'))
    assert [m.count for m in back.concepts] == [m.count for m in made.concepts]
    assert all(type(m.count) is int for m in back.concepts)
    assert [m.category for m in back.concepts] == [
        "1" if m.category == "method" else m.category for m in made.concepts
    ]
