"""Issue 39, finding 14: a field given twice, and links that are not links.

* A JSON object naming a key twice kept the last value without a word: now the record is
  rejected ("duplicate key 'id'"), for every key and in both JSON readers. Two names of
  one field ("id" and "paper_id", "ID" and "id", a CSV column named twice) with different
  values reject the record too, in every reader (the first used to win, silently).
* A ``javascript:`` URL was stored and served as ``Paper.url``. Only http(s) links are
  kept, a DOI or an arXiv id as its https URL; anything else is dropped with a problem
  naming file:line (the record kept), in every reader and the API's input alike.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph.errors import InputError
from graph.ingest import paper_from_record, read_corpus
from graph.ingest.records import link

ABSTRACT = "We compress key value caches of language models by merging similar heads."


def _read(path: Path, text: str) -> tuple[dict[str, tuple[str, ...]], list[str]]:
    path.write_text(text, encoding="utf-8")
    result = read_corpus([path])
    return {p.id: p.urls for p in result.papers}, [str(p) for p in result.problems]


@pytest.mark.parametrize("key", ["id", "abstract", "title", "urls", "year"])
@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_a_json_key_given_twice_rejects_the_record(tmp_path: Path, key: str, suffix: str) -> None:
    values = {"id": '"a"', "abstract": json.dumps(ABSTRACT), "title": '"T"', "urls": "[]",
              "year": "2020"}
    twice = ", ".join(f'"{k}": {v}' for k, v in values.items()) + f', "{key}": {values[key]}'
    good = json.dumps({"id": "b", "abstract": ABSTRACT + " Again."})
    text = f"{{{twice}}}\n{good}\n" if suffix == ".jsonl" else f"[{{{twice}}},\n{good}]\n"
    path = tmp_path / f"d{suffix}"
    papers, said = _read(path, text)
    assert list(papers) == ["b"]
    assert said == [f"{path}:1: duplicate key '{key}'"]


def test_two_names_of_one_field_with_different_values(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    papers, said = _read(path, (
        "id,ID,paper_id,abstract\n"
        f"a,a,,{ABSTRACT}\n"  # the same value twice, or one missing: fine
        f"b,c,,{ABSTRACT} Two.\n"
    ))
    assert list(papers) == ["a"]
    assert said == [f"{path}:3: fields 'id' and 'ID' both give the id, with different values"]
    with pytest.raises(InputError, match="'summary' and 'abstract' both give the abstract"):
        paper_from_record({"summary": ABSTRACT, "abstract": ABSTRACT + " Other."}, source="s")
    # a missing first name no longer hides the second
    paper = paper_from_record({"abstract": "", "summary": ABSTRACT}, source="s")
    assert paper.abstract == ABSTRACT


@pytest.mark.parametrize(("given", "kept"), [
    ("https://x.org/p?q=1#f", "https://x.org/p?q=1#f"),
    ("HTTP://X.ORG", "HTTP://X.ORG"),
    ("doi:10.1145/3292500.3330701", "https://doi.org/10.1145/3292500.3330701"),
    ("10.48550/arXiv.2301.00001", "https://doi.org/10.48550/arXiv.2301.00001"),
    ("arXiv:2106.09685v2", "https://arxiv.org/abs/2106.09685v2"),
    ("arxiv: hep-th/9901001", "https://arxiv.org/abs/hep-th/9901001"),
    ("www.example.org/a", "https://www.example.org/a"),
    ("javascript:alert(1)", None), ("JavaScript:alert(document.cookie)", None),
    ("data:text/html,<script>x</script>", None), ("vbscript:x", None),
    ("file:///etc/passwd", None), ("ftp://files.org/d", None), ("/relative/path", None),
    ("https://", None), ("http://[::1", None), ("https://ex ample.org/", None),
    ('https://x.org/"onmouseover="x', "https://x.org/%22onmouseover=%22x"),
    ("https://x.org/a b<c>", "https://x.org/a%20b%3Cc%3E"),
    ("not a link", None),
])
def test_link(given: str, kept: str | None) -> None:
    assert link(given) == kept


READERS = {
    ".jsonl": lambda url: json.dumps({"id": "a", "url": url, "abstract": ABSTRACT}) + "\n",
    ".csv": lambda url: f"id,url,abstract\na,{url},{ABSTRACT}\n",
    ".tsv": lambda url: f"id\turl\tabstract\na\t{url}\t{ABSTRACT}\n",
    ".bib": lambda url: f"@misc{{a, url = {{{url}}}, abstract = {{{ABSTRACT}}}}}\n",
    ".txt": lambda url: f"{ABSTRACT} Code at {url} today.\n",
}


@pytest.mark.parametrize("suffix", sorted(READERS))
def test_every_reader_keeps_only_links(tmp_path: Path, suffix: str) -> None:
    bad = "ftp://files.org/x" if suffix == ".txt" else "javascript:alert(1)"  # what a text holds
    path = tmp_path / f"r{suffix}"
    papers, said = _read(path, READERS[suffix](bad))
    [(pid, urls)] = papers.items()
    assert urls == ()
    line = 2 if suffix in (".csv", ".tsv") else 1  # the header is line 1
    [problem] = said
    assert problem.startswith(f"{path}:{line}: ") and f"dropped {bad!r}" in problem
    assert "not an http(s), DOI or arXiv link" in problem
    papers, said = _read(path, READERS[suffix]("https://ok.org/p"))
    assert list(papers.values()) == [("https://ok.org/p",)] and said == []


def test_a_bibtex_doi_that_is_no_doi_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "d.bib"
    papers, said = _read(path, (
        f"@misc{{a, doi = {{javascript:alert(1)}}, abstract = {{{ABSTRACT}}}}}\n"
        f"@misc{{b, doi = {{https://dx.doi.org/10.1/x}}, abstract = {{{ABSTRACT} Two.}}}}\n"
    ))
    assert papers == {"a": (), "b": ("https://doi.org/10.1/x",)}
    assert said == [f"{path}:1: urls: dropped 'doi:javascript:alert(1)': not an http(s), DOI "
                    "or arXiv link"]
