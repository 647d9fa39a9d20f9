"""The class-timing tool writes a class of answered submissions and refuses what cannot be timed."""

from pathlib import Path

import nbformat
import pytest

from booktools.coursework.class_timing import write_class
from booktools.coursework.edition import make_student_notebook

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "chapters/sharding_lab/arrays_and_shardings.md"


def test_a_class_is_the_student_edition_answered_with_the_books_solutions(tmp_path):
    files = write_class(CHAPTER, tmp_path, 3, ROOT)
    assert [f.relative_to(tmp_path).as_posix() for f in files] == [
        f"s00{k}/arrays_and_shardings.ipynb" for k in (1, 2, 3)]
    edition = make_student_notebook(CHAPTER, ROOT)
    nb = nbformat.read(files[0], as_version=4)
    sources = "\n".join(c.source for c in nb.cells)
    for ex in edition.exercises:
        for code in ex.solution_code:
            assert code in sources
        for stub in ex.stubs:
            assert stub not in sources or stub in ex.solution_code
    assert nbformat.read(files[2], as_version=4) == nb


def test_a_class_needs_a_submission_and_a_chapter_with_exercises(tmp_path):
    with pytest.raises(ValueError, match="at least one submission"):
        write_class(CHAPTER, tmp_path, 0, ROOT)
    with pytest.raises(ValueError, match="has no exercises"):
        write_class(ROOT / "chapters/reference/running_this_book.md", tmp_path, 1, ROOT)


def test_a_book_submission_is_every_exercise_chapter_answered(tmp_path):
    from booktools.coursework.class_timing import write_book
    from booktools.coursework.edition import exercise_chapters

    files = write_book(ROOT, tmp_path)
    assert list(files) == exercise_chapters(ROOT)
    assert files[CHAPTER] == tmp_path / "sharding_lab/arrays_and_shardings.ipynb"
    sources = "\n".join(c.source for c in nbformat.read(files[CHAPTER], as_version=4).cells)
    assert all(code in sources for ex in make_student_notebook(CHAPTER, ROOT).exercises for code in ex.solution_code)


def test_what_a_chapter_needs_and_the_table():
    from booktools.coursework.class_timing import book_table, needs

    assert needs(["from mpi4py import MPI", "use_cpu_devices(4)"]) == "MPI, 4 dev"
    assert needs(["!srun -n 2 python run.py", "import subprocess"]) == "SLURM, processes"
    assert needs(["x = 1"]) == ""
    record = {"runs": [{"jobs": 1, "seconds": 30.0, "full_marks": 2, "submissions": 2},
                       {"jobs": 2, "seconds": 20.0, "full_marks": 2, "submissions": 2}],
              "whole_run": {"jobs": 1, "seconds": 50.0, "submissions": 1},
              "chapters": [{"chapter": "chapters/ensemble/mpi.md", "exercises": 1, "cells_skipped": 5, "needs": "MPI",
                            "seconds": {"jobs1": 12.0, "jobs2": 15.0}, "seconds_whole": 40.0, "full_marks": True},
                           {"chapter": "chapters/a/b.md", "exercises": 2, "cells_skipped": 0, "needs": "",
                            "seconds": {"jobs1": 18.0, "jobs2": 5.0}, "full_marks": False}]}
    table = book_table(record).splitlines()
    assert table[2] == "| ensemble/mpi | 1 | 12 | 40 | 5 | MPI |"
    assert table[3] == "| a/b (not full marks) | 2 | 18 |  | 0 |  |"
    assert "sliced, --jobs 2: 20.0 s (2 of 2 chapters full marks)" in table[-2]
