"""Prior and derivative works, coupling and co-citation, end to end: a corpus of six seed
abstracts whose references name each other and works outside it, built by the real CLI
(real model, cached embeddings), read back by the CLI (`prior`, `derivative`, `--json`,
`--format bibtex`) and over GraphQL (`priorWorks`, `derivativeWorks`, `coupled`,
`cocited`, `related` with its citation reasons)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import bibtexparser
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from bench.load import copy_cache
from graph.ingest import read_corpus
from graph.store.embedded import EmbeddedStore
from tests.api.conftest import GQL
from tests.support.seeds import EMBED_CACHE, SEEDS, seed_settings

pytestmark = pytest.mark.slow

ATT = "Attention Is All You Need"
REFS = {
    "c0": ["c1", "doi:10.7/C2", ATT, "10.9/outside-a", "arXiv:2101.00001v2"],
    "c1": ["c2", ATT, "https://doi.org/10.9/outside-a", "10.9/outside-b"],
    "c2": [ATT, "c3"],
    "c3": ["c4", "10.9/outside-b"],
    "c4": ["c5", "c0"],
    "c5": ["c0", "10.9/outside-c"],
}


def _run(cmd: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Path]:
    root = tmp_path_factory.mktemp("citations")
    texts = read_corpus(sorted(SEEDS.glob("*.txt"))[:1]).papers[:6]
    rows = [
        {"id": pid, "title": f"Seed paper {i}", "doi": f"10.7/{pid}", "abstract": p.abstract,
         "references": REFS[pid], "year": 2018 + i, "venue": "ICLR" if i % 2 else "NeurIPS"}
        for i, (pid, p) in enumerate(zip(REFS, texts, strict=True))
    ]
    (root / "lib.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    copy_cache(EMBED_CACHE, root / "data" / "cache")
    cmd = [sys.executable, "-m", "citegraph", "--data-dir", str(root / "data")]
    out = _run(cmd, "build", str(root / "lib.jsonl"))
    assert out.returncode == 0, out.stderr
    # 8 references name corpus papers; 9 name 5 outside works
    said = " ".join(out.stdout.split())
    assert "References: 8 resolved" in said and "9 outside the corpus" in said, said
    return cmd, root / "data"


def test_prior_works_on_the_cli_count_outside_works(built: tuple[list[str], Path]) -> None:
    cmd, _ = built
    out = _run(cmd, "prior", "c0", "c1", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert [(r["id"], r["kind"], r["count"]) for r in rows] == [
        ("c2", "Paper", 2), (f"work:{ATT}", "Work", 2), ("work:doi:10.9/outside-a", "Work", 2),
        ("work:arxiv:2101.00001", "Work", 1), ("work:doi:10.9/outside-b", "Work", 1),
    ]
    assert rows[1]["label"] == ATT and rows[3]["label"] == "arXiv:2101.00001"
    assert [s["id"] for s in rows[0]["seeds"]] == ["c0", "c1"]
    table = _run(cmd, "prior", "Seed paper 0")
    assert table.returncode == 0 and "outside work" in table.stdout and ATT in table.stdout


def test_derivative_works_and_bibtex(built: tuple[list[str], Path]) -> None:
    cmd, _ = built
    out = _run(cmd, "derivative", "c0", "--json")
    assert out.returncode == 0, out.stderr
    assert [(r["id"], r["count"]) for r in json.loads(out.stdout)] == [("c4", 1), ("c5", 1)]
    # an outside work's citers
    work = _run(cmd, "derivative", f"work:{ATT}", "--json")
    assert [r["id"] for r in json.loads(work.stdout)] == ["c0", "c1", "c2"]
    # the corpus papers among prior works as BibTeX (outside works have no record)
    bib = _run(cmd, "prior", "c0", "c1", "--format", "bibtex")
    assert bib.returncode == 0, bib.stderr
    entries = bibtexparser.parse_string(bib.stdout).entries
    assert [e.fields_dict["title"].value for e in entries] == ["Seed paper 2"]
    missing = _run(cmd, "prior", "no-such-paper")
    assert missing.returncode != 0 and "no-such-paper" in missing.stderr


@pytest.fixture(scope="module")
def gql(built: tuple[list[str], Path]) -> Iterator[GQL]:
    _, data = built
    settings = seed_settings(data, request_timeout_s=60.0)
    store = EmbeddedStore(settings.graph_db)
    try:
        with TestClient(create_app(settings, opener=lambda _s: store)) as client:
            yield GQL(client)
    finally:
        store.close()


LINKS = """query($ids: [ID!]!) {
  coupled(ids: $ids, first: 5) { node { ... on Paper { key } } strength count reason
                                 shared { ... on Work { key name } ... on Paper { key } } }
  cocited(ids: $ids, first: 5) { node { ... on Paper { key } } strength count reason }
  priorWorks(ids: $ids) { node { ... on Work { key name } ... on Paper { key } } count }
  derivativeWorks(ids: $ids) { node { ... on Paper { key } } count }
}"""


def test_graphql_citation_reads(gql: GQL) -> None:
    data: Any = gql.data(LINKS, ids=["c0"])
    coupled = data["coupled"]
    # c0 cites 5 works, c1 4, sharing c2, Attention and outside-a: 3 / sqrt(20)
    assert coupled[0]["node"]["key"] == "c1" and coupled[0]["count"] == 3
    assert coupled[0]["strength"] == round(3 / math.sqrt(20), 6)
    assert coupled[0]["reason"] == "both cite *Seed paper 2* and 2 more"
    assert [s["key"] for s in coupled[0]["shared"]] == [
        "c2", f"work:{ATT}", "work:doi:10.9/outside-a"]
    assert [(c["node"]["key"], c["count"]) for c in coupled] == [("c1", 3), ("c2", 1)]
    # co-cited with c0: by c4 (with c5) and by c5 (with outside-c, no paper)
    assert [(c["node"]["key"], c["count"]) for c in data["cocited"]] == [("c5", 1)]
    assert data["priorWorks"][0]["node"]["key"] == "c1"
    assert [d["node"]["key"] for d in data["derivativeWorks"]] == ["c4", "c5"]
    bad = gql.raw(LINKS, ids=[])
    assert bad["errors"] and "ids" in bad["errors"][0]["message"]


def test_related_gives_citation_reasons(gql: GQL) -> None:
    data: Any = gql.data("""{ related(paper: "c0", first: 5) {
        paper { key } reasons { kind text weight nodeId } } }""")
    by_key = {r["paper"]["key"]: r["reasons"] for r in data["related"]}
    assert "c1" in by_key
    coupled = [x for x in by_key["c1"] if x["kind"] == "coupled"]
    assert coupled == [{"kind": "coupled", "text": "both cite *Seed paper 2* and 2 more",
                        "weight": round(3 / math.sqrt(20), 6), "nodeId": "c2"}]


def test_year_and_venue_filters(built: tuple[list[str], Path], gql: GQL) -> None:
    cmd, _ = built
    out = _run(cmd, "prior", "c0", "c1", "--year-from", "2020", "--json")
    assert out.returncode == 0, out.stderr
    # of c2 (2020), Attention, outside-a, arXiv, outside-b: only c2 has a year
    assert [r["id"] for r in json.loads(out.stdout)] == ["c2"]
    out = _run(cmd, "derivative", "c0", "--venue", "ICLR", "--json")
    assert [r["id"] for r in json.loads(out.stdout)] == ["c5"]  # c4 is NeurIPS
    bad = _run(cmd, "derivative", "c0", "--year-from", "2022", "--year-to", "2020")
    assert bad.returncode != 0 and "year_from" in bad.stderr
    data: Any = gql.data("""{ related(paper: "c0", first: 5, yearFrom: 2020, yearTo: 2022) {
        paper { key year } } }""")
    years = [r["paper"]["year"] for r in data["related"]]
    assert years and all(2020 <= y <= 2022 for y in years)
    data = gql.data("""{ coupled(ids: ["c0"], venue: "NeurIPS") {
        node { ... on Paper { key } } } }""")
    assert [x["node"]["key"] for x in data["coupled"]] == ["c2"]


def test_search_with_year_and_venue(built: tuple[list[str], Path], gql: GQL) -> None:
    cmd, _ = built
    whole = _run(cmd, "search", "Seed paper", "-n", "20", "--json")
    assert {r["id"] for r in json.loads(whole.stdout)} >= set(REFS)  # every title matches
    out = _run(cmd, "search", "Seed paper", "-n", "20", "--year-from", "2021", "--json")
    assert out.returncode == 0, out.stderr
    assert sorted(r["id"] for r in json.loads(out.stdout)) == ["c3", "c4", "c5"]
    # outside works are found by name, but never through a filter
    works = _run(cmd, "search", "Attention", "--kind", "work", "--json")
    assert [r["id"] for r in json.loads(works.stdout)] == [f"work:{ATT}"]
    data: Any = gql.data("""{ search(query: "Seed paper", first: 20, mode: HYBRID,
        venue: "ICLR", yearTo: 2021) { node { ... on Paper { key } } } }""")
    assert sorted(h["node"]["key"] for h in data["search"]) == ["c1", "c3"]
    bad = gql.raw("""{ search(query: "x", kinds: [CONCEPT], yearFrom: 2020) { score } }""")
    assert bad["errors"] and "papers only" in bad["errors"][0]["message"]


def test_cli_filters_sorts_and_counts(built: tuple[list[str], Path]) -> None:
    """Every list command takes the same filters; `papers --sort` and `counts --by`."""
    cmd, _ = built

    def js(*args: str) -> Any:
        out = _run(cmd, *args, "--json")
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    newest = js("papers", "--year-from", "2020", "--sort", "-year")
    assert newest["total"] == 4 and [p["id"] for p in newest["papers"]] == ["c5", "c4", "c3", "c2"]
    titled = js("papers", "--venue", "ICLR", "--venue", "NeurIPS", "--sort", "title", "-n", "2")
    assert titled["total"] == 6 and [p["id"] for p in titled["papers"]] == ["c0", "c1"]
    assert js("counts", "--by", "year")["groups"] == [
        {"key": 2018 + i, "count": 1} for i in range(6)]
    assert js("counts", "--by", "venue", "--year-to", "2020")["groups"] == [
        {"key": "NeurIPS", "count": 2}, {"key": "ICLR", "count": 1}]
    top = js("counts", "--by", "concept", "-n", "3")
    assert top["total"] == 6 and top["groups"]
    concept = top["groups"][0]
    mentioning = js("papers", "--concept", concept["name"])
    assert mentioning["total"] == concept["count"]
    assert js("counts", "--by", "year", "--concept", concept["key"])["total"] == concept["count"]
    # the citation lists, search and neighbours take the same flags
    assert [r["id"] for r in js("derivative", "c0", "--sort", "-year")] == ["c5", "c4"]
    assert [r["id"] for r in js("prior", "c0", "c1", "--year-from", "2019", "--sort", "year")
            ] == ["c2"]
    found = js("search", "Seed paper", "-n", "20", "--concept", concept["key"])
    assert {r["id"] for r in found} == {p["id"] for p in mentioning["papers"]}
    around = js("neighbors", "c0", "--year-from", "2021", "--depth", "2")
    years = {pid: 2018 + i for i, pid in enumerate(REFS)}
    assert all(years[n["id"]] >= 2021 for n in around["nodes"]
               if n["kind"] == "Paper" and n["id"] != "c0")
    related = js("related", "c0", "--venue", "ICLR")
    assert related and {r["id"] for r in related} <= {"c1", "c3", "c5"}
    # hostile flags: a clear usage error, never a traceback
    for args, says in ((("papers", "--sort", "stars"), "--sort"),
                       (("counts", "--by", "year", "--concept", "no such concept"), "--concept"),
                       (("papers", "--year-from", "2022", "--year-to", "2020"), "year_from")):
        bad = _run(cmd, *args)
        assert bad.returncode != 0 and says in bad.stderr and "Traceback" not in bad.stderr
