"""Fuzzing every text field of a record, through ``paper_from_record`` and each reader.

Issue 15's input defects (a lone surrogate in an id, control characters in a title,
a reserved id) were single instances of one class: *a field value the boundary let
through that a later layer cannot hold*. Here hypothesis draws whole records whose
every field may be any Unicode (surrogates included), control characters, a very long
string, a number (a huge one too), a float, a boolean, null, a list of any of these or
a nested object, under any of the field's names (aliases, any case), and checks:

* ``paper_from_record`` returns a Paper or raises InputError, nothing else; a record with
  a lone surrogate in any field is rejected; the message names a field and is printable;
* every accepted Paper holds only UTF-8-encodable text with no character XML 1.0
  refuses, its id is not reserved (another kind's namespace, or a global id) and not
  over ``MAX_ID_CHARS``, and its GraphML/GEXF export parses;
* every text that reaches an indexed property (the id, the label) keeps to
  ``graph.bounds`` (characters and UTF-8 bytes), and a title over its bound rejects the
  record rather than failing a store's write (issue 39, finding 2); every URL kept is
  an http(s) link (finding 14);
* the JSONL, CSV, TSV and text readers agree with ``paper_from_record`` record by
  record: a rejected record gives exactly one problem at its line and no paper, an
  accepted one gives its paper (unless merged as a duplicate) and one problem per
  dropped field; nothing raises.

Run longer with ``HYPOTHESIS_PROFILE=fuzz pytest tests/hardening/test_input_fields_fuzz.py``.
"""

from __future__ import annotations

import csv
import io
import json
import re
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graph.bounds import MAX_INDEXED_BYTES, MAX_TITLE_CHARS
from graph.errors import InputError
from graph.export import gexf, graphml, to_networkx
from graph.ingest import (
    MAX_ID_CHARS,
    ReadResult,
    paper_from_record,
    read_jsonl,
    read_table,
    read_text,
)
from graph.model import NodeKind, Paper, reserved_paper_id
from tests.hardening._hyp import fuzz_settings

XML_BAD_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
SURROGATE_RE = re.compile("[\ud800-\udfff]")
ID_BAD_RE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")  # tab, LF too
FIELDS = ["id", "title", "abstract", "authors", "venue", "url", "urls", "keywords",
          "references", "year"]
NAMES = {  # every name a field may come under (the record's keys are case-insensitive)
    "id": ["id", "paper_id", "PaperId", "ID"],
    "title": ["title", "Title"],
    "abstract": ["abstract", "summary", "text", "Abstract"],
    "authors": ["authors", "author", "Authors"],
    "venue": ["venue", "Venue"],
    "url": ["url", "link", "URL"],
    "urls": ["urls", "links"],
    "keywords": ["keywords", "keyword"],
    "references": ["references", "refs"],
    "year": ["year", "Year"],
}
CONTROLS = "".join(chr(c) for c in [*range(0x20), *range(0x7F, 0xA0)]) + "\ufffe\uffff"

# ---------------------------------------------------------------- strategies

any_char = st.characters(exclude_categories=())  # every code point, lone surrogates too
words = st.lists(
    st.text(alphabet=st.characters(categories=("Lu", "Ll", "Lo")), min_size=1, max_size=8),
    min_size=5, max_size=20,
).map(" ".join)


@st.composite
def with_surrogate(draw: st.DrawFn, base: st.SearchStrategy[str]) -> str:
    text = draw(base)
    at = draw(st.integers(0, len(text)))
    return text[:at] + chr(draw(st.integers(0xD800, 0xDFFF))) + text[at:]


@st.composite
def long_text(draw: st.DrawFn) -> str:
    unit = draw(st.text(alphabet=any_char, min_size=1, max_size=3))
    return unit * draw(st.integers(1, 40_000))


texts = st.one_of(
    st.text(alphabet=any_char, max_size=40),
    st.text(alphabet=st.sampled_from(CONTROLS + "ab ,;[]\"'"), max_size=30),
    with_surrogate(st.text(max_size=20)),
    words.map(lambda w: w + CONTROLS),
    long_text(),
    st.sampled_from([
        "", " ", "nan", "null", "N/A", "concept:llm", "Dataset:x", "UGFwZXI6cC0x",
        "Q29uY2VwdDpsbG0=", "2024", "[1, 2]", '["a", {"b": 1}]', '["\\udfff"]', "[",
    ]),
)
scalars = st.one_of(
    texts, st.none(), st.booleans(), st.integers(), st.integers(4301, 5000).map(lambda n: 10**n),
    st.floats(allow_nan=True, allow_infinity=True),
)
values = st.recursive(
    scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                     st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=8,
)


