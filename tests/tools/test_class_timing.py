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
