"""The student edition as a page a learner reads: MyST roles as text, the page's bookkeeping cells left out.

:func:`~booktools.coursework.edition.make_student_notebook` keeps every cell of the chapter, since the
grader rebuilds that notebook from the book and runs it whole. The notebook handed to a learner
(:mod:`booktools.coursework.student`) goes through :func:`readable_notebook` first:

- **roles become text**, as in the notebooks the website publishes
  (:func:`booktools.site.published_notebooks.readable_markdown`): a glued value
  (a ``glue`` role, with its format) becomes the value of the book's own run, formatted
  as the page formats it, where the site's execution cache holds the chapter's
  executed notebook (:func:`booktools.execution_cache.cached`); where it does not
  (a fresh clone before ``make book``), it becomes "(the value this page computes:
  name)". Citations become "(Author et al., year)", pages and targets links to
  the website. The exercise and solution directives stay as they are: the
  grader finds the exercises by them;
- **the bookkeeping goes**: a code cell the website hides (tagged ``remove-cell``,
  ``remove-input``, ``hide-cell`` or ``hide-input``: timing harnesses, verdicts,
  asserts, glue) is left out unless a cell that stays needs it. What stays: every
  cell the website shows, the exercises' stub and check cells, and the hidden cells
  that these read a name from, with the book's solutions in place of the stubs, as
  :func:`booktools.coursework.slicing.needed` finds them (it keeps the set-up cells
  too: device count, JAX's configuration). A hidden cell kept is kept unchanged,
  so that the grader still knows it as one of the book's own cells, and says why in
  its metadata (``metadata["coursework"]["needed"]``).

The grader is not affected: it rebuilds the chapter's full student edition from the book, all
hidden cells included, and takes from a submission only the learner's answer cells.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Mapping

import nbformat

from .. import execution_cache
from ..site.published_notebooks import citation_texts, glued_values, readable_markdown, site_url
from .edition import StudentEdition
from .markdown import META, tags
from .slicing import needed

__all__ = ["HIDDEN_TAGS", "RAW_ROLE", "is_hidden", "bookkeeping", "page_glue", "fallback_text", "book_context",
           "readable_notebook"]

#: Tags under which the website hides a cell's code (or the whole cell).
HIDDEN_TAGS = ("remove-cell", "remove-input", "hide-cell", "hide-input")
#: A MyST role left raw in Markdown.
RAW_ROLE = re.compile(r"\{(?:glue(?::[a-z]*)?|cite(?::[a-z]+)?|doc|ref|numref|eq|math|download)\}`")


def is_hidden(cell: nbformat.NotebookNode) -> bool:
    """Whether the website hides the code of this cell (a code cell tagged one of :data:`HIDDEN_TAGS`)."""
    return cell.cell_type == "code" and bool(set(tags(cell)) & set(HIDDEN_TAGS))


def bookkeeping(edition: StudentEdition) -> list[str | None]:
    """For each cell of the edition's notebook: why the learner's notebook leaves it out, or None if it stays."""
    return _reasons(edition)[0]


def _reasons(edition: StudentEdition) -> tuple[list[str | None], list[str | None]]:
    """(why each cell goes or None, why each hidden cell that stays is needed or None)."""
    cells = edition.notebook.cells
    solutions = {e.label: list(e.solution_code) for e in edition.exercises}
    roots, answers = [], {}
    for i, cell in enumerate(cells):
        role = (cell.metadata.get(META) or {}).get("role")
        roots.append(cell.cell_type == "code" and (role in ("stub", "check") or not is_hidden(cell)))
        if role == "stub":
            answers[i] = solutions.get((cell.metadata.get(META) or {}).get("exercise"), [])
    keep = needed(cells, roots, answers)
    goes = [f"hidden ({', '.join(sorted(set(tags(c)) & set(HIDDEN_TAGS)))}) and not needed"
            if is_hidden(c) and not roots[i] and keep[i] is None else None for i, c in enumerate(cells)]
    why = [keep[i] if is_hidden(c) and goes[i] is None and not roots[i] else None for i, c in enumerate(cells)]
    return goes, why


def page_glue(root: Path, chapter: Path) -> dict[str, str] | None:
    """The values the chapter glued in the book's own run (``{name: text/plain}``), or None where the site's
    execution cache does not hold a run of the chapter as it is now."""
    notebook = execution_cache.cached(Path(root), Path(chapter))
    return None if notebook is None else glued_values(notebook)


def fallback_text(kind: str, name: str) -> str:
    """What stands for a glued value, a citation or a target that is not known (see :func:`readable_notebook`)."""
    words = name.replace("_", " ").replace("-", " ").strip()
    if kind == "glue":
        return f"(the value this page computes: {words})"
    return name if kind == "cite" else words


def book_context(root: Path) -> tuple[dict[str, str], str]:
    """The book's citations ("Author et al., year" by key) and its website's address ("" where it has none)."""
    root = Path(root)
    citations = citation_texts(root / "references.bib") if (root / "references.bib").exists() else {}
    site = ""
    try:
        import yaml

        config = yaml.safe_load((root / "_config.yml").read_text()) or {}
        site = site_url(str((config.get("repository") or {}).get("url", "")))
    except (FileNotFoundError, ValueError):
        pass
    return citations, site


def readable_notebook(edition: StudentEdition, root: Path, glue: Mapping[str, str] | None = None,
                      context: tuple[dict[str, str], str] | None = None) -> nbformat.NotebookNode:
    """A copy of the edition's notebook as the learner gets it: roles as text, bookkeeping cells out.

    Parameters
    ----------
    edition
        The chapter's student edition (:func:`~booktools.coursework.edition.make_student_notebook`).
    root
        The book's root folder (for the execution cache, the bibliography and the website's address).
    glue
        The chapter's glued values; default: the book's own run, from the execution cache
        (:func:`page_glue`); where it holds none, each glued value reads as :func:`fallback_text` says.
    context
        The citations and the website's address (default: read from ``root``, for a book of many chapters
        read once by the caller).

    Returns
    -------
    nbformat.NotebookNode
        The learner's notebook; the edition's is left as it was.
    """
    root = Path(root)
    if glue is None:
        glue = page_glue(root, root / edition.source) or {}
    citations, site = context if context is not None else book_context(root)
    page = edition.source.with_suffix("").as_posix()
    goes, why = _reasons(edition)
    nb = copy.deepcopy(edition.notebook)
    cells = []
    for cell, gone, reason in zip(nb.cells, goes, why):
        if gone is not None:
            continue
        if reason is not None:
            cell.metadata[META] = {"needed": reason}
        if cell.cell_type == "markdown":
            cell.source = readable_markdown(cell.source, glue, citations, site, page, where=str(edition.source),
                                            exercise_blocks=False, missing=fallback_text)
            if not cell.source.strip():
                continue
        cells.append(cell)
    nb.cells = cells
    return nb