@st.composite
def records(draw: st.DrawFn, marker: str = "") -> dict[str, Any]:
    """Any subset of the fields, each under any of its names, with any value."""
    rec: dict[str, Any] = {}
    for name in draw(st.lists(st.sampled_from(FIELDS), unique=True, max_size=len(FIELDS))):
        rec[draw(st.sampled_from(NAMES[name]))] = draw(values)
    if draw(st.booleans()):  # most records get a usable abstract, so that the rest counts
        rec["abstract"] = f"{marker} {draw(words)}"
    return rec


# ---------------------------------------------------------------- oracles


LIST_FIELDS = {"authors", "url", "urls", "keywords", "references"}
FIELD_OF = {n.lower(): f for f, names in NAMES.items() for n in names}


def has_surrogate(record: Mapping[str, Any]) -> bool:
    """A lone surrogate in a string the boundary must read: a field's text, or an item
    of a list field (a list where text belongs is dropped whole, unread)."""
    seen: set[str] = set()
    for key, value in record.items():
        field = FIELD_OF.get(str(key).strip().lower())
        if field is None or field in seen:  # of two names for one field, the first counts
            continue
        seen.add(field)
        items = value if isinstance(value, list) and field in LIST_FIELDS else [value]
        if any(isinstance(v, str) and SURROGATE_RE.search(v) for v in items):
            return True
    return False


def check_paper(paper: Paper) -> None:
    texts = [paper.id, paper.label, paper.abstract, paper.title or "", paper.venue or "",
             *paper.authors, *paper.keywords, *paper.urls, *paper.references, paper.source or ""]
    for text in texts:
        text.encode("utf-8")
        assert not XML_BAD_RE.search(text), repr(text)
    assert reserved_paper_id(paper.id) is None, paper.id
    assert 0 < len(paper.id) <= MAX_ID_CHARS
    for indexed, bound in ((paper.id, MAX_ID_CHARS), (paper.label, MAX_TITLE_CHARS)):
        assert len(indexed) <= bound and len(indexed.encode("utf-8")) <= MAX_INDEXED_BYTES
    assert all(u.startswith(("https://", "http://", "HTTP")) for u in paper.urls), paper.urls
    assert paper.abstract.strip() and len(paper.text_hash) == 64
    assert paper.year is None or 1800 <= paper.year <= 2199


def check_message(message: str) -> None:
    assert message.strip()
    message.encode("utf-8")
    assert not XML_BAD_RE.search(message), repr(message)
    assert len(message) < 400, message


def expect(record: Mapping[str, Any], **kwargs: Any) -> tuple[Paper | None, str | None, list[str]]:
    """(paper, rejection, notes): what the boundary makes of one record."""
    notes: list[str] = []
    try:
        paper = paper_from_record(record, source="s", notes=notes, **kwargs)
    except InputError as exc:
        return None, str(exc), notes
    return paper, None, notes


# ---------------------------------------------------------------- paper_from_record


@fuzz_settings(600)
@given(record=records())
def test_paper_from_record_never_lets_a_bad_field_through(record: dict[str, Any]) -> None:
    paper, rejection, notes = expect(record)  # anything but InputError fails the test
    if rejection is not None:
        check_message(rejection)
        assert any(name in rejection for name in FIELDS), rejection
        if "unpaired surrogate" in rejection:
            field = re.match(r"field '(\w+)'", rejection)
            assert field is not None and field.group(1) in FIELDS, rejection
        return
    assert paper is not None
    assert not has_surrogate(record), "a lone surrogate got through"
    check_paper(paper)
    for note in notes:
        check_message(note)
        assert any(name in note for name in FIELDS), note
    g = to_networkx([paper], [])
    for write in (graphml, gexf):
        ET.fromstring(write(g))


