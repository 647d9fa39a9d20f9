"""Slices of a chapter: the cells its exercises need, and nothing else (fast: no kernel runs here)."""

from __future__ import annotations

from pathlib import Path

import jupytext
import nbformat
import pytest
from toy_book import code_cell, exercise
from toy_book import chapter as toy_chapter

from booktools.coursework.edition import exercise_chapters, make_student_notebook
from booktools.coursework.slicing import DROP_TAG, KEEP_TAG, describe, needed, slice_chapter
from booktools.coursework.cell_names import cell_names

ROOT = Path(__file__).resolve().parents[2]


def chapter(body: str) -> str:
    """A chapter whose code cells are the ``---``-separated parts of ``body``, then one exercise."""
    cells = [code_cell(part.strip()) for part in body.split("\n---\n")]
    return toy_chapter("A chapter", *cells, "## Exercise", exercise(
        "ex-toy", "Write `answer(x)`.", ["def answer(x):\n    return scale * helper(x) + offset"],
        check="check_answer(answer)"))


def sliced(tmp_path: Path, body: str):
    path = tmp_path / "chapters" / "toy.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(chapter(body), encoding="utf-8")
    cut = slice_chapter(jupytext.read(path, fmt="md:myst"), make_student_notebook(path, tmp_path))
    return [src for src, _ in cut.kept], cut


SET_UP = "from parallel_mcmc.devices import use_cpu_devices\n\nuse_cpu_devices(2)\nimport numpy as np"
NEEDS = "scale, offset = 2.0, 1.0\n\ndef helper(x):\n    return np.sqrt(x) + shift\n\ndef check_answer(fn):\n    assert fn(4.0) > 0"


def test_keeps_set_up_and_what_the_exercise_reads_transitively_drops_the_rest(tmp_path):
    kept, cut = sliced(tmp_path, "\n---\n".join([
        SET_UP,
        "sweep = [np.linalg.eigvalsh(np.ones((n, n))) for n in range(2, 400)]  # a timing sweep",
        "shift = 0.5",
        NEEDS,
        "import matplotlib.pyplot as plt\n\nplt.plot([s[-1] for s in sweep])",
        "glue_value = answer_of_the_page = float(np.mean(sweep[0]))",
    ]))
    assert kept[:3] == [SET_UP, "shift = 0.5", NEEDS]
    assert kept[3].startswith("def answer") and kept[4] == "check_answer(answer)"
    assert len(cut.dropped) == 3 and cut.dropped[0].startswith("sweep =") and "plt.plot" in cut.dropped[1]
    assert [c.source for c in cut.notebook.cells if c.cell_type == "code"] == kept  # in the chapter's order
    assert sum(c.cell_type == "markdown" for c in cut.notebook.cells) == sum(
        c.cell_type == "markdown" for c in jupytext.read(tmp_path / "chapters/toy.md", fmt="md:myst").cells)


def test_a_later_binding_hides_the_earlier_one_unless_it_reads_it(tmp_path):
    kept, _ = sliced(tmp_path, "\n---\n".join([SET_UP, "shift = np.linalg.det(np.eye(900))", "shift = 0.5", NEEDS]))
    assert "shift = 0.5" in kept and not any("det" in k for k in kept)
    kept, _ = sliced(tmp_path, "\n---\n".join([SET_UP, "shift = np.linalg.det(np.eye(900))", "shift = shift / 2", NEEDS]))
    assert any("det" in k for k in kept) and "shift = shift / 2" in kept
    # a binding inside a branch may not happen: the earlier one stays
    kept, _ = sliced(tmp_path, "\n---\n".join([SET_UP, "shift = 0.25", "if np.pi > 4:\n    shift = 0.5", NEEDS]))
    assert "shift = 0.25" in kept and "if np.pi > 4:\n    shift = 0.5" in kept


def test_objects_changed_in_place_keep_the_cells_that_change_them(tmp_path):
    body = "\n---\n".join([
        SET_UP,
        "last = {}\nparts = []",
        "def measure():\n    last['shift'] = 0.5\n    parts.append(1)",
        "def run_all():\n    measure()",
        "verdict = run_all()  # fills last through measure",
        "parts.extend([2, 3])",
        "print(len(parts))  # reads parts, changes nothing",
        NEEDS.replace("+ shift", "+ last['shift'] * len(parts)"),
    ])
    kept, cut = sliced(tmp_path, body)
    assert "verdict = run_all()  # fills last through measure" in kept
    assert "parts.extend([2, 3])" in kept and "last = {}\nparts = []" in kept
    assert cut.dropped == ["print(len(parts))  # reads parts, changes nothing"]
    # calling a module's function as a statement does not count as changing the module
    kept, cut = sliced(tmp_path, "\n---\n".join([SET_UP, "np.testing.assert_allclose(np.ones(3), 1.0)", "shift = 0.5", NEEDS]))
    assert cut.dropped == ["np.testing.assert_allclose(np.ones(3), 1.0)"]


