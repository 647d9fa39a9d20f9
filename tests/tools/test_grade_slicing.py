"""The grader runs a chapter's slice: only the cells its checks and the learner's answers need (a toy chapter
with a slow cell no exercise needs); an answer that reaches a dropped cell's name through ``globals()`` has the
chapter graded again whole; ``--whole`` runs every cell."""

from __future__ import annotations

import nbformat
import pytest
from booktools.coursework import sandbox
from booktools.coursework.grade import main
from toy_grading import ANSWERS, RIGHT_CHAINS, RIGHT_COMBINE, TOY, answered, grade, statuses, toy_edition
from toy_book import code_cell

pytestmark = pytest.mark.skipif(sandbox.available() is not None, reason=f"no sandbox here: {sandbox.available()}")

SLOW = 6  # seconds the cell no exercise needs sleeps
# Three cells after the set-up that the book's solutions do not read: a slow one, one that binds a name only a
# learner's answer reads, one whose name an answer can reach only through ``globals()``.
EXTRA = "\n".join([code_cell(f"import time\n\ntime.sleep({SLOW})\nslept = True"),
                   code_cell("zero = 0"),
                   code_cell("block_start = 0")])
SLOW_TOY = TOY.replace("## Exercises", EXTRA + "\n## Exercises", 1)
assert SLOW_TOY != TOY

# Reads ``zero``, which only the dropped cell binds: the analysis of the learner's own cell keeps that cell.
READS_ZERO = RIGHT_CHAINS.replace("per = num_chains // num_processes", "per = num_chains // num_processes + zero")
# Reaches ``block_start`` through ``globals()``: the analysis cannot see it; on the slice the function raises.
THROUGH_GLOBALS = RIGHT_CHAINS.replace("per = num_chains // num_processes",
                                       "per = num_chains // num_processes + globals()['block_start']")
# The same at the cell's top level: the cell raises, so the exercise's check cannot find ``combine``.
TOP_LEVEL_GLOBALS = "offset = globals()['block_start']\n\n" + RIGHT_COMBINE


@pytest.fixture(scope="module")
def slow_toy(tmp_path_factory):
    return toy_edition(tmp_path_factory.mktemp("slowbook"), SLOW_TOY)


def test_the_slice_skips_the_slow_cell_and_grades_as_whole(slow_toy, tmp_path):
    book, nb = slow_toy
    sliced = grade(tmp_path, book, answered(nb), "sliced.ipynb", seed=3)
    whole = grade(tmp_path, book, answered(nb), "whole.ipynb", seed=3, whole=True)
    assert statuses(sliced) == statuses(whole) == {"ex-toy-chains": "passed", "ex-toy-combine": "passed"}
    assert sliced.score == whole.score == 2 and not sliced.problems and not whole.problems
    assert sliced.skipped_cells == 3 and whole.skipped_cells == 0
    assert whole.seconds > SLOW, "the whole chapter ran without its slow cell"
    print(f"sliced {sliced.seconds:.1f} s, whole {whole.seconds:.1f} s")


def test_an_answer_keeps_the_cells_it_reads(slow_toy, tmp_path):
    book, nb = slow_toy
    assert "+ zero" in READS_ZERO
    report = grade(tmp_path, book, answered(nb, {**ANSWERS, "ex-toy-chains": [READS_ZERO]}))
    assert statuses(report) == {"ex-toy-chains": "passed", "ex-toy-combine": "passed"}, report
    assert report.skipped_cells == 2 and not report.problems  # the slow cell and block_start's: zero's ran


def test_a_name_reached_through_globals_has_the_chapter_graded_whole(slow_toy, tmp_path):
    book, nb = slow_toy
    assert "globals()['block_start']" in THROUGH_GLOBALS
    sub = answered(nb, {"ex-toy-chains": [THROUGH_GLOBALS], "ex-toy-combine": [TOP_LEVEL_GLOBALS]})
    report = grade(tmp_path, book, sub)
    assert statuses(report) == {"ex-toy-chains": "passed", "ex-toy-combine": "passed"}, report
    assert report.skipped_cells == 0  # the grades are the whole run's
    (note,) = [p for p in report.problems if p.startswith("graded whole:")]
    assert "ex-toy-chains got failed" in note and "KeyError" in note and "ex-toy-combine got error" in note, note


def test_an_unanswered_or_wrong_exercise_is_not_graded_twice(slow_toy, tmp_path):
    book, nb = slow_toy
    strided = "def my_chains(process_id, num_processes, num_chains):\n    return list(range(process_id, num_chains, num_processes))"
    report = grade(tmp_path, book, answered(nb, {"ex-toy-chains": [strided]}))
    assert statuses(report) == {"ex-toy-chains": "failed", "ex-toy-combine": "error"}
    assert report.skipped_cells == 3 and not report.problems


def test_an_answer_the_analysis_cannot_read_grades_the_chapter_whole(slow_toy, tmp_path):
    book, nb = slow_toy
    report = grade(tmp_path, book, answered(nb, {**ANSWERS, "ex-toy-combine": [RIGHT_COMBINE + "\n)"]}))
    assert statuses(report) == {"ex-toy-chains": "passed", "ex-toy-combine": "error"}
    assert report.skipped_cells == 0
    assert any(p.startswith("graded whole: an answer cell of ex-toy-combine") for p in report.problems), report.problems


def test_whole_on_the_command_line_runs_every_cell(slow_toy, tmp_path):
    import json

    book, nb = slow_toy
    path = tmp_path / "ada.ipynb"
    nbformat.write(answered(nb), path)
    out = {}
    for how, extra in (("sliced", []), ("whole", ["--whole"])):
        assert main([str(path), "--book", str(book), "--json", str(tmp_path / f"{how}.json"), *extra]) == 0
        (out[how],) = json.loads((tmp_path / f"{how}.json").read_text())["submissions"]
    assert out["sliced"]["skipped_cells"] == 3 and out["whole"]["skipped_cells"] == 0
    assert out["sliced"]["score"] == out["whole"]["score"] == 2
    assert out["whole"]["seconds"] > SLOW
