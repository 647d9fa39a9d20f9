"""Every exercise of the book graded in one run per chapter, most of them on the chapter's slice: only the cells
the exercises need (:mod:`booktools.coursework.slicing`); each stub must fail and each solution pass."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jupytext
import nbformat
import pytest
from booktools.coursework import sandbox
from booktools.coursework.edition import exercise_chapters, make_student_notebook
from booktools.coursework.grade import grade_notebook
from booktools.coursework.grade.schedule import longest_first
from booktools.coursework.slicing import Slice, describe, slice_chapter
from toy_grading import ROOT, answered, grade, statuses

pytestmark = pytest.mark.skipif(sandbox.available() is not None, reason=f"no sandbox here: {sandbox.available()}")


# --------------------------------------------------------------------------- the whole book


def _zero_then_full_book(chapter: Path, copy_root: Path, sliced: bool = False) -> tuple[Path, Path, list[str], Slice | None]:
    """A one-chapter copy of the book in which every exercise ``L`` is followed by a twin, ``L-solution``,
    with the same solution and checks; and a submission that answers only the twins, with the book's solutions.

    One grading run then shows both that the untouched stub of each exercise fails its check and that the
    book's solution passes it. With ``sliced``, the copy keeps only the code cells the exercises need
    (:mod:`booktools.coursework.slicing`). Returns (the copy's root, the submission, the labels of the
    chapter, the slice or None).
    """
    edition = make_student_notebook(chapter, ROOT)
    nb = jupytext.read(chapter, fmt="md:myst")
    last_check = {ex.checks[-1]: ex for ex in edition.exercises if ex.checks}
    cells = []
    for cell in nb.cells:
        cells.append(cell)
        ex = last_check.get(cell.source) if cell.cell_type == "code" else None
        if ex is None:
            continue
        twin = f"{ex.label}-solution"
        cells.append(nbformat.v4.new_markdown_cell(
            f"```{{exercise-start}}\n:label: {twin}\n```\nThe book's solution of {ex.label}.\n```{{exercise-end}}\n```\n\n"
            f"```{{solution-start}} {twin}\n```"))
        cells += [nbformat.v4.new_code_cell(src) for src in ex.solution_code]
        cells.append(nbformat.v4.new_markdown_cell("```{solution-end}\n```"))
        cells += [nbformat.v4.new_code_cell(src) for src in ex.checks]
    nb.cells = cells
    target = copy_root / chapter.relative_to(ROOT)
    target.parent.mkdir(parents=True)
    jupytext.write(nb, target, fmt="md:myst")
    twins = make_student_notebook(target, copy_root)
    answers = {f"{ex.label}-solution": list(ex.solution_code) for ex in edition.exercises}
    cut = None
    if sliced:
        cut = slice_chapter(nb, twins)
        jupytext.write(cut.notebook, target, fmt="md:myst")
        whole, twins = twins, make_student_notebook(target, copy_root)
        # the slice grades the same exercises with the same checks ...
        assert [e.as_metadata() for e in twins.exercises] == [e.as_metadata() for e in whole.exercises], describe(cut)
        # ... and the stubs of the whole chapter: a stub names what the cells after it use, fewer in the slice
        answers |= {ex.label: list(ex.stubs) for ex in whole.exercises if not ex.label.endswith("-solution")}
    submission = copy_root / "submission.ipynb"
    nbformat.write(answered(twins.notebook, answers), submission)
    return copy_root, submission, [e.label for e in edition.exercises], cut


BOOK_CHAPTERS = exercise_chapters(ROOT)
# Grading runs at once, each in its own sandboxed kernel. Two suit the book's 2-core machine: much of a
# chapter's run is one thread compiling or waiting, and the grader's kernels report timings, never fail on them.
BOOK_GRADE_JOBS = int(os.environ.get("BOOK_GRADE_JOBS", "2"))
# Chapters graded whole; the others are graded on their slices (only the cells the exercises need: the rest
# ran in the notebook tests already). These two are cheap whole and keep the path through a full chapter
# tested: choosing_a_way's slice drops a single cell, and arrays_and_shardings runs three exercises among
# cells the slice would drop. Set BOOK_GRADE_WHOLE=1 to grade every chapter whole.
GRADED_WHOLE = {"chapters/sharding_lab/choosing_a_way.md", "chapters/sharding_lab/arrays_and_shardings.md"}
def _graded_whole(chapter: Path) -> bool:
    return os.environ.get("BOOK_GRADE_WHOLE") == "1" or chapter.relative_to(ROOT).as_posix() in GRADED_WHOLE


@pytest.fixture(scope="module")
def book_grades(tmp_path_factory):
    """Every exercise chapter graded by ``_zero_then_full_book`` (sliced but for ``GRADED_WHOLE``),
    ``BOOK_GRADE_JOBS`` chapters at a time.

    Returns {chapter: future of (labels, report, seconds, slice or None)}; the longest chapters start first
    (:func:`booktools.coursework.grade.schedule.longest_first`).
    """
    # the copies are made here, one after another: they parse Python (``ast``), which CPython 3.11 does not
    # allow in two threads at once; grade_notebook takes care of its own parsing
    copies = {chapter: _zero_then_full_book(chapter, tmp_path_factory.mktemp(chapter.stem), sliced=not _graded_whole(chapter))
              for chapter in BOOK_CHAPTERS}

    def run(chapter):
        book, submission, labels, cut = copies[chapter]
        start = time.monotonic()
        # the grader slices too (the learner's answers among its roots): the chapters graded whole are run whole
        report = grade_notebook(submission, cell_timeout=300, notebook_timeout=1200, book=book, hide=[ROOT],
                                whole=cut is None)
        return labels, report, time.monotonic() - start, cut

    pool = ThreadPoolExecutor(max_workers=max(BOOK_GRADE_JOBS, 1))
    # the longest first, as the grader orders a whole book (its table of each chapter's grading time)
    futures = {BOOK_CHAPTERS[i]: pool.submit(run, BOOK_CHAPTERS[i]) for i in longest_first(BOOK_CHAPTERS)}
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.slow
@pytest.mark.parametrize("chapter", BOOK_CHAPTERS, ids=lambda p: p.stem)
def test_book_exercises_grade_zero_then_full(chapter, book_grades, tmp_path):
    """Every exercise of the book: the stub grades 0, the book's solution full marks.

    One grading run per chapter, in the sandbox, with the trusted verdict runner and unseen inputs
    (see ``_zero_then_full_book``), on the chapter's slice but for ``GRADED_WHOLE``; the runs go
    ``BOOK_GRADE_JOBS`` at a time (``book_grades``).
    Set ``COURSEWORK_STRICT=1`` to also grade the untouched edition and the solved one of the
    real chapter (two more runs per chapter, one at a time).
    """
    labels, report, seconds, cut = book_grades[chapter].result()
    sliced = f"\n{describe(cut)}" if cut is not None else ""  # a failure on a slice may come from the slicing
    got = statuses(report)
    assert set(got) == set(labels) | {f"{lab}-solution" for lab in labels}, f"{report}{sliced}"
    for lab in labels:
        assert got[lab] != "passed", f"{lab}: the unanswered stub passed its check"
        solved = next(e for e in report.exercises if e.label == f"{lab}-solution")
        assert solved.status == "passed", f"{lab}: the book's solution got {solved.status}: {solved.message}{sliced}"
    how = "whole" if cut is None else f"sliced, {len(cut.dropped)} code cell(s) dropped"
    print(f"{chapter.relative_to(ROOT)}: {len(labels)} exercise(s) graded in {seconds:.0f} s ({how}); {report.problems}")
    if os.environ.get("COURSEWORK_STRICT") == "1":
        edition = make_student_notebook(chapter, ROOT)
        untouched = grade(tmp_path, ROOT, edition.notebook, "untouched.ipynb", cell_timeout=300, notebook_timeout=1200)
        assert untouched.score == 0 and untouched.total == len(labels), untouched
        answers = {e.label: list(e.solution_code) for e in edition.exercises}
        solved = grade(tmp_path, ROOT, answered(edition.notebook, answers), "solved.ipynb", cell_timeout=300, notebook_timeout=1200)
        assert solved.score == solved.total == len(labels), solved
