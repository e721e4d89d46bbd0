"""The same records give the same papers in any order (issue 39, finding 12).

Two places decide between records that meet: the reader's :class:`Collector` (records of
one text, records of one id) and the write's ``_merge_into`` (updates of stored papers,
new ids, against the stored corpus). Both are run here on every permutation of small
batches of real-looking records, and must give one outcome: the same papers, and the
same records refused for the same reasons (where a problem is said aside).

The finding: with A stored under text a and B under text b, an add of "A now has b" and
"B now has c" refused A's update in one order (B still held b) and applied both in the
other (B had moved on). Now an update is judged on the texts every paper holds once the
whole batch is done.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from graph.build import BuildReport, _merge_into
from graph.ingest import paper_from_record, read_corpus
from graph.model import Paper

TEXT = {
    "a": "Sparse attention lets transformers read long documents at a fraction of the cost.",
    "b": "We learn noise schedules jointly with the denoiser so diffusion models sample fast.",
    "c": "Graph neural networks over billions of edges train with sampled neighbourhoods.",
    "d": "Low-rank adapters fine-tune large language models with few trainable parameters.",
    "e": "Contrastive pre-training aligns images and captions without any human labels.",
}


def _paper(pid: str, text: str, **fields: Any) -> Paper:
    return paper_from_record(
        {"id": pid, "abstract": TEXT[text], **fields}, source=f"test:{pid}"
    )


def _merged(corpus: dict[str, Paper], batch: list[Paper]) -> tuple[dict[str, Any], set[str]]:
    out = dict(corpus)
    report = BuildReport()
    _merge_into(out, batch, report)
    papers = {pid: (p.text_hash, p.title, p.year) for pid, p in out.items()}
    return papers, {f"{p.reason}" for p in report.problems}


def _every_order(corpus: dict[str, Paper], batch: list[Paper]) -> tuple[dict[str, Any], set[str]]:
    outcomes = {json.dumps(_merged(corpus, list(order)), default=sorted, sort_keys=True)
                for order in itertools.permutations(batch)}
    assert len(outcomes) == 1, outcomes
    return _merged(corpus, batch)


STORED = {p.id: p for p in (_paper("A", "a"), _paper("B", "b"), _paper("C", "c"))}


def test_a_chain_of_texts_applies_in_every_order() -> None:
    # the finding: A takes B's text, B takes a new one
    papers, said = _every_order(STORED, [_paper("A", "b"), _paper("B", "d")])
    assert papers["A"][0] == STORED["B"].text_hash and papers["B"][0] != STORED["B"].text_hash
    assert said == set()


def test_a_chain_ending_on_a_text_kept_is_refused_whole_in_every_order() -> None:
    # B would take C's text, which C keeps: B stays, so A cannot take B's text either
    papers, said = _every_order(STORED, [_paper("A", "b"), _paper("B", "c")])
    assert papers == _merged(STORED, [])[0]
    assert said == {"paper 'B': its new text is paper 'C''s; not applied",
                    "paper 'A': its new text is paper 'B''s; not applied"}


def test_a_swap_and_a_text_freed_for_a_new_id() -> None:
    # A and B swap texts; D (new) takes C's old text as C moves to a new one
    batch = [_paper("A", "b"), _paper("B", "a"), _paper("C", "d"), _paper("D", "c")]
    papers, said = _every_order(STORED, batch)
    assert [papers[x][0] for x in "ABCD"] == [
        STORED["B"].text_hash, STORED["A"].text_hash, _paper("x", "d").text_hash,
        STORED["C"].text_hash]
    assert said == set()


def test_two_updates_to_one_text_and_an_id_twice() -> None:
    batch = [_paper("A", "d"), _paper("B", "d"), _paper("C", "e", title="One"),
             _paper("C", "c", title="Two"), _paper("E", "e")]
    papers, said = _every_order(STORED, batch)
    unchanged = _merged(STORED, [])[0]
    assert papers["A"] == unchanged["A"] and papers["B"] == unchanged["B"]
    assert papers["C"] == unchanged["C"]  # one id, two texts: neither
    assert "E" in papers  # e is free: C's update to it was not applied
    assert said == {
        "paper 'A': its new text is also the new text of 'B' in this input; not applied",
        "paper 'B': its new text is also the new text of 'A' in this input; not applied",
        "id 'C' given twice in one input with different texts; none applied",
    }


def test_new_ids_of_one_text_and_updates_of_fields() -> None:
    batch = [_paper("N2", "d"), _paper("N1", "d"), _paper("A", "a", year=2021),
             _paper("B", "a")]
    papers, said = _every_order(STORED, batch)
    assert "N1" in papers and "N2" not in papers  # the first by id
    assert papers["A"][2] == 2021 and papers["B"][0] == STORED["B"].text_hash
    assert said == {
        "paper 'N2': same text as paper 'N1', already in the graph; not added",
        "paper 'B': its new text is paper 'A''s; not applied",
    }


# ---------------------------------------------------------------- the reader


RECORDS = [
    {"id": "x1", "abstract": TEXT["a"], "title": "Sparse attention"},
    {"id": "x2", "abstract": TEXT["a"].upper(), "year": 2020},  # x1's text, another id
    {"abstract": TEXT["a"], "venue": "ICLR 2021", "title": "Other title"},  # no id
    {"id": "y", "abstract": TEXT["b"]},
    {"id": "y", "abstract": TEXT["c"]},  # y with another text
    {"id": "z", "abstract": TEXT["d"], "keywords": ["adapters"]},
    {"id": "z", "abstract": TEXT["d"], "keywords": ["lora"], "year": 2022},
]


def _read(tmp_path: Path, order: tuple[int, ...]) -> str:
    f = tmp_path / ("r" + "".join(map(str, order)) + ".jsonl")
    f.write_text("".join(json.dumps(RECORDS[i]) + "\n" for i in order), encoding="utf-8")
    result = read_corpus([f])
    papers = sorted((p.id, p.abstract, p.title, p.venue, p.year, p.keywords, p.urls)
                    for p in result.papers)
    said = sorted(p.reason.split(" (")[0] for p in result.problems)  # "(at <where>)" aside
    return json.dumps([papers, said, result.duplicates])


@pytest.mark.parametrize("seed", range(3))
def test_the_reader_merges_records_the_same_in_any_order(tmp_path: Path, seed: int) -> None:
    orders = list(itertools.permutations(range(len(RECORDS))))
    picked = [orders[0], orders[-1], *orders[1 + seed :: 997]]
    outcomes = {_read(tmp_path, order) for order in picked}
    assert len(outcomes) == 1, outcomes
    papers, said, duplicates = json.loads(outcomes.pop())
    by_id = {p[0]: p for p in papers}
    assert sorted(by_id) == ["x1", "z"] and duplicates == 3
    assert by_id["x1"][2] == "Sparse attention" and by_id["x1"][3] == "ICLR 2021"
    assert by_id["x1"][4] == 2020  # filled from x2, merged into x1 (the first id)
    assert by_id["z"][5] == ["adapters"] and by_id["z"][4] == 2022
    assert said == ["duplicate id 'y' with different text", "duplicate id 'y' with different text",
                    "id 'x2' has the same text as 'x1'"]
