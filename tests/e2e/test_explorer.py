"""The explorer page in a real headless Chromium against ``citegraph serve`` on the seed graph."""

from __future__ import annotations

import io
import json
import re
import shutil
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from graph.model import NodeKind, RelType
from tests.e2e.conftest import SCREENSHOT, Page, Server

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DRAWN = "window.citegraph.cy"


def open_page(p: Page, server: Server, hash_: str = "") -> Any:
    page = p.page
    page.goto(f"{server.url}/{hash_}")
    page.wait_for_function("window.citegraph !== undefined")
    page.locator("#conn", has_text="Connected").wait_for()
    return page


def search(page: Any, query: str, kind: str = "", mode: str = "KEYWORD") -> None:
    page.select_option("#search-mode", mode)
    page.select_option("#search-kind", kind)
    page.fill("#search-input", query)
    page.click("#search-form button[type=submit]")
    page.wait_for_function(
        "!document.querySelector('#results-msg').textContent.startsWith('Searching')"
    )


def choose(page: Any, node_id: str) -> None:
    page.click(f"#results button.result[data-id='{node_id}']")
    page.wait_for_function(f"{DRAWN}.getElementById({json.dumps(node_id)}).nonempty()")
    page.wait_for_function(f"{DRAWN}.edges().length > 0")


def first_paper(server: Server, query: str) -> str:
    hits = server.store.keyword_search(query, [NodeKind.PAPER], 1)
    assert hits, f"the seed graph has no paper matching {query!r}"
    return hits[0].node.id


def test_page_loads_without_console_errors(tab: Page, seed_server: Server) -> None:
    pg = open_page(tab, seed_server)
    assert pg.title() == "citegraph explorer"
    # Labels for every input, a legend for node kinds and toggles for edge types.
    for control in ("#search-input", "#search-mode", "#search-kind", "#depth"):
        cid = control[1:]
        assert pg.locator(f"label[for='{cid}']").count() == 1, f"{control} has no label"
    from graph.schema import EDGE_TYPES, NODE_KINDS

    assert pg.locator("#node-legend li").count() == len(NODE_KINDS)
    assert pg.locator("#edge-toggles input[type=checkbox]").count() == len(EDGE_TYPES)
    # An empty canvas says what to do, in words.
    assert "Search above" in pg.inner_text("#overlay")
    pg.wait_for_timeout(300)
    assert tab.errors == []


