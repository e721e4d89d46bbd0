"""Every relative link in README.md and docs/*.md resolves, and every test the docs cite exists.

A link is ``[text](target)`` outside code; ``target`` is a file or folder relative to the
page (with an optional ``#anchor``, which must be a heading of that file, as GitHub makes
anchors), or ``#anchor`` on the page itself. A citation is a path like
``tests/hardening/test_x.py::test_name`` in a page: the file must exist and define the test.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.seeds import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~)")
CODE_SPAN = re.compile(r"`[^`]*`")
CITED = re.compile(r"^((?:tests/[\w/]+/)?test_\w+\.py)?(?:::(\w+))?$")


def _prose(text: str) -> list[str]:
    """The page's lines outside fenced code blocks, with code spans blanked."""
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced:
            out.append(CODE_SPAN.sub("``", line))
    return out


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but - and _ dropped."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return "".join(c for c in text if c.isalnum() or c in " -_").replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m and not fenced:
            a = anchor(m.group(1))
            n = seen.get(a, 0)
            seen[a] = n + 1
            found.add(a if n == 0 else f"{a}-{n}")
    return found


def _links(page: Path) -> list[str]:
    return [m.group(1) for line in _prose(page.read_text(encoding="utf-8"))
            for m in LINK.finditer(line)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in _links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path_part, _, frag = target.partition("#")
        where = (page.parent / path_part).resolve() if path_part else page
        if not where.exists():
            broken.append(f"{target}: no such file")
        elif frag and where.suffix == ".md" and frag not in anchors(where):
            broken.append(f"{target}: no heading #{frag} in {where.name}")
    assert not broken, f"{page.name}: {broken}"


def _test_file(name: str) -> Path | None:
    """``tests/x/test_y.py`` as given, or a bare ``test_y.py`` found once under tests/."""
    if "/" in name:
        return ROOT / name
    found = list((ROOT / "tests").rglob(name))
    return found[0] if len(found) == 1 else None


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_cited_test_exists(page: Path) -> None:
    """Code spans naming a test file, ``file::test`` or ``::test`` (the file last named on
    that line) must name what exists."""
    missing = []
    for line in page.read_text(encoding="utf-8").splitlines():
        last: Path | None = None
        for span in re.findall(r"`([^`]+)`", line):
            m = CITED.match(span)
            if not m or not (m.group(1) or m.group(2)):
                continue
            if m.group(1):
                last = _test_file(m.group(1))
                if last is None or not last.exists():
                    missing.append(m.group(1))
                    continue
            name = m.group(2)
            if name and (last is None or not re.search(
                    rf"^\s*(async\s+)?def {name}\(", last.read_text(), re.M)):
                missing.append(f"{last.name if last else '?'}::{name}")
    assert not missing, f"{page.name}: {missing}"


def test_the_anchor_rule_is_githubs() -> None:
    assert anchor("How good are the related papers and the SIMILAR_TO links?") == (
        "how-good-are-the-related-papers-and-the-similar_to-links")
    assert anchor("Tests: a real Neo4j 5.26, started by the suite") == (
        "tests-a-real-neo4j-526-started-by-the-suite")
    assert anchor("How long do `citegraph build` and `citegraph add` take?") == (
        "how-long-do-citegraph-build-and-citegraph-add-take")