def test_local_names_of_functions_loops_and_comprehensions_are_not_the_globals(tmp_path):
    body = "\n---\n".join([
        SET_UP,
        "c = np.linalg.det(np.eye(900))\nx = 1\nn = 2",
        "shift = 0.5",
        "def helper(x):\n    c = [x * k for k in range(3)]\n    for i in c:\n        pass\n    return sum(c) + shift + total",
        # n is assigned in the loop before it is read; m is read before
        "for k in range(2):\n    n = k * shift\n    print(n, m)\ntotal = 1",
        "scale, offset = 2.0, 1.0\n\ndef check_answer(fn):\n    assert fn(4.0) > 0",
    ])
    body = body.replace("x = 1\nn = 2", "x = 1\nn = 2\n---\nm = 3")
    kept, cut = sliced(tmp_path, body)
    assert cut.dropped == ["c = np.linalg.det(np.eye(900))\nx = 1\nn = 2"] and "m = 3" in kept


def test_a_file_written_by_a_cell_magic_stays_with_its_path(tmp_path):
    body = "\n---\n".join([
        SET_UP + "\nfrom pathlib import Path\nscript = Path('job.py')",
        "%%writefile {script}\nimport sys\nprint(sys.argv)",
        "sweep = np.ones(3)",
        "shift = len(script.read_text())",
        NEEDS,
    ])
    kept, cut = sliced(tmp_path, body)
    assert "%%writefile {script}\nimport sys\nprint(sys.argv)" in kept and cut.dropped == ["sweep = np.ones(3)"]
    names, _ = cell_names("%%writefile {script}\nimport sys\nx = 1")
    assert names.reads == {"script"} and names.changed == {"script"} and not names.bound


def test_set_up_cells_stay_wherever_they_are(tmp_path):
    body = "\n---\n".join([
        "import numpy as np",
        "import jax\n\njax.config.update('jax_enable_x64', True)",
        "import os\n\nos.environ['XLA_FLAGS'] = '--xla_cpu_multi_thread_eigen=false'",
        "import warnings\n\nwarnings.filterwarnings('ignore')",
        "with warnings.catch_warnings():\n    warnings.filterwarnings('error')\n    sweep = np.ones(3)",
        "shift = 0.5",
        NEEDS,
    ])
    kept, cut = sliced(tmp_path, body)
    assert len(kept) == 6 + 2 and len(cut.dropped) == 1 and cut.dropped[0].startswith("with warnings")


def test_tags_force_a_cell_in_or_out(tmp_path):
    path = tmp_path / "chapters" / "toy.md"
    path.parent.mkdir(parents=True)
    path.write_text(chapter("\n---\n".join([SET_UP, "globals()['shift'] = 0.5", "unused = 1", NEEDS])), encoding="utf-8")
    nb = jupytext.read(path, fmt="md:myst")
    cut = slice_chapter(nb, make_student_notebook(path, tmp_path))
    assert cut.dropped == ["globals()['shift'] = 0.5", "unused = 1"]  # the analysis cannot see the name
    assert "graded on a slice" in describe(cut) and KEEP_TAG in describe(cut) and "globals()" in describe(cut)
    code = [c for c in nb.cells if c.cell_type == "code"]
    code[1].metadata["tags"] = [KEEP_TAG]
    code[3].metadata["tags"] = [DROP_TAG]  # dropped, although its names are read
    jupytext.write(nb, path, fmt="md:myst")
    assert f":tags: [{KEEP_TAG}]" in path.read_text()
    cut = slice_chapter(jupytext.read(path, fmt="md:myst"), make_student_notebook(path, tmp_path))
    assert ("globals()['shift'] = 0.5", f"tagged {KEEP_TAG}") in cut.kept and cut.dropped == ["unused = 1", NEEDS]


