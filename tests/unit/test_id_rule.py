"""The one id rule (graph/ids.py) at ingest: files on disk, read as ``citegraph add`` reads them."""

from __future__ import annotations

import csv
import json
import unicodedata
from pathlib import Path

import pytest

from graph.errors import InputError
from graph.ids import id_key, is_empty_id, spellings
from graph.ingest import paper_from_record, read_corpus

NFC = unicodedata.normalize("NFC", "café")
NFD = unicodedata.normalize("NFD", "café")
TEXT_A = "Graph neural networks predict molecular properties with message passing layers."
TEXT_B = "Diffusion models generate images by reversing a gradual noising process step by step."


def _jsonl(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("bad", ["\u200b", "\u200b\u200c\ufeff", " \u2060 ", "\u202e"])
def test_an_id_with_nothing_visible_is_refused_and_the_others_go_in(
    tmp_path: Path, bad: str
) -> None:
    f = tmp_path / "in.csv"
    with f.open("w", newline="", encoding="utf-8") as out:
        w = csv.writer(out)
        w.writerow(["id", "abstract"])
        w.writerow([bad, TEXT_A])
        w.writerow(["good-1", TEXT_B])
    result = read_corpus([f])
    assert [p.id for p in result.papers] == ["good-1"]
    (problem,) = result.problems
    assert problem.line == 2 and "field 'id'" in problem.reason
    assert "no visible character" in problem.reason and "U+" in problem.reason


def test_blank_ids_are_missing_not_refused() -> None:
    for blank in ("", "   ", "\t"):
        assert is_empty_id(blank)
        paper = paper_from_record({"id": blank, "abstract": TEXT_A}, source="t")
        assert paper.id.startswith("p-")  # made from the text, as for no id at all


@pytest.mark.parametrize("odd", ["a,b", "x\ufeffy", "\u202eabc-rtl", " pad ", NFD])
def test_odd_but_visible_ids_are_kept_as_given_but_for_outer_blanks(odd: str) -> None:
    paper = paper_from_record({"id": odd, "abstract": TEXT_A}, source="t")
    assert paper.id == odd.strip()  # an NFD id is not rewritten: it is found by any spelling


def test_two_spellings_in_one_read_are_one_id(tmp_path: Path) -> None:
    same = _jsonl(tmp_path / "same.jsonl", [{"id": NFC, "abstract": TEXT_A},
                                              {"id": NFD, "abstract": TEXT_A}])
    result = read_corpus([same])
    assert [p.id for p in result.papers] == [NFC] and result.duplicates == 1
    assert result.problems == []
    other = _jsonl(tmp_path / "other.jsonl", [{"id": NFD, "abstract": TEXT_A},
                                                {"id": NFC, "abstract": TEXT_B}])
    result = read_corpus([other])
    assert result.papers == []  # one id, two texts: neither is kept, both are said
    assert [p.line for p in result.problems] == [1, 2]
    assert all("duplicate id" in p.reason for p in result.problems)


def test_spellings_try_the_text_as_given_first() -> None:
    assert spellings("p-1") == ("p-1",)
    assert spellings(" p-1 ") == (" p-1 ", "p-1")
    assert spellings(NFD) == (NFD, NFC)
    assert spellings(NFC) == (NFC, NFD)
    assert spellings("\u212a") == ("\u212a", "K")  # the Kelvin sign is K once composed
    assert spellings("   ") == ("   ",)
    assert id_key(NFD) == id_key(NFC) == NFC


def test_a_record_id_is_never_silently_replaced() -> None:
    with pytest.raises(InputError, match="no visible character"):
        paper_from_record({"id": "\u200b", "abstract": TEXT_A}, source="t")


def test_bidi_overrides_leave_titles_and_abstracts_but_ids_stay_exact(tmp_path: Path) -> None:
    """probe4 N3: a title holding U+202E displays reversed from there on in every listing
    and export ("Trojan source" spoofing). Titles and abstracts lose the embeddings,
    overrides and isolates; an id is matched exactly, never cleaned."""
    f = _jsonl(tmp_path / "in.jsonl", [{
        "id": "bidi-1", "title": "Safe \u202etxet desrever\u202c title \u2066x\u2069",
        "abstract": TEXT_A.replace("molecular", "mol\u202eecular"),
    }])
    result = read_corpus([f])
    (paper,) = result.papers
    assert paper.title == "Safe txet desrever title x"
    assert paper.abstract == TEXT_A
    assert not any("\u202a" <= c <= "\u202e" or "\u2066" <= c <= "\u2069"
                   for c in paper.title + paper.abstract + paper.label)
