"""The README's GraphQL examples give the output the README shows (on the seed graph).

After a deliberate change (extraction, scoring), run this test, read the actual output
it prints on failure, and update the README by hand.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.api.conftest import GQL

README = Path(__file__).resolve().parents[2] / "README.md"
EXAMPLE = re.compile(
    r"```graphql\n(?P<query>.*?)```\s*\n(?:[^`\n]*\n)*?```json\n(?P<out>.*?)```", re.S
)


def examples() -> list[tuple[str, str]]:
    """(query, expected JSON) pairs in README order."""
    return [(m["query"], m["out"]) for m in EXAMPLE.finditer(README.read_text(encoding="utf-8"))]


def _rounded(value: Any) -> Any:
    """Floats to 2 decimals: embeddings differ in the last bits across CPUs."""
    if isinstance(value, float):
        return round(value, 2)
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


def test_readme_has_the_four_examples() -> None:
    queries = [q for q, _ in examples()]
    assert len(queries) >= 4
    for field in ("neighborhood", "shortestPath", "related", "search"):
        assert any(field in q for q in queries), field


@pytest.mark.parametrize("index", range(4))
def test_readme_example_output(gql: GQL, index: int) -> None:
    query, expected = examples()[index]
    actual = gql.data(query)
    printed = json.dumps({"data": actual}, indent=2, ensure_ascii=False)
    assert _rounded({"data": actual}) == _rounded(json.loads(expected)), printed