def test_search_lists_results_and_draws_a_neighbourhood(
    tab: Page, seed_server: Server, tmp_path: Path
) -> None:
    pg = open_page(tab, seed_server)
    search(pg, "diffusion")
    results = pg.locator("#results button.result")
    assert results.count() > 0, pg.inner_text("#results-msg")
    assert "diffusion" in pg.inner_text("#results-msg")

    paper = first_paper(seed_server, "diffusion")
    search(pg, "diffusion", kind="PAPER")
    choose(pg, paper)
    nodes = pg.evaluate(f"{DRAWN}.nodes().length")
    edges = pg.evaluate(f"{DRAWN}.edges().length")
    assert nodes >= 1 and edges >= 1
    # Node kinds are told apart in the drawing: papers and concepts both on screen.
    kinds = set(pg.evaluate(f"{DRAWN}.nodes().map(n => n.data('kind'))"))
    assert {"PAPER", "CONCEPT"} <= kinds
    # The side panel reads the selected paper: abstract, concepts, related with reasons.
    pg.locator("#detail .abstract").wait_for()
    assert seed_server.store.get_nodes([paper])[paper].label in pg.inner_text("#detail h3")
    assert pg.locator("#detail .chips .chip.concept").count() > 0
    assert pg.locator("#detail .related .reasons li").count() > 0

    # Edge types toggle: hiding SIMILAR_TO hides exactly those edges.
    similar_edges = f"{DRAWN}.edges('[type = \"SIMILAR_TO\"]')"
    similar = pg.evaluate(f"{similar_edges}.length")
    pg.uncheck("#toggle-SIMILAR_TO")
    # the canvas restyles asynchronously: wait (bounded) for the edges to go
    pg.wait_for_function(
        f"() => {similar_edges}.filter(e => !e.visible()).length === {similar}", timeout=10_000
    )
    assert pg.evaluate(f"{similar_edges}.filter(e => e.visible()).length") == 0
    pg.check("#toggle-SIMILAR_TO")

    # Clicking a node expands it along the edge types on screen (RELATED_TO is off, so no
    # concept appears whose only edge would be hidden): the node drawn with most unseen
    # neighbours over those types is clicked, and only such neighbours are added.
    before = pg.evaluate(f"{DRAWN}.nodes().length")
    drawn = set(pg.evaluate(f"{DRAWN}.nodes().map(n => n.id())"))
    store = seed_server.store
    shown = [t for t in RelType if t is not RelType.RELATED_TO]

    def unseen_of(nid: str) -> set[str]:
        return {n.id for n in store.neighborhood([nid], 1, shown, limit=500).nodes} - drawn

    concept = max(sorted(drawn), key=lambda n: len(unseen_of(n)))
    unseen = unseen_of(concept)
    assert unseen, "every drawn node's neighbours are already on screen"
    pos = pg.evaluate(
        f"(() => {{ const p = {DRAWN}.getElementById({json.dumps(concept)}).renderedPosition();"
        " const r = document.querySelector('#cy').getBoundingClientRect();"
        " return [r.left + p.x, r.top + p.y]; })()"
    )
    pg.mouse.click(*pos)
    pg.wait_for_function(f"{DRAWN}.nodes().length > {before}")
    added = set(pg.evaluate(f"{DRAWN}.nodes().map(n => n.id())")) - drawn
    assert added and added <= unseen  # only neighbours over the types shown were added
    pg.click("#fit")
    pg.wait_for_timeout(300)

    pg.screenshot(path=str(tmp_path / "explorer.png"))
    assert tab.errors == []
    # Reselect the chosen paper so the screenshot for the docs shows it in the panel.
    pg.evaluate(f"window.citegraph.focus({json.dumps(paper)})")
    pg.locator("#detail .abstract").wait_for()
    pg.wait_for_timeout(300)
    pg.screenshot(path=str(SCREENSHOT))
    shutil.copyfile(SCREENSHOT, tmp_path / "explorer-docs.png")
    assert SCREENSHOT.stat().st_size > 10_000
    assert tab.errors == []


def test_path_between_two_papers_is_highlighted(
    tab: Page, seed_server: Server, tmp_path: Path
) -> None:
    a = first_paper(seed_server, "diffusion")
    b = first_paper(seed_server, "self-distillation")
    expected = seed_server.store.shortest_path(a, b, None, 6)
    assert expected is not None and expected.hops >= 1

    pg = open_page(tab, seed_server)
    search(pg, "diffusion", kind="PAPER")
    choose(pg, a)
    pg.click("#detail button:has-text('Path from here')")
    search(pg, "self-distillation", kind="PAPER", mode="KEYWORD")
    pg.click(f"#results button.result[data-id='{b}']")
    pg.wait_for_function(f"{DRAWN}.getElementById({json.dumps(b)}).nonempty()")
    pg.click("#detail button:has-text('Path to here')")
    pg.wait_for_function(f"{DRAWN}.edges('.path').length > 0")

    on_path = pg.evaluate(f"{DRAWN}.nodes('.path').map(n => n.id())")
    assert set(on_path) == {n.id for n in expected.nodes}
    assert pg.evaluate(f"{DRAWN}.edges('.path').length") == expected.hops
    # Each hop is listed with its reason.
    hops = pg.locator("#path-hops li")
    assert hops.count() == expected.hops
    for i in range(expected.hops):
        assert hops.nth(i).locator(".why").inner_text().strip(" —→")
    assert re.search(rf"{expected.hops} hops?", pg.inner_text("#path-msg"))
    # Exports now describe the path: one parameter per end (an id may hold a comma).
    href = pg.get_attribute("#export-graphml", "href") or ""
    assert href.count("path=") == 2 and "%2C" not in href
    with urllib.request.urlopen(urllib.parse.urljoin(f"{seed_server.url}/", href)) as resp:
        assert set(nx.read_graphml(io.BytesIO(resp.read())).nodes) == {n.id for n in expected.nodes}
    pg.screenshot(path=str(tmp_path / "explorer-path.png"))
    assert tab.errors == []


