"""The pages the tests write, in one place: the front matter of a MyST notebook and the book's exercise convention.

Test modules import it by name (``from toy_book import FRONT, chapter``): pytest puts ``tests/``, the folder of
the root ``conftest.py`` of the tests, on ``sys.path``.
"""

from __future__ import annotations

__all__ = ["FRONT", "code_cell", "exercise", "chapter"]

# As JupyterLab with jupytext saves a chapter.
FRONT = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3 (ipykernel)
  language: python
  name: python3
---
"""


def code_cell(source: str, tags: str = "") -> str:
    """A MyST code cell holding ``source``, with the given tags (comma-separated) if any."""
    head = f":tags: [{tags}]\n\n" if tags else ""
    return f"```{{code-cell}} ipython3\n{head}{source.strip(chr(10))}\n```\n"


def exercise(label: str, statement: str, solution: list[str], *, prose: str = "", given: str = "",
             check: str = "") -> str:
    """One exercise in the book's convention (see the instructors' page, ``chapters/teaching.md``).

    Parameters
    ----------
    label
        The exercise's label.
    statement
        The task, as Markdown.
    solution
        The sources of the solution's code cells.
    prose
        Markdown of the solution before its code.
    given
        The source of a code cell between the statement and the solution (given data), if any.
    check
        The source of the check cell after the solution, if any.

    Returns
    -------
    str
        The statement, the given cell, the gated solution and the check cell, a blank line apart.
    """
    parts = [f"```{{exercise-start}}\n:label: {label}\n```\n{statement.strip(chr(10))}\n```{{exercise-end}}\n```\n"]
    if given:
        parts.append(code_cell(given))
    opening = f"```{{solution-start}} {label}\n:class: dropdown\n```\n" + (prose.strip("\n") + "\n" if prose else "")
    parts.append(opening + "".join(code_cell(s) for s in solution) + "```{solution-end}\n```\n")
    if check:
        parts.append(code_cell(check))
    return "\n".join(parts)


def chapter(title: str, *blocks: str) -> str:
    """A MyST notebook: :data:`FRONT`, the title as a heading, then the blocks (Markdown or cells) a blank line apart."""
    return FRONT + f"\n# {title}\n\n" + "\n".join(b.strip("\n") + "\n" for b in blocks)
