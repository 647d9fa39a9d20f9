"""The grader's toy chapter and the helpers its tests share: two exercises checked by the book's own checks
(``beyond_one_machine.my_chains`` and ``combine_chains``, NumPy only), its student edition, grading a notebook."""

from __future__ import annotations

import hashlib
from pathlib import Path

import nbformat
import pytest
from booktools.coursework import sandbox
from booktools.coursework.edition import with_answers
from booktools.coursework.grade import grade_notebook
from booktools.coursework.student import build_student_edition
from test_student import make_book
from toy_book import chapter, code_cell, exercise

ROOT = Path(__file__).resolve().parents[2]
CELL_LIMIT = 12  # seconds; a toy cell takes well under one, the endless ones wait this long
NOTEBOOK_LIMIT = 240

pytestmark = pytest.mark.skipif(sandbox.available() is not None, reason=f"no sandbox here: {sandbox.available()}")

RIGHT_CHAINS = """\
def my_chains(process_id, num_processes, num_chains):
    if num_chains % num_processes:
        raise ValueError("the chains do not split evenly")
    per = num_chains // num_processes
    return list(range(process_id * per, (process_id + 1) * per))"""
RIGHT_COMBINE = "def combine(parts):\n    return np.concatenate(parts, axis=0)"
# A chapter with two exercises checked by the book's own checks (NumPy only: the kernel starts fast).
TOY = chapter(
    "A toy chapter",
    code_cell("import numpy as np"),
    "## Exercises",
    exercise("ex-toy-chains", "Write `my_chains(process_id, num_processes, num_chains)`: the contiguous block of chains a process holds.",
             [RIGHT_CHAINS.replace("num_processes\n", "num_processes  # TOY-SOLUTION-CODE\n", 1)],
             prose="Equal contiguous blocks, in order: TOY-SOLUTION-PROSE.",
             check="from parallel_mcmc.exercises import beyond_one_machine as check\n\ncheck.my_chains(my_chains)"),
    exercise("ex-toy-combine", "Write `combine(parts)`, which joins the processes' chain arrays into one.", [RIGHT_COMBINE],
             check="check.combine_chains(combine)"),
)
ANSWERS = {"ex-toy-chains": [RIGHT_CHAINS], "ex-toy-combine": [RIGHT_COMBINE]}
# Right on the chapter's inputs only: the table the learner-side check compares with, typed in.
TABLE_ONLY = """\
from parallel_mcmc.exercises.beyond_one_machine import ex_processes_chains as _p
_known = {args: want for args, want in _p.CASES}

def my_chains(process_id, num_processes, num_chains):
    if (process_id, num_processes, num_chains) in _known:
        return _known[(process_id, num_processes, num_chains)]
    if num_chains % num_processes:
        raise ValueError("uneven")
    return [0]
"""

# Wrong in a way the chapter's own inputs catch: every process takes a stride of the chains, not a block.
STRIDED = "def my_chains(process_id, num_processes, num_chains):\n    return list(range(process_id, num_chains, num_processes))"


def toy_edition(folder: Path, text: str) -> tuple[Path, nbformat.NotebookNode]:
    """(book folder, student notebook) of a book in ``folder`` whose one chapter, ``chapters/toy/toy.md``, is ``text``."""
    book = make_book(folder, {"chapters/toy/toy.md": text})
    build_student_edition(book, verbose=False)
    return book, nbformat.read(book / "_build/student/chapters/toy/toy.ipynb", as_version=4)


def answered(nb, answers=ANSWERS):
    """The student notebook with the stubs of the given exercises replaced by answers."""
    return with_answers(nb, answers)


def grade(tmp_path, book, nb, name="submission.ipynb", **limits):
    path = tmp_path / name
    nbformat.write(nb, path)
    limits = {"cell_timeout": CELL_LIMIT, "notebook_timeout": NOTEBOOK_LIMIT, **limits}
    return grade_notebook(path, book=book, **limits)


def statuses(report):
    return {e.label: e.status for e in report.exercises}


def messages(report):
    return {e.label: e.message for e in report.exercises}


def book_digest(book: Path) -> str:
    """A digest of every file of the book (chapters, source, student edition)."""
    h = hashlib.sha256()
    for path in sorted(p for p in book.rglob("*") if p.is_file()):
        h.update(str(path).encode() + path.read_bytes())
    return h.hexdigest()


