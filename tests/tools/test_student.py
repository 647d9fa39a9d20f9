"""The student edition: solutions out, stubs and checks in, no leak (fast: no kernel runs here)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml
from toy_book import FRONT, chapter, code_cell, exercise

from booktools.coursework import student
from booktools.coursework.edition import exercise_chapters, make_student_notebook, with_answers
from booktools.coursework.grade.read import structure, submitted_answers
from booktools.coursework.leaks import LeakError, is_trivial, solution_lines
from booktools.coursework.markdown import normalise
from booktools.coursework.slicing import needed
from booktools.coursework.student import build_student_edition

ROOT = Path(__file__).resolve().parents[2]

# A small chapter in the book's exercise convention: a function, a given-data cell,
# a two-cell solution, prose solutions, a check with a message, a student-remove cell.
CHECKS = textwrap.dedent("""
    import types


    def _check_double(fn):
        for x in [0, 1, 2.5, -3]:
            got = fn(x)
            if got != 2 * x:
                raise AssertionError(f"double({x}) returned {got!r}; it should be {2 * x}.")
        print("double: correct.")


    def _check_mean(value, data):
        if value != sum(data) / len(data):
            raise AssertionError(f"mean is {value!r}; divide the total by the number of items.")
        print("mean: correct.")


    check = types.SimpleNamespace(double=_check_double, mean=_check_mean)
