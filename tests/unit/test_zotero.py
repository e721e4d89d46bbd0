"""Zotero in and out: CSL-JSON and RIS read, DOIs as identifiers, BibTeX/RIS written back.

The round trip starts from the project's real seeds (seeds/), given titles, authors and
DOIs as a Zotero library would hold them.
"""

from __future__ import annotations

import json
from pathlib import Path

import bibtexparser
import rispy

from graph import bibliography
from graph.ingest import read_corpus
from graph.model import Paper
from graph.refs import normalize_doi, reference_key
from tests.support.seeds import SEEDS

ABSTRACT = "We study citation graphs of research papers with a method that is new here."


def _seed_papers() -> list[Paper]:
    """The seeds as a library: each with a title, two authors, a year and a DOI."""
    papers = read_corpus([SEEDS]).papers
    assert len(papers) >= 5
    return [
        Paper(
            id=f"seed{i}", label=f"Seed paper {i}: {p.label}", abstract=p.abstract,
            text_hash=p.text_hash, title=f"Seed paper {i}: {p.label}", venue=p.venue,
            year=p.year, authors=(f"Ada{i} Lovelace", "Alan M. Turing"),
            keywords=("seeds", f"k{i}"), doi=f"10.5555/seed.{i}x",
        )
        for i, p in enumerate(papers)
    ]


def _csl(papers: list[Paper]) -> list[dict[str, object]]:
    def author(name: str) -> dict[str, str]:
        given, _, family = name.rpartition(" ")
        return {"family": family, "given": given}

    return [
        {"id": p.id, "type": "article-journal", "title": p.title, "abstract": p.abstract,
         "author": [author(a) for a in p.authors], "issued": {"date-parts": [[p.year, 4]]},
         "container-title": p.venue, "keyword": ", ".join(p.keywords),
         # as Zotero writes it, and odder: upper case, a URL prefix
         "DOI": f"https://doi.org/{p.doi.upper()}" if i % 2 else (p.doi or "")}
        for i, p in enumerate(papers) if p.doi
    ]


def _same(got: list[Paper], want: list[Paper]) -> None:
    def facts(p: Paper) -> tuple[object, ...]:
        return (p.id, p.title, p.doi, p.authors, p.year, p.venue, p.abstract, p.keywords)

    assert sorted(map(facts, got)) == sorted(map(facts, want))


def test_seeds_round_trip_through_csl_ris_bibtex(tmp_path: Path) -> None:
    seeds = _seed_papers()
    csl = tmp_path / "library.json"
    csl.write_text(json.dumps(_csl(seeds)), encoding="utf-8")
    read = read_corpus([csl])
    assert not read.problems
    _same(read.papers, seeds)

    ris = tmp_path / "out.ris"
    ris.write_text(bibliography.to_ris(read.papers), encoding="utf-8")
    bib = tmp_path / "out.bib"
    bib.write_text(bibliography.to_bibtex(read.papers), encoding="utf-8")

    # the libraries themselves read what was written
    entries = rispy.loads(ris.read_text(encoding="utf-8"))
    assert sorted(e["doi"] for e in entries) == sorted(p.doi for p in seeds if p.doi)
    assert all(e["type_of_reference"] == "JOUR" and e["abstract"] for e in entries)
    library = bibtexparser.parse_string(bib.read_text(encoding="utf-8"))
    assert not library.failed_blocks
    assert sorted(e.key for e in library.entries) == sorted(p.id for p in seeds)
    assert {e.key: e["doi"] for e in library.entries} == {p.id: p.doi for p in seeds}

    for written in (ris, bib):
        again = read_corpus([written])
        assert not again.problems, written
        _same(again.papers, seeds)


def test_the_same_paper_from_bibtex_and_ris_is_one_paper(tmp_path: Path) -> None:
    (tmp_path / "a.bib").write_text(
        "@article{vaswani, title = {Attention Is All You Need}, doi = {10.1/ABC},\n"
        f"  abstract = {{{ABSTRACT}}}, year = 2017}}\n", encoding="utf-8")
    # another abstract (a word more), no id, the DOI as a URL in another case
    (tmp_path / "b.ris").write_text(
        "TY  - JOUR\nTI  - Attention is all you need\nDO  - https://doi.org/10.1/abc\n"
        f"AB  - {ABSTRACT} Indeed.\nAU  - Vaswani, Ashish\nT2  - NeurIPS\nER  - \n",
        encoding="utf-8")
    result = read_corpus([tmp_path])
    assert [p.id for p in result.papers] == ["vaswani"]
    (paper,) = result.papers
    assert paper.doi == "10.1/abc" and paper.abstract == ABSTRACT
    assert paper.authors == ("Ashish Vaswani",) and paper.venue == "NeurIPS"  # filled in
    assert result.duplicates == 1 and not result.problems


def test_a_doi_joins_records_a_text_joins_too(tmp_path: Path) -> None:
    """A DOI match and a text match combine: A (text 1, DOI d) and B (text 2, DOI d)
    join through the DOI, C (text 2, no DOI) through B's text: one paper."""
    rows = [
        {"id": "a", "abstract": ABSTRACT, "doi": "doi:10.9/D"},
        {"id": "b", "abstract": ABSTRACT + " Two.", "doi": "10.9/d"},
        {"abstract": ABSTRACT + " Two."},
        {"id": "other", "abstract": ABSTRACT + " Three.", "doi": "10.9/e"},
    ]
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    result = read_corpus([path])
    assert sorted(p.id for p in result.papers) == ["a", "other"]
    assert result.duplicates == 2
    assert [str(p) for p in result.problems] == [
        f"{path}:2: id 'b' has the same DOI as 'a' (at {path}:1); merged into it"
    ]


