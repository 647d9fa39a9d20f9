"""The student edition: every chapter with exercises, its solutions taken out.

``python -m booktools.coursework.student`` (or ``make student``) reads every MyST
notebook under ``chapters/`` that has at least one exercise and writes, for
each, a ``.md`` and an ``.ipynb`` into ``_build/student/`` (same relative
path as the chapter), both as JupyterLab saves them, so that opening one
marks nothing modified. In them:

- every solution (``solution-start`` ... ``solution-end``: prose and code) is gone;
- each solution code cell is replaced by a *stub* cell that names what to
  write there (the functions, classes and variables the solution defines and
  the rest of the notebook uses) and leaves them unanswered (``...`` or
  ``raise NotImplementedError``), so the check fails until the learner answers;
- the check cells stay; cells tagged ``student-remove`` are dropped;
- the prose reads as on the website: each MyST role becomes text, a glued value
  the value of the book's own run (from the site's execution cache), formatted as
  the page formats it, or "(the value this page computes: NAME)" where the cache
  holds no run of the chapter; citations, page links and references as in the
  published notebooks. The exercise and solution directives stay, for the grader;
- the code cells the website hides (tagged ``remove-cell``, ``remove-input``,
  ``hide-cell``, ``hide-input``) are left out, except those that a cell that stays
  (a shown cell, a stub with the book's solution in it, a check) needs or that set
  the process up; the grader is not affected, since it rebuilds and runs the whole
  chapter (see :mod:`~booktools.coursework.readable`);
- a question inside an exercise that is answered in words, marked
  ``<!-- graded by hand: NAME -->`` (or ``<!-- graded by hand: NAME, 2 points -->``)
  right after it in the statement, gets a Markdown *answer cell* after the
  exercise's check, for the learner's answer, which the grader lists to be
  graded by hand (see :class:`~booktools.coursework.markdown.WrittenPart`);
- a set-up cell comes first, the one the site's published notebooks get: it
  installs the helper package where it is missing (see :func:`setup_cell_adder`);
- code cells carry ``metadata["coursework"] = {"exercise": label, "role": "stub" | "check"}``
  so that :mod:`booktools.coursework.grade` can map cells to exercises.

A leak check then compares every student file with every solution of the book
and fails (exit status 1) if any non-trivial line of a solution survived.

This module writes the files and is the command; the work is done in
:mod:`~booktools.coursework.markdown` (reading the exercise convention),
:mod:`~booktools.coursework.stubs` (the stub cells), :mod:`~booktools.coursework.edition`
(one chapter's edition, in memory), :mod:`~booktools.coursework.readable` (the roles as text, the bookkeeping
cells out) and :mod:`~booktools.coursework.leaks` (the leak check).

The exercise convention it relies on is the book's (see the instructors' page):

````md
```{exercise-start}
:label: ex-chapter-topic
```
The task.
```{exercise-end}
```

```{solution-start} ex-chapter-topic
:class: dropdown
```
Why it works.
```{code-cell} ipython3
answer = ...
```
```{solution-end}
```

```{code-cell} ipython3
check.some_check(answer)
```
````
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path
from typing import Sequence

import nbformat

from ..notebooks import as_saved_myst
from ..site.published_notebooks import SETUP_TAG, add_setup_cell, published_wheel
from .edition import exercise_chapters, find_book_root, make_student_notebook
from .leaks import LeakError, check_written
from .readable import book_context, page_glue, readable_notebook

__all__ = ["build_student_edition", "setup_cell_adder", "ipynb_as_saved", "main"]


def build_student_edition(root: Path, out: Path | None = None, chapters: Sequence[Path] | None = None,
                          verbose: bool = True) -> list[Path]:
    """Write the student edition of the book at ``root`` into ``out``.

    Parameters
    ----------
    root
        The book's root folder.
    out
        The folder to write into (default: ``root/_build/student``); the ``.md`` and ``.ipynb`` files
        already there are removed first.
    chapters
        The chapters to convert (default: every chapter with exercises, :func:`exercise_chapters`).
    verbose
        Print one line per notebook written.

    Returns
    -------
    list of Path
        The files written, a ``.md`` and an ``.ipynb`` per chapter.

    Raises
    ------
    LeakError
        After writing, if a solution line survived in a file written.
    ValueError
        If a chapter breaks the exercise convention (see :func:`make_student_notebook`).
    """
    root = Path(root).resolve()
    out = Path(out) if out is not None else root / "_build" / "student"
    chapters = [Path(c).resolve() for c in chapters] if chapters else exercise_chapters(root)
    editions = [make_student_notebook(c, root) for c in chapters]
    written: list[Path] = []
    if out.exists():
        for old in sorted(out.rglob("*"), reverse=True):
            if old.is_file() and old.suffix in {".md", ".ipynb"}:
                old.unlink()
    setup = setup_cell_adder(root)
    context = book_context(root)
    for ed in editions:
        target = out / ed.source
        target.parent.mkdir(parents=True, exist_ok=True)
        md = target.with_suffix(".md")
        ipynb = target.with_suffix(".ipynb")
        glue = page_glue(root, root / ed.source)
        nb = setup(readable_notebook(ed, root, glue or {}, context))
        md.write_text(as_saved_myst(nb), encoding="utf-8")
        nbformat.write(ipynb_as_saved(nb), ipynb)
        written += [md, ipynb]
        if verbose:
            labels = ", ".join(e.label for e in ed.exercises)
            added = 1 if nb.cells and SETUP_TAG in nb.cells[0].metadata.get("tags", []) else 0
            left = len(ed.notebook.cells) + added - len(nb.cells)
            values = ("glued values from the book's run" if glue is not None
                      else "glued values named in words (no run of it in the execution cache)")
            print(f"{ipynb.relative_to(out)}: {len(ed.exercises)} exercise(s): {labels}; "
                  f"{left} cell(s) left out; {values}")
    check_written(editions, out)
    return written


def setup_cell_adder(root: Path):
    """A function that puts the published notebooks' set-up cell first in a notebook (see
    :mod:`booktools.site.published_notebooks`).

    The cell installs the helper package from the wheel the site publishes
    where it is missing (a learner's Colab or laptop) and does nothing where
    it is there (the book's environment, the grader's sandbox). The grader
    does not need it: it rebuilds each chapter's edition from the book. A
    book without a ``_config.yml`` naming a ``repository.url`` (the tests'
    toy books) gets no set-up cell.

    Parameters
    ----------
    root
        The book's root folder.

    Returns
    -------
    callable
        Notebook -> the notebook with the set-up cell first (or unchanged, for a book without one).
    """
    try:
        wheel, constraints = published_wheel(root)
    except (FileNotFoundError, ValueError):
        return lambda nb: nb
    return lambda nb: add_setup_cell(nb, wheel, constraints)


def ipynb_as_saved(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``nb`` as JupyterLab saves it: normalised by nbformat, with cell ids, and with the
    ``language_info`` that the kernel (ipykernel in this interpreter) reports, which JupyterLab
    would otherwise add on opening and so mark the notebook modified. Write it with ``nbformat.write``.

    Parameters
    ----------
    nb
        A notebook; it is not changed.

    Returns
    -------
    nbformat.NotebookNode
        The normalised, validated copy.
    """
    nb = copy.deepcopy(nb)
    nb.metadata.pop("jupytext", None)
    try:
        from ipykernel.ipkernel import IPythonKernel

        nb.metadata.setdefault("language_info", copy.deepcopy(IPythonKernel.language_info))
    except ImportError:
        pass
    _, normalised = nbformat.validator.normalize(nb)
    nb = nbformat.from_dict(normalised)
    nbformat.validate(nb)
    return nb


def main(argv: Sequence[str] | None = None) -> int:
    """The command ``python -m booktools.coursework.student [CHAPTER ...] [--book PATH] [--out DIR]``.

    Parameters
    ----------
    argv
        The command's arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 when written with no leak, 1 on a leak, 2 when no book is found or a chapter is malformed.
    """
    parser = argparse.ArgumentParser(prog="python -m booktools.coursework.student", description=__doc__.split("\n")[0])
    parser.add_argument("chapters", nargs="*", type=Path, help="chapters to convert (default: every chapter with exercises)")
    parser.add_argument("--book", type=Path, default=None, help="the book's root folder (default: found from the cwd)")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: BOOK/_build/student)")
    args = parser.parse_args(argv)
    try:
        root = args.book.resolve() if args.book else find_book_root()
        written = build_student_edition(root, args.out, args.chapters or None)
    except LeakError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except (FileNotFoundError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    out = args.out or root / "_build" / "student"
    print(f"Student edition: {len(written) // 2} notebook(s) in {out}; no solution line left in them.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
