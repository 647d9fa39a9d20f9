"""The grader: small synthetic notebooks for the fast cases, the book's chapters in one slow test.

The fast tests grade the toy chapter of ``test_student`` (no JAX, a few
seconds of kernel time each): untouched, answered, answered wrongly, an
endless loop, an exception, a loop that ignores interrupts, a kernel that
kills itself, an edited check cell, a notebook whose metadata was lost.

The slow test covers every exercise of the book with one grading run per
chapter (see ``test_book_exercises_grade_zero_then_full``).
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from test_student import make_book

from coursework.grade import grade_notebook
from coursework.student import build_student_edition, exercise_chapters, make_student_notebook

ROOT = Path(__file__).resolve().parents[1]
CELL_LIMIT = 15  # seconds; generous, the machine is shared
NOTEBOOK_LIMIT = 240

ANSWERS = {
    "ex-toy-double": ["def double(x):\n    return x + x"],
    "ex-toy-mean": ["total = sum(data)", "mean = total / len(data)"],
}


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """(book folder, student notebook) of the toy chapter."""
    book = make_book(tmp_path_factory.mktemp("book"))
    build_student_edition(book, verbose=False)
    nb = nbformat.read(book / "_build/student/chapters/toy/toy.ipynb", as_version=4)
    return book, nb


def answered(nb, answers=ANSWERS):
    """The student notebook with the stubs of the given exercises replaced by answers."""
    nb = copy.deepcopy(nb)
    seen: dict[str, int] = {}
    for cell in nb.cells:
        meta = cell.metadata.get("coursework", {})
        if meta.get("role") == "stub" and meta["exercise"] in answers:
            k = seen.get(meta["exercise"], 0)
            if k < len(answers[meta["exercise"]]):
                cell.source = answers[meta["exercise"]][k]
            seen[meta["exercise"]] = k + 1
    return nb


def grade(tmp_path, book, nb, name="submission.ipynb", **limits):
    path = tmp_path / name
    nbformat.write(nb, path)
    limits = {"cell_timeout": CELL_LIMIT, "notebook_timeout": NOTEBOOK_LIMIT, **limits}
    return grade_notebook(path, book=book, **limits)


def statuses(report):
    return {e.label: e.status for e in report.exercises}


def test_untouched_student_notebook_grades_zero(toy, tmp_path):
    book, nb = toy
    report = grade(tmp_path, book, nb)
    assert statuses(report) == {"ex-toy-double": "error", "ex-toy-mean": "failed"}
    assert report.score == 0 and report.total == 2 and not report.problems
    by = {e.label: e for e in report.exercises}
    assert "not answered" in by["ex-toy-double"].message
    assert "divide the total" in by["ex-toy-mean"].message  # the check's own message


def test_answers_grade_full_and_wrong_answers_fail(toy, tmp_path):
    book, nb = toy
    report = grade(tmp_path, book, answered(nb))
    assert statuses(report) == {"ex-toy-double": "passed", "ex-toy-mean": "passed"}
    assert report.score == report.total == 2
    wrong = answered(nb, {"ex-toy-double": ["def double(x):\n    return x * x"], "ex-toy-mean": ["total = 9", "mean = 2"]})
    report = grade(tmp_path, book, wrong, "wrong.ipynb")
    assert statuses(report) == {"ex-toy-double": "failed", "ex-toy-mean": "failed"}
    assert "double(0.0)" in report.exercises[0].message or "double(1)" in report.exercises[0].message


def test_endless_loop_and_exception_are_graded_within_limits(toy, tmp_path):
    book, nb = toy
    sub = answered(nb, {"ex-toy-double": ["def double(x):\n    while True:\n        pass"],
                        "ex-toy-mean": ["total = sum(data)", "raise ValueError('my own bug')"]})
    # double() loops forever inside the check cell; the mean exercise raises in its answer.
    start = time.monotonic()
    report = grade(tmp_path, book, sub, cell_timeout=5)
    elapsed = time.monotonic() - start
    assert statuses(report) == {"ex-toy-double": "timeout", "ex-toy-mean": "error"}
    assert "NameError" in report.exercises[1].message and "ValueError" in report.exercises[1].message
    assert elapsed < 5 + 60, f"grading took {elapsed:.0f} s"


def test_loop_that_ignores_interrupts_gets_a_new_kernel(toy, tmp_path):
    book, nb = toy
    hang = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"
    sub = answered(nb, {"ex-toy-double": [hang], "ex-toy-mean": ANSWERS["ex-toy-mean"]})
    report = grade(tmp_path, book, sub, cell_timeout=5)
    assert statuses(report) == {"ex-toy-double": "timeout", "ex-toy-mean": "passed"}
    assert any("new kernel" in p for p in report.problems)


def test_kernel_that_kills_itself_is_reported(toy, tmp_path):
    book, nb = toy
    sub = answered(nb, {"ex-toy-double": ["import os\nos._exit(1)"], "ex-toy-mean": ANSWERS["ex-toy-mean"]})
    report = grade(tmp_path, book, sub)
    assert statuses(report) == {"ex-toy-double": "error", "ex-toy-mean": "passed"}
    assert "kernel died" in report.exercises[0].message
    assert any("kernel died" in p for p in report.problems)


def test_notebook_time_limit_marks_the_rest(toy, tmp_path):
    book, nb = toy
    sub = answered(nb, {"ex-toy-double": ["import time\ntime.sleep(600)"], "ex-toy-mean": ANSWERS["ex-toy-mean"]})
    report = grade(tmp_path, book, sub, cell_timeout=60, notebook_timeout=8)
    assert statuses(report) == {"ex-toy-double": "timeout", "ex-toy-mean": "timeout"}
    assert report.seconds < 60


def test_edited_and_deleted_checks_are_restored(toy, tmp_path):
    book, nb = toy
    sub = answered(nb, {"ex-toy-double": ["def double(x):\n    return 3 * x"], "ex-toy-mean": ANSWERS["ex-toy-mean"]})
    checks = [c for c in sub.cells if c.metadata.get("coursework", {}).get("role") == "check"]
    checks[0].source = "print('trust me')"  # an edited check
    sub.cells.remove(checks[1])  # a deleted check
    report = grade(tmp_path, book, sub)
    assert statuses(report) == {"ex-toy-double": "failed", "ex-toy-mean": "passed"}
    assert "edited" in report.exercises[0].notes[0] and "missing" in report.exercises[1].notes[0]


def test_notebook_without_metadata_is_mapped_by_its_cells(toy, tmp_path):
    book, nb = toy
    sub = answered(nb)
    sub.metadata.pop("coursework")
    for cell in sub.cells:
        cell.metadata.pop("coursework", None)
    sub.cells.insert(4, nbformat.v4.new_code_cell("helper = 1  # a cell the learner added"))
    report = grade(tmp_path, book, sub)
    assert statuses(report) == {"ex-toy-double": "passed", "ex-toy-mean": "passed"}


def test_command_line_table_and_json(toy, tmp_path):
    book, nb = toy
    sub = tmp_path / "one.ipynb"
    nbformat.write(answered(nb, {"ex-toy-double": ANSWERS["ex-toy-double"]}), sub)
    bad = tmp_path / "broken.ipynb"
    bad.write_text("{ not json")
    out = tmp_path / "grades.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run(
        [sys.executable, "-m", "coursework.grade", str(sub), str(bad), "--json", str(out), "--book", str(book),
         "--cell-timeout", str(CELL_LIMIT), "--timeout", str(NOTEBOOK_LIMIT)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "ex-toy-double" in done.stdout and "passed" in done.stdout and "score 1 / 2" in done.stdout
    data = json.loads(out.read_text())
    assert data["score"] == 1 and data["total"] == 2
    first, second = data["submissions"]
    assert [e["status"] for e in first["exercises"]] == ["passed", "failed"]
    assert second["exercises"] == [] and "cannot read" in second["problems"][0]


# --------------------------------------------------------------------------- the whole book


def _zero_then_full(edition) -> nbformat.NotebookNode:
    """The student notebook with, after each exercise's stub check, the solution and the check again.

    The copy of each exercise gets the label ``<label>/solution``. One run of it shows both
    that the untouched stub fails its check and that the book's solution passes it.
    """
    nb = copy.deepcopy(edition.notebook)
    by_label = {e.label: e for e in edition.exercises}
    cells = []
    for i, cell in enumerate(nb.cells):
        cells.append(cell)
        meta = cell.metadata.get("coursework", {})
        nxt = nb.cells[i + 1].metadata.get("coursework", {}) if i + 1 < len(nb.cells) else {}
        if meta.get("role") == "check" and not (nxt.get("role") == "check" and nxt.get("exercise") == meta["exercise"]):
            ex = by_label[meta["exercise"]]
            label = f"{ex.label}/solution"
            cells += [nbformat.v4.new_code_cell(src, metadata={"coursework": {"exercise": label, "role": "stub"}})
                      for src in ex.solution_code]
            cells += [nbformat.v4.new_code_cell(src, metadata={"coursework": {"exercise": label, "role": "check"}})
                      for src in ex.checks]
    nb.cells = cells
    for number, cell in enumerate(nb.cells):
        cell["id"] = f"c{number}"
    return nb


@pytest.mark.slow
@pytest.mark.parametrize("chapter", exercise_chapters(ROOT), ids=lambda p: p.stem)
def test_book_exercises_grade_zero_then_full(chapter, tmp_path):
    """Every exercise of the book: the stub grades 0, the book's solution full marks.

    One grading run per chapter: each exercise's stub and check run as in the untouched
    student edition, then the book's solution and the check again (see ``_zero_then_full``).
    Set ``COURSEWORK_STRICT=1`` to also grade the untouched edition and the solved one
    separately (two more runs per chapter).
    """
    edition = make_student_notebook(chapter, ROOT)
    labels = [e.label for e in edition.exercises]
    start = time.monotonic()
    report = grade(tmp_path, ROOT, _zero_then_full(edition), cell_timeout=300, notebook_timeout=1200)
    seconds = time.monotonic() - start
    got = statuses(report)
    assert set(got) == set(labels) | {f"{lab}/solution" for lab in labels}, report
    for lab in labels:
        assert got[lab] != "passed", f"{lab}: the unanswered stub passed its check"
        solved = next(e for e in report.exercises if e.label == f"{lab}/solution")
        assert solved.status == "passed", f"{lab}: the book's solution got {solved.status}: {solved.message}"
    print(f"{chapter.relative_to(ROOT)}: {len(labels)} exercise(s) graded in {seconds:.0f} s")
    if os.environ.get("COURSEWORK_STRICT") == "1":
        untouched = grade(tmp_path, ROOT, edition.notebook, "untouched.ipynb", cell_timeout=300, notebook_timeout=1200)
        assert untouched.score == 0 and untouched.total == len(labels), untouched
        solved_nb = copy.deepcopy(edition.notebook)
        answers = {e.label: list(e.solution_code) for e in edition.exercises}
        solved_nb = answered(solved_nb, answers)
        solved = grade(tmp_path, ROOT, solved_nb, "solved.ipynb", cell_timeout=300, notebook_timeout=1200)
        assert solved.score == solved.total == len(labels), solved
