"""The BibTeX reader: a real-looking .bib file, field mapping, bad entries, garbage."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graph.ingest import read_bibtex, read_corpus
from graph.ingest.bibtex import strip_braces
from graph.model import Paper

REFS = Path(__file__).parent / "data" / "refs.bib"
ABSTRACT = (
    "Diffusion models can be sampled with very few steps when the noise schedule is "
    "learned jointly with the denoiser during training."
)


def by_id(papers: list[Paper]) -> dict[str, Paper]:
    return {p.id: p for p in papers}


def test_refs_bib_papers() -> None:
    result = read_bibtex(REFS)
    papers = by_id(result.papers)
    assert sorted(papers) == ["hu2022lora", "mueller2023graphs", "smith2021"]
    lora = papers["hu2022lora"]
    assert lora.title == "LoRA: Low-Rank Adaptation of Large Language Models"
    assert lora.venue == "International Conference on Learning Representations"  # @string
    assert lora.year == 2022
    assert lora.authors[:2] == ("Edward J. Hu", "Yelong Shen") and len(lora.authors) == 8
    assert lora.keywords == (
        "parameter-efficient fine-tuning", "low-rank adaptation", "large language models"
    )
    assert lora.urls == ("https://openreview.net/forum?id=nZeVKeeFYf9",)
    assert "We propose Low-Rank Adaptation, or LoRA, which freezes" in lora.abstract
    assert lora.source == f"{REFS}:7"
    graphs = papers["mueller2023graphs"]
    assert graphs.authors == ("Jörg Müller", "María García", "The GNN Benchmark Consortium")
    assert graphs.title == "Sparse Message Passing for Graph Neural Networks at Scale"
    assert graphs.venue == "Transactions on Machine Learning Research" and graphs.year == 2023
    assert graphs.urls == ("https://doi.org/10.48550/arXiv.2301.00001",)
    assert graphs.keywords == ("graph neural networks", "sparsity")
    assert "sampling k neighbours per node keeps accuracy within 1% of" in graphs.abstract
    smith = papers["smith2021"]
    assert smith.authors == ("Alice Smith",)
    assert smith.venue == "Journal of Machine Learning Research"


def test_refs_bib_problems_name_the_entry_and_line() -> None:
    problems = [(p.line, p.reason) for p in read_bibtex(REFS).problems]
    assert [line for line, _ in problems] == [36, 43, 49, 56, 62]
    reasons = dict(problems)
    assert reasons[36] == "entry 'noabstract2024': no abstract"
    assert reasons[43].startswith("entry 'broken2024': unreadable: ")
    assert reasons[49].startswith("entry 'concept:reserved': field 'id': ")
    assert reasons[56] == "duplicate entry key 'hu2022lora'; this entry skipped"
    assert reasons[62].startswith("authors: dropped 'Lee, Bo, Jr., Carl'")
    lines = REFS.read_text(encoding="utf-8").split("\n")
    for line, _ in problems:
        assert lines[line - 1].startswith("@"), (line, lines[line - 1])


def test_bib_files_are_found_in_folders(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "REFS.BIB").write_bytes(REFS.read_bytes())
    result = read_corpus([tmp_path])
    assert sorted(p.id for p in result.papers) == ["hu2022lora", "mueller2023graphs", "smith2021"]
    assert len(result.problems) == 5


def test_undecodable_byte_skips_only_its_entry(tmp_path: Path) -> None:
    path = tmp_path / "bad.bib"
    path.write_bytes(
        b"@article{a, title={Caf\xe9}, abstract={" + ABSTRACT.encode() + b"}}\n\n"
        b"@article{b, abstract={" + ABSTRACT.encode() + b" Again.}}\n"
    )
    result = read_bibtex(path)
    assert [p.id for p in result.papers] == ["b"]
    [problem] = result.problems
    assert problem.line == 1 and problem.reason.startswith("entry 'a': not valid UTF-8")


def test_doi_forms_and_url_together(tmp_path: Path) -> None:
    path = tmp_path / "d.bib"
    path.write_text(
        f"@misc{{x, doi = {{https://doi.org/10.1/abc}}, url = {{https://x.org/p}},"
        f" abstract = {{{ABSTRACT}}}}}\n"
        f"@misc{{y, doi = {{doi:10.2/def}}, abstract = {{{ABSTRACT} Two.}}}}\n",
        encoding="utf-8",
    )
    papers = by_id(read_bibtex(path).papers)
    assert papers["x"].urls == ("https://x.org/p", "https://doi.org/10.1/abc")
    assert papers["y"].urls == ("https://doi.org/10.2/def",)


@pytest.mark.parametrize(
    "content", ["", "% only a comment\n", "@comment{x}\n@string{a = {b}}\n", "just text\n"]
)
def test_no_entries_is_no_records(tmp_path: Path, content: str) -> None:
    path = tmp_path / "e.bib"
    path.write_text(content, encoding="utf-8")
    result = read_bibtex(path)
    assert result.papers == []
    assert [(p.line, p.reason) for p in result.problems] == [(None, "no records")]


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("{LoRA}: Low-Rank", "LoRA: Low-Rank"),
        ("M{\\\"u}ller", "M\\\"uller"),
        ("\\emph{x} and {y}", "\\emph{x} and y"),
        ("\\frac{a}{b}", "\\frac{a}{b}"),
        ("a \\{set\\} b", "a \\{set\\} b"),
        ("{{nested}} {}", "nested "),
        ("unbalanced } and {", "unbalanced  and "),
    ],
)
def test_strip_braces(raw: str, clean: str) -> None:
    assert strip_braces(raw) == clean


FRAGMENTS = [
    "@article{", "@misc(", "@string{", "@comment{", "@preamble{", "}", ")", "{", ",", "=",
    '"', "#", "\\", "\n", "title", "abstract = {", "author = ", " and ", "key1", "key1,",
    ABSTRACT, "\\\"u", "$x$", "\x00", "\udfff", "é", "%",
]


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(parts=st.lists(st.sampled_from(FRAGMENTS), max_size=80))
def test_garbage_bib_never_crashes(parts: list[str]) -> None:
    raw = "".join(parts).encode("utf-8", "surrogatepass")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "g.bib"
        path.write_bytes(raw)
        result = read_bibtex(path)
    n_lines = raw.count(b"\n") + 1
    for p in result.problems:
        assert p.line is None or 1 <= p.line <= n_lines, p
        p.reason.encode("utf-8")
    for paper in result.papers:
        for text in (paper.id, paper.abstract, paper.title or "", *paper.authors):
            text.encode("utf-8")
            assert "\x00" not in text


# ---------------------------------------------------------------- issue 39, finding 11


def _bib(tmp_path: Path, text: str, name: str = "f.bib") -> tuple[dict[str, Paper], list[str]]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    result = read_bibtex(path)
    return by_id(result.papers), [f"{p.line}: {p.reason}" for p in result.problems]


def test_string_concatenation_is_resolved(tmp_path: Path) -> None:
    papers, said = _bib(tmp_path, (
        '@string{neurips = "NeurIPS"}\n'
        '@STRING{conf = "Proc. " # neurips # { 2023}}\n'
        f"@inproceedings{{a, booktitle = conf, month = jan, abstract = {{{ABSTRACT}}}}}\n"
        f'@article{{b, journal = "J. of " # Conf, abstract = "{ABSTRACT}" # " More."}}\n'
    ))
    assert said == []
    assert papers["a"].venue == "Proc. NeurIPS 2023"
    assert papers["b"].venue == "J. of Proc. NeurIPS 2023"
    assert papers["b"].abstract.endswith("training. More.")


def test_an_undefined_macro_or_a_loop_is_said_and_drops_its_field(tmp_path: Path) -> None:
    """Dropped with a problem at the entry's line, the record kept; for the abstract, the
    record rejected with the reason (they were stored as the macro's name, silently)."""
    papers, said = _bib(tmp_path, (
        "@string{x = y}\n@string{y = {z} # x}\n"
        f"@article{{a, journal = nowhere, title = x, abstract = {{{ABSTRACT}}}}}\n"
        "@article{b, abstract = nowhere # {and more words than five here}}\n"
    ))
    assert papers["a"].venue is None and papers["a"].title is None and "b" not in papers
    assert said == [
        "3: title: @string macros refer to one another in a loop (x -> y -> x); field dropped",
        "3: journal: undefined @string macro 'nowhere'; field dropped",
        "4: entry 'b': abstract: undefined @string macro 'nowhere'",
    ]


@pytest.mark.parametrize(("tex", "text"), [
    ("{\\ss}", "ß"), ("Stra{\\ss}e", "Straße"), ("\\AA ngstr{\\\"o}m", "Ångström"),
    ("{\\L}ukasz", "Łukasz"), ("{\\o}ystein {\\O}", "øystein Ø"),
    ("\\ae{}ther {\\OE}uvre", "æther Œuvre"), ("Garc{\\'\\i}a", "García"),
])
def test_tex_letters_are_decoded(tmp_path: Path, tex: str, text: str) -> None:
    papers, said = _bib(tmp_path, (
        f"@article{{a, title = {{{tex}}}, author = {{{tex} Smith}}, abstract = {{{ABSTRACT}}}}}"
    ))
    assert said == [] and papers["a"].title == text and papers["a"].authors == (f"{text} Smith",)


def test_crossref_fields_are_inherited(tmp_path: Path) -> None:
    papers, said = _bib(tmp_path, (
        "@inproceedings{child, title = {A Paper}, crossref = {PROC}}\n"
        f"@proceedings{{proc, title = {{Proc. of X}}, year = 2021, abstract = {{{ABSTRACT}}},"
        " url = {https://x.org/proc}}\n"
        "@inproceedings{lost, title = {Lost}, crossref = {nowhere}}\n"
        "@inproceedings{own, crossref = {proc}, booktitle = {Own}, "
        f"abstract = {{{ABSTRACT} Own.}}}}\n"
    ))
    child = papers["child"]
    assert child.title == "A Paper" and child.venue == "Proc. of X" and child.year == 2021
    assert child.urls == ("https://x.org/proc",) and child.abstract == ABSTRACT
    assert papers["own"].venue == "Own" and papers["own"].year == 2021
    assert "proc" not in papers  # the parent's text is its child's: merged into it
    assert "3: entry 'lost': no abstract; crossref 'nowhere': no entry with that key; " \
        "nothing inherited" in said


def test_a_line_starting_with_an_entry_inside_a_value_does_not_split_it(tmp_path: Path) -> None:
    papers, said = _bib(tmp_path, (
        "@article{a,\n  title = {T},\n  abstract = {" + ABSTRACT + "\n"
        "@misc{ is how one cites software, we note.}}\n}\n"
        '@article{b, abstract = "' + ABSTRACT + ' Two.\n@book{x} in quotes."}\n'
        "@article{broken, abstract = {never closed\n"
        f"@article{{c, abstract = {{{ABSTRACT} Three.}}}}\n"
    ))
    assert papers["a"].abstract.endswith("@misc is how one cites software, we note.")
    assert papers["b"].abstract.endswith("Two. @bookx in quotes.")
    assert "c" in papers  # an entry that never closes still ends at the next entry
    assert [s.split(":")[0] for s in said] == ["8"]  # the broken entry alone


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_utf16_with_a_bom_is_read_and_without_is_said(tmp_path: Path, encoding: str) -> None:
    text = REFS.read_text(encoding="utf-8")
    path = tmp_path / "wide.bib"
    bom = {"utf-16-be": b"\xfe\xff"}.get(encoding, b"")
    path.write_bytes(bom + text.encode(encoding))
    assert sorted(p.id for p in read_bibtex(path).papers) == sorted(
        p.id for p in read_bibtex(REFS).papers)
    path.write_bytes(text.encode("utf-16-le"))
    [problem] = read_bibtex(path).problems
    assert problem.reason.startswith("not valid UTF-8 (it looks like UTF-16")