""")
TOY = chapter(
    "A toy chapter",
    code_cell(CHECKS),
    code_cell('instructor_only_marker = "INSTRUCTOR-ONLY-CELL"', "student-remove"),
    "## Exercises",
    exercise("ex-toy-double", "Write `double(x)`, which returns twice its argument.",
             ["def double(x):\n    return 2 * x  # SOLUTION-CODE-ONE"],
             prose="Multiplying by two is the whole of it: SOLUTION-PROSE-ONE.", check="check.double(double)"),
    exercise("ex-toy-mean", "Compute the mean of `data` below in `mean`, through its `total`.",
             ["total = sum(data)  # SOLUTION-CODE-TWO", "mean = total / len(data)  # SOLUTION-CODE-THREE"],
             given="data = [1.0, 2.0, 6.0]", check="check.mean(mean, data)",
             prose='Add the items up first (SOLUTION-PROSE-TWO), then divide.\n\n```python\n'
                   'literal_block_inside_the_solution = "SOLUTION-LITERAL"\n```'),
    "The chapter goes on after its exercises.",
)

MARKERS = ["SOLUTION-PROSE-ONE", "SOLUTION-CODE-ONE", "SOLUTION-PROSE-TWO", "SOLUTION-LITERAL",
           "SOLUTION-CODE-TWO", "SOLUTION-CODE-THREE", "INSTRUCTOR-ONLY-CELL"]


def make_book(tmp_path: Path, chapters: dict[str, str] | None = None) -> Path:
    """A minimal book folder holding the given chapters (default: the toy chapter)."""
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: intro\n")
    for rel, text in (chapters or {"chapters/toy/toy.md": TOY}).items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_toy_student_edition(tmp_path):
    book = make_book(tmp_path)
    written = build_student_edition(book, verbose=False)
    md = book / "_build/student/chapters/toy/toy.md"
    ipynb = md.with_suffix(".ipynb")
    assert sorted(written) == sorted([md, ipynb])
    for path in (md, ipynb):
        text = path.read_text(encoding="utf-8")
        for marker in MARKERS:
            assert marker not in text, f"{marker} survived in {path.name}"
        assert "solution-start" not in text and "solution-end" not in text
        assert "exercise-start" in text  # the prompts stay
    nb = nbformat.read(ipynb, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "python3"
    roles = [(c.metadata.get("coursework", {}).get("exercise"), c.metadata.get("coursework", {}).get("role"))
             for c in nb.cells if c.cell_type == "code"]
    assert roles == [
        (None, None),  # set-up
        ("ex-toy-double", "stub"), ("ex-toy-double", "check"),
        (None, None),  # the given data stays
        ("ex-toy-mean", "stub"), ("ex-toy-mean", "stub"), ("ex-toy-mean", "check"),
    ]
    stubs = [c.source for c in nb.cells if c.metadata.get("coursework", {}).get("role") == "stub"]
    assert "def double(x):" in stubs[0] and "NotImplementedError" in stubs[0]
    assert "total = ..." in stubs[1] and "mean = ..." in stubs[2]
    assert "data" not in stubs[1].split("Define", 1)[1], "the given data must not be stubbed over"
    meta = nb.metadata["coursework"]
    assert meta["source"] == "chapters/toy/toy.md"
    assert [e["label"] for e in meta["exercises"]] == ["ex-toy-double", "ex-toy-mean"]
    assert meta["exercises"][1]["checks"] == ["check.mean(mean, data)"]
    # The .md reads back as the same notebook (metadata included).
    back = jupytext.read(md)
    assert [c.source for c in back.cells] == [c.source for c in nb.cells]
    assert [c.metadata.get("coursework") for c in back.cells] == [c.metadata.get("coursework") for c in nb.cells]
    # Answers go in place of the stubs, in order; an exercise left out, or a stub beyond its answers, keeps its stub.
    solved = with_answers(nb, {"ex-toy-mean": ["total = 6"]})
    solved_stubs = [c.source for c in solved.cells if c.metadata.get("coursework", {}).get("role") == "stub"]
    assert solved_stubs == [stubs[0], "total = 6", stubs[2]] and stubs[1] != "total = 6"
    assert [c.source for c in nb.cells if c.metadata.get("coursework", {}).get("role") == "stub"] == stubs  # a copy


def test_leak_check_catches_a_surviving_line(tmp_path, monkeypatch):
    book = make_book(tmp_path)
    real = student.make_student_notebook

    def leaky(chapter, root=None):
        ed = real(chapter, root)
        ed.notebook.cells.append(nbformat.v4.new_markdown_cell("Add the items up first (SOLUTION-PROSE-TWO), then divide."))
        return ed

    monkeypatch.setattr(student, "make_student_notebook", leaky)
    with pytest.raises(LeakError, match="SOLUTION-PROSE-TWO"):
        build_student_edition(book, verbose=False)


def test_command_fails_on_an_unclosed_solution(tmp_path):
    broken = TOY.replace("```{solution-end}\n```\n\n```{code-cell} ipython3\ncheck.mean", "```{code-cell} ipython3\ncheck.mean")
    book = make_book(tmp_path, {"chapters/toy/toy.md": broken})
    env_cmd = [sys.executable, "-m", "booktools.coursework.student", "--book", str(book)]
    done = subprocess.run(env_cmd, capture_output=True, text=True, env={"PATH": ""})
    assert done.returncode != 0
    assert "solution-end" in done.stderr


def test_lines_outside_solutions_are_not_leaks(tmp_path):
    # A solution may repeat a line that the exercise text shows (given data): that is no leak.
    text = TOY.replace("Compute the mean of `data` below", "With `total = sum(data)  # SOLUTION-CODE-TWO`, compute the mean of `data` below")
    book = make_book(tmp_path, {"chapters/toy/toy.md": text})
    build_student_edition(book, verbose=False)


def test_trivial_lines():
    assert is_trivial("") and is_trivial("   # a comment") and is_trivial("answer") and is_trivial("x = 1")
    assert is_trivial("```{code-cell} ipython3") and is_trivial(":class: dropdown") and is_trivial("else:")
    assert not is_trivial("v_last = jax.device_put(v, jax.devices()[-1])")
    assert normalise("  a   b ") == "a b"


def test_discovery_needs_kernelspec_and_exercise(tmp_path):
    book = make_book(tmp_path, {
        "chapters/toy/toy.md": TOY,
        "chapters/toy/no_exercise.md": FRONT + "# Nothing to do\n",
        "chapters/plain.md": "# A page\n```{exercise-start}\n:label: ex-x\n```\n",
    })
    assert exercise_chapters(book) == [book / "chapters/toy/toy.md"]


def test_book_student_edition_has_no_solution_text(tmp_path):
    """Every chapter of the book with exercises: its student edition holds no line of any solution."""
    chapters = exercise_chapters(ROOT)
    assert chapters, "the book has exercises; none were found"
    written = build_student_edition(ROOT, tmp_path, verbose=False)  # raises LeakError on a leak
    editions = [make_student_notebook(c, ROOT) for c in chapters]
    solutions = solution_lines(editions)
    assert solutions, "no solution line found: the parser missed the solutions"
    n_exercises = 0
    for ed in editions:
        nb = nbformat.read((tmp_path / ed.source).with_suffix(".ipynb"), as_version=4)
        md = (tmp_path / ed.source).with_suffix(".md").read_text(encoding="utf-8")
        for text in [md, *(c.source for c in nb.cells)]:
            for line in text.split("\n"):
                key = normalise(line)
                assert key not in solutions or key in ed.kept_text or key in ed.interface_lines, (
                    f"{ed.source}: solution line {key!r} of {solutions[key]} survived"
                )
        assert "solution-start" not in md and "solution-end" not in md
        # the published notebooks' set-up cell comes first, installing from the site's wheel
        assert "book-setup" in nb.cells[0].metadata.get("tags", []), nb.cells[0]
        assert "parallel_mcmc-" in nb.cells[0].source and ".whl" in nb.cells[0].source
        labels = [e.label for e in ed.exercises]
        meta = nb.metadata["coursework"]["exercises"]
        assert [e["label"] for e in meta] == labels
        for ex in ed.exercises:
            n_exercises += 1
            assert ex.stubs, f"{ed.source}: {ex.label} has no stub cell"
            assert ex.checks, f"{ed.source}: {ex.label} has no check cell after its solution"
    assert len(written) == 2 * len(chapters) and n_exercises >= len(chapters)
    assert json.dumps(nb.metadata["coursework"])  # plain JSON


def test_student_files_are_saved_unchanged_by_jupyterlab(tmp_path):
    """Opening the student edition in JupyterLab changes nothing: its .md is a fixed point of
    jupytext's MyST round trip, its .ipynb is what nbformat writes back, with the kernel's metadata."""
    from ipykernel.ipkernel import IPythonKernel

    book = make_book(tmp_path)
    build_student_edition(ROOT, tmp_path / "book", verbose=False)
    build_student_edition(book, verbose=False)
    mds = sorted((tmp_path / "book").rglob("*.md")) + [book / "_build/student/chapters/toy/toy.md"]
    assert len(mds) > 1
    for md in mds:
        text = md.read_text(encoding="utf-8")
        saved = jupytext.writes(jupytext.reads(text, fmt="md:myst"), fmt="md:myst")
        assert saved == text, f"{md.name} changes when JupyterLab saves it"
        ipynb = md.with_suffix(".ipynb")
        raw = ipynb.read_text(encoding="utf-8")
        nb = nbformat.reads(raw, as_version=nbformat.NO_CONVERT)
        rewritten = tmp_path / "rewritten.ipynb"
        nbformat.write(nb, rewritten)  # as jupyter_server saves a notebook
        assert rewritten.read_text(encoding="utf-8") == raw, f"{ipynb.name} changes when JupyterLab saves it"
        assert raw.startswith('{\n "cells": [\n  {\n') and raw.endswith("}\n")  # 1-space indent, final newline
        assert (nb.nbformat, nb.nbformat_minor) == (4, 5) and all(c.get("id") for c in nb.cells)
        assert nbformat.validator.normalize(nb)[0] == 0, "nbformat would normalise it"
        # What JupyterLab sets on the notebook when its kernel starts is there already.
        assert nb.metadata.kernelspec == {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
        assert nb.metadata.language_info == IPythonKernel.language_info
        assert [c.source for c in jupytext.reads(text, fmt="md:myst").cells] == [c.source for c in nb.cells]


# --------------------------------------------------------------------------- questions graded by hand

# The toy chapter whose first exercise also asks a question to answer in words, marked for grading by hand.
WHY = TOY.replace(
    "Write `double(x)`, which returns twice its argument.",
    "Write `double(x)`, which returns twice its argument. Try it on 0.5:\n"
    "why is the result exact? <!-- graded by hand: why-exact, 2 points -->",
)


def test_a_question_graded_by_hand_gets_an_answer_cell_after_the_check(tmp_path):
    book = make_book(tmp_path, {"chapters/toy/toy.md": WHY})
    build_student_edition(book, verbose=False)
    nb = nbformat.read(book / "_build/student/chapters/toy/toy.ipynb", as_version=4)
    meta = nb.metadata["coursework"]["exercises"][0]
    assert meta["parts"] == [{"name": "why-exact", "prompt": "why is the result exact?", "points": 2.0}]
    assert "parts" not in nb.metadata["coursework"]["exercises"][1]
    roles = [(c.cell_type, c.metadata.get("coursework", {}).get("role")) for c in nb.cells]
    check = roles.index(("code", "check"))
    assert roles[check + 1] == ("markdown", "written")  # right after the exercise's check
    cell = nb.cells[check + 1]
    assert cell.metadata["coursework"] == {"exercise": "ex-toy-double", "role": "written", "part": "why-exact"}
    assert "why is the result exact?" in cell.source and "graded by hand, 2 points" in cell.source
    assert "<!-- graded by hand: why-exact, 2 points -->" in nb.cells[check - 2].source  # the statement keeps it
    back = jupytext.read(book / "_build/student/chapters/toy/toy.md")  # the .md keeps the cell's metadata
    assert [c.metadata.get("coursework") for c in back.cells] == [c.metadata.get("coursework") for c in nb.cells]


def test_a_question_graded_by_hand_without_points_is_worth_one(tmp_path):
    text = WHY.replace(", 2 points -->", " -->")
    ed = make_student_notebook(make_book(tmp_path, {"chapters/toy/toy.md": text}) / "chapters/toy/toy.md", tmp_path)
    assert [(p.name, p.points) for p in ed.exercises[0].parts] == [("why-exact", 1.0)]


@pytest.mark.parametrize("text, why", [
    (WHY.replace("graded by hand: why-exact, 2 points", "graded by hand"), "graded by hand: NAME"),
    (WHY.replace("graded by hand: why-exact, 2 points", "graded by hand: why exact"), "graded by hand: NAME"),
    (WHY.replace("The chapter goes on after its exercises.",
                 "The chapter goes on. <!-- graded by hand: stray -->"), "not inside an exercise statement"),
    (WHY.replace("why is the result exact? <!--", "why? <!-- graded by hand: why-exact --> and how? <!--"),
     "two questions graded by hand named 'why-exact'"),
])
def test_a_wrong_graded_by_hand_marker_is_refused(tmp_path, text, why):
    book = make_book(tmp_path, {"chapters/toy/toy.md": text})
    with pytest.raises(ValueError, match=why):
        make_student_notebook(book / "chapters/toy/toy.md", book)


def test_the_books_questions_graded_by_hand():
    """The parallel tempering page's "why does every pair accept there?" is graded by hand."""
    ed = make_student_notebook(ROOT / "chapters/other_parallelism/parallel_tempering.md", ROOT)
    parts = {p.label: (p.name, p.prompt) for ex in ed.exercises for p in ex.parts}
    assert parts == {"ex-pt-pair-acceptance": ("why-every-pair-accepts", "why does every pair accept there?")}


