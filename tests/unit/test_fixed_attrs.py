"""FixedAttrs (slotted edge attributes) read, compare and store as the dicts they replace."""

from __future__ import annotations

import json
from typing import Any

import pytest

from graph.model import CountAttrs, Edge, FixedAttrs, MentionAttrs, RankAttrs, RelType, TermAttrs
from graph.store.rows import JsonAttrs, _attrs_text

CASES: list[tuple[RelType, FixedAttrs, dict[str, Any]]] = [
    (RelType.MENTIONS, MentionAttrs("We use X.", 2), {"evidence": "We use X.", "count": 2}),
    (RelType.MENTIONS, MentionAttrs(None, 1), {"evidence": None, "count": 1}),
    (RelType.RELATED_TO, CountAttrs(7), {"count": 7}),
    (RelType.SIMILAR_TO, RankAttrs(0.5, 0.25, 3), {"score": 0.5, "words": 0.25, "rank": 3}),
    (
        RelType.SHARES_TERM,
        TermAttrs(3.5, ["a b", "c"], ["concept:a-b", "concept:c"], [2.0, 1.5], "both"),
        {"weight": 3.5, "terms": ["a b", "c"], "term_ids": ["concept:a-b", "concept:c"],
         "term_weights": [2.0, 1.5], "kept_by": "both"},
    ),
]


@pytest.mark.parametrize(("rel", "fixed", "plain"), CASES)
def test_reads_as_the_dict(rel: RelType, fixed: FixedAttrs, plain: dict[str, Any]) -> None:
    assert list(fixed) == list(plain)  # the dict's key order, so the stored JSON is the same
    assert dict(fixed) == plain and len(fixed) == len(plain)
    assert list(fixed.items()) == list(plain.items())
    for k, v in plain.items():
        assert fixed[k] == v and fixed.get(k) == v and k in fixed
    assert "nope" not in fixed and fixed.get("nope", 5) == 5 and 3 not in fixed
    with pytest.raises(KeyError):
        fixed["nope"]
    with pytest.raises(KeyError):
        fixed["__class__"]  # a name the object has, but not a key
    with pytest.raises(TypeError):
        hash(fixed)
    assert repr(fixed) == repr(plain)
    assert fixed | {"x": 1} == plain | {"x": 1} and {"x": 1} | fixed == {"x": 1} | plain


@pytest.mark.parametrize(("rel", "fixed", "plain"), CASES)
def test_equal_to_dicts_and_stored_rows(
    rel: RelType, fixed: FixedAttrs, plain: dict[str, Any]
) -> None:
    assert fixed == plain and plain == fixed
    assert not fixed.__ne__(plain)
    stored = JsonAttrs(json.dumps(plain))
    assert fixed == stored and stored == fixed
    changed = dict(plain)
    first = next(iter(plain))
    changed[first] = "other"
    assert fixed != changed and changed != fixed
    assert fixed != {**plain, "extra": 1} and fixed != {k: plain[k] for k in list(plain)[1:]}
    assert fixed != list(plain)
    weight = float(plain.get("weight", 1.0))
    a = Edge("p1", "p2", rel, weight, fixed)
    b = Edge("p1", "p2", rel, weight, plain)
    assert a == b and b == a
    # the row written is the dict's row, byte for byte
    assert _attrs_text(a) == _attrs_text(b)
    assert json.loads(_attrs_text(a)) == plain


def test_same_class_compares_by_fields() -> None:
    assert RankAttrs(0.5, 0.25, 3) == RankAttrs(0.5, 0.25, 3)
    assert RankAttrs(0.5, 0.25, 3) != RankAttrs(0.5, 0.25, 4)
    assert CountAttrs(3) != MentionAttrs(None, 3)  # other keys
    # a list and a tuple of the same terms are different values, as in a dict
    assert TermAttrs(1.0, ["a"], ["concept:a"], [1.0], "a") != {
        "weight": 1.0, "terms": ("a",), "term_ids": ["concept:a"], "term_weights": [1.0],
        "kept_by": "a"}


def test_weight_mismatch_is_still_refused() -> None:
    from graph.errors import StoreError

    e = Edge("p1", "p2", RelType.SHARES_TERM, 2.0, TermAttrs(3.0, [], [], [], "a"))
    with pytest.raises(StoreError, match=r"attrs\.weight != weight"):
        _attrs_text(e)
