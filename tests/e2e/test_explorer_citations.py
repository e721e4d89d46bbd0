"""The explorer's citation view in a real headless Chromium against ``citegraph serve``.

The seed graph has no references and one year, so the server here holds a copy of it plus
six JSONL papers with years, authors and references (to each other, to a seed paper and to
outside works), added by the real CLI (``citegraph add``, real model). The page must size
papers by their in-corpus citations, colour them by year with a legend of the scale, draw
outside works apart, and list a paper's prior and derivative works and authors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import SCREENSHOT, Page, Server
from tests.e2e.test_explorer import DRAWN

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SEED = "p-3419b050ee17"  # "Latent diffusion inverse solver" (ICLR 2025), in the seeds
DDPM = "arXiv:2006.11239"  # an outside work, cited by three of the papers below
BM3D = "10.1109/TIP.2007.901238"  # an outside work by DOI
AUTHORS = ["Mira Okafor", "Jonas Lindqvist", "Wei Chen"]

PAPERS: list[dict[str, Any]] = [
    {
        "id": "d1", "year": 2017, "title": "Score matching priors for image denoising",
        "references": [f"doi:{BM3D}"],
        "abstract": "We learn the gradient of the log density of natural images with denoising "
        "score matching and use it as a prior for image restoration. Annealed Langevin "
        "dynamics on the learned score removes Gaussian noise at several levels without "
        "retraining, and matches classical patch-based denoisers on standard benchmarks.",
    },
    {
        "id": "d2", "year": 2020, "title": "Noise-conditioned score networks for deblurring",
        "references": ["d1", DDPM],
        "abstract": "A single noise-conditioned score network is trained on clean images and "
        "applied to non-blind deblurring by alternating a data-consistency step on the "
        "blur kernel with reverse diffusion steps. The method needs no paired data and "
        "generalises across blur kernels unseen in training.",
    },
    {
        "id": "d3", "year": 2022,
        "title": "Diffusion posterior sampling for linear inverse problems",
        "references": ["d1", "d2", DDPM], "authors": AUTHORS,
        "abstract": "We solve noisy linear inverse problems such as inpainting, super-resolution "
        "and compressed sensing with a pretrained diffusion model as the prior. Posterior "
        "sampling approximates the likelihood gradient through the denoised estimate at "
        "each reverse step, which keeps samples on the data manifold and is robust to "
        "measurement noise.",
    },
    {
        "id": "d4", "year": 2024,
        "title": "Latent-space guidance for diffusion-based reconstruction",
        "references": ["d1", "d2", "d3"],
        "abstract": "Guiding a latent diffusion model with measurement consistency in the "
        "decoder's output space reconstructs high-resolution images from few measurements. "
        "We analyse when the encoder's approximation breaks posterior sampling and propose "
        "a corrected guidance term for medical imaging reconstruction.",
    },
    {
        "id": "d5", "title": "A survey of score-based priors in computational imaging",
        "references": ["d1", "d3"],
        "abstract": "This survey reviews score-based and diffusion generative priors for "
        "computational imaging: denoising, deblurring, tomography and phase retrieval. We "
        "compare sampling schemes, data-consistency steps and their computational cost, "
        "and list open problems in uncertainty quantification.",
    },
    {
        "id": "d6", "year": 2026,
        "title": "Benchmarking diffusion inverse solvers under model mismatch",
        "references": ["d3", SEED, DDPM],
        "abstract": "We benchmark diffusion-based inverse problem solvers when the forward "
        "operator or the noise level at test time differs from the one assumed. Posterior "
        "sampling degrades gracefully for small mismatch, while latent solvers fail on "
        "strong blur; a simple operator-estimation step restores most of the gap.",
    },
]
OUTSIDE = {"work:arxiv:2006.11239", f"work:doi:{BM3D.lower()}"}
#: how many corpus papers cite each paper: the ground truth the page must show
CITED_BY = {
    pid: sum(pid in p["references"] for p in PAPERS) for pid in [p["id"] for p in PAPERS] + [SEED]
}
NO_YEAR = "rgb(203,213,224)"  # app.js NO_YEAR
OLDEST = "rgb(246,224,94)"  # app.js OLD: the oldest year drawn
NEWEST = "rgb(43,108,176)"  # the registry's paper colour (graph/schema.py): the newest year drawn


def draw(p: Page, server: Server, node: str) -> Any:
    """Open the page on ``#node=<node>`` and wait for the drawing and the side panel."""
    page = p.page
    page.goto(f"{server.url}/#node={node}")
    page.wait_for_function("window.citegraph !== undefined")
    page.wait_for_function(f"{DRAWN}.getElementById({json.dumps(node)}).nonempty()")
    page.wait_for_function(
        f"{DRAWN}.nodes('[kind = \"PAPER\"], [kind = \"WORK\"]')"
        ".every(n => n.data('cites') !== undefined)"
    )
    return page