def test_every_chapter_of_the_parts_ends_with_its_exercises():
    """The introduction and the page for instructors say that every chapter ends with exercises, the
    introduction, that page and the reference pages aside: every other page of the table of contents does."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    pages = [ROOT / f"{entry['file']}.md" for part in toc["parts"] for entry in part["chapters"]]
    aside = {ROOT / "chapters/teaching.md", *(p for p in pages if p.parent.name == "reference")}
    chapters = [p for p in pages if p not in aside]
    assert chapters and set(chapters) <= set(exercise_chapters(ROOT)), sorted(set(chapters) - set(exercise_chapters(ROOT)))
    for page in chapters:
        headings = [line for line in page.read_text().splitlines() if line.startswith("## ")]
        assert headings[-1] in ("## Exercises", "## Exercise"), f"{page.relative_to(ROOT)} ends with {headings[-1]!r}"
    for page, claim in (("chapters/intro.md", "Each chapter ends with exercises (the introduction, the page for "
                                              "instructors\nand the reference pages aside)"),
                        ("chapters/teaching.md", "Every chapter ends with exercises (this page, the introduction and"
                                                 "\nthe reference pages aside)")):
        assert claim in (ROOT / page).read_text(), page


# --------------------------------------------------------------------------- a page a learner reads

#: What a raw MyST role looks like in Markdown.
RAW_ROLE = re.compile(r"\{glue|\{cite|\{doc\}|\{ref\}|\{numref\}")
HIDDEN = {"remove-cell", "remove-input", "hide-cell", "hide-input"}


def test_book_student_edition_has_no_raw_role_and_no_bookkeeping_cell(tmp_path):
    """Every chapter with exercises: no raw role in the prose of its student notebook, no solution line (the
    build's leak check raises), every cell the website shows is there, and no cell the website hides that
    neither an exercise nor a cell that stays needs (:func:`booktools.coursework.slicing.needed`)."""
    build_student_edition(ROOT, tmp_path, verbose=False)  # raises LeakError on a leak
    chapters = exercise_chapters(ROOT)
    hidden_dropped = 0
    for path in chapters:
        ed = make_student_notebook(path, ROOT)
        nb = nbformat.read((tmp_path / ed.source).with_suffix(".ipynb"), as_version=4)
        md = (tmp_path / ed.source).with_suffix(".md").read_text(encoding="utf-8")
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                assert not RAW_ROLE.search(cell.source), f"{ed.source}: a raw role in {cell.source[:200]!r}"
        assert "exercise-start" in md  # the grader finds the exercises by their directives
        # what the slicer says the exercises (with the book's solutions) and the shown cells need
        cells = ed.notebook.cells
        solutions = {e.label: e.solution_code for e in ed.exercises}
        roles = [(c.metadata.get("coursework") or {}) for c in cells]
        shown = [c.cell_type == "code"
                 and (r.get("role") in ("stub", "check") or not HIDDEN & set(c.metadata.get("tags", [])))
                 for c, r in zip(cells, roles)]
        keep = needed(cells, shown, {i: solutions[r["exercise"]] for i, r in enumerate(roles) if r.get("role") == "stub"})
        unneeded = {c.source for c, k in zip(cells, keep) if c.cell_type == "code" and k is None}
        codes = [c.source for c in nb.cells if c.cell_type == "code"]
        for cell in nb.cells:
            if cell.cell_type == "code" and HIDDEN & set(cell.metadata.get("tags", [])):
                assert cell.source not in unneeded, f"{ed.source}: a hidden cell no cell needs: {cell.source[:120]!r}"
        for cell, is_shown in zip(cells, shown):
            if is_shown:
                assert cell.source in codes, f"{ed.source}: a cell the page shows is missing: {cell.source[:120]!r}"
        hidden_dropped += len(unneeded)
        # a submission made from it gives the grader the same answers as one made from the full edition
        given = {c.source for c, r in zip(cells, roles) if c.cell_type == "code" and r.get("role") != "stub"}
        assert submitted_answers(with_answers(nb, solutions), given) == submitted_answers(
            with_answers(ed.notebook, solutions), given), ed.source
    assert hidden_dropped > len(chapters), "the student edition should leave out the pages' bookkeeping"


GLUED = chapter(
    "A glued chapter",
    code_cell(CHECKS),
    code_cell("from myst_nb import glue\ncalls_per_run = 1234.5678\nglue('calls_per_run', calls_per_run, display=False)",
              "remove-cell"),
    code_cell("scale = 2  # read by the plot below", "remove-input"),
    code_cell("print(scale * 3)"),
    "Each run makes {glue:text}`calls_per_run:.1f` calls ({glue:text}`calls_per_run`), as measured in "
    "{cite:p}`hoffman2021`; see {doc}`../other/page`.",
    "## Exercises",
    exercise("ex-glued-double", "Write `double(x)`, which returns twice its argument.",
             ["def double(x):\n    return 2 * x  # SOLUTION-CODE-ONE"], check="check.double(double)"),
)
BIB = "@article{hoffman2021, author = {Hoffman, Matthew and Radul, Alexey and Sountsov, Pavel}, year = {2021}, title = {T}}\n"


def _glued_book(tmp_path: Path) -> Path:
    book = make_book(tmp_path, {"chapters/toy/glued.md": GLUED})
    (book / "references.bib").write_text(BIB)
    return book


def _cache_run(book: Path, page: Path) -> None:
    """Put a run of ``page`` into the book's execution cache, as the notebook tests do, with the glue record
    that myst-nb's ``glue`` writes (no kernel runs here)."""
    from booktools import execution_cache
    from booktools.notebooks import read

    nb = read(page)
    (cell,) = [c for c in nb.cells if "glue(" in c.source]
    cell.outputs = [nbformat.v4.new_output(
        "display_data", data={"application/papermill.record/text/plain": "1234.5678"},
        metadata={"scrapbook": {"name": "calls_per_run", "mime_prefix": "application/papermill.record/"}})]
    (book / "src").mkdir(exist_ok=True)
    cache = execution_cache.BookCache(book)
    execution_cache.store(cache, nb, page, 0.1)
    cache.stamp.touch()


def test_glued_values_come_from_the_books_run_and_read_as_text_without_it(tmp_path):
    book = _glued_book(tmp_path)
    md = book / "_build/student/chapters/toy/glued.md"
    build_student_edition(book, verbose=False)
    without = md.read_text(encoding="utf-8")
    assert "Each run makes (the value this page computes: calls per run) calls" in without
    assert "(the value this page computes: calls per run))" in without
    _cache_run(book, book / "chapters/toy/glued.md")
    build_student_edition(book, verbose=False)
    text = md.read_text(encoding="utf-8")
    assert "Each run makes 1234.6 calls (1234.5678), as measured in (Hoffman et al., 2021); see page." in text
    for written in (without, text):
        assert not RAW_ROLE.search(written)
        assert "```{exercise-start}\n:label: ex-glued-double\n```" in written  # as the grader reads it
    nb = nbformat.read(md.with_suffix(".ipynb"), as_version=4)
    codes = [c for c in nb.cells if c.cell_type == "code"]
    assert not any("glue(" in c.source for c in codes), "the glue cell is bookkeeping: it goes"
    (kept,) = [c for c in codes if c.source.startswith("scale = 2")]  # hidden, but the shown cell after it reads it
    assert kept.metadata["coursework"] == {"needed": "binds scale"}
    assert "print(scale * 3)" in [c.source for c in codes]
    labels, roles, _ = structure(nb)
    assert labels == ["ex-glued-double"] and sorted(r for _, r in roles.values()) == ["check", "stub"]


def test_a_glued_value_of_the_page_is_formatted_as_the_page_formats_it():
    from booktools.coursework.readable import fallback_text
    from booktools.site.published_notebooks import readable_markdown

    glue = {"rate": "0.123456", "name": "'NUTS'"}
    text = "{glue:text}`rate:.1%` by {glue}`name`, {glue:}`rate:.2f`; {glue:text}`missing`."
    out = readable_markdown(text, glue, {}, "", "chapters/p/q", exercise_blocks=False, missing=fallback_text)
    assert out == "12.3% by NUTS, 0.12; (the value this page computes: missing)."
    with pytest.raises(KeyError, match="missing"):
        readable_markdown(text, glue, {}, "https://x.github.io/y/", "chapters/p/q")  # the site: every value known