@pytest.mark.parametrize(
    ("link", "reader"),
    [
        ("#export-graphml", nx.read_graphml),
        ("#export-gexf", nx.read_gexf),
        ("#export-cytoscape", lambda f: nx.cytoscape_graph(json.loads(Path(f).read_text()))),
    ],
)
def test_export_link_gives_a_file_networkx_reads(
    tab: Page, seed_server: Server, tmp_path: Path, link: str, reader: Any
) -> None:
    paper = first_paper(seed_server, "diffusion")
    pg = open_page(tab, seed_server)
    search(pg, "diffusion", kind="PAPER")
    choose(pg, paper)
    with pg.expect_download() as dl:
        pg.click(link)
    target = tmp_path / dl.value.suggested_filename
    dl.value.save_as(target)
    g = reader(str(target))
    assert paper in g.nodes
    drawn = set(pg.evaluate(f"{DRAWN}.nodes().map(n => n.id())"))
    assert drawn == set(g.nodes), "the export holds exactly the nodes on screen"
    assert g.number_of_edges() > 0
    assert tab.errors == []


def test_empty_states_are_said_in_words(tab: Page, seed_server: Server) -> None:
    pg = open_page(tab, seed_server)
    search(pg, "zzqxqzzy", mode="KEYWORD")
    assert "No results" in pg.inner_text("#results-msg")
    assert pg.locator("#results li").count() == 0

    pg.goto(f"{seed_server.url}/#node=p-does-not-exist")
    pg.locator("#overlay.error").wait_for()
    assert "no node with id" in pg.inner_text("#overlay").lower()
    assert tab.errors == []


def test_unreachable_server_is_said_in_words(tab: Page, seed_server: Server) -> None:
    pg = open_page(tab, seed_server)
    pg.route("**/graphql", lambda route: route.abort())
    search(pg, "diffusion")
    assert "cannot be reached" in pg.inner_text("#results-msg")
    assert "unreachable" in pg.inner_text("#conn").lower()
    # The blank canvas says it too.
    assert "cannot be reached" in pg.inner_text("#overlay")


@pytest.mark.parametrize("bad", ["%E0%A4%A", "%", "%ZZ", "%ED%BF%BF", "p-1%E0"])
def test_malformed_node_hash_is_ignored(tab: Page, seed_server: Server, bad: str) -> None:
    """Issue 15, defect 10: a malformed ``#node=`` link threw "URI malformed" over and over."""
    pg = open_page(tab, seed_server, f"#node={bad}")
    # the page still works: a later hashchange to another bad link, then a good one
    pg.evaluate(f"location.hash = 'node={bad}x'")
    pg.wait_for_timeout(300)
    assert tab.errors == [], tab.errors
    paper = first_paper(seed_server, "diffusion")
    pg.evaluate(f"location.hash = 'node=' + encodeURIComponent({json.dumps(paper)})")
    pg.wait_for_function(f"{DRAWN}.getElementById({json.dumps(paper)}).nonempty()")
    assert tab.errors == [], tab.errors


def test_a_concept_panel_lists_the_papers_about_it_strongest_first(
    tab: Page, seed_server: Server
) -> None:
    """Issue 13: the panel used to count only the papers on screen ("joined to it (0)")."""
    store = seed_server.store
    concepts = store.list_nodes(NodeKind.CONCEPT, limit=10_000)[0]
    concept = max(concepts, key=lambda c: (len(store.edges_of([c.id], [RelType.MENTIONS])), c.id))
    mentions = store.edges_of([concept.id], [RelType.MENTIONS])
    assert len(mentions) >= 3, "the seeds have no concept that several papers mention"
    pg = open_page(tab, seed_server, f"#node={concept.id}")
    pg.locator("#detail h4").filter(has_text="Papers about it").wait_for()
    chips = pg.locator("#detail .chips .chip.paper")
    assert chips.count() == min(25, len({e.source for e in mentions}))
    strongest = max(e.weight for e in mentions)
    first = chips.first.get_attribute("title")
    assert {e.source: e.weight for e in mentions}[first] == strongest
    # every drawn node has a visible edge: RELATED_TO is off, so no concept ring is drawn
    drawn = pg.evaluate(f"{DRAWN}.nodes(':visible').map(n => n.data('kind'))")
    assert drawn and set(drawn) <= {"PAPER", "CONCEPT"}
    assert drawn.count("CONCEPT") == 1
    assert tab.errors == []


