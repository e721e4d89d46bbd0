"""Every query kind, through HTTP, on the seed graph."""

from __future__ import annotations

import base64
import time

import pytest
from graphql import build_client_schema, get_introspection_query

from graph.model import NodeKind, Paper, RelType
from graph.store.memory import NetworkxStore
from tests.api.conftest import GQL

pytestmark = pytest.mark.slow


def test_health_and_ready(client) -> None:  # type: ignore[no-untyped-def]
    assert client.get("/healthz").json() == {"status": "ok"}
    # "starting" (503) while the warm-up reads the graph and loads the model, then ready
    seen = []
    for _ in range(1200):
        r = client.get("/readyz")
        seen.append((r.status_code, r.json()["status"], r.json().get("warming")))
        if r.status_code == 200:
            break
        time.sleep(0.1)
    assert seen[-1] == (200, "ready", None), seen[-5:]
    assert all(code == 503 and status == "starting" and warming
               for code, status, warming in seen[:-1]), seen
    assert client.get("/readyz").json() == {"status": "ready", "store": "embedded"}


def test_root_page_and_graphiql(client) -> None:  # type: ignore[no-untyped-def]
    assert client.get("/").status_code == 200
    page = client.get("/graphql", headers={"Accept": "text/html"})
    assert page.status_code == 200
    assert "graphiql" in page.text.lower()


def test_introspection_builds_a_client_schema(gql: GQL) -> None:
    data = gql.data(get_introspection_query(descriptions=True))
    schema = build_client_schema(data)
    assert schema.query_type is not None
    assert {"neighborhood", "shortestPath", "paths", "related", "search", "stats"} <= set(
        schema.query_type.fields
    )


def _papers(store: NetworkxStore) -> list[str]:
    nodes, _ = store.list_nodes(NodeKind.PAPER, limit=1000)
    return [n.id for n in nodes]


def test_node_by_global_and_raw_id(gql: GQL, seed_store: NetworkxStore) -> None:
    pid = _papers(seed_store)[0]
    global_id = base64.b64encode(f"Paper:{pid}".encode()).decode()
    for ref in (pid, global_id):
        node = gql.data("query($id: ID!) { node(id: $id) { id ... on Paper { key label } } }",
                        id=ref)["node"]
        label = seed_store.get_nodes([pid])[pid].label
        assert node == {"id": global_id, "key": pid, "label": label}
    paper = gql.data("query($id: ID!) { paper(id: $id) { key abstract } }", id=global_id)["paper"]
    assert paper["key"] == pid and paper["abstract"]


def test_nodes_keeps_order_and_reports_unknown(gql: GQL, seed_store: NetworkxStore) -> None:
    a, b = _papers(seed_store)[:2]
    body = gql.raw("query($ids: [ID!]!) { nodes(ids: $ids) { ... on Paper { key } } }",
                   ids=[b, "p-nope", a])
    assert body["data"]["nodes"] == [{"key": b}, None, {"key": a}]
    (err,) = body["errors"]
    assert err["path"] == ["nodes", 1]
    assert "p-nope" in err["message"] and err["extensions"]["code"] == "NOT_FOUND"


def test_unknown_id_is_null_with_a_clear_error(gql: GQL) -> None:
    body = gql.raw('{ paper(id: "p-doesnotexist") { key } }')
    assert body["data"] == {"paper": None}
    assert "p-doesnotexist" in body["errors"][0]["message"]
    assert body["errors"][0]["extensions"]["code"] == "NOT_FOUND"


