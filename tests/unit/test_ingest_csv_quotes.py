"""CSV quoting: a stray quote is one reported record, never a record lost in silence.

Python's csv reader is lenient by default: a quote that opens a cell and is never closed
on its line runs into the following rows, and text after a closing quote is glued to the
cell. The outside probe of session 11 fed a 4-record file whose second row had a stray
opening quote: the third record vanished into the second's title, and `add` exited 0
with no problem reported. Tables are now read with ``strict=True``.
"""

from __future__ import annotations

from pathlib import Path

from graph.ingest import read_table

ABS = ("We propose a method for {} that improves robustness of neural networks on image "
       "classification benchmarks by a large margin, with theoretical analysis.")


def _row(i: int, title: str) -> str:
    return f'q-{i},{title},"{ABS.format(i)}"'


def _write(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "in.csv"
    path.write_text("id,title,abstract\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_a_stray_opening_quote_loses_only_its_own_row(tmp_path: Path) -> None:
    stray = f'q-2,"Unterminated,{ABS.format(2)}'  # one quote: it never closes on its line
    path = _write(tmp_path, [_row(1, "First"), stray, _row(3, "Third"), _row(4, "Fourth")])
    result = read_table(path)
    assert [p.id for p in result.papers] == ["q-1", "q-3", "q-4"]
    assert [p.title for p in result.papers] == ["First", "Third", "Fourth"]
    [problem] = result.problems
    assert (problem.path, problem.line) == (str(path), 3)
    assert "quote opened on this line is not closed" in problem.reason


def test_text_after_a_closing_quote_is_a_problem_not_shifted_fields(tmp_path: Path) -> None:
    glued = f'q-2,"Unterminated title,"{ABS.format(2)}",x'
    path = _write(tmp_path, [_row(1, "First"), glued, _row(3, "Third")])
    result = read_table(path)
    assert [p.id for p in result.papers] == ["q-1", "q-3"]
    [problem] = result.problems
    assert problem.line == 3 and "text follows a quoted cell" in problem.reason


def test_a_quote_never_closed_reads_the_rows_after_it(tmp_path: Path) -> None:
    path = _write(tmp_path, [_row(1, "First"), 'q-2,"Open title,short', _row(3, "Third")])
    result = read_table(path)
    assert [p.id for p in result.papers] == ["q-1", "q-3"]
    [problem] = result.problems
    assert problem.line == 3


def test_well_quoted_cells_over_several_lines_are_read_whole(tmp_path: Path) -> None:
    multi = f'q-2,"A title, with ""quotes""","{ABS.format(2)}\nIt goes on, over lines."'
    path = _write(tmp_path, [_row(1, "First"), multi, _row(3, "Third")])
    result = read_table(path)
    assert not result.problems, result.problems
    assert [p.id for p in result.papers] == ["q-1", "q-2", "q-3"]
    assert result.papers[1].title == 'A title, with "quotes"'
    assert result.papers[1].abstract.endswith("It goes on, over lines.")
    # line numbers stay the file's: the row after the two-line cell is on line 5
    assert [p.source for p in result.papers][2].endswith(":5")


def test_a_dropped_field_is_a_problem_of_a_record_kept(tmp_path: Path) -> None:
    """A record kept without one bad field is reported as kept, not as rejected (the CLI
    counted it among the rejected records, outside probe of session 11)."""
    path = tmp_path / "in.csv"
    path.write_text("id,year,abstract\n"
                    f'q-1,{"9" * 50},"{ABS.format(1)}"\nq-2,2024,"too short"\n', encoding="utf-8")
    result = read_table(path)
    assert [p.id for p in result.papers] == ["q-1"]
    assert [(p.line, p.kept) for p in result.problems] == [(2, True), (3, False)]