@st.composite
def near_bound(draw: st.DrawFn, bound: int) -> str:
    """A text within a few characters of ``bound``, of 1- to 4-byte characters."""
    alphabet = draw(st.sampled_from(["ab", "éü", "中文", "\U0001d400\U0001f600", "a中\U0001f600"]))
    size = draw(st.integers(bound - 3, bound + 3))
    return "".join(draw(st.lists(st.sampled_from(alphabet), min_size=size, max_size=size)))


@fuzz_settings(100)
@given(title=near_bound(MAX_TITLE_CHARS), pid=near_bound(MAX_ID_CHARS), which=st.integers(0, 2))
def test_indexed_fields_are_bounded_at_ingest(title: str, pid: str, which: int) -> None:
    """A title or id one character over its bound rejects the record, naming the field;
    at the bound it goes in, whatever the bytes per character (finding 2)."""
    record = {"abstract": "one two three four five six", "title": title, "id": pid}
    record = [record, {**record, "title": "T"}, {**record, "id": "x"}][which]
    paper, rejection, _ = expect(record)
    over = [f for f, bound in (("title", MAX_TITLE_CHARS), ("id", MAX_ID_CHARS))
            if len(str(record[f])) > bound]
    if over:
        assert paper is None and rejection is not None, record
        assert "too long" in rejection and any(f in rejection for f in over), rejection
    else:
        assert paper is not None, rejection
        check_paper(paper)
        assert paper.label == record["title"] and paper.id == record["id"]


@fuzz_settings(300)
@given(pid=st.one_of(texts, st.builds(lambda k, r: f"{k}:{r}", st.sampled_from(
    ["concept", "Concept", "DATASET", "dataset", "paper"]), st.text(max_size=10))))
def test_no_accepted_id_is_reserved_or_unprintable(pid: str) -> None:
    paper, rejection, _ = expect({"id": pid, "abstract": "one two three four five six"})
    if paper is not None:
        check_paper(paper)
        from api.ids import from_global_id  # the oracle: the API's own decoder

        assert from_global_id(paper.id) is None
        assert not paper.id.lower().startswith(("concept:", "dataset:"))
    else:
        assert rejection is not None and "id" in rejection
    lowered = pid.strip().lower()
    plain = not ID_BAD_RE.search(pid.strip()) and len(pid.strip()) <= MAX_ID_CHARS
    if lowered.startswith(("concept:", "dataset:")) and plain:
        assert rejection is not None and "reserved" in rejection
    assert NodeKind.PAPER  # the kinds the API encodes are the model's


# ---------------------------------------------------------------- readers


def check_reader(
    result: ReadResult, path: Path, expected: dict[int, tuple[Paper | None, str | None, list[str]]]
) -> None:
    """Record by record: the reader did what paper_from_record says it should."""
    name = str(path)
    by_line: dict[int, list[str]] = {}
    for p in result.problems:
        assert p.path == name, p
        check_message(p.reason)
        assert p.line is None or p.line in expected, (p, sorted(expected))
        by_line.setdefault(p.line or 0, []).append(p.reason)
    for paper in result.papers:
        check_paper(paper)
    sources = {p.source for p in result.papers}
    for line, (_paper, rejection, notes) in expected.items():
        got = by_line.get(line, [])
        merged = [r for r in got if r.startswith(("duplicate id", "id "))]
        own = [r for r in got if r not in merged]
        if rejection is not None:
            assert len(got) == 1, (line, rejection, got)
            assert f"{name}:{line}" not in sources
            continue
        assert len(own) == len(notes), (line, notes, got)
        if not merged and result.duplicates == 0:
            assert f"{name}:{line}" in sources, (line, sorted(s or "" for s in sources))


def as_cell(value: Any, tsv: bool) -> str:
    if value is None:
        return ""
    if isinstance(value, list | dict):
        text = json.dumps(_tame(value), ensure_ascii=False).replace('"__HUGE__"', "9" * 5000)
    else:
        try:
            text = str(value)
        except ValueError:  # an int over the 4300-digit limit
            text = "9" * 5000
    return re.sub(r"[\t\n\r]", " ", text) if tsv else text