def test_papers_connection_pages_and_filters(gql: GQL, seed_store: NetworkxStore) -> None:
    q = """query($after: String) { papers(first: 30, after: $after) { totalCount
      edges { cursor node { key } } pageInfo { hasNextPage endCursor } } }"""
    seen: list[str] = []
    after = None
    while True:
        page = gql.data(q, after=after)["papers"]
        seen += [e["node"]["key"] for e in page["edges"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen == _papers(seed_store)
    assert page["totalCount"] == len(seen)
    llm = gql.data("""{ papers(first: 100, filter: {concept: "LLM", text: "model"}) {
      totalCount edges { node { key abstract concepts { concept { key } } } } } }""")["papers"]
    assert llm["totalCount"] > 0
    for e in llm["edges"]:
        keys = {c["concept"]["key"] for c in e["node"]["concepts"]}
        assert "concept:large-language-model" in keys
        assert "model" in e["node"]["abstract"].lower()


def test_concept_resolves_aliases(gql: GQL, seed_store: NetworkxStore) -> None:
    expected = seed_store.find_node("LLM", [NodeKind.CONCEPT])
    assert expected is not None, "extraction should give the seeds an LLM concept"
    c = gql.data("""{ concept(name: "LLM") { key name aliases paperCount
      papers(first: 5) { totalCount edges { node { key } } }
      relatedConcepts(first: 3) { concept { name } weight count } } }""")["concept"]
    assert c["key"] == expected.id == "concept:large-language-model"
    assert "LLM" in c["aliases"]
    assert c["paperCount"] == c["papers"]["totalCount"] > 0
    assert len(c["relatedConcepts"]) == 3


def test_paper_edge_lists_carry_weights(gql: GQL, seed_store: NetworkxStore) -> None:
    pid = _papers(seed_store)[0]
    p = gql.data("""query($id: ID!) { paper(id: $id) {
      concepts { weight concept { name } } datasets { relation weight dataset { name } }
      similar(first: 3, minScore: 0.3) { score words rank paper { key } }
      sharesTerms(first: 3) { weight terms termWeights paper { key } }
      cites { key } citedBy { key } related(first: 2) { score paper { key } } } }""",
                 id=pid)["paper"]
    # the word overlap the list was ranked by, as stored on the edge (0 <= words <= 1)
    assert all(s["words"] is not None and 0.0 <= s["words"] <= 1.0 for s in p["similar"])
    stored = {e.target: e.attrs["words"] for e in seed_store.snapshot().edges.values()
              if e.type.value == "SIMILAR_TO" and e.source == pid}
    assert any(s["paper"]["key"] in stored for s in p["similar"])
    for s in p["similar"]:
        if s["paper"]["key"] in stored:
            assert s["words"] == stored[s["paper"]["key"]]
    assert p["concepts"] and all(c["weight"] > 0 for c in p["concepts"])
    assert p["similar"] and all(s["score"] >= 0.3 for s in p["similar"])
    # its own list first, in its stored order; then the papers that list it, by score
    ranked = [s for s in p["similar"] if s["rank"] is not None]
    assert p["similar"][: len(ranked)] == ranked
    assert [s["rank"] for s in ranked] == sorted(s["rank"] for s in ranked)
    own = sorted((e.attrs["rank"], e.target) for e in seed_store.snapshot().edges.values()
                 if e.type.value == "SIMILAR_TO" and e.source == pid and e.weight >= 0.3)
    assert [s["paper"]["key"] for s in ranked] == [t for _, t in own][: len(ranked)]
    rest = [s["score"] for s in p["similar"][len(ranked):]]
    assert rest == sorted(rest, reverse=True)
    assert p["sharesTerms"] and all(s["terms"] for s in p["sharesTerms"])
    assert pid not in {r["paper"]["key"] for r in p["related"]}


def test_search_keyword_semantic_hybrid(gql: GQL) -> None:
    kw = gql.data("""{ search(query: "diffusion", kinds: [PAPER], first: 5) {
      score node { ... on Paper { key abstract title } } } }""")["search"]
    assert kw
    for hit in kw:
        text = (hit["node"]["abstract"] + (hit["node"]["title"] or "")).lower()
        assert "diffusion" in text
    sem = gql.data("""{ search(query: "image generation with diffusion models",
      mode: SEMANTIC, first: 5) { score similarity node { ... on Paper { key abstract } } } }""")
    hits = sem["search"]
    assert len(hits) == 5
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    assert "diffusion" in hits[0]["node"]["abstract"].lower()
    hyb = gql.data("""{ search(query: "diffusion", mode: HYBRID, first: 5) {
      score keywordScore similarity node { id } } }""")["search"]
    assert len(hyb) == 5


def test_neighborhood_shape_and_cap(gql: GQL, seed_store: NetworkxStore) -> None:
    pid = _papers(seed_store)[0]
    sub = gql.data("""query($id: ID!) { neighborhood(id: $id, depth: 2, limit: 50) {
      truncated nodes { id label kind } edges { source target type weight terms } } }""",
                   id=pid)["neighborhood"]
    ids = {n["id"] for n in sub["nodes"]}
    assert sub["nodes"][0]["id"] == pid and len(ids) == 50 and sub["truncated"]
    assert all(e["source"] in ids and e["target"] in ids for e in sub["edges"])
    expected = seed_store.neighborhood([pid], 2, limit=50)
    assert [n["id"] for n in sub["nodes"]] == [n.id for n in expected.nodes]
    assert len(sub["edges"]) == len(expected.edges)
    only = gql.data("""query($id: ID!) { neighborhood(id: $id, relTypes: [MENTIONS],
      nodeKinds: [CONCEPT]) { nodes { kind } edges { type } } }""", id=pid)["neighborhood"]
    assert {n["kind"] for n in only["nodes"][1:]} == {"CONCEPT"}
    assert {e["type"] for e in only["edges"]} == {"MENTIONS"}


def test_paths_have_a_reason_per_hop(gql: GQL, seed_store: NetworkxStore) -> None:
    papers = _papers(seed_store)
    a, b = papers[0], papers[-1]
    sp = gql.data("""query($a: ID!, $b: ID!) { shortestPath(from: $a, to: $b, maxHops: 4) {
      length strength nodes { id } hops { from to type weight reason } } }""", a=a, b=b)
    path = sp["shortestPath"]
    assert path is not None
    assert path["nodes"][0]["id"] == a and path["nodes"][-1]["id"] == b
    assert path["length"] == len(path["hops"]) == len(path["nodes"]) - 1
    for i, hop in enumerate(path["hops"]):
        assert hop["reason"].strip()
        assert (hop["from"], hop["to"]) == (path["nodes"][i]["id"], path["nodes"][i + 1]["id"])
    ks = gql.data("""query($a: ID!, $b: ID!) { paths(from: $a, to: $b, k: 3, maxHops: 3,
      relTypes: [SIMILAR_TO, SHARES_TERM]) { length hops { reason type } } }""", a=a, b=b)["paths"]
    assert 1 <= len(ks) <= 3
    assert [p["length"] for p in ks] == sorted(p["length"] for p in ks)
    assert all(h["reason"] and h["type"] in {"SIMILAR_TO", "SHARES_TERM"}
               for p in ks for h in p["hops"])


def test_related_explains_and_steers(gql: GQL, seed_store: NetworkxStore) -> None:
    pid = _papers(seed_store)[0]
    q = """query($p: ID, $pos: [ID!], $neg: [ID!], $ex: [ID!]) {
      related(paper: $p, first: 10, positive: $pos, negative: $neg, exclude: $ex) {
      score similarity paper { key } reasons { kind text weight nodeId }
      path { hops { reason } } } }"""
    base = gql.data(q, p=pid)["related"]
    keys = [r["paper"]["key"] for r in base]
    assert pid not in keys and len(keys) == 10
    assert all(any(x["kind"] == "similar" for x in r["reasons"]) for r in base)
    assert any(x["kind"] in {"concept", "dataset"} for r in base for x in r["reasons"])
    assert any(r["path"] and r["path"]["hops"] for r in base)
    steered = gql.data(q, p=pid, pos=[keys[5]], neg=[keys[0]])["related"]
    skeys = [r["paper"]["key"] for r in steered]
    assert skeys != keys and keys[0] not in skeys and keys[5] not in skeys and pid not in skeys
    excluded = gql.data(q, p=pid, ex=[keys[0]])["related"]
    assert keys[0] not in [r["paper"]["key"] for r in excluded]
    # a paper both wanted and not wanted is a contradiction, not a silent mix
    errors = gql.errors(q, p=pid, pos=[keys[1]], neg=[keys[1]])
    assert errors and errors[0]["extensions"]["code"] == "INVALID_ARGUMENT"
    text = gql.data("""{ related(text: "large language models for code generation", first: 3) {
      paper { key } reasons { kind text } } }""")["related"]
    assert len(text) == 3


def test_stats(gql: GQL, seed_store: NetworkxStore) -> None:
    s = gql.data("""{ stats { totalNodes totalEdges nodes { kind count } edges { kind count }
      centralConcepts { concept { name } degree pagerank } } }""")["stats"]
    expected = seed_store.stats()
    assert {n["kind"]: n["count"] for n in s["nodes"]} == dict(expected.nodes)
    assert {e["kind"]: e["count"] for e in s["edges"]} == dict(expected.edges)
    assert s["totalEdges"] == sum(expected.edges.values())
    ranks = [c["pagerank"] for c in s["centralConcepts"]]
    assert ranks == sorted(ranks, reverse=True) and len(ranks) == 10
    assert all(c["degree"] > 0 for c in s["centralConcepts"])


def test_concepts_and_datasets_lists(gql: GQL) -> None:
    cs = gql.data('{ concepts(text: "diffusion", first: 3) { edges { node { name } } } }')
    assert all("diffusion" in e["node"]["name"] for e in cs["concepts"]["edges"])
    ds = gql.data("{ datasets(first: 50) { totalCount edges { node { key name usedBy { key }"
                  " introducedBy { key } paperCount } } } }")["datasets"]
    assert ds["totalCount"] == len(ds["edges"]) > 0
    for e in ds["edges"]:
        d = e["node"]
        assert d["paperCount"] == len({p["key"] for p in d["usedBy"] + d["introducedBy"]})
        one = gql.data("query($n: String!) { dataset(name: $n) { key } }", n=d["name"])
        assert one["dataset"]["key"] == d["key"]


def test_rel_types_enum_matches_domain(gql: GQL) -> None:
    data = gql.data('{ __type(name: "RelType") { enumValues { name } } }')
    assert {v["name"] for v in data["__type"]["enumValues"]} == {t.name for t in RelType}


def test_related_reasons_are_few_and_none_repeats_another(
    gql: GQL, seed_store: NetworkxStore
) -> None:
    """Issue 13: "both mention diffusion; both mention diffusion model" said one thing twice."""
    papers, _ = seed_store.list_nodes(NodeKind.PAPER, limit=100)
    seen_terms = 0
    for p in papers[:25]:
        data = gql.data(
            "query($p: ID!) { related(paper: $p, first: 10) { reasons { kind text weight } } }",
            p=p.id,
        )
        for r in data["related"]:
            reasons = r["reasons"]
            assert 1 <= len(reasons) <= 3
            assert reasons[0]["kind"] == "similar"
            terms = [x for x in reasons if x["kind"] in ("concept", "dataset")]
            seen_terms += len(terms)
            weights = [x["weight"] for x in terms]
            assert weights == sorted(weights, reverse=True)
            names = [f" {x['text'].split(' ', 2)[-1].casefold()} " for x in terms]
            for i, a in enumerate(names):
                for b in names[i + 1 :]:
                    assert a not in b and b not in a, (a, b)
    assert seen_terms > 0


# Read off the seeds' own reasons before the filter: words a reader does not take as a reason
_NO_REASON = frozenset(
    [
        "novel", "effectively", "efficiency", "models", "model", "arising", "results", "proposed",
        "method", "methods", "approach", "performance", "significantly", "existing", "outperforms",
        "demonstrate",
    ]
)


def test_related_wording_reasons_quote_words_both_papers_have(
    gql: GQL, seed_store: NetworkxStore
) -> None:
    """A "shared wording" reason is checkable: each quoted word or pair of words stands,
    as written, in the seed's text and in the recommended paper's, and is not made only
    of words that say nothing about what the papers share."""
    import re

    papers, _ = seed_store.list_nodes(NodeKind.PAPER, limit=100)
    text_of = {
        p.id: f"{p.title or ''} {p.abstract}".casefold() for p in papers if isinstance(p, Paper)
    }
    quoted = 0
    for p in papers[:20]:
        data = gql.data(
            "query($p: ID!) { related(paper: $p, first: 10) {"
            " paper { key } reasons { kind text weight } } }",
            p=p.id,
        )
        for r in data["related"]:
            for x in r["reasons"]:
                if x["kind"] != "words":
                    continue
                assert 0 < x["weight"] <= 1
                for gram in re.findall(r"'([^']+)'", x["text"]):
                    quoted += 1
                    assert set(gram.split()) - _NO_REASON, (gram, x["text"])
                    pattern = r"(?<!\w)" + r"[\s-]+".join(map(re.escape, gram.split())) + r"(?!\w)"
                    for pid in (p.id, r["paper"]["key"]):
                        assert re.search(pattern, text_of[pid]), (gram, pid)
    assert quoted > 0


@pytest.mark.parametrize(("name", "kinds"), [("PaRa", None), ("LocoVR", None), ("LGNSDE", None)])
def test_a_name_of_two_nodes_reaches_both(
    seed_store: NetworkxStore, name: str, kinds: list[NodeKind] | None
) -> None:
    """Issue 13: "PaRa" names a concept and a paper's method; both are reachable."""
    from graph import lookup

    found = lookup.matches(seed_store, name, kinds)
    assert found, name
    assert found[0].id == (lookup.find(seed_store, name, kinds) or found[0]).id
    assert len({n.id for n in found}) == len(found)
    papers = [n for n in found if n.kind is NodeKind.PAPER]
    assert papers and all(p.label.casefold().startswith(name.casefold() + ":") for p in papers)
    if name == "PaRa":
        assert [n.kind for n in found] == [NodeKind.CONCEPT, NodeKind.PAPER]
    # an id names exactly one node
    for n in found:
        assert [m.id for m in lookup.matches(seed_store, n.id)] == [n.id]


def test_graphql_says_which_node_a_name_of_two_was_taken_as(gql: GQL) -> None:
    """Issue 13: "PaRa" names a concept and a paper; the response says which it used and
    gives the other's id, which then reaches the paper."""
    q = '{ neighborhood(id: "PaRa", depth: 1, limit: 5) { nodes { id kind } } }'
    body = gql.raw(q)
    assert "errors" not in body
    resolved = body["extensions"]["resolved"]
    assert len(resolved) == 1 and resolved[0]["argument"] == "id"
    assert resolved[0]["used"]["kind"] == "CONCEPT"
    other = resolved[0]["others"][0]
    assert other["kind"] == "PAPER" and other["label"].startswith("PaRa:")
    again = gql.raw(
        "query($i: ID!) { neighborhood(id: $i, depth: 1) { nodes { id } } }", i=other["id"]
    )
    assert "resolved" not in (again.get("extensions") or {})
    assert other["id"] in {n["id"] for n in again["data"]["neighborhood"]["nodes"]}
    # a name that names one node adds nothing
    plain = gql.raw('{ neighborhood(id: "LLM", depth: 1, limit: 3) { nodes { id } } }')
    assert "resolved" not in (plain.get("extensions") or {})


@pytest.mark.parametrize("text", ["\u0000\u0000", " \u0000\t", "\u200b"])
def test_a_text_of_nothing_printable_is_an_empty_argument(gql: GQL, text: str) -> None:
    """Found by an outside probe: NULs passed the emptiness check and gave 10 papers with
    negative scores; a search or related text must say something."""
    for q, arg in (
        ("query($t: String!) { related(text: $t) { score } }", "text"),
        ("query($t: String!) { search(query: $t, mode: HYBRID) { score } }", "query"),
    ):
        errs = gql.errors(q, t=text)
        assert errs and errs[0]["extensions"] == {"code": "INVALID_ARGUMENT", "argument": arg}
