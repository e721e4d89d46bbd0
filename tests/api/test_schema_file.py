"""schema.graphql is the code's schema.

Regenerate it with `python -m api.graphql.schema > schema.graphql`.
"""

from __future__ import annotations

from pathlib import Path

from api.graphql.schema import sdl

ROOT = Path(__file__).resolve().parents[2]


def test_committed_sdl_matches_the_code() -> None:
    committed = (ROOT / "schema.graphql").read_text(encoding="utf-8")
    assert committed == sdl(), "schema drifted: run `python -m api.graphql.schema > schema.graphql`"
