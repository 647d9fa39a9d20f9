"""The grader on ordinary submissions of a toy chapter (two exercises checked by the book's own checks): untouched,
answered, answered wrongly, an endless loop, an exception, a loop that ignores interrupts, a kernel that kills itself,
endless output, a memory hog, the notebook's time limit, the command line."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import jupytext
import nbformat
import pytest
from booktools.coursework import sandbox
from booktools.coursework.edition import make_student_notebook
from booktools.coursework.slicing import describe, slice_chapter
from test_student import make_book
from toy_grading import CELL_LIMIT, NOTEBOOK_LIMIT, RIGHT_CHAINS, RIGHT_COMBINE, TOY, answered, grade, messages, statuses

pytestmark = pytest.mark.skipif(sandbox.available() is not None, reason=f"no sandbox here: {sandbox.available()}")


# --------------------------------------------------------------------------- ordinary submissions


def test_untouched_student_notebook_grades_zero(toy, tmp_path):
    book, nb = toy
    report = grade(tmp_path, book, nb)
    assert statuses(report) == {"ex-toy-chains": "error", "ex-toy-combine": "error"}
    assert report.score == 0 and report.total == 2 and not report.problems
    assert all(m.startswith("not answered") for m in messages(report).values())


def test_answers_grade_full_and_wrong_answers_fail(toy, tmp_path):
    book, nb = toy
    report = grade(tmp_path, book, answered(nb))
    assert statuses(report) == {"ex-toy-chains": "passed", "ex-toy-combine": "passed"}
    assert report.score == report.total == 2
    strided = "def my_chains(process_id, num_processes, num_chains):\n    return list(range(process_id, num_chains, num_processes))"
    by_draws = "def combine(parts):\n    return np.concatenate(parts, axis=1)"
    report = grade(tmp_path, book, answered(nb, {"ex-toy-chains": [strided], "ex-toy-combine": [by_draws]}), "wrong.ipynb")
    assert statuses(report) == {"ex-toy-chains": "failed", "ex-toy-combine": "failed"}
    assert "contiguous block" in messages(report)["ex-toy-chains"]
    assert "chain axis" in messages(report)["ex-toy-combine"]


def test_jnp_answer_passes_and_own_exception_is_named(toy, tmp_path):
    book, nb = toy
    jnp_combine = "import jax.numpy as jnp\n\ndef combine(parts):\n    return jnp.concatenate([jnp.asarray(p) for p in parts])"
    bug = "def my_chains(process_id, num_processes, num_chains):\n    raise KeyError('my own bug')"
    report = grade(tmp_path, book, answered(nb, {"ex-toy-chains": [bug], "ex-toy-combine": [jnp_combine]}))
    assert statuses(report) == {"ex-toy-chains": "failed", "ex-toy-combine": "passed"}
    assert "raised KeyError: 'my own bug'" in messages(report)["ex-toy-chains"]


def test_endless_loop_and_exception_are_graded_within_limits(toy, tmp_path):
    book, nb = toy
    loop = "def my_chains(process_id, num_processes, num_chains):\n    while True:\n        pass"
    sub = answered(nb, {"ex-toy-chains": [loop], "ex-toy-combine": ["raise ValueError('my own bug')"]})
    start = time.monotonic()
    report = grade(tmp_path, book, sub, cell_timeout=5)
    elapsed = time.monotonic() - start
    assert statuses(report) == {"ex-toy-chains": "timeout", "ex-toy-combine": "error"}
    assert "NameError" in messages(report)["ex-toy-combine"] and "ValueError" in messages(report)["ex-toy-combine"]
    assert elapsed < 5 + 90, f"grading took {elapsed:.0f} s"


def test_loop_that_ignores_interrupts_gets_a_new_kernel(toy, tmp_path):
    book, nb = toy
    hang = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"
    report = grade(tmp_path, book, answered(nb, {"ex-toy-chains": [hang], "ex-toy-combine": [RIGHT_COMBINE]}), cell_timeout=5)
    assert statuses(report) == {"ex-toy-chains": "timeout", "ex-toy-combine": "passed"}
    assert any("new kernel" in p for p in report.problems)


def test_kernel_that_kills_itself_is_reported(toy, tmp_path):
    book, nb = toy
    report = grade(tmp_path, book, answered(nb, {"ex-toy-chains": ["import os\nos._exit(1)"], "ex-toy-combine": [RIGHT_COMBINE]}))
    assert statuses(report) == {"ex-toy-chains": "error", "ex-toy-combine": "passed"}
    assert "kernel died" in messages(report)["ex-toy-chains"]
    assert any("kernel died" in p for p in report.problems)


def test_endless_output_is_cut_and_the_rest_graded(toy, tmp_path):
    book, nb = toy
    flood = "import sys\nwhile True:\n    sys.stdout.write('x' * 100000 + '\\n')"
    report = grade(tmp_path, book, answered(nb, {"ex-toy-chains": [flood], "ex-toy-combine": [RIGHT_COMBINE]}),
                   cell_timeout=8)
    assert statuses(report) == {"ex-toy-chains": "timeout", "ex-toy-combine": "passed"}


def test_memory_hog_costs_only_its_own_exercise(toy, tmp_path):
    book, nb = toy
    hog = "import os\nblock = bytearray(2 * os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES'))\n" + RIGHT_CHAINS
    report = grade(tmp_path, book, answered(nb, {"ex-toy-chains": [hog], "ex-toy-combine": [RIGHT_COMBINE]}))
    assert statuses(report) == {"ex-toy-chains": "error", "ex-toy-combine": "passed"}
    assert "MemoryError" in messages(report)["ex-toy-chains"]


def test_notebook_time_limit_marks_the_rest(toy, tmp_path):
    book, nb = toy
    sub = answered(nb, {"ex-toy-chains": ["import time\ntime.sleep(600)"], "ex-toy-combine": [RIGHT_COMBINE]})
    report = grade(tmp_path, book, sub, cell_timeout=60, notebook_timeout=8)
    assert statuses(report) == {"ex-toy-chains": "timeout", "ex-toy-combine": "timeout"}
    assert report.seconds < 90


def test_notebook_without_metadata_is_mapped_by_its_cells(toy, tmp_path):
    book, nb = toy
    sub = answered(nb)
    sub.metadata.pop("coursework")
    for cell in sub.cells:
        cell.metadata.pop("coursework", None)
    sub.cells.insert(4, nbformat.v4.new_code_cell("helper = 1  # a cell the learner added"))
    report = grade(tmp_path, book, sub)
    assert statuses(report) == {"ex-toy-chains": "passed", "ex-toy-combine": "passed"}
    assert any("does not say which chapter" in p for p in report.problems)


def test_a_slice_that_misses_a_cell_fails_the_solution_and_says_so(tmp_path):
    """The whole-book test grades slices of the chapters: a cell the slice wrongly drops makes the
    book's solution fail (here a name bound through ``globals()``, which the analysis cannot see),
    and the slice's description, which the test's failure message carries, names the dropped cell."""
    uses_chunk = ("per = num_chains // num_processes  # TOY-SOLUTION-CODE",
                  "per = num_chains // num_processes\n    assert chunk")
    hidden = TOY.replace(*uses_chunk).replace("```{code-cell} ipython3\nimport numpy as np\n```",
                                              "```{code-cell} ipython3\nimport numpy as np\n```\n\n"
                                              "```{code-cell} ipython3\nglobals()['chunk'] = 'contiguous'\n```")
    assert hidden.count("chunk") == 2
    (tmp_path / "book").mkdir()
    book = make_book(tmp_path / "book", {"chapters/toy/toy.md": hidden})
    path = book / "chapters/toy/toy.md"
    cut = slice_chapter(jupytext.read(path, fmt="md:myst"), make_student_notebook(path, book))
    assert cut.dropped == ["globals()['chunk'] = 'contiguous'"]
    jupytext.write(cut.notebook, path, fmt="md:myst")
    solution = make_student_notebook(path, book).exercises[0].solution_code
    assert "assert chunk" in solution[0]
    report = grade(tmp_path, book, answered(make_student_notebook(path, book).notebook,
                                            {"ex-toy-chains": solution, "ex-toy-combine": [RIGHT_COMBINE]}))
    assert statuses(report) == {"ex-toy-chains": "failed", "ex-toy-combine": "passed"}
    assert "NameError" in messages(report)["ex-toy-chains"] and "chunk" in messages(report)["ex-toy-chains"]
    assert "globals()['chunk']" in describe(cut) and "grade-keep" in describe(cut)


def test_command_line_table_and_json(toy, tmp_path):
    book, nb = toy
    sub = tmp_path / "one.ipynb"
    nbformat.write(answered(nb, {"ex-toy-chains": [RIGHT_CHAINS]}), sub)
    bad = tmp_path / "broken.ipynb"
    bad.write_text("{ not json")
    out = tmp_path / "grades.json"
    done = subprocess.run(
        [sys.executable, "-m", "booktools.coursework.grade", str(sub), str(bad), "--json", str(out), "--book", str(book),
         "--cell-timeout", str(CELL_LIMIT), "--timeout", str(NOTEBOOK_LIMIT)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "ex-toy-chains" in done.stdout and "passed" in done.stdout and "score 1 / 2" in done.stdout
    data = json.loads(out.read_text())
    assert data["score"] == 1 and data["total"] == 2
    first, second = data["submissions"]
    assert [e["status"] for e in first["exercises"]] == ["passed", "error"]
    assert second["exercises"] == [] and "cannot read" in second["problems"][0]


