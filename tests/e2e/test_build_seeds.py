"""End-to-end builds of seeds/ with the real embedding model and the real pipeline."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from graph.build import Pipeline, graphs_equal
from graph.ingest import read_corpus
from graph.model import Concept, Dataset, NodeKind, Paper, RelType
from graph.store.embedded import EmbeddedStore
from graph.store.memory import NetworkxStore
from tests.support.seeds import EMBED_CACHE, SEEDS, copy_seed_graph, seed_settings

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def seed_graph(
    tmp_path_factory: pytest.TempPathFactory, seed_graph_template: Path
) -> NetworkxStore:
    """The session's build (tests/conftest.py checks it reported no problems)."""
    store = copy_seed_graph(seed_graph_template, tmp_path_factory.mktemp("seedgraph"))
    return store  # type: ignore[return-value]


@pytest.fixture(scope="module")
def seed_papers() -> list[Paper]:
    result = read_corpus([SEEDS])
    assert not result.problems
    return result.papers


def _pipeline(tmp: Path) -> Pipeline:
    return Pipeline(seed_settings(tmp), cache_dir=EMBED_CACHE)


def test_counts_per_kind(seed_graph: NetworkxStore) -> None:
    stats = seed_graph.stats()
    assert stats.nodes["Paper"] == 76
    assert stats.nodes["Concept"] > 100
    assert stats.nodes["Dataset"] >= 5
    for rel in (RelType.SIMILAR_TO, RelType.SHARES_TERM, RelType.MENTIONS, RelType.RELATED_TO):
        assert stats.edges[rel.value] > 0, rel
    assert stats.edges["CITES"] == 0  # the seeds carry no references


def test_every_concept_and_dataset_belongs_to_a_paper(seed_graph: NetworkxStore) -> None:
    """247 of 556 seed concepts had no paper at all, yet search ranked them (probe3 F6)."""
    data = seed_graph.snapshot()
    held = {e.target for e in data.edges.values()
            if e.type in (RelType.MENTIONS, RelType.USES, RelType.INTRODUCES)}
    terms = [n.id for n in data.nodes.values() if n.kind in (NodeKind.CONCEPT, NodeKind.DATASET)]
    orphans = [t for t in terms if t not in held]
    assert terms and not orphans, f"{len(orphans)} of {len(terms)}, e.g. {orphans[:3]}"


def test_llm_variants_are_one_concept(seed_graph: NetworkxStore) -> None:
    nodes = {
        seed_graph.find_node(n, [NodeKind.CONCEPT])
        for n in ("LLM", "LLMs", "large language model", "Large Language Models")
    }
    assert len(nodes) == 1
    (llm,) = nodes
    assert isinstance(llm, Concept)
    assert "large language model" in llm.name.lower()
    papers, total = seed_graph.list_nodes(NodeKind.PAPER, neighbor=llm.id, limit=100)
    assert total >= 5  # many seed abstracts are about LLMs
    concepts = [n for n in seed_graph.snapshot().nodes.values() if isinstance(n, Concept)]
    assert sum(c.name.lower() == "large language model" for c in concepts) == 1


def test_named_dataset_found_and_introduced(seed_graph: NetworkxStore) -> None:
    locovr = seed_graph.find_node("LocoVR", [NodeKind.DATASET])
    assert isinstance(locovr, Dataset)
    introducers = [e for e in seed_graph.edges_of([locovr.id]) if e.type is RelType.INTRODUCES]
    assert introducers, "the LocoVR paper introduces its dataset"


def test_mentions_carry_weight_and_evidence(seed_graph: NetworkxStore) -> None:
    mentions = [e for e in seed_graph.snapshot().edges.values() if e.type is RelType.MENTIONS]
    assert all(e.weight > 0 for e in mentions)
    sample = mentions[:50]
    assert all(isinstance(e.attrs.get("evidence"), str) and e.attrs["evidence"] for e in sample)


def test_similarity_edges_are_topk_above_threshold(seed_graph: NetworkxStore) -> None:
    settings = seed_settings(Path("."))
    by_source: dict[str, list[float]] = {}
    for e in seed_graph.snapshot().edges.values():
        if e.type is RelType.SIMILAR_TO:
            assert e.weight >= settings.similar_min_score
            by_source.setdefault(e.source, []).append(e.weight)
    assert all(len(v) <= settings.similar_k for v in by_source.values())
    assert len(by_source) == 76