def test_one_id_on_two_texts_with_one_doi_is_one_paper(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(
        json.dumps({"id": "x", "abstract": ABSTRACT, "doi": "10.9/x"}) + "\n"
        + json.dumps({"id": "x", "abstract": ABSTRACT + " Later.", "doi": "10.9/X"}) + "\n"
        + json.dumps({"id": "y", "abstract": ABSTRACT + " One."}) + "\n"
        + json.dumps({"id": "y", "abstract": ABSTRACT + " Two."}) + "\n",
        encoding="utf-8")
    result = read_corpus([path])
    assert [p.id for p in result.papers] == ["x"]  # y: two texts, nothing joins them
    assert [p.line for p in result.problems] == [3, 4]
    assert all("duplicate id 'y' with different text" in p.reason for p in result.problems)


def test_hostile_zotero_files_report_each_record(tmp_path: Path) -> None:
    ris = tmp_path / "lib.ris"
    ris.write_text(
        "TY  - JOUR\nID  - good1\nTI  - Fine\n"
        f"AB  - {ABSTRACT} One.\nDO  - HTTPS://DX.DOI.ORG/10.1000/ODD.Case\nER  - \n"
        # no ER: ends where the next TY starts
        f"TY  - JOUR\nID  - noend\nAB  - {ABSTRACT} Two.\n"
        # a huge abstract: rejected, with where
        f"TY  - JOUR\nID  - huge\nAB  - {'word ' * 30_000}\nER  - \n"
        # a huge venue: dropped, the record kept
        f"TY  - JOUR\nID  - bigvenue\nT2  - {'v' * 20_000}\nAB  - {ABSTRACT} Three.\nER  - \n"
        "TY  - JOUR\nID  - noabstract\nTI  - Only a title\nER  - \n",
        encoding="utf-8")
    csl = tmp_path / "lib.json"
    csl.write_text(json.dumps([
        {"id": "c1", "type": "article", "title": "Bad date", "abstract": ABSTRACT + " Four.",
         "issued": {"date-parts": "last spring"}, "DOI": "not a doi"},
        {"id": "c2", "type": "article", "title": "Good", "abstract": ABSTRACT + " Five.",
         "issued": {"date-parts": [[2021]]}, "author": [{"family": "Curie", "given": "Marie"}]},
    ], indent=1), encoding="utf-8")
    result = read_corpus([tmp_path])
    papers = {p.id: p for p in result.papers}
    assert sorted(papers) == ["bigvenue", "c1", "c2", "good1", "noend"]
    assert papers["good1"].doi == "10.1000/odd.case"
    assert papers["bigvenue"].venue is None
    assert papers["c1"].year is None and papers["c1"].doi is None
    assert papers["c2"].year == 2021 and papers["c2"].authors == ("Marie Curie",)
    said = [(Path(p.path).name, p.line, p.kept, p.reason) for p in result.problems]
    assert ("lib.json", 2, True, "issued {'date-parts': 'last spring'} is not a date "
            "(expected {\"date-parts\": [[year, month, day]]}); year dropped") in said
    assert ("lib.json", 2, True, "doi 'not a doi' is not a DOI (10.<registrant>/<suffix>); "
            "field dropped") in said
    assert ("lib.ris", 7, True, "no ER line (end of record): the record ends at line 9, "
            "before the next TY") in said
    assert any(s[:3] == ("lib.ris", 10, False) and s[3].startswith(
        "record 3: abstract too long") for s in said)
    assert any(s[:3] == ("lib.ris", 14, True) and s[3].startswith("venue too long")
               for s in said)
    assert ("lib.ris", 19, False, "record 5: no abstract") in said
    assert len(said) == 6


def test_a_ris_file_without_records_says_so(tmp_path: Path) -> None:
    path = tmp_path / "empty.ris"
    path.write_text("AU  - Stray, Tag\nsome text\n", encoding="utf-8")
    result = read_corpus([path])
    assert not result.papers
    assert [(p.line, p.reason) for p in result.problems] == [
        (1, "tag AU before any TY (start of record); line skipped"),
        (2, "text outside a record: 'some text'; skipped"),
        (None, "no records (no TY line)"),
    ]


def test_references_as_strings_and_objects(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({
        "id": "a", "abstract": ABSTRACT,
        "references": ["b", "https://doi.org/10.1/XY", "arXiv:1706.03762v5",
                       {"doi": "doi:10.2/Z", "title": "ignored: the DOI wins"},
                       {"arxiv": "2101.00001"}, {"id": "c"}, {"title": " Attention  Is All "},
                       {"url": "no key"}, 3.5, [], "doi:nonsense"],
    }), encoding="utf-8")
    result = read_corpus([path])
    (paper,) = result.papers
    assert paper.references == ("b", "doi:10.1/xy", "arxiv:1706.03762", "doi:10.2/z",
                                "arxiv:2101.00001", "c", "Attention Is All")
    assert result.unparseable_references == 4
    assert sum("references: dropped" in p.reason for p in result.problems) == 4


def test_doi_and_reference_keys() -> None:
    for given in ("10.1/ABC", "doi:10.1/abc", "DOI: 10.1/Abc", "https://doi.org/10.1/abc",
                  "http://dx.doi.org/10.1/ABC", "https://www.doi.org/10.1/abc"):
        assert normalize_doi(given) == "10.1/abc", given
    assert normalize_doi("10.1") is None and normalize_doi("https://example.org/10.1/x") is None
    assert reference_key(42) == "42" and reference_key(True) is None
    # a title that starts like a prefix is a title, not a broken DOI
    assert reference_key("Doi Moi reforms in Vietnam") == "Doi Moi reforms in Vietnam"
    assert reference_key("https://example.org/a paper") == "https://example.org/a paper"
    assert reference_key({"ID": "p1"}) == "p1" and reference_key({}) is None
