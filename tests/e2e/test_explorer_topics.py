"""The explorer's topic map in a real headless Chromium against ``citegraph serve``.

The server holds the seed graph (its topics computed by the build) plus the JSONL papers
of ``test_explorer_citations`` with years 2017-2026 (one without), joined to topics by the
add. The page must colour papers by their top-level topic with a legend of topic labels,
open a topic's panel (label, papers per year, top papers, concepts) from the legend and
from a paper's panel, keep the year colouring as an option, and hide the papers outside
the year slider's range.
"""

from __future__ import annotations

from typing import Any

import pytest

from graph.model import Paper, RelType, Topic
from tests.e2e.conftest import SCREENSHOT, Page, Server
from tests.e2e.test_explorer import DRAWN
from tests.e2e.test_explorer_citations import OLDEST, PAPERS, draw, rgb

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _topics(server: Server) -> tuple[list[Topic], dict[str, str]]:
    """The top-level topics, largest first (ties by id), and each paper's top-level topic."""
    g = server.store.snapshot()
    tops = sorted((n for n in g.nodes.values() if isinstance(n, Topic) and n.level == 1),
                  key=lambda t: (-t.size, t.id))
    ids = {t.id for t in tops}
    of = {e.source: e.target for e in g.edges.values() if e.type is RelType.IN_TOPIC
          and e.target in ids and isinstance(g.nodes[e.source], Paper)}
    return tops, of


def _swatch(pg: Any, selector: str) -> str:
    return rgb(pg.evaluate(
        "s => getComputedStyle(document.querySelector(s)).backgroundColor", selector))


def test_topic_map_legend_panel_and_year_slider(tab: Page, cited_server: Server) -> None:
    tops, topic_of = _topics(cited_server)
    assert len(tops) >= 2 and {"d1", "d3", "d6"} <= set(topic_of)  # the add joined topics
    pg = draw(tab, cited_server, "d3")

    # the legend: colour = topic, one entry per top-level topic, largest first, labelled
    assert pg.inner_text("#paper-legend-title") == "Papers: colour = topic"
    assert pg.is_checked("#colour-topic") and pg.is_visible("#topic-legend")
    entries = pg.eval_on_selector_all(
        "#topic-list .topic-entry",
        "bs => bs.map(b => [b.dataset.id, b.querySelector('.tlabel').textContent])")
    assert entries == [[t.id, t.name] for t in tops]
    # every drawn paper has its topic's colour, the one its legend entry shows
    drawn: list[list[Any]] = pg.evaluate(
        f"{DRAWN}.nodes('[kind = \"PAPER\"]').map(n => [n.id(), n.data('topic'),"
        " n.style('background-color')])")
    assert len(drawn) >= 6
    legend = {t.id: _swatch(pg, f"#topic-list .topic-entry[data-id='{t.id}'] .swatch")
              for t in tops}
    assert len(set(legend.values())) == len(tops)  # one colour a topic
    for pid, topic, colour in drawn:
        assert topic == topic_of[pid], pid
        assert rgb(colour) == legend[topic], pid

    # a legend entry opens the topic's panel: label, size, papers per year, top papers
    # (most important first), concepts (most distinctive first)
    top = tops[0]
    pg.click(f"#topic-list .topic-entry[data-id='{top.id}']")
    pg.locator("#detail .bars").wait_for()
    assert pg.text_content("#detail .kind") == "Topic"
    assert pg.inner_text("#detail h3").strip() == top.name
    assert f"{top.size} papers" in pg.inner_text("#detail .meta")
    bars = pg.eval_on_selector_all("#detail .bar-col", "cs => cs.map(c => c.title)")
    assert bars == [f"{y}: {c} paper{'s' if c != 1 else ''}"
                    for y, c in zip(top.years, top.year_counts, strict=True)]
    chips = pg.eval_on_selector_all("#detail .chips .chip", "cs => cs.map(c => c.title)")
    assert chips == [*top.papers[:8], *top.concepts[:10]]

    # a paper's panel names its topic; the link opens the same panel
    pg.evaluate("window.citegraph.focus('d1')")
    link = pg.locator("#detail .topic-link")
    link.wait_for()
    mine = next(t for t in tops if t.id == topic_of["d1"])
    assert link.inner_text().strip() == mine.name
    link.click()
    pg.locator("#detail .bars").wait_for()
    assert pg.inner_text("#detail h3").strip() == mine.name

    # year colouring stays an option
    pg.check("#colour-year")
    assert pg.inner_text("#paper-legend-title") == "Papers: colour = year"
    assert not pg.is_visible("#topic-legend") and pg.is_visible("#year-scale .ramp")
    colour = pg.evaluate(f"{DRAWN}.getElementById('d1').style('background-color')")
    assert rgb(colour) == OLDEST

    # the year slider spans the graph's years and hides the papers outside its range
    # (a paper without a year too); the paper drawn around stays
    assert pg.is_visible("#years")
    ends = pg.evaluate("['#year-lo', '#year-hi'].map(s => [document.querySelector(s).min,"
                       " document.querySelector(s).max, document.querySelector(s).value])")
    assert ends == [["2017", "2026", "2017"], ["2017", "2026", "2026"]]
    visible = f"{DRAWN}.nodes('[kind = \"PAPER\"]').filter(n => n.visible()).map(n => n.id())"
    assert set(pg.evaluate(visible)) == {d[0] for d in drawn}
    slide = ("([s, v]) => { const e = document.querySelector(s); e.value = v;"
             " e.dispatchEvent(new Event('input', {bubbles: true})); }")
    pg.evaluate(slide, ["#year-lo", "2020"])
    pg.evaluate(slide, ["#year-hi", "2024"])
    years = {p["id"]: p.get("year") for p in PAPERS}
    year_of = {pid: years.get(pid, 2025) for pid, _, _ in drawn}  # the seeds are 2025
    want = sorted(pid for pid, y in year_of.items()
                  if pid == "d3" or (y is not None and 2020 <= y <= 2024))
    # Cytoscape restyles on its own schedule: wait for the drawing to show it
    pg.wait_for_function(f"want => JSON.stringify({visible}.sort()) === JSON.stringify(want)",
                         arg=want, timeout=30_000)
    shown = set(pg.evaluate(visible))
    assert shown == set(want)
    assert {"d1", "d5", "d6"}.isdisjoint(shown) and {"d2", "d4"} <= shown
    assert pg.inner_text("#years-label") == "2020 – 2024"
    hidden = len(drawn) - len(shown)
    assert f"{hidden} papers drawn outside it" in pg.inner_text("#years-msg")
    # an end dragged past the other pushes it
    pg.evaluate(slide, ["#year-lo", "2025"])
    assert pg.inner_text("#years-label") == "2025"

    # the docs' screenshot: the topic map, the range 2020-2026, the panel of d3's topic
    pg.evaluate(slide, ["#year-lo", "2020"])
    pg.evaluate(slide, ["#year-hi", "2026"])
    pg.check("#colour-topic")
    pg.click(f"#topic-list .topic-entry[data-id='{topic_of['d3']}']")
    pg.locator("#detail .bars").wait_for()
    pg.click("#fit")  # focusing d1 above panned the drawing
    pg.locator("#paper-legend").scroll_into_view_if_needed()
    pg.screenshot(path=str(SCREENSHOT.with_name("explorer-topics.png")))
    assert tab.errors == []