def rgb(css: str) -> str:
    return css.replace(" ", "")


def test_papers_sized_by_citations_coloured_by_year_with_a_legend(
    tab: Page, cited_server: Server, tmp_path: Path
) -> None:
    pg = draw(tab, cited_server, "d3")
    # colour by year (the topic map is the default: tests/e2e/test_explorer_topics.py)
    pg.check("#colour-year")
    drawn: list[list[Any]] = pg.evaluate(
        f"{DRAWN}.nodes('[kind = \"PAPER\"]').map(n => [n.id(), n.data('cites'), n.data('year'),"
        " n.width(), n.style('background-color')])"
    )
    ids = {d[0] for d in drawn}
    assert {"d1", "d2", "d4", "d5", "d6"} <= ids, "d3's citing and cited papers are drawn"
    years = {p["id"]: p.get("year") for p in PAPERS}
    for pid, cites, year, _, _ in drawn:
        assert cites == CITED_BY.get(pid, 0), pid
        assert year == years.get(pid, 2025), pid  # the seeds are ICLR 2025
    # size grows with in-corpus citations, and only with them
    for a in drawn:
        for b in drawn:
            if a[1] > b[1]:
                assert a[3] > b[3], (a, b)
            elif a[1] == b[1]:
                assert a[3] == b[3], (a, b)
    # colour is the year: the oldest and newest drawn take the scale's ends, one year one
    # colour, a year-less paper the neutral grey
    colour = {d[0]: rgb(d[4]) for d in drawn}
    dated = [d for d in drawn if d[2] is not None]
    lo, hi = min(d[2] for d in dated), max(d[2] for d in dated)
    assert (lo, hi) == (2017, 2026)
    assert colour["d1"] == OLDEST and colour["d6"] == NEWEST
    assert colour["d5"] == NO_YEAR
    by_year: dict[int, set[str]] = {}
    for d in dated:
        by_year.setdefault(d[2], set()).add(colour[d[0]])
    assert all(len(c) == 1 for c in by_year.values()), by_year
    assert len({c for cs in by_year.values() for c in cs} | {NO_YEAR}) == len(by_year) + 1
    # the legend says the scale, the neutral colour and what size means
    legend = " ".join(pg.inner_text("#paper-legend").split())
    assert "colour = year" in legend and "2017" in legend and "2026" in legend
    assert "no year" in legend
    assert "Size = citations from papers in the graph" in legend
    ramp = pg.get_attribute("#year-scale .ramp", "style") or ""
    assert "linear-gradient" in ramp
    grey = pg.evaluate("getComputedStyle(document.querySelector('#no-year')).backgroundColor")
    assert rgb(grey) == NO_YEAR
    # an outside work is drawn hollow and dashed, sized by its citers too
    work = pg.evaluate(
        f"(() => {{ const n = {DRAWN}.getElementById('work:arxiv:2006.11239');"
        " return [n.data('kind'), n.data('cites'), n.style('background-color'),"
        " n.style('border-style'), n.width()]; })()"
    )
    zero = next(d[3] for d in drawn if d[1] == 0)
    assert [work[0], work[1], rgb(work[2]), work[3]] == ["WORK", 3, "rgb(255,255,255)", "dashed"]
    assert work[4] > zero
    assert tab.errors == []


