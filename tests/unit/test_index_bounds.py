"""Issue 39, finding 2 (the ingest half): what a store indexes is bounded before any
store sees it (graph/bounds.py).

One 9,000-character title made Neo4j refuse a whole ``citegraph add`` ("Property value
is too large to index"), while the embedded store took it. Every text that reaches an
indexed property is now bounded at ingest, the same for every store: a paper's id and
title (its label) reject their record, with file:line; a concept's or dataset's name is
made by extraction, which drops a "term" over its bound. The end-to-end check, through
the CLI on both stores, is tests/hardening/test_index_bounds_cli.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph.bounds import MAX_ID_CHARS, MAX_INDEXED_BYTES, MAX_TERM_CHARS, MAX_TITLE_CHARS
from graph.errors import InputError
from graph.extract import extract
from graph.ingest import paper_from_record, read_corpus

ABSTRACT = "We compress key value caches of language models by merging similar heads."


@pytest.mark.parametrize("char", ["a", "é", "中", "\U0001f600"])
def test_a_title_at_its_bound_goes_in_and_one_over_is_refused(char: str) -> None:
    at = paper_from_record({"title": char * MAX_TITLE_CHARS, "abstract": ABSTRACT}, source="s")
    assert at.label == char * MAX_TITLE_CHARS
    assert len(at.label.encode("utf-8")) <= MAX_INDEXED_BYTES
    with pytest.raises(InputError, match=f"title too long to index: {MAX_TITLE_CHARS + 1} "):
        paper_from_record({"title": char * (MAX_TITLE_CHARS + 1), "abstract": ABSTRACT},
                          source="s")
    pid = char * MAX_ID_CHARS
    assert paper_from_record({"id": pid, "abstract": ABSTRACT}, source="s").id == pid
    with pytest.raises(InputError, match="field 'id': too long to index"):
        paper_from_record({"id": pid + char, "abstract": ABSTRACT}, source="s")


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".bib"])
def test_a_long_title_is_one_problem_at_its_line(tmp_path: Path, suffix: str) -> None:
    long = "Long " * 1800  # 9,000 characters
    rows = [("a", "Good", ABSTRACT), ("b", long, f"{ABSTRACT} Two."),
            ("c", "Fine", f"{ABSTRACT} 3.")]
    path = tmp_path / f"f{suffix}"
    if suffix == ".jsonl":
        text = "".join(json.dumps({"id": i, "title": t, "abstract": a}) + "\n" for i, t, a in rows)
    elif suffix == ".csv":
        text = "id,title,abstract\n" + "".join(f"{i},{t},{a}\n" for i, t, a in rows)
    else:
        text = "".join(f"@misc{{{i}, title={{{t}}}, abstract={{{a}}}}}\n" for i, t, a in rows)
    path.write_text(text, encoding="utf-8")
    result = read_corpus([path])
    assert sorted(p.id for p in result.papers) == ["a", "c"]
    [problem] = result.problems
    line = 3 if suffix == ".csv" else 2
    assert (problem.path, problem.line, problem.kept) == (str(path), line, False)
    assert problem.reason.endswith("title too long to index: 8999 characters > 1000")


def test_extraction_makes_no_term_over_its_bound() -> None:
    word = "xq" * 4500  # 9,000 letters: a "word" no index key can hold
    text = (f"We introduce {word.capitalize()} networks (XQN) for graph learning. The "
            f"{word} network improves results on the {word.upper()} benchmark and on "
            f"{word}Net, a new dataset.")
    e = extract(text)
    names = [c.surface for c in e.concepts] + [c.key for c in e.concepts]
    names += [d.name for d in e.datasets] + [long for _, long in e.acronyms]
    assert names and all(len(n) <= MAX_TERM_CHARS for n in names), [len(n) for n in names]
    assert len(e.label) <= MAX_TITLE_CHARS
