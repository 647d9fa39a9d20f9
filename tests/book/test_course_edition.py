"""The course edition of the site (``make book EDITION=course``): no solution anywhere it publishes.

A one-page book with the project's own _config.yml and extensions, one exercise with a gated solution
(prose, code, output) and one with a ``solution`` directive, is built twice: the full site, then the
course edition into its own folder, which must reuse the execution cache of the first build and
publish no solution: not in the page, its search index, nor the sources it hands out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
from test_book_build import JUPYTER_BOOK, ROOT, offline_prefix
from toy_book import chapter, code_cell, exercise

from booktools.site.course_edition import page_text

CHECK_DOUBLE = """
import types


def _check_double(fn):
    if fn(3) != 6:
        raise AssertionError(f"double(3) returned {fn(3)!r}; it should be 6.")
    print("double: correct.")


check = types.SimpleNamespace(double=_check_double)
"""
PAGE = chapter(
    "A page",
    code_cell(CHECK_DOUBLE),
    exercise("ex-page-double", "Write `double(x)`, which returns twice its argument. Why is it\n"
             "linear? <!-- graded by hand: why-linear -->",
             ['def double(x):\n    return x + x  # CODEMARKER\n\n\nprint("OUTPUT" + "MARKER", double(21))'],
             prose="Multiply by two, the PROSEMARKER way.", check="check.double(double)"),
    "```{exercise} Why twice?\n:label: ex-page-why\n\nWhy is `double` linear?\n```",
    "```{solution} ex-page-why\n:class: dropdown\n\nBecause of DIRECTIVEMARKER.\n```",
)

# Each appears only in a solution (the output marker only in an output); the full site has them all.
MARKERS = ["PROSEMARKER", "CODEMARKER", "OUTPUTMARKER", "DIRECTIVEMARKER"]


def make_book(folder: Path) -> Path:
    book = folder / "book"
    book.mkdir()
    for name in ("_config.yml", "references.bib", "pyproject.toml", "requirements.txt", "README.md"):
        shutil.copy(ROOT / name, book / name)
    (book / "node_modules").symlink_to(ROOT / "node_modules")
    (book / "src").symlink_to(ROOT / "src")  # the published notebooks' wheel is built from it
    (book / "_toc.yml").write_text("format: jb-book\nroot: page\n")
    (book / "page.md").write_text(PAGE)
    return book


def build(book: Path, edition: str, *output: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, BOOK_EDITION=edition)
    cmd = [*offline_prefix(), str(JUPYTER_BOOK), "build", str(book), *output, "-W", "-n", "--keep-going"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return done


def found(html: Path) -> dict[str, list[str]]:
    """Each marker -> the files under ``html`` that hold it."""
    where: dict[str, list[str]] = {m: [] for m in MARKERS}
    for path in html.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for marker in MARKERS:
                if marker.encode() in data:
                    where[marker].append(path.relative_to(html).as_posix())
    return where


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    """(full site's html, course edition's html, the course build's log)."""
    book = make_book(tmp_path_factory.mktemp("course"))
    build(book, "full")
    course = build(book, "course", "--path-output", str(book / "_build" / "course"))
    return book / "_build" / "html", book / "_build" / "course" / "_build" / "html", course.stdout + course.stderr


def test_the_full_site_has_the_solutions(sites):
    full, _, _ = sites
    where = found(full)
    assert all(where.values()), where
    assert "OUTPUTMARKER" in (full / "page.html").read_text()
    assert "repository-button" in (full / "page.html").read_text()
    assert "parallel_mcmc @ git+https://github.com/" in (full / "binder" / "requirements.txt").read_text()


def test_the_course_edition_has_no_solution_anywhere(sites):
    _, course, _ = sites
    assert (course / "page.html").is_file() and (course / "searchindex.js").is_file()
    assert found(course) == {m: [] for m in MARKERS}


def test_the_course_edition_keeps_exercises_stubs_and_checks(sites):
    _, course, _ = sites
    page = page_text(course / "page.html")
    assert "returns twice its argument" in page and "Why is" in page  # both statements
    assert "check.double" in page and "double: correct." in page  # the check and its output
    assert "NotImplementedError" in page  # the stub in place of the solution
    assert "graded by hand" not in page  # the marker of a question graded by hand is not shown
    assert "repository-button" not in (course / "page.html").read_text()  # the repository holds the solutions


def test_the_course_edition_publishes_the_student_edition(sites):
    _, course, _ = sites
    nb = nbformat.read(course / "_sources" / "page.ipynb", as_version=4)
    roles = [c.metadata.get("coursework", {}).get("role") for c in nb.cells if c.cell_type == "code"]
    assert "stub" in roles and "check" in roles
    written = [c for c in nb.cells if c.metadata.get("coursework", {}).get("role") == "written"]
    assert len(written) == 1 and "Why is it linear?" in written[0].source  # a place for the answer in words
    assert nb.cells[0].metadata.get("tags") == ["book-setup"]  # runnable on Colab, as the full site's notebooks
    binder = (course / "binder" / "requirements.txt").read_text()  # Binder needs no access to the repository
    assert "parallel_mcmc @ https://" in binder and "/wheels/parallel_mcmc-" in binder and "git+" not in binder
    source = next(p for p in (course / "_sources").iterdir() if p.name.startswith("page.md"))
    assert "raise NotImplementedError" in source.read_text() and "{solution" not in source.read_text()


def test_the_course_edition_executes_nothing_again(sites):
    full, _, log = sites
    assert "Executing notebook" not in log, log[-3000:]
    assert str(full.parent / ".jupyter_cache") in log  # the full site's cache


def test_the_course_edition_never_overwrites_the_full_site(tmp_path):
    book = make_book(tmp_path)
    env = dict(os.environ, BOOK_EDITION="course")
    done = subprocess.run([str(JUPYTER_BOOK), "build", str(book)], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode != 0 and "its own folder" in done.stdout + done.stderr
    env["BOOK_EDITION"] = "students"
    done = subprocess.run([str(JUPYTER_BOOK), "build", str(book)], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode != 0 and "must be one of full, course" in done.stdout + done.stderr


def test_a_solution_line_left_in_a_page_fails_the_build(tmp_path):
    """The check that ends a course build: a solution line in a page's HTML or its published sources is an error."""
    from types import SimpleNamespace

    from sphinx.errors import ExtensionError

    from booktools.coursework.edition import make_student_notebook
    from booktools.site.course_edition import check_no_solution

    (tmp_path / "page.md").write_text(PAGE)
    html = tmp_path / "html"
    (html / "_sources").mkdir(parents=True)
    app = SimpleNamespace(builder=SimpleNamespace(name="html"), config=SimpleNamespace(book_edition="course"),
                          outdir=str(html), _course_editions={"page": make_student_notebook(tmp_path / "page.md", tmp_path)})
    (html / "page.html").write_text("<p>Write <code>double(x)</code>.</p><pre>def double(x):\n    raise NotImplementedError</pre>")
    check_no_solution(app, None)  # the statement and the stub's header are no leak
    (html / "_sources" / "page.md").write_text("def double(x):\n    return x + x  # CODEMARKER\n")
    with pytest.raises(ExtensionError, match=r"_sources/page.md: .*return x \+ x # CODEMARKER"):
        check_no_solution(app, None)
    (html / "_sources" / "page.md").unlink()
    (html / "page.html").write_text("<p>Multiply by two, the <em>PROSEMARKER</em> way.</p>")
    with pytest.raises(ExtensionError, match="page.html: .*PROSEMARKER"):
        check_no_solution(app, None)
    app.config.book_edition = "full"
    check_no_solution(app, None)  # the full site has its solutions
