"""Abstracts that differ only in case or punctuation (one ``text_hash``) are two texts.

Probe 10 found two ways an incremental graph parted from a full build of the same papers
when an abstract changed only where ``text_hash`` does not look (it folds case and drops
punctuation, to find duplicates) but extraction and the model do ("(QZX)" defines an
acronym, "QZX" alone does not):

* an update of a stored id to such a text was counted a duplicate and dropped: the graph
  kept the old abstract, label, concepts and vector (CLI and server alike);
* the extraction cache was keyed by ``text_hash``: a paper re-added (or added under a new
  id) with such a text after the first was removed took the first text's concepts and
  label from the cache, while a fresh build extracted its own.

Each case runs the one-shot pipeline (the CLI's) and the long-lived one (the server's,
by region) and compares the stored graph with a fresh full build of the final papers in
a folder of its own (its own extraction cache; the embedding cache copied, so vectors
are equal to the bit): every node's properties, every edge with its attributes, every
vector.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from graph.build import Pipeline
from graph.ingest import paper_from_record
from graph.model import Paper
from graph.store.embedded import EmbeddedStore
from tests.support.compare import assert_same_graph, fresh_build
from tests.support.seeds import seed_settings

pytestmark = pytest.mark.slow

PLAIN = ("We propose quantized zero-shot exchange QZX, a protocol for sharing model weights "
         "between clients with low bandwidth; QZX beats strong baselines.")
PAREN = ("We propose quantized zero-shot exchange (QZX), a protocol for sharing model weights "
         "between clients with low bandwidth; QZX beats strong baselines.")
OTHERS = [
    ("uses-qzx", "We evaluate QZX on many image benchmarks and find that QZX improves "
                 "accuracy by a wide margin over federated averaging."),
    ("diffusion", "Diffusion models generate images by denoising; we study guidance scales "
                  "and sampling steps for text-to-image generation."),
    ("graphs", "Graph neural networks suffer from oversmoothing; we propose residual "
               "message passing that keeps node features distinct in deep networks."),
    ("rl", "Reinforcement learning agents explore sparse reward environments with "
           "curiosity bonuses computed from prediction error of a learned world model."),
    ("federated", "Federated learning trains a shared model across clients without moving "
                  "their data; we reduce communication with quantized weight updates."),
]
DEFINED = "concept:quantized-zero-shot-exchange"


def _paper(pid: str, text: str) -> Paper:
    return paper_from_record({"id": pid, "abstract": text}, source=f"test:{pid}")


def _others() -> list[Paper]:
    return [_paper(pid, text) for pid, text in OTHERS]


@pytest.mark.parametrize("long_lived", [False, True], ids=["one-shot", "by-region"])
def test_an_update_that_changes_only_punctuation_is_applied(
    tmp_path: Path, long_lived: bool
) -> None:
    cache = tmp_path / "cache"
    store = EmbeddedStore(tmp_path / "graph.db")
    pipe = Pipeline(seed_settings(tmp_path), cache_dir=cache, incremental=long_lived)
    try:
        pipe.run(store, add_papers=[*_others(), _paper("qzx", PLAIN)], replace=True)
        assert DEFINED not in store.snapshot().nodes
        if long_lived:
            pipe.prime(store)
        report = pipe.run(store, add_papers=[_paper("qzx", PAREN)])
        assert report.updated == 1 and report.duplicates == 0
        assert ("region.terms" in report.step_seconds) is long_lived
        got = store.snapshot()
        assert got.nodes["qzx"].abstract == PAREN  # type: ignore[union-attr]
        assert DEFINED in got.nodes
        assert_same_graph(fresh_build(tmp_path, cache, [*_others(), _paper("qzx", PAREN)]), got)
        # the same record again is a duplicate now
        again = pipe.run(store, add_papers=[_paper("qzx", PAREN)])
        assert again.duplicates == 1 and again.updated == 0
    finally:
        pipe.close()
        store.close()


@pytest.mark.parametrize("long_lived", [False, True], ids=["one-shot", "by-region"])
@pytest.mark.parametrize("new_id", ["qzx", "qzx-again"])
def test_a_text_readded_after_its_case_variant_extracts_its_own_concepts(
    tmp_path: Path, long_lived: bool, new_id: str
) -> None:
    cache = tmp_path / "cache"
    store = EmbeddedStore(tmp_path / "graph.db")
    pipe = Pipeline(seed_settings(tmp_path), cache_dir=cache, incremental=long_lived)
    try:
        pipe.run(store, add_papers=[*_others(), _paper("qzx", PLAIN)], replace=True)
        if long_lived:
            pipe.prime(store)
        pipe.run(store, remove=["qzx"])
        pipe.run(store, add_papers=[_paper(new_id, PAREN)])
        got = store.snapshot()
        assert DEFINED in got.nodes
        assert_same_graph(fresh_build(tmp_path, cache, [*_others(), _paper(new_id, PAREN)]), got)
    finally:
        pipe.close()
        store.close()
    # and a later one-shot pipeline on the same cache folder, with the plain text again
    pipe = Pipeline(seed_settings(tmp_path), cache_dir=cache, incremental=False)
    store = EmbeddedStore(tmp_path / "graph.db")
    try:
        pipe.run(store, remove=[new_id])
        pipe.run(store, add_papers=[_paper("qzx", PLAIN)])
        got = store.snapshot()
        assert DEFINED not in got.nodes
        assert_same_graph(fresh_build(tmp_path, cache, [*_others(), _paper("qzx", PLAIN)]), got)
    finally:
        pipe.close()
        store.close()


def test_a_build_over_a_folder_that_extracted_a_case_variant_extracts_anew(
    tmp_path: Path,
) -> None:
    """``citegraph build`` over a data folder whose cache holds the other variant's
    extraction (the plain text was built there first) equals a build in a new folder."""
    cache = tmp_path / "cache"
    store = EmbeddedStore(tmp_path / "graph.db")
    pipe = Pipeline(seed_settings(tmp_path), cache_dir=cache, incremental=False)
    try:
        pipe.run(store, add_papers=[*_others(), _paper("qzx", PLAIN)], replace=True)
        pipe.run(store, add_papers=[*_others(), _paper("qzx", PAREN)], replace=True)
        got = store.snapshot()
        assert DEFINED in got.nodes
        assert_same_graph(fresh_build(tmp_path, cache, [*_others(), _paper("qzx", PAREN)]), got)
    finally:
        pipe.close()
        store.close()
