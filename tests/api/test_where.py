"""``where``, ``sort`` and ``papersAggregate`` over HTTP (issue 44 part 3).

An app over a store holding the contract suite's filter graph (hostile ids, venues and
titles): every answer is compared with a brute-force pass over the same graph, and
hostile inputs get an error naming the argument, never a 500.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.ids import raw_id
from graph.query.filters import CountBy, PaperFilter, PaperOrder, PaperSort
from graph.settings import Settings
from graph.store.memory import NetworkxStore
from tests.api.conftest import GQL
from tests.contract.test_filters import brute_counts, brute_ids, brute_sorted, filter_graph

PAGE = """query($where: PaperWhere, $sort: [PaperSort!], $first: Int!) {
  papers(where: $where, sort: $sort, first: $first) { totalCount edges { node { key } } } }"""


@pytest.fixture(scope="module")
def graph() -> dict[str, Any]:
    return filter_graph()[1]


@pytest.fixture(scope="module")
def wgql(settings: Settings) -> Iterator[GQL]:
    store = NetworkxStore()
    store.apply(filter_graph()[0])
    with TestClient(create_app(settings, opener=lambda _s: store)) as c:
        yield GQL(c)


def _same(key: str) -> Any:
    return key


@pytest.mark.parametrize(("where", "domain"), [
    ({}, PaperFilter()),
    ({"year": {"gte": 2017, "lte": 2020}}, PaperFilter(2017, 2020)),
    ({"year": {"eq": 2019}, "venue": {"in": ["ICLR", "Neur'IPS", ""]}},
     PaperFilter(2019, 2019, venues=("ICLR", "Neur'IPS", ""))),
    # a concept and a dataset by name or id (the lookup the other arguments use)
    ({"concept": {"in": ["o'neil", "concept:gnn"]}, "dataset": {"eq": "Cora"}},
     PaperFilter(concepts=("concept:o'neil", "concept:gnn"), datasets=("dataset:cora",))),
    # a topic by label, a subtopic by id: papers IN_TOPIC of either
    ({"topic": {"in": ["Café o'neil", "topic:0.1"]}},
     PaperFilter(topics=("topic:1", "topic:0.1"))),
])
def test_papers_where_and_sort_are_the_brute_force_answer(
    wgql: GQL, graph: dict[str, Any], where: dict[str, Any], domain: PaperFilter
) -> None:
    want = brute_ids(graph, domain)
    assert want  # each case matches something
    for sort, key in [(None, None), ([{"year": "DESC"}], PaperSort(PaperOrder.YEAR, True)),
                      ([{"title": "ASC"}], PaperSort(PaperOrder.TITLE)),
                      ([{"citations": "DESC"}], PaperSort(PaperOrder.CITATIONS, True)),
                      ([{"importance": "DESC"}], PaperSort(PaperOrder.IMPORTANCE, True)),
                      ([{"importance": "ASC"}], PaperSort(PaperOrder.IMPORTANCE))]:
        data = wgql.data(PAGE, where=where, sort=sort, first=4)["papers"]
        expected = brute_sorted(graph, want, key, _same)
        assert data["totalCount"] == len(expected)
        assert [e["node"]["key"] for e in data["edges"]] == expected[:4]


def test_papers_aggregate_counts_under_a_where(wgql: GQL, graph: dict[str, Any]) -> None:
    data = wgql.data("""{ papersAggregate(where: {year: {gte: 2016}}) { count
        years: countsBy(field: YEAR, first: 50) { key count year }
        venues: countsBy(field: VENUE, first: 3) { key count }
        concepts: countsBy(field: CONCEPT, first: 2) { key count concept { name } }
        topics: countsBy(field: TOPIC) { key count topic { label } } } }""")
    agg = data["papersAggregate"]
    where = PaperFilter(year_from=2016)
    assert agg["count"] == len(brute_ids(graph, where))
    years = brute_counts(graph, where, CountBy.YEAR, 50, _same)
    assert agg["years"] == [{"key": str(g.key), "count": g.count, "year": g.key} for g in years]
    venues = brute_counts(graph, where, CountBy.VENUE, 3, _same)
    assert agg["venues"] == [{"key": g.key, "count": g.count} for g in venues]
    concepts = brute_counts(graph, where, CountBy.CONCEPT, 2, _same)
    names = {c.id: c.label for c in graph["concepts"]}
    assert agg["concepts"] == [{"key": g.key, "count": g.count,
                                "concept": {"name": names[str(g.key)]}} for g in concepts]
    # by top-level topic only: the subtopics are not groups
    topics = brute_counts(graph, where, CountBy.TOPIC, 20, _same)
    labels = {t.id: t.name for t in graph["topics"]}
    assert {g.key for g in topics} == {"topic:0", "topic:1"}
    assert agg["topics"] == [{"key": g.key, "count": g.count,
                              "topic": {"label": labels[str(g.key)]}} for g in topics]


def test_lists_take_where_and_the_deprecated_arguments(wgql: GQL, graph: dict[str, Any]) -> None:
    # keyword search ranks within the filtered papers: a narrow filter still fills `first`
    where = PaperFilter(year_from=2021, year_to=2022)
    matching = brute_ids(graph, where)
    assert len(matching) >= 3
    new = wgql.data("""{ search(query: "label", first: 3, where: {year: {gte: 2021, lte: 2022}})
        { node { ... on Paper { key } } } }""")["search"]
    old = wgql.data("""{ search(query: "label", first: 3, yearFrom: 2021, yearTo: 2022)
        { node { ... on Paper { key } } } }""")["search"]
    assert new == old and len(new) == 3
    assert {h["node"]["key"] for h in new} <= {p.id for p in matching}
    # citation lists: where and sort, as the store computes them
    seeds = [p.id for p in graph["papers"][:6]]
    got = wgql.data("""query($ids: [ID!]!) { derivativeWorks(ids: $ids, first: 50,
        where: {year: {gte: 2016}}, sort: [{year: ASC}]) {
        node { ... on Paper { key year } } } }""",
        ids=seeds)["derivativeWorks"]
    years = [x["node"]["year"] for x in got]
    assert got and years == sorted(years) and min(years) >= 2016
    # a neighbourhood keeps the kinds asked for
    hub = max(seeds, key=lambda p: sum(p in (s, t) for s, t, typ in graph["edges"]
                                       if typ.value == "CITES"))
    sub = wgql.data("""query($id: ID!) { neighborhood(id: $id, where: {kind: {in: [PAPER]}})
        { nodes { kind } } }""", id=hub)["neighborhood"]
    assert len(sub["nodes"]) > 1 and {n["kind"] for n in sub["nodes"]} == {"PAPER"}
    # paper fields drop the papers they refuse; concepts, datasets and topics stay
    whole = wgql.data("""query($id: ID!) { neighborhood(id: $id, depth: 2) { nodes { id kind } }
        }""", id=hub)["neighborhood"]["nodes"]
    recent = wgql.data("""query($id: ID!) { neighborhood(id: $id, depth: 2,
        where: {year: {gte: 2020}}) { nodes { id kind } edges { source target } } }""",
        id=hub)["neighborhood"]
    years = {p.id: p.year for p in graph["papers"]}
    kept = [raw_id(n["id"]) for n in recent["nodes"]]
    assert kept == [raw_id(n["id"]) for n in whole if n["kind"] in ("CONCEPT", "DATASET", "TOPIC")
                    or raw_id(n["id"]) == hub or (years.get(raw_id(n["id"])) or 0) >= 2020]
    assert any(n["kind"] == "CONCEPT" for n in recent["nodes"]) and len(kept) < len(whole)


@pytest.mark.parametrize(("query", "says"), [
    ("{ papers(where: {year: {gte: 2021, lte: 2019}}) { totalCount } }", "where.year"),
    ("{ papers(where: {concept: {eq: \"no such concept\"}}) { totalCount } }", "where.concept"),
    ("{ papers(where: {venue: {in: [" + ",".join(f'"v{i}"' for i in range(1000))
     + "]}}) { totalCount } }", "where.venue.in"),
    ("{ papers(where: {topic: {eq: \"topic:9\"}}) { totalCount } }", "where.topic"),
    ("{ papers(sort: [{year: ASC, title: DESC}]) { totalCount } }", "exactly one"),
    ("{ papers(sort: [{year: ASC}, {title: DESC}]) { totalCount } }", "one key"),
    ("{ papers(where: {year: {gte: 1}}, filter: {year: 2019}) { totalCount } }", "not both"),
    ("{ papersAggregate { countsBy(field: CONCEPT, first: 0) { key } } }", "first"),
    ("{ topics(level: 3) { totalCount } }", "level"),
    ("{ topics(level: 0) { totalCount } }", "level"),
    ("{ search(query: \"x\", kinds: [CONCEPT], where: {year: {gte: 2020}}) { score } }",
     "papers only"),
])
def test_hostile_inputs_get_clear_errors(wgql: GQL, query: str, says: str) -> None:
    errors = wgql.errors(query)
    assert says in errors[0]["message"], errors
    assert "Internal" not in errors[0]["message"]


def test_an_empty_in_admits_nothing(wgql: GQL) -> None:
    data = wgql.data("""{ papers(where: {venue: {in: []}}) { totalCount }
        search(query: "label", where: {concept: {in: []}}) { score }
        papersAggregate(where: {kind: {in: []}}) { count countsBy(field: YEAR) { key } } }""")
    assert data == {"papers": {"totalCount": 0}, "search": [],
                    "papersAggregate": {"count": 0, "countsBy": []}}


def test_eq_and_in_hold_together_as_in_neo4j_graphql(wgql: GQL, graph: dict[str, Any]) -> None:
    """Operators of one field hold together (AND), and so do the deprecated arguments with
    `where` (an outside probe found `eq` and `in` read as OR, unlike @neo4j/graphql)."""
    venues = sorted({p.venue for p in graph["papers"] if p.venue})
    a, b = venues[0], venues[1]
    count = "query($w: PaperWhere) { papers(where: $w) { totalCount } }"

    def total(where: dict[str, Any]) -> int:
        return int(wgql.data(count, w=where)["papers"]["totalCount"])

    only_a = len(brute_ids(graph, PaperFilter(venues=(a,))))
    assert only_a > 0
    assert total({"venue": {"eq": a, "in": [b]}}) == 0
    assert total({"venue": {"eq": a, "in": [a, b]}}) == only_a
    assert total({"concept": {"eq": "concept:gnn", "in": ["o'neil"]}}) == 0
    old_and_new = wgql.data("""query($a: String!, $b: String!) {
        both: search(query: "label", venue: $a, where: {venue: {eq: $b}}) { score }
        one: search(query: "label", venue: $a, where: {venue: {in: [$a, $b]}}) { score } }""",
        a=a, b=b)
    assert old_and_new["both"] == [] and old_and_new["one"]


def test_a_where_counts_in_the_query_cost(settings: Settings) -> None:
    from api.graphql.limits import WHERE_VALUE, call_cost

    caps = {"where": 100, "ids": 100}
    plain, _ = call_cost("Query", "papers", {}, caps)
    many, _ = call_cost("Query", "papers", {"where": {"venue": {"in": ["v"] * 1000}}}, caps)
    assert many - plain >= 100 * WHERE_VALUE  # counted up to the cap (then refused)
    agg, _ = call_cost("PaperAggregate", "countsBy", {"field": "CONCEPT"}, caps)
    assert agg > 0
