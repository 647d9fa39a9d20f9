"""The course edition of the website: the book without its solutions.

For a course whose exercises must not be public, ``make book EDITION=course``
(or ``make course``) builds the site with every solution left out, into its own
folder (``_build/course/_build/html``), never over the full site. The edition is
the Sphinx setting ``book_edition`` (``"full"`` or ``"course"``), read from the
environment variable ``BOOK_EDITION`` unless ``_config.yml`` sets it
(``sphinx: config: book_edition: course``).

The notebooks are not executed again: the solutions are taken out of the pages
Sphinx has read, after execution, so the execution cache of the full site
(``_build/.jupyter_cache``, keyed by each notebook's code) serves the course
edition too. In the course edition:

- every ``solution`` block (``solution-start`` ... ``solution-end``, or one
  ``solution`` directive) leaves the page, its prose, code and outputs, and
  with it the search index; in its place come the student edition's stubs
  (:mod:`booktools.coursework.student`): what to define, unanswered;
- the sources published beside each page, ``_sources/<page>.md`` (the download
  button) and ``_sources/<page>.ipynb`` (the download button, Colab and Binder),
  are the chapter's student edition (see :func:`publish_student_sources`),
  which :mod:`booktools.site.published_notebooks` then makes runnable and
  readable outside the site, as it does for the full site;
- the repository button is left out (the repository's chapters hold the solutions), and Binder
  installs the helper package from the wheel published with the site, not from the repository;
- when the build has finished, every page with exercises, its HTML and both
  published sources, are read back and compared with every solution line of
  the book, as ``make student`` does; a line that survived fails the build
  (:func:`check_no_solution`).
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import nbformat
from docutils import nodes
from sphinx.errors import ExtensionError
from sphinx.transforms import SphinxTransform

__all__ = ["EDITIONS", "ENV", "edition", "check_edition", "RemoveSolutions", "student_editions",
           "publish_student_sources", "page_text", "check_no_solution", "setup"]

EDITIONS = ("full", "course")
ENV = "BOOK_EDITION"  # the environment variable that picks the edition (make book EDITION=...)


def edition(app) -> str:
    """The edition being built: ``"full"`` or ``"course"``."""
    return app.config.book_edition


def check_edition(app, config) -> None:
    """Refuse an unknown edition; set the course edition up (config-inited)."""
    if config.book_edition not in EDITIONS:
        raise ExtensionError(f"book_edition is {config.book_edition!r}; it must be one of {', '.join(EDITIONS)} "
                             f"(set {ENV}=course for the course edition, or leave it unset for the full site).")
    if config.book_edition != "course":
        return
    root = Path(app.confdir)
    if Path(app.outdir).resolve() == (root / "_build" / "html").resolve():
        raise ExtensionError("the course edition would overwrite the full site in _build/html: build it into its "
                             "own folder (make book EDITION=course, or jupyter-book build . --path-output _build/course).")
    # The execution cache of the full site, where it would otherwise look for one beside its own output.
    if not config.nb_execution_cache_path:
        config.nb_execution_cache_path = str(root / "_build" / ".jupyter_cache")
    options = dict(config.html_theme_options or {})
    options["use_repository_button"] = False
    config.html_theme_options = options


def student_editions(app) -> dict:
    """``{docname: StudentEdition}`` for every page of the build that is a chapter with exercises."""
    from ..coursework.edition import make_student_notebook
    from ..notebooks import is_myst_notebook

    found = getattr(app, "_course_editions", None)
    if found is None:
        found = {}
        for docname in sorted(app.env.found_docs):
            path = Path(app.env.doc2path(docname))
            if (path.suffix == ".md" and is_myst_notebook(path)
                    and "{exercise-start}" in path.read_text(encoding="utf-8")):
                found[docname] = make_student_notebook(path, Path(app.srcdir))
        app._course_editions = found
    return found


def _stubs(app, docname: str) -> dict[str, list[str]]:
    ed = student_editions(app).get(docname)
    return {} if ed is None else {ex.label: list(ex.stubs) for ex in ed.exercises}


class RemoveSolutions(SphinxTransform):
    """In the course edition, put each solution's stubs in its place (after sphinx-exercise has gathered a
    gated solution into one node, priority 10)."""

    default_priority = 20

    def apply(self) -> None:
        if self.config.book_edition != "course":
            return
        from sphinx_exercise.nodes import solution_node

        stubs = _stubs(self.app, self.env.docname)
        given: set[str] = set()
        for node in list(self.document.findall(solution_node)):
            label = node.get("target_label", "")
            new = []
            if label not in given:  # an exercise's stubs once, where its first solution was
                given.add(label)
                new = [nodes.literal_block(stub, stub, language="ipython3", classes=["exercise-stub"])
                       for stub in stubs.get(label, [])]
            if new:
                node.replace_self(new)
            else:
                node.parent.remove(node)


def _published(html: Path, docname: str, suffix: str) -> list[Path]:
    """The files the site publishes for ``docname`` with ``suffix`` (``page.md`` or ``page.md.txt``)."""
    base = html / "_sources" / docname
    return [p for p in (base.with_name(base.name + suffix), base.with_name(base.name + suffix + ".txt")) if p.exists()]


def publish_student_sources(app, exception) -> None:
    """In the course edition, replace each chapter's published ``.md`` and ``.ipynb`` by its student edition."""
    if exception is not None or app.builder.name != "html" or edition(app) != "course":
        return
    from ..coursework.student import ipynb_as_saved, setup_cell_adder
    from ..notebooks import as_saved_myst

    html = Path(app.outdir)
    setup = setup_cell_adder(Path(app.confdir))
    for docname, ed in student_editions(app).items():
        nb = setup(copy.deepcopy(ed.notebook))
        for path in _published(html, docname, ".md"):
            path.write_text(as_saved_myst(nb), encoding="utf-8")
        for path in _published(html, docname, ".ipynb"):
            nbformat.write(ipynb_as_saved(nb), path)


def page_text(path: Path) -> str:
    """The text of an HTML page as a reader sees it (code blocks line by line)."""
    from bs4 import BeautifulSoup

    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser").get_text()


def check_no_solution(app, exception) -> None:
    """In the course edition, fail the build if a solution line survived in a page or its published sources."""
    if exception is not None or app.builder.name != "html" or edition(app) != "course":
        return
    from ..coursework.leaks import find_leaks, solution_lines

    html = Path(app.outdir)
    editions = student_editions(app)
    solutions = solution_lines(editions.values())
    leaks = []
    for docname, ed in editions.items():
        files = [html / f"{docname}.html", *_published(html, docname, ".md")]
        texts = [(p, page_text(p) if p.suffix == ".html" else p.read_text(encoding="utf-8")) for p in files if p.exists()]
        for path in _published(html, docname, ".ipynb"):
            texts.append((path, "\n".join(c.source for c in nbformat.read(path, as_version=4).cells)))
        for path, text in texts:
            leaks += [f"{path.relative_to(html)}: {leak}" for leak in find_leaks(text, ed, solutions)]
    if leaks:
        raise ExtensionError(f"{len(leaks)} solution line(s) survived in the course edition:\n  " + "\n  ".join(leaks))


def setup(app) -> None:
    app.add_config_value("book_edition", os.environ.get(ENV) or "full", "env", [str])
    app.connect("config-inited", check_edition)
    app.add_transform(RemoveSolutions)
    app.connect("build-finished", publish_student_sources, priority=400)  # before the notebooks are published (500)
    app.connect("build-finished", check_no_solution, priority=900)  # after
