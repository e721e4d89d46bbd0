"""Unit tests for graph.ingest: readers, cleaning, ids, duplicates and bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graph.errors import InputError
from graph.ingest import (
    MAX_ABSTRACT_CHARS,
    InputProblem,
    ReadResult,
    clean_text,
    normalized_key,
    paper_from_record,
    read_corpus,
    read_jsonl,
    read_table,
    read_text,
    text_hash,
)

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT / "seeds"
# ../shared beside the checkout, as CI lays it out
ICLR2021 = Path(__file__).resolve().parents[3] / "shared" / "data" / "iclr2021" / "paperlist.tsv"

A1 = (
    "We propose a simple method for learning sparse graph representations that scales "
    "to millions of nodes and improves accuracy on five benchmarks."
)
A2 = (
    "Diffusion models can be personalised with very few images when the rank of the "
    "fine-tuned parameters is explicitly controlled during training."
)
A3 = (
    "Large language models are often augmented with retrieved contexts, and we study "
    "when those contexts help or hurt the final answer quality."
)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def reasons(result: ReadResult) -> list[str]:
    return [str(p) for p in result.problems]


# --------------------------------------------------------------------------- seeds


def test_seed_files_read_cleanly() -> None:
    files = sorted(SEEDS.glob("*.txt"))
    assert len(files) == 4
    expected = 0
    for f in files:
        paragraphs = [p for p in f.read_text(encoding="utf-8").split("\n\n") if p.strip()]
        expected += len(paragraphs) - 1  # minus the header
        single = read_text(f)
        assert single.problems == []
        assert len(single.papers) == len(paragraphs) - 1
    assert expected == 76
    result = read_corpus([SEEDS])
    assert result.problems == []
    assert not result.partial
    assert len(result.papers) == 76
    assert result.duplicates == 0
    assert {p.venue for p in result.papers} == {"ICLR 2025"}
    assert {p.year for p in result.papers} == {2025}
    assert len({p.id for p in result.papers}) == 76


def test_chinese_header_gives_venue() -> None:
    f = SEEDS / "001_b06ed20bc8a8782e.txt"
    assert f.read_text(encoding="utf-8").startswith("ICLR 2025 论文列表")
    result = read_text(f)
    assert {p.venue for p in result.papers} == {"ICLR 2025"}


def test_seed_abstracts_have_no_residue() -> None:
    result = read_corpus([SEEDS])
    for paper in result.papers:
        for residue in ("$", "\\", "**", "http", "{\\", "chal- lenging"):
            assert residue not in paper.abstract, (residue, paper.source)
        # cleaning is idempotent, so hashing the clean text gives the stored hash
        assert clean_text(paper.abstract)[0] == paper.abstract
        assert text_hash(paper.abstract) == paper.text_hash
        assert paper.id == "p-" + paper.text_hash[:12]
        assert paper.label.endswith("…")
        assert paper.title is None


def test_seed_sources_point_at_paragraph_lines() -> None:
    f = SEEDS / "000_1bd0d05fbd108b87.txt"
    result = read_text(f)
    assert result.papers[0].source == f"{f}:3"
    lines = f.read_text(encoding="utf-8").split("\n")
    for paper in result.papers:
        line = int(paper.source.rsplit(":", 1)[1])  # type: ignore[union-attr]
        assert lines[line - 1].strip()
        assert lines[line - 2].strip() == ""


def test_seed_urls_extracted() -> None:
    result = read_corpus([SEEDS])
    urls = {u for p in result.papers for u in p.urls}
    assert "https://github.com/jujulili888/GraphBridge" in urls
    assert "https://github.com/RUCKBReasoning/LLM-Streamline" in urls  # from \href
    assert "https://devzhk.github.io/InverseBench/" in urls  # markdown link
    assert len(urls) == 16


def test_ids_stable_across_reads() -> None:
    first = read_corpus([SEEDS])
    second = read_corpus([SEEDS])
    assert [p.id for p in first.papers] == [p.id for p in second.papers]
    assert [p.text_hash for p in first.papers] == [p.text_hash for p in second.papers]


# --------------------------------------------------------------------------- cleaning


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("less than $1$\\% of parameters", "less than 1% of parameters"),
        ("use \\textsc{InverseBench}, a framework", "use InverseBench, a framework"),
        ("we introduce \\emph{scaled potentials} here", "we introduce scaled potentials here"),
        ("a study of *one slice of data* only", "a study of one slice of data only"),
        ("introduces **GraphBridge**, a framework", "introduces GraphBridge, a framework"),
        ("a suite of $>$100K annotations", "a suite of >100K annotations"),
        ("(12 datasets $\\times$ 2 cost functions)", "(12 datasets × 2 cost functions)"),
        ("views at $1024 \\times 1024$ and", "views at 1024 × 1024 and"),
        ("attributions $30\\times$ faster", "attributions 30× faster"),
        ("as shown in Fig.~3 and", "as shown in Fig. 3 and"),
        ("about ~10% faster", "about ~10% faster"),
        ("prior work \\citep{smith2020,doe21} shows", "prior work shows"),
        ("prior work~\\cite{smith2020} shows", "prior work shows"),
        ("we propose $\\textbf{Di}$rectional search", "we propose Directional search"),
        ("with $k$-snapshots we", "with k-snapshots we"),
        ("variables $X_1$, $\\tilde{X}_2$ and", "variables X_1, X̃_2 and"),
        ("a bound of $d^{\\frac{3}{2}}$ holds", "a bound of d^(3/2) holds"),
        ("costs $5 and $10 per item", "costs $5 and $10 per item"),
        ("(**Warning:** This paper", "(Warning: This paper"),
        ("performance--especially here", "performance–especially here"),
        ("a  b\n c\t d", "a b c d"),
        ("is chal- lenging as", "is challenging as"),
        ("is chal-\nlenging as", "is challenging as"),
        ("task- and domain-agnostic transfer", "task- and domain-agnostic transfer"),
        ("low- to high-resolution", "low- to high-resolution"),
        ("fine-tuning and text-to-image models", "fine-tuning and text-to-image models"),
        ("T2I- based models", "T2I- based models"),
        ("the ﬁrst result", "the first result"),
        ("zero- shot and meta- learning", "zero-shot and meta-learning"),
        ("homeomor- phisms and ro- bustness", "homeomorphisms and robustness"),
        ("an It\\^o integral and Erd\\H{o}s", "an Itô integral and Erdős"),
        ("consists of $\\sim$60k runs", "consists of ∼60k runs"),
        ("the `neural path' view", "the ‘neural path’ view"),
        ("Section~\\ref{sec:x} shows", "Section shows"),
    ],
)
def test_clean_text(raw: str, clean: str) -> None:
    assert clean_text(raw)[0] == clean


def test_urls_removed_and_collected() -> None:
    text, urls = clean_text(
        "We build a model. Code is available at https://github.com/a/b. It works well."
    )
    assert text == "We build a model. It works well."
    assert urls == ("https://github.com/a/b",)

    text, urls = clean_text("We compare to the baseline (see www.example.org/x) on all tasks.")
    assert "www" not in text and "example" not in text
    assert urls == ("www.example.org/x",)

    text, urls = clean_text(
        "Results are strong. Our code: [here](https://x.io/code) and "
        "\\href{https://y.io}{this repository}."
    )
    assert text == "Results are strong."
    assert urls == ("https://x.io/code", "https://y.io")  # in order of appearance

    text, urls = clean_text("Data from https://a.org/d and https://a.org/d are reused by us twice.")
    assert urls == ("https://a.org/d",)
    assert "http" not in text


def test_normalized_key_and_hash() -> None:
    assert normalized_key("Hello,  WORLD!  (x)") == "hello world x"
    assert text_hash("We **study** graphs,  deeply.") == text_hash("we study graphs deeply")
    assert text_hash(A1) != text_hash(A2)
    assert len(text_hash(A1)) == 64


# --------------------------------------------------------------------------- records


def test_paper_from_record_fields() -> None:
    paper = paper_from_record(
        {
            "Paper_ID": " 42 ",
            "Title": "A **Title**",
            "Summary": A1,
            "Authors": "Ann Lee; Bo Chen",
            "Year": "2021",
            "Keywords": "graphs, sparsity",
            "References": '["p1", "p2"]',
            "Link": "https://openreview.net/forum?id=42",
        },
        source="x.csv:2",
    )
    assert paper.id == "42"
    assert paper.title == "A Title"
    assert paper.label == "A Title"
    assert paper.authors == ("Ann Lee", "Bo Chen")
    assert paper.year == 2021
    assert paper.keywords == ("graphs", "sparsity")
    assert paper.references == ("p1", "p2")
    assert paper.urls == ("https://openreview.net/forum?id=42",)
    assert paper.source == "x.csv:2"


def test_paper_from_record_placeholder_label_and_generated_id() -> None:
    paper = paper_from_record({"abstract": A1, "id": 7}, source="s", default_venue="ICLR 2025")
    assert paper.id == "7"
    assert paper.venue == "ICLR 2025" and paper.year == 2025
    auto = paper_from_record({"abstract": A1}, source="s")
    assert auto.id == "p-" + text_hash(A1)[:12]
    assert auto.label == "We propose a simple method for learning sparse…"


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        ({"title": "x"}, "no abstract"),
        ({"abstract": "   "}, "empty abstract"),
        ({"abstract": 12}, "abstract is not text"),
        ({"abstract": "too few words here"}, "abstract too short: 4 words"),
        ({"abstract": "a " * (MAX_ABSTRACT_CHARS // 2 + 1)}, "abstract too long"),
        ({"abstract": A1, "id": ["x"]}, "id must be a string or integer"),
    ],
)
def test_paper_from_record_rejects(record: dict[str, object], reason: str) -> None:
    with pytest.raises(InputError, match=reason.replace("(", r"\(")):
        paper_from_record(record, source="s")


def test_bad_optional_field_dropped_and_noted() -> None:
    notes: list[str] = []
    paper = paper_from_record({"abstract": A1, "year": "soon", "title": 3}, source="s", notes=notes)
    assert paper.year is None and paper.title is None
    assert len(notes) == 2 and any("year 'soon'" in n for n in notes)


# --------------------------------------------------------------------------- formats


def test_text_without_header(tmp_path: Path) -> None:
    long = " ".join([A1, A2])
    f = write(tmp_path / "plain.txt", f"{long}\n\n{A3}\n")
    result = read_text(f)
    assert result.problems == []
    assert len(result.papers) == 2
    assert result.papers[0].venue is None
    assert result.papers[1].source == f"{f}:3"


def test_jsonl_and_json(tmp_path: Path) -> None:
    f = write(
        tmp_path / "a.jsonl",
        json.dumps({"id": "x1", "title": "T", "abstract": A1, "authors": ["A", "B"]})
        + "\n\n"
        + json.dumps({"ID": "x2", "Text": A2, "keywords": "k1; k2", "year": 2020})
        + "\n",
    )
    result = read_jsonl(f)
    assert result.problems == []
    assert [p.id for p in result.papers] == ["x1", "x2"]
    assert result.papers[0].authors == ("A", "B")
    assert result.papers[1].keywords == ("k1", "k2")
    assert result.papers[1].source == f"{f}:3"

    g = write(tmp_path / "b.json", json.dumps([{"abstract": A1}, {"abstract": A3}], indent=1))
    result = read_jsonl(g)
    assert result.problems == []
    assert len(result.papers) == 2
    assert result.papers[1].source == f"{g}:5"


def test_csv_and_tsv(tmp_path: Path) -> None:
    f = write(
        tmp_path / "a.csv",
        'ID,Title,Abstract,Authors\n1,First,"' + A1 + '","A; B"\n2,Second,"' + A2 + '",C\n',
    )
    result = read_table(f)
    assert result.problems == []
    assert [(p.id, p.title, p.authors) for p in result.papers] == [
        ("1", "First", ("A", "B")),
        ("2", "Second", ("C",)),
    ]
    g = write(tmp_path / "a.tsv", f'paper_id\tsummary\tkeywords\nq1\t"Quoted" {A3}\ta, b\n')
    result = read_table(g)
    assert result.problems == []
    assert result.papers[0].abstract.startswith('"Quoted"')
    assert result.papers[0].keywords == ("a", "b")


def test_large_csv_field(tmp_path: Path) -> None:
    big = ("longer " * 14_000).strip()  # 98k characters: within MAX_ABSTRACT_CHARS
    notes = "n" * 300_000  # over csv's default 131072-character field limit
    f = write(tmp_path / "big.csv", f'id,abstract,notes\nb1,"{big}",{notes}\n')
    result = read_table(f)
    assert result.problems == []
    assert len(result.papers[0].abstract) == len(big)


def test_iclr2021_tsv_reads_fully() -> None:
    if not ICLR2021.exists():
        pytest.skip("shared ICLR 2021 data not present")
    result = read_corpus([ICLR2021])
    assert result.problems == []
    assert len(result.papers) == 2966
    assert result.duplicates == 0
    assert all(p.title and p.urls and p.id for p in result.papers)
    assert all(p.urls[0].startswith("https://openreview.net/") for p in result.papers)
    assert sum(bool(p.keywords) for p in result.papers) > 2000


# --------------------------------------------------------------------------- duplicates


def test_near_duplicates_merge(tmp_path: Path) -> None:
    variant = A1.replace("sparse", "**sparse**").replace(" scales", "  Scales").rstrip(".")
    records = [json.dumps({"abstract": A1}), json.dumps({"abstract": variant, "title": "T"})]
    papers = []
    for name, lines in (("a", records), ("b", records[::-1])):
        f = write(tmp_path / f"{name}.jsonl", "\n".join(lines) + "\n")
        result = read_jsonl(f)
        assert result.problems == []
        assert result.duplicates == 1
        [paper] = result.papers
        assert paper.title == "T" and paper.label == "T"  # the other fills what was missing
        assert paper.id == "p-" + text_hash(A1)[:12]
        papers.append(paper)
    # which record's text is kept goes by what the records hold, not by their order
    # (graph.ingest.collect.record_order): the same paper either way
    assert papers[0].abstract == papers[1].abstract
    assert papers[0].source == f"{tmp_path / 'a.jsonl'}:2"
    assert papers[1].source == f"{tmp_path / 'b.jsonl'}:1"


def test_given_id_beats_generated(tmp_path: Path) -> None:
    t = write(tmp_path / "a.txt", f"Venue 2020\n\n{A1}\n")
    j = write(tmp_path / "b.jsonl", json.dumps({"id": "real", "abstract": A1}) + "\n")
    result = read_corpus([t, j])
    assert result.duplicates == 1
    [paper] = result.papers
    assert paper.id == "real"
    assert paper.venue == "Venue 2020" and paper.year == 2020


def test_same_id_different_text(tmp_path: Path) -> None:
    f = write(
        tmp_path / "a.jsonl",
        json.dumps({"id": "x", "abstract": A1})
        + "\n"
        + json.dumps({"id": "x", "abstract": A2})
        + "\n",
    )
    result = read_jsonl(f)
    # which of the two was meant is not for the reader to guess, nor to go by their order
    assert result.papers == []
    assert result.problems == [
        InputProblem(str(f), 1, f"duplicate id 'x' with different text (also at {f}:2); "
                     "none of them kept"),
        InputProblem(str(f), 2, f"duplicate id 'x' with different text (also at {f}:1); "
                     "none of them kept"),
    ]


def test_same_file_twice_counts_once(tmp_path: Path) -> None:
    f = write(tmp_path / "a.txt", f"H\n\n{A1}\n")
    result = read_corpus([f, tmp_path])
    assert len(result.papers) == 1
    assert result.duplicates == 0


# --------------------------------------------------------------------------- bad input


def test_problem_str() -> None:
    problem = InputProblem("seeds/x.txt", 12, "empty abstract")
    assert str(problem) == "seeds/x.txt:12: empty abstract"
    assert str(InputProblem("x.md", None, "unknown")) == "x.md: unknown"


def test_bad_text_paragraphs(tmp_path: Path) -> None:
    huge = "a" * (1 << 20)
    f = write(
        tmp_path / "a.txt",
        f"ICLR 2025 Papers\n\n{A1}\n\ntoo short really\n\n{huge}\n\nhttps://example.org/only-a-link\n\n{A2}\n",
    )
    result = read_text(f)
    assert [p.abstract for p in result.papers] == [A1, A2]
    assert reasons(result) == [
        f"{f}:5: abstract too short: 3 words (minimum 5)",
        f"{f}:7: abstract too long: 1048576 characters > 100000",
        f"{f}:9: empty abstract",
    ]
    assert result.partial


def test_invalid_utf8_skips_only_bad_records(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_bytes(
        b"ICLR 2025 Papers\n\n" + A1.encode() + b"\n\nbad \xff\xfe bytes in this one here\n\n"
        + A2.encode() + b"\n"
    )
    result = read_text(f)
    assert [p.abstract for p in result.papers] == [A1, A2]
    [problem] = result.problems
    assert problem.line == 5
    offset = len(b"ICLR 2025 Papers\n\n" + A1.encode() + b"\n\nbad ")
    assert f"offset {offset}" in problem.reason
    assert "not valid UTF-8" in problem.reason


def test_utf8_bom_accepted(tmp_path: Path) -> None:
    f = tmp_path / "a.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + json.dumps({"abstract": A1}).encode() + b"\n")
    assert read_jsonl(f).problems == []


def test_bad_jsonl_lines(tmp_path: Path) -> None:
    f = write(
        tmp_path / "a.jsonl",
        "\n".join(
            [
                json.dumps({"abstract": A1}),
                "{not json",
                "[1, 2]",
                json.dumps({"title": "no abstract"}),
                json.dumps({"abstract": A2, "year": "soon"}),
            ]
        )
        + "\n",
    )
    result = read_jsonl(f)
    assert [p.abstract for p in result.papers] == [A1, A2]
    assert [(p.line, p.reason.split(":")[0].split(" (")[0]) for p in result.problems] == [
        (2, "not valid JSON"),
        (3, "not a JSON object"),
        (4, "no abstract"),
        (5, "year 'soon' is not a year; field dropped"),
    ]


def test_bad_csv_rows(tmp_path: Path) -> None:
    f = write(
        tmp_path / "a.csv",
        f'id,title,abstract\n1,ok,"{A1}"\n2,no abstract,\n3,too,many,"{A2}"\n4,fine,"{A3}"\n',
    )
    result = read_table(f)
    assert [p.id for p in result.papers] == ["1", "4"]
    assert reasons(result) == [
        f"{f}:3: empty abstract",
        f"{f}:4: expected 3 columns, got 4",
    ]


def test_csv_without_abstract_column(tmp_path: Path) -> None:
    f = write(tmp_path / "a.csv", "id,title\n1,x\n")
    result = read_table(f)
    assert result.papers == []
    assert reasons(result) == [f"{f}:1: no abstract column (columns: id, title)"]


@pytest.mark.parametrize(
    ("name", "content"),
    [("h.txt", "ICLR 2025 Papers\n"), ("e.txt", ""), ("h.csv", "id,abstract\n"), ("e.jsonl", "\n")],
)
def test_no_records(tmp_path: Path, name: str, content: str) -> None:
    f = write(tmp_path / name, content)
    result = read_corpus([f])
    assert reasons(result) == [f"{f}: no records"]


def test_unreadable_paths(tmp_path: Path) -> None:
    good = write(tmp_path / "good.txt", f"H\n\n{A1}\n")
    unknown = write(tmp_path / "notes.md", A2)
    missing = tmp_path / "missing.txt"
    folder = tmp_path / "dir.txt"
    folder.mkdir()
    result = read_corpus([good, unknown, missing])
    assert len(result.papers) == 1
    assert reasons(result) == [
        f"{unknown}: unknown file type '.md' "
        "(expected .txt, .jsonl, .json, .csljson, .csv, .tsv, .bib, .ris); skipped",
        f"{missing}: no such file or directory",
    ]
    assert reasons(read_text(folder)) == [f"{folder}: is a directory, not a file"]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads anything")
def test_permission_denied(tmp_path: Path) -> None:
    f = write(tmp_path / "a.txt", f"H\n\n{A1}\n")
    f.chmod(0)
    try:
        assert reasons(read_text(f)) == [f"{f}: permission denied"]
    finally:
        f.chmod(0o644)


def test_directory_walk_sorted_and_filtered(tmp_path: Path) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    write(sub / "b.jsonl", json.dumps({"abstract": A2}) + "\n")
    write(tmp_path / "a.txt", f"H 2020\n\n{A1}\n")
    write(tmp_path / "README.md", "ignored")
    write(tmp_path / "c.tsv", f"id\tabstract\nz\t{A3}\n")
    result = read_corpus([tmp_path])
    assert result.problems == []
    assert [p.abstract for p in result.papers] == [A1, A3, A2]


def test_deep_json_and_non_objects(tmp_path: Path) -> None:
    f = write(tmp_path / "a.jsonl", "[" * 100_000 + "\n" + json.dumps({"abstract": A1}) + "\n")
    result = read_jsonl(f)
    assert len(result.papers) == 1
    assert [(p.line, p.reason.startswith("not valid JSON")) for p in result.problems] == [(1, True)]
    g = write(tmp_path / "b.json", json.dumps([{"abstract": A1}, "x", {"abstract": A2}]))
    result = read_jsonl(g)
    assert len(result.papers) == 2
    assert reasons(result) == [f"{g}:1: not a JSON object (got string)"]


def test_invalid_utf8_in_csv_row(tmp_path: Path) -> None:
    f = tmp_path / "a.csv"
    f.write_bytes(
        b'id,abstract\n1,"' + A1.encode() + b'"\n2,"caf\xe9 ' + A2.encode() + b'"\n3,"'
        + A3.encode() + b'"\n'
    )
    result = read_table(f)
    assert [p.id for p in result.papers] == ["1", "3"]
    [problem] = result.problems
    assert problem.line == 3 and "not valid UTF-8" in problem.reason


def test_markup_variant_in_other_file_gets_same_id(tmp_path: Path) -> None:
    a = write(tmp_path / "a.txt", f"X 2024 Papers\n\n{A2}\n")
    variant = A2.replace("very few", "*very* few").replace("explicitly", "explic- itly")
    variant = variant.replace("Diffusion", "DIFFUSION").replace("training.", "training !")
    b = write(tmp_path / "b.jsonl", json.dumps({"abstract": variant}) + "\n")
    separate = [read_text(a).papers[0].id, read_jsonl(b).papers[0].id]
    assert separate[0] == separate[1]
    result = read_corpus([a, b])
    assert len(result.papers) == 1 and result.duplicates == 1


def test_hidden_files_skipped(tmp_path: Path) -> None:
    write(tmp_path / ".hidden.txt", f"H\n\n{A1}\n")
    (tmp_path / ".git").mkdir()
    write(tmp_path / ".git" / "x.txt", f"H\n\n{A2}\n")
    write(tmp_path / "seen.txt", f"H\n\n{A3}\n")
    result = read_corpus([tmp_path])
    assert [p.abstract for p in result.papers] == [A3]


_PIECES = [
    "a", "b c", " ", "\n", "$", "$$", "\\", "{", "}", "*", "**", "_", "~", "`", "'", "''", "-",
    "--", "- ", ".", ",", "(", ")", "[", "]", "\\textbf{", "\\href{", "](", "https://x.org/p",
    "www.y.io", "\\'", "\\^", "é", "论", "\u00ad", "ﬁ", "\\times", "\\cite{k}", "chal- lenging",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_clean_text_is_idempotent_and_total(pieces: list[str]) -> None:
    text, urls = clean_text("".join(pieces))
    assert clean_text(text)[0] == text
    assert "://" not in text
    assert text_hash(text) == text_hash("".join(pieces))
    assert all(isinstance(u, str) and u for u in urls)
