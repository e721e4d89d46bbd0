"""Topics end to end on the seeds: ``citegraph build`` computes them, ``citegraph topics``
and ``citegraph topic`` show them (tables and JSON), GraphQL reads the same, and the
recompute rule holds: an add below the threshold joins the new paper to its neighbours'
topic, a write past it re-clusters."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from bench.load import copy_cache
from graph.model import Paper, RelType
from graph.store.embedded import EmbeddedStore
from tests.api.conftest import GQL
from tests.support.seeds import EMBED_CACHE, SEEDS, seed_settings


def _run(cmd: list[str], *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200", **env})


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, seed_graph_template: Path) -> Path:
    """A data folder built by ``citegraph build seeds/`` (the session's caches: no model)."""
    root = tmp_path_factory.mktemp("topics")
    copy_cache(EMBED_CACHE, root / "data" / "cache")
    cmd = [sys.executable, "-m", "citegraph", "--data-dir", str(root / "data")]
    out = _run(cmd, "build", str(SEEDS), "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["topics"]["recomputed"] and report["topics"]["topics"] >= 2
    assert report["stats"]["nodes"]["Topic"] >= 2
    return root / "data"


def _cli(data: Path) -> list[str]:
    return [sys.executable, "-m", "citegraph", "--data-dir", str(data)]


def _topics(cli: list[str]) -> list[dict[str, Any]]:
    out = _run(cli, "topics", "--json")
    assert out.returncode == 0, out.stderr
    return list(json.loads(out.stdout))


def test_topics_and_topic_commands(built: Path) -> None:
    cli = _cli(built)
    topics = _topics(cli)
    tops = [t for t in topics if t["level"] == 1]
    store = EmbeddedStore(seed_settings(built).graph_db)
    try:
        papers = [n for n in store.snapshot().nodes.values() if isinstance(n, Paper)]
    finally:
        store.close()
    # every paper in exactly one topic, the sizes add up, every topic labelled
    assert sum(t["size"] for t in tops) == len(papers)
    assert all(t["name"] and t["concept_names"] and t["top_papers"] for t in tops)
    assert all(sum(t["years"].values()) == t["size"] for t in tops)
    # the top paper is the most important paper of the topic
    best = max(papers, key=lambda p: p.importance or 0.0)
    assert best.id in {t["top_papers"][0]["id"] for t in tops}
    table = _run(cli, "topics")
    assert table.returncode == 0, table.stderr
    for t in tops:
        assert t["id"] in table.stdout
    one = tops[0]
    shown = _run(cli, "topic", one["id"].removeprefix("topic:"), "--json")
    assert shown.returncode == 0, shown.stderr
    got = json.loads(shown.stdout)
    assert got["name"] == one["name"] and got["size"] == one["size"]
    text = _run(cli, "topic", one["id"])
    assert text.returncode == 0 and one["name"] in text.stdout and "Papers per year" in text.stdout
    missing = _run(cli, "topic", "topic:999")
    assert missing.returncode != 0 and "no topic" in missing.stderr


def test_list_commands_filter_by_topic_and_sort_by_importance(built: Path) -> None:
    cli = _cli(built)
    tops = [t for t in _topics(cli) if t["level"] == 1]

    def js(*args: str) -> Any:
        out = _run(cli, *args, "--json")
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    for t in tops:
        # by id or by label; the most important first, as `citegraph topic` lists them
        inside = js("papers", "--topic", t["id"], "--sort", "-importance", "-n", "1000")
        assert inside["total"] == t["size"]
        ranked = [p["id"] for p in inside["papers"]]
        assert ranked[: len(t["top_papers"])] == [p["id"] for p in t["top_papers"]]
        assert js("papers", "--topic", t["name"], "-n", "1")["total"] == t["size"]
    by_topic = js("counts", "--by", "topic")
    assert {(g["key"], g["count"], g["name"]) for g in by_topic["groups"]} == {
        (t["id"], t["size"], t["name"]) for t in tops}
    least = js("papers", "--sort", "importance", "-n", "1000")["papers"]
    assert least[-1]["id"] == js("papers", "--sort", "-importance", "-n", "1")["papers"][0]["id"]
    bad = _run(cli, "papers", "--topic", "topic:999")
    assert bad.returncode != 0 and "--topic" in bad.stderr and "Traceback" not in bad.stderr


def test_graphql_reads_the_same_topics(built: Path) -> None:
    cli = _cli(built)
    want = {t["id"]: t for t in _topics(cli)}
    settings = seed_settings(built, request_timeout_s=60.0)
    with TestClient(create_app(settings)) as client:
        gql = GQL(client)
        data = gql.data("""{ topics(first: 100) { totalCount edges { node {
            key label size level years { year count } topPapers(first: 3) { key importance
              topic { key } }
            concepts(first: 3) { name } parent { key } subtopics { key } } } } }""")
        nodes = [e["node"] for e in data["topics"]["edges"]]
        assert data["topics"]["totalCount"] == len(want)
        for n in nodes:
            t = want[n["key"]]
            assert (n["label"], n["size"], n["level"]) == (t["name"], t["size"], t["level"])
            assert [p["key"] for p in n["topPapers"]] == [p["id"] for p in t["top_papers"][:3]]
            assert [c["name"] for c in n["concepts"]] == t["concept_names"][:3]
            if n["level"] == 1:
                # a top paper's topic is this one, and its importance is stored
                assert all(p["topic"]["key"] == n["key"] and p["importance"] > 0
                           for p in n["topPapers"])
        one = next(iter(want))
        got = gql.data("query($id: ID!) { topic(id: $id) { key label } }", id=one)
        assert got["topic"] == {"key": one, "label": want[one]["name"]}


def test_recompute_rule(built: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(built, data)
    cli = _cli(data)
    before = {t["id"]: t for t in _topics(cli) if t["level"] == 1}
    store = EmbeddedStore(seed_settings(data).graph_db)
    try:
        g = store.snapshot()
    finally:
        store.close()
    # a new paper written like the top paper of the biggest topic
    big = max(before.values(), key=lambda t: t["size"])
    model = g.nodes[big["top_papers"][0]["id"]]
    assert isinstance(model, Paper)
    new = tmp_path / "new.jsonl"
    new.write_text(json.dumps({"id": "new-paper", "title": "A follow-up",
                               "abstract": model.abstract + " We extend this further."}) + "\n")
    # 1 paper changed of ~77: below 10%, so it joins its neighbours' topic
    added = _run(cli, "add", str(new), "--json")
    assert added.returncode == 0, added.stderr
    report = json.loads(added.stdout)["topics"]
    assert report["recomputed"] is False and report["assigned"] == 1
    after = {t["id"]: t for t in _topics(cli) if t["level"] == 1}
    store = EmbeddedStore(seed_settings(data).graph_db)
    try:
        joined = [e.target for e in store.edges_of(["new-paper"], [RelType.IN_TOPIC])]
        neighbours = [e.target if e.source == "new-paper" else e.source
                      for e in store.edges_of(["new-paper"], [RelType.SIMILAR_TO])]
        ins = store.edges_of(neighbours, [RelType.IN_TOPIC])
    finally:
        store.close()
    top = [t for t in joined if "." not in t.removeprefix("topic:")]
    assert len(top) == 1
    votes = [e.target for e in ins if e.target in after]
    assert top[0] == max(set(votes), key=votes.count)
    assert after[top[0]]["size"] == before[top[0]]["size"] + 1
    assert after[top[0]]["changed"] == 1
    # a remove past a threshold of 1%: re-clustered, and the stable groups keep their ids
    removed = _run(cli, "remove", "new-paper", "--json", CITEGRAPH_TOPIC_RECOMPUTE_FRACTION="0.01")
    assert removed.returncode == 0, removed.stderr
    assert json.loads(removed.stdout)["topics"]["recomputed"] is True
    again = {t["id"]: t for t in _topics(cli) if t["level"] == 1}
    assert all(t["changed"] == 0 for t in again.values())
    assert set(again) == set(before)


def test_a_servers_adds_join_topics_and_stay_by_region(built: Path, tmp_path: Path) -> None:
    """A long-lived pipeline (the server's): the topic step's write moves the store's
    version, and the next add still goes by region (Pipeline.topics_written)."""
    from graph.ingest import paper_from_record
    from graph.service import Embedding, GraphService

    data = tmp_path / "data"
    shutil.copytree(built, data)
    settings = seed_settings(data)
    store = EmbeddedStore(settings.graph_db)
    embedding = Embedding(settings)
    service = GraphService(settings, store, embedding)
    pipe = service.pipeline(incremental=True)
    try:
        pipe.prime(store)
        for i in range(2):
            paper = paper_from_record({"id": f"srv-{i}", "abstract": (
                f"We fine-tune diffusion models for image generation, step {i}, with a "
                "careful regularization of the denoiser.")}, source=f"test:{i}")
            report = service.write(papers=[paper], pipeline=pipe)
            assert "region.terms" in report.step_seconds, f"add {i} went the whole way"
            assert report.topics is not None and report.topics["assigned"] == 1
            assert store.edges_of([f"srv-{i}"], [RelType.IN_TOPIC])
    finally:
        pipe.close()
        store.close()
        embedding.close()