def test_legend_and_colours_come_from_the_registry(tab: Page, seed_server: Server) -> None:
    """Issue 14: the page keeps no list of its own; it draws what the server's registry says.

    The registry answer is changed on its way to the page (a colour, a wording, a type
    that does not exist, one shown type turned off): the page must follow every change.
    """
    from graph.schema import EDGE_TYPES, NODE_KINDS

    def change(route: Any) -> None:
        body = route.request.post_data or ""
        if "query Registry" not in body:
            route.continue_()
            return
        answer = route.fetch().json()
        data = answer["data"]
        for t in data["edgeTypes"]:
            if t["type"] == "CITES":
                t["color"], t["name"] = "#123456", "quotes"
            if t["type"] == "SIMILAR_TO":
                t["shown"] = False
        data["edgeTypes"].append(
            {"type": "SAME_AUTHOR", "name": "same author", "color": "#abcdef", "shown": True}
        )
        data["nodeKinds"][0]["color"] = "#654321"
        route.fulfill(json=answer)

    page = tab.page
    page.route("**/graphql", change)
    pg = open_page(tab, seed_server)
    toggles = pg.locator("#edge-toggles li")
    assert toggles.count() == len(EDGE_TYPES) + 1
    assert pg.inner_text("label[for='toggle-CITES']").strip() == "quotes"
    assert pg.inner_text("label[for='toggle-SAME_AUTHOR']").strip() == "same author"
    assert not pg.is_checked("#toggle-SIMILAR_TO")
    assert pg.is_checked("#toggle-SAME_AUTHOR")
    for spec in EDGE_TYPES.values():
        if spec.type not in (RelType.CITES, RelType.SIMILAR_TO):
            box = f"#toggle-{spec.type.value}"
            assert pg.is_checked(box) == spec.shown, spec.type
            assert pg.inner_text(f"label[for='toggle-{spec.type.value}']").strip() == spec.name
    line = pg.locator("label[for='toggle-CITES'] .line").get_attribute("style") or ""
    assert "#123456" in line.replace(" ", "").lower() or "rgb(18,52,86)" in line.replace(" ", "")
    # the swatches follow the CSS variables the registry sets
    first_kind = next(iter(NODE_KINDS.values()))
    var = pg.evaluate(
        "k => getComputedStyle(document.documentElement).getPropertyValue(`--${k}`).trim()",
        first_kind.kind.value.lower(),
    )
    assert var == "#654321"
    # the canvas too: a drawn paper has the changed colour, a drawn MENTIONS edge its own
    # (the made-up type is turned off first: the server's RelType enum does not know it)
    pg.uncheck("#toggle-SAME_AUTHOR")
    paper = first_paper(seed_server, "diffusion")
    search(pg, "diffusion", kind="PAPER")
    choose(pg, paper)
    colour = pg.evaluate(f"{DRAWN}.getElementById({json.dumps(paper)}).style('background-color')")
    assert colour.replace(" ", "") == "rgb(101,67,33)"
    mentions = EDGE_TYPES[RelType.MENTIONS].color.lstrip("#")
    want = "rgb({},{},{})".format(*(int(mentions[i : i + 2], 16) for i in (0, 2, 4)))
    got = pg.evaluate(f"{DRAWN}.edges('[type = \"MENTIONS\"]').first().style('line-color')")
    assert got.replace(" ", "") == want
    # and an edge reads as the server words it (graph/schema.py), not as the page would
    from graph.schema import hop_reason

    source, target, reason = pg.evaluate(
        f"(() => {{ const e = {DRAWN}.edges('[type = \"MENTIONS\"]').first().data();"
        " return [e.source, e.target, e.reason]; })()"
    )
    store = seed_server.store
    (edge,) = [e for e in store.edges_of([source], [RelType.MENTIONS]) if e.target == target]
    labels = {n.id: n.label for n in store.get_nodes([source, target]).values()}
    assert reason == hop_reason(edge, labels)
    assert tab.errors == []