def test_roots_and_answers_in_needed():
    cells = [nbformat.v4.new_code_cell(src) for src in ["import numpy as np", "a = 1", "b = 2", "stub = ...", "check(stub)"]]
    cells.insert(2, nbformat.v4.new_markdown_cell("prose"))
    roots = [False, False, False, False, True, True]
    assert needed(cells, roots) == ["set-up", None, "markdown", None, "root", "root"]
    # the answer that replaces the stub reads b
    assert needed(cells, roots, {4: ["stub = b + 1"]}) == ["set-up", None, "markdown", "binds b", "root", "root"]


def test_an_edition_of_another_chapter_is_refused(tmp_path):
    path = tmp_path / "chapters" / "toy.md"
    path.parent.mkdir(parents=True)
    path.write_text(chapter("\n---\n".join([SET_UP, NEEDS])), encoding="utf-8")
    other = tmp_path / "chapters" / "other.md"
    other.write_text(chapter("\n---\n".join([SET_UP, "shift = 1", NEEDS])), encoding="utf-8")
    with pytest.raises(ValueError, match="do not match"):
        slice_chapter(jupytext.read(path, fmt="md:myst"), make_student_notebook(other, tmp_path))


@pytest.mark.parametrize("path", exercise_chapters(ROOT), ids=lambda p: p.stem)
def test_every_chapter_slices_to_the_same_exercises(path, tmp_path):
    """The slice of every chapter keeps its exercises, their checks and the cells that set it up, in order."""
    nb = jupytext.read(path, fmt="md:myst")
    edition = make_student_notebook(path, ROOT)
    cut = slice_chapter(nb, edition)
    code = [c.source for c in nb.cells if c.cell_type == "code" and "student-remove" not in c.metadata.get("tags", [])]
    sliced = [c.source for c in cut.notebook.cells if c.cell_type == "code" and "student-remove" not in c.metadata.get("tags", [])]
    assert sliced == [src for src, _ in cut.kept] and len(sliced) + len(cut.dropped) == len(code)
    remaining = iter(code)
    assert all(src in remaining for src in sliced)  # the chapter's order
    assert sliced[0] == code[0] and all(src in sliced for src in code if "use_cpu_devices(" in src)
    target = tmp_path / path.relative_to(ROOT)
    target.parent.mkdir(parents=True)
    jupytext.write(cut.notebook, target, fmt="md:myst")
    again = make_student_notebook(target, tmp_path)
    assert [e.as_metadata() for e in again.exercises] == [e.as_metadata() for e in edition.exercises]
    assert [e.solution_code for e in again.exercises] == [e.solution_code for e in edition.exercises]


def test_a_submission_is_sliced_with_the_learners_answer_among_the_roots(tmp_path):
    """The grader's slice of an assembled submission (no kernel): the cells the learner's answer reads are kept,
    the others emptied in place (every cell keeps its index); an answer the analysis cannot read slices nothing."""
    import copy

    from booktools.coursework.edition import with_answers
    from booktools.coursework.grade.assemble import assemble_submission, slice_submission

    sweep = "sweep = [np.linalg.eigvalsh(np.ones((n, n))) for n in range(2, 400)]"
    path = tmp_path / "chapters" / "toy.md"
    path.parent.mkdir(parents=True)
    path.write_text(chapter("\n---\n".join([SET_UP, sweep, "shift = 0.5", "extra = 3", NEEDS])), encoding="utf-8")
    edition = make_student_notebook(path, tmp_path)
    book_answer = "def answer(x):\n    return scale * helper(x) + offset"
    for answer, reads_extra in ((book_answer, False), (book_answer + " + extra", True)):
        sub = with_answers(copy.deepcopy(edition.notebook), {"ex-toy": [answer]})
        nb, *_ = assemble_submission(sub, path, tmp_path, tmp_path, 0)
        before = [c.source for c in nb.cells]
        dropped, why = slice_submission(nb)
        assert why is None and len(nb.cells) == len(before)
        assert sorted(before[i] for i in dropped) == sorted([sweep] + ([] if reads_extra else ["extra = 3"]))
        assert all(nb.cells[i].source == ("" if i in dropped else before[i]) for i in range(len(before)))
    sub = with_answers(copy.deepcopy(edition.notebook), {"ex-toy": ["def answer(x:\n    return x"]})
    nb, *_ = assemble_submission(sub, path, tmp_path, tmp_path, 0)
    before = [c.source for c in nb.cells]
    dropped, why = slice_submission(nb)
    assert dropped == [] and "not Python" in why and [c.source for c in nb.cells] == before