def test_papers_without_titles_get_readable_labels(seed_graph: NetworkxStore) -> None:
    papers = [n for n in seed_graph.snapshot().nodes.values() if isinstance(n, Paper)]
    assert all(0 < len(p.label) <= 100 for p in papers)
    assert any(p.label.startswith("LocoVR") for p in papers)


def test_rebuild_is_identical_and_embeds_nothing(tmp_path: Path) -> None:
    store = EmbeddedStore(seed_settings(tmp_path).graph_db)
    pipeline = _pipeline(tmp_path)
    first = pipeline.run(store, add_paths=[SEEDS], replace=True)
    snap1 = store.snapshot()
    second = pipeline.run(store, add_paths=[SEEDS], replace=True)
    pipeline.close()
    assert second.embedded == 0
    assert second.nodes_written == 0 and second.edges_written == 0
    assert graphs_equal(snap1, store.snapshot()) == []
    assert first.stats == second.stats


def test_incremental_equals_full(tmp_path: Path, seed_papers: list[Paper]) -> None:
    full_store = NetworkxStore()
    pipeline = _pipeline(tmp_path)
    pipeline.run(full_store, add_papers=seed_papers, replace=True)

    inc = NetworkxStore()
    pipeline.run(inc, add_papers=seed_papers[:60], replace=True)
    report = pipeline.run(inc, add_papers=seed_papers[60:])
    assert len(report.added) == 16
    assert report.embedded == 0  # cached by text hash
    assert graphs_equal(full_store.snapshot(), inc.snapshot()) == []

    # removing papers equals a full build without them
    gone = [p.id for p in seed_papers[10:15]]
    pipeline.run(inc, remove=gone)
    smaller = NetworkxStore()
    pipeline.run(smaller, add_papers=[p for p in seed_papers if p.id not in gone], replace=True)
    pipeline.close()
    assert graphs_equal(smaller.snapshot(), inc.snapshot()) == []
    assert not set(gone) & set(inc.snapshot().nodes)


def test_embeddings_stored_as_matrix(seed_graph: NetworkxStore) -> None:
    ids, matrix = seed_graph.embedding_matrix()
    assert matrix.shape == (76, 384)
    assert matrix.dtype == np.float32
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-4)


def test_cli_build_stats_json(tmp_path: Path) -> None:
    env_dir = tmp_path / "data"
    cmd = [sys.executable, "-m", "citegraph", "--data-dir", str(env_dir)]
    build = subprocess.run([*cmd, "build", str(SEEDS)], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr
    assert "Paper" in build.stdout and "SIMILAR_TO" in build.stdout
    stats = subprocess.run([*cmd, "stats", "--json"], capture_output=True, text=True, timeout=120)
    counts = json.loads(stats.stdout)
    assert counts["nodes"]["Paper"] == 76
    assert set(counts["edges"]) == {t.value for t in RelType}
    # issue 13: "PaRa" is a concept and the short name of a paper; the CLI says which it
    # used and how to reach the other
    near = subprocess.run([*cmd, "neighbors", "PaRa", "--json"], capture_output=True,
                          text=True, timeout=120)
    assert near.returncode == 0, near.stderr
    assert "taken as the concept 'PaRa'" in near.stderr and "the paper 'PaRa:" in near.stderr
    paper_id = near.stderr.split("(id ")[1].split(")")[0]
    again = subprocess.run([*cmd, "neighbors", paper_id, "--json"], capture_output=True,
                           text=True, timeout=120)
    assert again.returncode == 0 and "note:" not in again.stderr
    assert paper_id in {n["id"] for n in json.loads(again.stdout)["nodes"]}


def test_cli_reports_bad_records_and_keeps_good_ones(tmp_path: Path) -> None:
    bad = tmp_path / "mixed.jsonl"
    good = {
        "id": "good-1",
        "title": "A good paper",
        "abstract": (SEEDS / "000_1bd0d05fbd108b87.txt").read_text().split("\n\n")[1],
    }
    bad.write_text(json.dumps(good) + "\n{not json\n" + json.dumps({"id": "x"}) + "\n")
    cmd = [sys.executable, "-m", "citegraph", "--data-dir", str(tmp_path / "d")]
    out = subprocess.run([*cmd, "build", str(bad)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 3, out.stdout + out.stderr
    assert "mixed.jsonl:2" in out.stderr and "mixed.jsonl:3" in out.stderr
    assert "Traceback" not in out.stderr
    stats = subprocess.run([*cmd, "stats", "--json"], capture_output=True, text=True, timeout=120)
    assert json.loads(stats.stdout)["nodes"]["Paper"] == 1