def test_panel_lists_prior_and_derivative_works_and_authors(
    tab: Page, cited_server: Server, tmp_path: Path
) -> None:
    sent: list[str] = []  # the operation of every GraphQL request the page sends

    def operation(req: Any) -> None:
        if req.url.endswith("/graphql"):
            sent.append(json.loads(req.post_data or "{}").get("query", "").split("(")[0].split()[1])

    tab.page.on("request", operation)
    pg = draw(tab, cited_server, "d3")
    pg.locator("#detail .works.prior li").first.wait_for()
    # a draw with its panel: the registry, the link's node, two neighbourhoods (all types;
    # concepts and datasets), one read of years and citations, one of the paper with its
    # prior and derivative works
    assert sorted(sent) == sorted(
        ["Registry", "Node", "Neighborhood", "Neighborhood", "Citations", "Paper"]
    ), sent
    prior = pg.eval_on_selector_all("#detail .works.prior li", "ls => ls.map(l => l.dataset.id)")
    derivative = pg.eval_on_selector_all(
        "#detail .works.derivative li", "ls => ls.map(l => l.dataset.id)"
    )
    assert set(prior) == {"d1", "d2", "work:arxiv:2006.11239"}
    assert set(derivative) == {p["id"] for p in PAPERS if "d3" in p["references"]}
    assert pg.inner_text("#detail .authors") == ", ".join(AUTHORS)
    assert "Cited by 3 papers in the graph" in pg.inner_text("#detail")
    # an outside work reads as one and links to its arXiv page
    item = pg.locator("#detail .works.prior li[data-id='work:arxiv:2006.11239']")
    assert "outside work" in item.inner_text()
    assert item.locator("a").get_attribute("href") == "https://arxiv.org/abs/2006.11239"
    # the docs' screenshot: d3 drawn, coloured by year, its panel scrolled to its citations
    pg.check("#colour-year")
    pg.locator("#detail h4", has_text="Prior works").scroll_into_view_if_needed()
    pg.screenshot(path=str(SCREENSHOT.with_name("explorer-citations.png")))

    # a prior work on screen is focused, not redrawn
    pg.click("#detail .works.prior li[data-id='d1'] button")
    pg.wait_for_function("window.citegraph.state.selected === 'd1'")
    pg.locator("#detail h3", has_text=PAPERS[0]["title"]).wait_for()
    assert pg.evaluate("window.citegraph.state.root") == "d3"
    pg.locator("#detail .works.derivative li").first.wait_for()
    d1_derivative = pg.eval_on_selector_all(
        "#detail .works.derivative li", "ls => ls.map(l => l.dataset.id)"
    )
    assert set(d1_derivative) == {p["id"] for p in PAPERS if "d1" in p["references"]}
    assert pg.inner_text("#detail .authors") == "(none given)"

    # an outside work's own panel: its link and the corpus papers citing it
    pg.evaluate("window.citegraph.focus('work:arxiv:2006.11239')")
    pg.locator("#detail h4", has_text="Cited by").wait_for()
    assert pg.text_content("#detail .kind") == "Outside work"
    citers = pg.eval_on_selector_all("#detail .works li", "ls => ls.map(l => l.dataset.id)")
    assert set(citers) == {p["id"] for p in PAPERS if DDPM in p["references"]}
    assert pg.get_attribute("#detail a[href*='arxiv.org']", "href") == (
        "https://arxiv.org/abs/2006.11239"
    )
    assert tab.errors == []


def test_an_outside_work_drawn_from_a_link(tab: Page, cited_server: Server) -> None:
    """A work is a node like any other: ``#node=work:…`` draws it among its citers."""
    work = f"work:doi:{BM3D.lower()}"
    assert work in OUTSIDE
    pg = draw(tab, cited_server, work)
    pg.locator("#detail h4", has_text="Cited by (1)").wait_for()
    assert pg.get_attribute("#detail a[href*='doi.org']", "href") == f"https://doi.org/{BM3D.lower()}"
    drawn = pg.evaluate(f"{DRAWN}.nodes('[kind = \"PAPER\"]').map(n => n.id())")
    assert "d1" in drawn
    assert tab.errors == []
