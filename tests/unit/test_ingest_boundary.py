"""Unit tests for the input boundary (issue 15): text fields, reserved ids, special files.

* every text field of a record is checked once, in ``paper_from_record``: a lone surrogate
  rejects the record with one problem naming the field; control characters become
  spaces (an id holding one is refused, since an id is matched exactly);
* paper ids in another kind's namespace (``concept:``, ``dataset:``) or that read as a
  global id are refused, with the API's own decoder as the oracle;
* only regular files are read, up to a size limit; everything else is one problem.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from api.ids import from_global_id, to_global_id
from graph.errors import InputError
from graph.export import cytoscape, gexf, graphml, to_networkx
from graph.ingest import (
    MAX_FIELD_CHARS,
    MAX_ID_CHARS,
    clean_text,
    paper_from_record,
    read_corpus,
    read_jsonl,
    read_table,
    read_text,
    text_hash,
)
from graph.model import NodeKind, Paper, concept_id, dataset_id, is_global_id, reserved_paper_id
from graph.settings import DEFAULT_MAX_INPUT_FILE_BYTES, Settings

A1 = (
    "We propose a simple method for learning sparse graph representations that scales "
    "to millions of nodes and improves accuracy on five benchmarks."
)
A2 = (
    "Diffusion models can be personalised with very few images when the rank of the "
    "fine-tuned parameters is explicitly controlled during training."
)
C0 = "".join(chr(c) for c in range(0x20) if chr(c) not in "\t\n\r")
C1 = "".join(chr(c) for c in range(0x80, 0xA0))
EVERY_CONTROL = C0 + "\x7f" + C1 + "\ufffe\uffff"
XML_BAD = set(EVERY_CONTROL) | {chr(c) for c in range(0xD800, 0xE000)}


def record(**fields: object) -> dict[str, object]:
    return {"abstract": A1, **fields}


# --------------------------------------------------------------------------- surrogates

# (record key, the field name the problem gives, a value holding a lone surrogate)
SURROGATE_CASES = [
    ("id", "id", "p\udfff1"),
    ("paper_id", "id", "\ud800"),
    ("title", "title", "A title \udfff"),
    ("abstract", "abstract", A1 + " \udfff"),
    ("authors", "authors", ["Ada", "B\udfff"]),
    ("authors", "authors", "Ada; B\udc80"),
    ("author", "authors", '["\\udfff"]'),  # a JSON list inside a CSV cell decodes to one
    ("venue", "venue", "ICLR\udfff 2025"),
    ("url", "url", "https://x.org/\udfff"),
    ("link", "url", "https://x.org/\udfff"),
    ("urls", "urls", ["https://x.org/\udfff"]),
    ("keywords", "keywords", ["rag", "\udfff"]),
    ("keywords", "keywords", "rag, \udfff"),
    ("references", "references", ["p-1", "\udfff"]),
    ("refs", "references", "p-1;\udfff"),
    ("year", "year", "20\udfff25"),
]


@pytest.mark.parametrize(("key", "field", "value"), SURROGATE_CASES)
def test_lone_surrogate_in_any_field_rejects_the_record(
    key: str, field: str, value: object
) -> None:
    notes: list[str] = []
    with pytest.raises(InputError) as info:
        paper_from_record(record(**{key: value}), source="s", notes=notes)
    message = str(info.value)
    assert message.startswith(f"field {field!r}: contains an unpaired surrogate U+D"), message
    message.encode("utf-8")  # the message itself is printable


@pytest.mark.parametrize(("key", "field", "value"), SURROGATE_CASES)
def test_surrogate_record_is_one_problem_and_the_others_go_in(
    tmp_path: Path, key: str, field: str, value: object
) -> None:
    path = tmp_path / "in.jsonl"
    bad = {"abstract": A1 + " Another record.", "title": 42, key: value}  # title: a 2nd flaw
    lines = [record(id="g1"), bad, {"id": "g2", "abstract": A2}]
    path.write_text("\n".join(json.dumps(r) for r in lines), encoding="ascii")
    result = read_jsonl(path)
    assert [p.id for p in result.papers] == ["g1", "g2"]
    [problem] = result.problems  # the bad title is not reported on top: the record is gone
    assert (problem.path, problem.line) == (str(path), 2)
    assert problem.reason.startswith(f"field {field!r}: contains an unpaired surrogate")


def test_json_list_in_a_csv_cell_cannot_smuggle_a_surrogate(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text(
        f'id,abstract,authors\ng1,{A1},Ada\ng2,{A2},"[""\\udfff"", ""Bob""]"\n', encoding="ascii"
    )
    result = read_table(path)
    assert [p.id for p in result.papers] == ["g1"]
    [problem] = result.problems
    assert problem.line == 3 and "field 'authors'" in problem.reason


def test_undecodable_file_name_gives_printable_sources(tmp_path: Path) -> None:
    raw = os.fsencode(tmp_path) + b"/in\xff\x01.jsonl"
    with open(raw, "w", encoding="utf-8") as fh:  # a bytes path: the name is not UTF-8
        fh.write(json.dumps(record(id="g1")) + "\n{oops\n")
    result = read_corpus([tmp_path])
    [paper] = result.papers
    [problem] = result.problems
    for text in (paper.source or "", problem.path, str(problem)):
        text.encode("utf-8")  # no surrogate left to break a save or a print
        assert "\x01" not in text
    assert "in\\xff\\x01.jsonl" in (paper.source or "")


# --------------------------------------------------------------------------- controls


def test_controls_in_every_text_field_become_spaces() -> None:
    dirty = f"one{EVERY_CONTROL}two"
    paper = paper_from_record(
        {
            "abstract": f"{A1}{EVERY_CONTROL}end",
            "title": dirty,
            "venue": dirty,
            "authors": [dirty],
            "keywords": dirty,
            "url": f"https://x.org/{EVERY_CONTROL}a",
            "references": dirty,
        },
        source="s",
        default_venue=dirty,
    )
    assert paper.title == paper.venue == "one two"
    assert paper.authors == paper.keywords == paper.references == ("one two",)
    assert paper.abstract.endswith("benchmarks. end")
    for text in (paper.abstract, paper.label, *paper.urls):
        assert not set(text) & XML_BAD, text


def test_controls_in_a_default_venue_become_spaces() -> None:
    paper = paper_from_record({"abstract": A1}, source="s", default_venue="ICLR\x002025")
    assert paper.venue == "ICLR 2025" and paper.year == 2025


def test_cleaning_drops_controls_so_hashes_agree() -> None:
    dirty = A1.replace(" ", "\x00 ", 3)
    clean = paper_from_record({"abstract": dirty}, source="s")
    assert clean_text(dirty)[0] == clean.abstract
    assert text_hash(dirty) == clean.text_hash == text_hash(A1)


@pytest.mark.parametrize("bad", ["a\x00b", "a\tb", "a\nb", "x\x7f", "x\x85y", "x\uffffy"])
def test_control_character_in_an_id_is_refused(bad: str) -> None:
    with pytest.raises(InputError, match=r"field 'id': contains the control character U\+"):
        paper_from_record(record(id=bad), source="s")


@pytest.mark.parametrize("kind", ["txt", "jsonl", "csv", "tsv"])
def test_controls_from_every_reader_never_reach_a_paper(tmp_path: Path, kind: str) -> None:
    noise = C0 + "\x7f" + C1
    if kind == "txt":
        path = tmp_path / "a.txt"
        path.write_text(f"Workshop 2024\n\n{A1[:40]}{noise}{A1[40:]}\n", encoding="utf-8")
    elif kind == "jsonl":
        path = tmp_path / "a.jsonl"
        path.write_text(json.dumps(record(title=f"T{noise}x")), encoding="utf-8")
    else:
        sep = "," if kind == "csv" else "\t"
        path = tmp_path / f"a.{kind}"
        path.write_text(f"title{sep}abstract\nT{noise}x{sep}{A1}{noise}\n", encoding="utf-8")
    result = read_corpus([path])
    assert result.problems == []
    [paper] = result.papers
    for text in (paper.abstract, paper.label, paper.title or "", paper.venue or ""):
        assert not set(text) & XML_BAD, repr(text)


def test_exports_of_api_records_with_every_control_are_well_formed_xml() -> None:
    # addPapers hands its records to paper_from_record; the export writes what it built
    papers = [
        paper_from_record(
            {"id": f"c{i}", "title": f"Title{EVERY_CONTROL}{i}", "abstract": f"{a}{EVERY_CONTROL}",
             "venue": f"V{EVERY_CONTROL}", "url": f"https://x.org/{EVERY_CONTROL}{i}"},
            source=f"api:addPapers[{i}]",
        )
        for i, a in enumerate((A1, A2))
    ]
    g = to_networkx(papers, [])
    for write in (graphml, gexf):
        doc = ET.fromstring(write(g))
        values = [v for e in doc.iter() for v in (e.text or "", *e.attrib.values())]
        assert "Title 0" in values and "Title 1" in values, write.__name__
    json.loads(cytoscape(g))


# --------------------------------------------------------------------------- odd values


def test_huge_integer_id_and_elements_are_problems_not_crashes() -> None:
    with pytest.raises(InputError, match="field 'id'"):
        paper_from_record(record(id=10**5000), source="s")
    notes: list[str] = []
    paper = paper_from_record(
        record(authors=["Ada", 10**5000], year=10**5000), source="s", notes=notes
    )
    assert paper.authors == ("Ada",) and paper.year is None
    assert len(notes) == 2 and all(len(n) < 200 for n in notes), notes


def test_over_long_fields_are_dropped_or_refused() -> None:
    with pytest.raises(InputError, match=f"{MAX_ID_CHARS + 1} characters > {MAX_ID_CHARS}"):
        paper_from_record(record(id="x" * (MAX_ID_CHARS + 1)), source="s")
    notes: list[str] = []
    long = "word " * (MAX_FIELD_CHARS // 4)
    paper = paper_from_record(
        record(authors=["Ada", long], venue=long), source="s", notes=notes
    )
    assert paper.venue is None and paper.authors == ("Ada",)
    assert len(notes) == 2 and all("venue" in n or "authors" in n for n in notes)
    assert all(len(n) < 200 for n in notes), notes
    # a title is indexed (it is the paper's label): over its bound the record is refused
    with pytest.raises(InputError, match="title too long to index"):
        paper_from_record(record(title=long), source="s")


def test_a_million_authors_is_read_in_linear_time() -> None:
    # de-duplicating with `in list` was n²: a million names took hours
    names = [f"Author {i}" for i in range(1_000_000)]
    paper = paper_from_record(record(authors=names + names[:10]), source="s")
    assert len(paper.authors) == 1_000_000


# --------------------------------------------------------------------------- reserved ids

RESERVED = [
    "concept:large-language-model",
    "dataset:locovr",
    "Concept:LLM",
    "DATASET:x",
    " concept:padded ",
    concept_id("Low-Rank Adaptation"),
    dataset_id("ImageNet"),
    "work:doi:10.2/zz",  # an outside work's id: the build failed whole on it
    "Work:arxiv:2101.00001",
    *(to_global_id(kind, "p-123") for kind in NodeKind),
    to_global_id(NodeKind.PAPER, "concept:x"),
]


@pytest.mark.parametrize("pid", RESERVED)
def test_reserved_paper_ids_are_refused(pid: str) -> None:
    with pytest.raises(InputError, match=r"field 'id': .* is reserved"):
        paper_from_record(record(id=pid), source="s")


@pytest.mark.parametrize(
    "pid",
    [
        "p-123", "conceptual-1", "concepts", "data-set:x", "x:concept:y", "2401.00001",
        base64.b64encode(b"abc").decode(),  # base64, but of no kind
        base64.b64encode(b"Paper:").decode(),  # a kind with no raw id: not a global id
        base64.b64encode(b"paper:p-1").decode(),  # kinds are case-sensitive in global ids
        "ABCD",
    ],
)
def test_ordinary_ids_are_kept(pid: str) -> None:
    assert from_global_id(pid) is None  # the API would not decode it either
    assert paper_from_record(record(id=pid), source="s").id == pid


def test_reserved_id_in_a_file_is_one_problem(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text(
        json.dumps(record(id="good")) + "\n"
        + json.dumps({"id": "concept:large-language-model", "abstract": A2}) + "\n"
    )
    result = read_jsonl(path)
    assert [p.id for p in result.papers] == ["good"]
    [problem] = result.problems
    assert problem.line == 2 and "reserved for concept nodes" in problem.reason


global_ids = st.builds(
    to_global_id, st.sampled_from(list(NodeKind)), st.text(min_size=0, max_size=20)
)
b64ish = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=:",
                 max_size=24)


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(value=st.one_of(global_ids, b64ish, st.text(max_size=24)))
def test_global_id_check_agrees_with_the_api_decoder(value: str) -> None:
    assert is_global_id(value) == (from_global_id(value) is not None)
    if is_global_id(value):
        assert reserved_paper_id(value) is not None


# --------------------------------------------------------------------------- special files


def test_default_file_limit_is_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    field = Settings.model_fields["max_input_file_bytes"]
    assert field.default == DEFAULT_MAX_INPUT_FILE_BYTES == 256 * 1024 * 1024
    monkeypatch.setenv("CITEGRAPH_MAX_INPUT_FILE_BYTES", "1000")
    assert Settings.model_validate({}).max_input_file_bytes == 1000


def test_file_over_the_limit_is_a_problem(tmp_path: Path) -> None:
    big = tmp_path / "big.jsonl"
    big.write_text(json.dumps(record(id="big", title="A title that makes it bigger")) + "\n")
    small = tmp_path / "small.jsonl"
    small.write_text(json.dumps({"id": "small", "abstract": A2}) + "\n")
    limit = small.stat().st_size
    result = read_corpus([tmp_path], max_file_bytes=limit)
    assert [p.id for p in result.papers] == ["small"]
    assert [str(p) for p in result.problems] == [
        f"{big}: larger than {limit} bytes ({big.stat().st_size}); skipped"
    ]
    for reader in (read_text, read_jsonl, read_table):
        assert "larger than" in reader(big, max_file_bytes=limit).problems[0].reason


@pytest.fixture
def unix_socket(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "s.jsonl"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    try:
        yield path
    finally:
        sock.close()


def test_fifo_named_directly_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    result = read_corpus([fifo])  # before: open() waited for a writer, forever
    assert [str(p) for p in result.problems] == [
        f"{fifo}: a FIFO (named pipe), not a regular file; skipped"
    ]


def test_fifo_with_a_writer_is_still_skipped(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    reader_end = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    try:
        os.write(writer, b"Header\n\n" + A1.encode())
        assert "FIFO" in read_text(fifo).problems[0].reason
    finally:
        os.close(writer)
        os.close(reader_end)


@pytest.mark.parametrize(
    ("target", "reason"),
    [("/dev/zero", "a character device"), ("/dev/null", "a character device")],
)
def test_symlink_to_a_device_is_a_problem(tmp_path: Path, target: str, reason: str) -> None:
    link = tmp_path / "dev.txt"
    link.symlink_to(target)
    assert [p.reason for p in read_corpus([link]).problems] == [
        f"{reason}, not a regular file; skipped"
    ]


def test_socket_dangling_link_and_link_loop(tmp_path: Path, unix_socket: Path) -> None:
    (tmp_path / "gone.csv").symlink_to(tmp_path / "nowhere.csv")
    (tmp_path / "loop.txt").symlink_to(tmp_path / "loop.txt")
    (tmp_path / "good.jsonl").write_text(json.dumps(record(id="good")))
    result = read_corpus([tmp_path])
    assert [p.id for p in result.papers] == ["good"]
    assert sorted(str(p) for p in result.problems) == sorted([
        f"{tmp_path / 'gone.csv'}: dangling symlink (its target does not exist)",
        f"{tmp_path / 'loop.txt'}: symlink loop (too many levels of symbolic links)",
        f"{unix_socket}: a socket, not a regular file; skipped",
    ])


def test_symlinked_folders_are_followed_and_loops_reported_once(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.jsonl").write_text(json.dumps({"id": "o", "abstract": A2}))
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "a.jsonl").write_text(json.dumps(record(id="a")))
    (root / "linked").symlink_to(outside)
    (root / "sub" / "again").symlink_to(outside)  # the same folder twice: read once, quietly
    (root / "sub" / "up").symlink_to(root)  # a loop
    result = read_corpus([root])
    assert sorted(p.id for p in result.papers) == ["a", "o"]
    assert [str(p) for p in result.problems] == [
        f"{root / 'sub' / 'up'}: directory loop: leads back to {root}; not followed"
    ]


def test_regular_file_through_a_symlink_is_read(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    real.write_text(json.dumps(record(id="r")))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "link.jsonl").symlink_to(real)
    result = read_corpus([tmp_path / "sub"])
    assert [p.id for p in result.papers] == ["r"] and result.problems == []


def test_every_paper_is_a_paper() -> None:
    # the public result types did not change
    result = read_corpus([])
    assert result.papers == [] and not result.partial
    assert isinstance(paper_from_record(record(), source="s"), Paper)