def canonical_record(data: st.DataObject, marker: str) -> dict[str, Any]:
    """A record with each field under one canonical name (a CSV header names each once)."""
    rec = data.draw(records(marker), label=marker)
    out: dict[str, Any] = {}
    for key, value in rec.items():
        field = next(f for f, names in NAMES.items() if key in names)
        out.setdefault(field, value)
    return out


@fuzz_settings(120)
@given(data=st.data())
def test_jsonl_reader_agrees_with_paper_from_record(data: st.DataObject) -> None:
    recs = [data.draw(records(f"m{i}"), label=f"record {i}") for i in range(data.draw(
        st.integers(1, 6), label="n"))]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.jsonl"
        # ASCII JSON: surrogates travel as \\udfff escapes, as a real file may hold them
        lines = [_json_line(rec) for rec in recs]
        path.write_text("\n".join(lines) + "\n", encoding="ascii")
        expected = {i: _expect_json(text) for i, text in enumerate(lines, start=1)}
        check_reader(read_jsonl(path), path, expected)


def _tame(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 10_000:
        return "__HUGE__"
    if isinstance(value, list):
        return [_tame(v) for v in value]
    if isinstance(value, dict):
        return {k: _tame(v) for k, v in value.items()}
    return value


def _json_line(rec: dict[str, Any]) -> str:
    """The record as one JSON line; a huge integer written out as its 5000 digits."""
    return json.dumps(_tame(rec)).replace('"__HUGE__"', "9" * 5000)


def _expect_json(text: str) -> tuple[Paper | None, str | None, list[str]]:
    try:
        value = json.loads(text)
    except ValueError:  # Python refuses integers over 4300 digits: not valid JSON
        return None, "not valid JSON", []
    return expect(value)


@pytest.mark.parametrize("ext", [".csv", ".tsv"])
@fuzz_settings(120)
@given(data=st.data())
def test_table_readers_agree_with_paper_from_record(ext: str, data: st.DataObject) -> None:
    tsv = ext == ".tsv"
    n = data.draw(st.integers(1, 5), label="n")
    rows = [
        [as_cell(r.get(f), tsv) for f in FIELDS]
        for r in (canonical_record(data, f"m{i}") for i in range(n))
    ]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"f{ext}"
        out = io.StringIO()
        if tsv:
            out.write("\t".join(FIELDS) + "\n" + "".join("\t".join(r) + "\n" for r in rows))
        else:
            w = csv.writer(out, lineterminator="\r\n")  # CR and LF inside cells get quoted
            w.writerow(FIELDS)
            w.writerows(rows)
        raw = out.getvalue()
        # a surrogate cannot be UTF-8: written as its 3 bytes, it must read as invalid
        path.write_bytes(raw.encode("utf-8", "surrogatepass"))
        expected: dict[int, tuple[Paper | None, str | None, list[str]]] = {}
        line = 2
        for row in rows:
            span = 1 if tsv else _csv_row(row).count("\n")  # quoted cells may hold newlines
            if any(cell.strip() for cell in row):
                expected[line] = expect(dict(zip(FIELDS, row, strict=True)))
            line += span
        check_reader(read_table(path), path, expected)


def _csv_row(row: list[str]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerow(row)
    return out.getvalue()


@fuzz_settings(120)
@given(data=st.data())
def test_text_reader_agrees_with_paper_from_record(data: st.DataObject) -> None:
    one_line = st.one_of(texts, words).map(lambda t: re.sub(r"[\n\r]", " ", t))
    abstracts = data.draw(st.lists(one_line, min_size=1, max_size=5), label="abstracts")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.txt"
        body = "Fuzz Workshop 2024 Papers\n"
        expected: dict[int, tuple[Paper | None, str | None, list[str]]] = {}
        line = 3
        for text in abstracts:
            if not text.strip():  # a blank line, not a record
                continue
            body += "\n" + text + "\n"
            expected[line] = expect({"abstract": text}, default_venue="Fuzz Workshop 2024")
            if SURROGATE_RE.search(text):  # as bytes: invalid UTF-8, reported at its line
                expected[line] = (None, "not valid UTF-8", [])
            line += 2
        path.write_bytes(body.encode("utf-8", "surrogatepass"))
        result = read_text(path)
        if not expected:
            assert [p.reason for p in result.problems] == ["no records"]
            return
        check_reader(result, path, expected)
