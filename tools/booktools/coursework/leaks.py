"""The leak check: no line of any solution of the book may survive in a student file.

Every non-trivial line of every solution (:func:`solution_lines`) is looked for in each student
file written (:func:`check_written`); one that the chapter does not also show outside its
solutions (given data, say) or that a stub does not give on purpose (a ``def`` header) is a leak,
and :class:`LeakError` is raised. The course edition of the site (:mod:`booktools.site.course_edition`)
checks the sources it publishes with the same functions.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Sequence

import nbformat

from .edition import StudentEdition
from .markdown import normalise

__all__ = ["LeakError", "is_trivial", "solution_lines", "find_leaks", "check_written"]

_TRIVIAL_STATEMENTS = {"else:", "try:", "finally:", "pass", "break", "continue", "return", "except:", "..."}


class LeakError(RuntimeError):
    """Raised when a line of a solution survived in the student edition."""


def is_trivial(line: str) -> bool:
    """Whether a line is too common to count as a leak.

    Parameters
    ----------
    line
        One line of a solution.

    Returns
    -------
    bool
        True for a blank line, a comment, a directive's fence or option, a bare name, a statement
        such as ``else:`` or ``pass``, or a line with fewer than 8 letters and digits.
    """
    text = normalise(line)
    if not text or text.startswith("#") or text in _TRIVIAL_STATEMENTS:
        return True
    if text.startswith(("```", "~~~", ":::")) or re.fullmatch(r":\w+:.*", text):
        return True  # directive fences and options
    if re.fullmatch(r"[\w.]+", text):
        return True  # a bare name, e.g. a solution ending with `answer` to display it
    return sum(ch.isalnum() for ch in text) < 8


def solution_lines(editions: Iterable[StudentEdition]) -> dict[str, str]:
    """Every non-trivial solution line of the book.

    Parameters
    ----------
    editions
        The student editions of the book's chapters.

    Returns
    -------
    dict of str to str
        Each solution line (normalised) -> where it comes from, ``"chapter: label"``.
    """
    lines: dict[str, str] = {}
    for ed in editions:
        for ex in ed.exercises:
            for text in [*ex.solution_text, *"\n".join(ex.solution_code).split("\n")]:
                if not is_trivial(text):
                    lines.setdefault(normalise(text), f"{ed.source}: {ex.label}")
    return lines


def find_leaks(student_text: str, edition: StudentEdition, solutions: dict[str, str]) -> list[str]:
    """Solution lines found in a student file that its chapter does not show outside its solutions.

    Parameters
    ----------
    student_text
        The student file's text (for a notebook: its cells' sources).
    edition
        The chapter's student edition.
    solutions
        The book's solution lines (:func:`solution_lines`).

    Returns
    -------
    list of str
        One ``"chapter: label: 'line'"`` per leaked line, in the file's order.
    """
    allowed = edition.kept_text | edition.interface_lines
    leaks = []
    for line in student_text.split("\n"):
        key = normalise(line)
        if key in solutions and key not in allowed:
            leaks.append(f"{solutions[key]}: {key!r}")
    return leaks


def _ipynb_text(nb: nbformat.NotebookNode) -> str:
    return "\n".join(c.source for c in nb.cells)


def check_written(editions: Sequence[StudentEdition], out: Path) -> None:
    """Read back every student file written and check it for solution lines.

    Parameters
    ----------
    editions
        The student editions written.
    out
        The folder they were written to: each as ``out/<source>.md`` and ``.ipynb``.

    Raises
    ------
    LeakError
        If a solution line survived in any of them.
    """
    solutions = solution_lines(editions)
    leaks: list[str] = []
    for ed in editions:
        md = (out / ed.source).with_suffix(".md")
        ipynb = (out / ed.source).with_suffix(".ipynb")
        for path, text in [(md, md.read_text(encoding="utf-8")), (ipynb, _ipynb_text(nbformat.read(ipynb, as_version=4)))]:
            leaks += [f"{path}: {leak}" for leak in find_leaks(text, ed, solutions)]
    if leaks:
        raise LeakError(
            f"{len(leaks)} solution line(s) survived in the student edition:\n  " + "\n  ".join(leaks)
            + "\nCheck that each solution sits between ```{solution-start}``` and ```{solution-end}```."
        )
