"""The grader: a toy chapter for the fast cases and the crafted submissions, the book's chapters in one slow test.

The fast tests grade a toy chapter with two exercises whose checks are the book's
(``beyond_one_machine.my_chains`` and ``beyond_one_machine.combine_chains``, NumPy only): untouched,
answered, answered wrongly, an endless loop, an exception, a loop that ignores
interrupts, a kernel that kills itself, and the crafted submissions of the threat
model on the instructors' page (overriding the checks, rewriting cells before they
run, forged metadata, writing to the book, reading the solutions, answers that only
know the chapter's inputs).

The slow test covers every exercise of the book with one grading run per chapter
(see ``test_book_exercises_grade_zero_then_full``), most of them on the chapter's slice: only
the cells the exercises need (:mod:`booktools.coursework.slicing`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jupytext
import nbformat
import parallel_mcmc
import pytest
from test_student import FRONT, make_book

from booktools.coursework import sandbox
from booktools.coursework.codec import ForgedData, decode
from booktools.coursework.grade import _default_book, grade_notebook
from booktools.coursework.grade.run import _copy_helper, _hidden
from booktools.coursework.slicing import Slice, describe, slice_chapter
from booktools.coursework.student import (
    build_student_edition,
    exercise_chapters,
    make_student_notebook,
    with_answers,
)

ROOT = Path(__file__).resolve().parents[2]
CELL_LIMIT = 12  # seconds; a toy cell takes well under one, the endless ones wait this long
NOTEBOOK_LIMIT = 240

pytestmark = pytest.mark.skipif(sandbox.available() is not None, reason=f"no sandbox here: {sandbox.available()}")

# A chapter with two exercises checked by the book's own checks (NumPy only: the kernel starts fast).
TOY = FRONT + textwrap.dedent('''
    # A toy chapter

    ```{code-cell} ipython3
    import numpy as np
    ```

    ## Exercises

    ```{exercise-start}
    :label: ex-toy-chains
    ```
    Write `my_chains(process_id, num_processes, num_chains)`: the contiguous block of chains a process holds.
    ```{exercise-end}
    ```

    ```{solution-start} ex-toy-chains
    :class: dropdown
    ```
    Equal contiguous blocks, in order: TOY-SOLUTION-PROSE.
    ```{code-cell} ipython3
    def my_chains(process_id, num_processes, num_chains):
        if num_chains % num_processes:
            raise ValueError("the chains do not split evenly")
        per = num_chains // num_processes  # TOY-SOLUTION-CODE
        return list(range(process_id * per, (process_id + 1) * per))
    ```
    ```{solution-end}
    ```

    ```{code-cell} ipython3
    from parallel_mcmc.exercises import beyond_one_machine as check

    check.my_chains(my_chains)
    ```

    ```{exercise-start}
    :label: ex-toy-combine
    ```
    Write `combine(parts)`, which joins the processes' chain arrays into one.
    ```{exercise-end}
    ```

    ```{solution-start} ex-toy-combine
    :class: dropdown
    ```
    ```{code-cell} ipython3
    def combine(parts):
        return np.concatenate(parts, axis=0)
    ```
    ```{solution-end}
    ```

    ```{code-cell} ipython3
    check.combine_chains(combine)
    ```
''')

RIGHT_CHAINS = """\
def my_chains(process_id, num_processes, num_chains):
    if num_chains % num_processes:
        raise ValueError("the chains do not split evenly")
    per = num_chains // num_processes
    return list(range(process_id * per, (process_id + 1) * per))"""
RIGHT_COMBINE = "def combine(parts):\n    return np.concatenate(parts, axis=0)"
ANSWERS = {"ex-toy-chains": [RIGHT_CHAINS], "ex-toy-combine": [RIGHT_COMBINE]}
# Right on the chapter's inputs only: the table the learner-side check compares with, typed in.
TABLE_ONLY = """\
from parallel_mcmc.exercises import beyond_one_machine as _p
_known = {args: want for args, want in _p._SPLITS}

def my_chains(process_id, num_processes, num_chains):
    if (process_id, num_processes, num_chains) in _known:
        return _known[(process_id, num_processes, num_chains)]
    if num_chains % num_processes:
        raise ValueError("uneven")
    return [0]
"""


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """(book folder, student notebook) of the toy chapter."""
    book = make_book(tmp_path_factory.mktemp("book"), {"chapters/toy/toy.md": TOY})
    build_student_edition(book, verbose=False)
    nb = nbformat.read(book / "_build/student/chapters/toy/toy.ipynb", as_version=4)
    return book, nb


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


# --------------------------------------------------------------------------- crafted submissions


STRIDED = "def my_chains(process_id, num_processes, num_chains):\n    return list(range(process_id, num_chains, num_processes))"


@pytest.mark.parametrize("attack", [
    # replace the check the chapter's cell calls, and the helpers every check shares
    "import parallel_mcmc.exercises as ex, parallel_mcmc.exercises.beyond_one_machine as pr\n"
    "ex.expect = lambda *a, **k: None\nex.passed = lambda *a, **k: None\n"
    "pr.my_chains = lambda *a, **k: print('✔ my_chains: correct.')\n"
    "pr.combine_chains = lambda *a, **k: print('✔ combine_chains: correct.')\n"
    "import types\ncheck = types.SimpleNamespace(my_chains=pr.my_chains, combine_chains=pr.combine_chains)\n" + STRIDED,
    # an input transformer that rewrites every later cell (the check cells the grader runs among them)
    "ip = get_ipython()\n"
    "ip.input_transformers_post.append(lambda lines: ['print(\"✔ my_chains: correct.\")\\n'] if any('check' in l or 'coursework' in l for l in lines) else lines)\n"
    + STRIDED,
    # raise AssertionError-free exits: stop the kernel from running anything after the answers
    "import sys\nsys.modules['json'] = None\n" + STRIDED,
])
def test_overriding_the_checks_does_not_raise_the_grade(toy, tmp_path, attack):
    book, nb = toy
    report = grade(tmp_path, book, answered(nb, {"ex-toy-chains": [attack], "ex-toy-combine": ["combine = 1"]}))
    assert report.score == 0, report
    assert statuses(report)["ex-toy-chains"] in ("failed", "error")


def test_forged_metadata_and_cells_are_graded_against_the_book(toy, tmp_path):
    book, nb = toy
    sub = answered(nb, {"ex-toy-chains": [STRIDED], "ex-toy-combine": [RIGHT_COMBINE]})
    sub.metadata["coursework"] = {"source": "chapters/elsewhere.md", "exercises": [
        {"label": "ex-toy-chains", "checks": ["print('trust me')"]}, {"label": "ex-toy-bonus", "checks": []}]}
    for cell in sub.cells:
        if cell.metadata.get("coursework", {}).get("role") == "check":
            cell.source = "print('✔ correct.')"  # edited check cells
            cell.metadata["coursework"]["role"] = "answer"
    sub.cells[0].source = "check = None  # a chapter cell rewritten"
    report = grade(tmp_path, book, sub)
    assert report.source == "chapters/toy/toy.md"
    assert statuses(report) == {"ex-toy-chains": "failed", "ex-toy-combine": "passed"}
    assert any("metadata says it comes from 'chapters/elsewhere.md'" in p for p in report.problems)
    assert all("the book's check was run" in e.notes[0] for e in report.exercises)


def test_answers_that_only_know_the_chapters_inputs_fail(toy, tmp_path):
    book, nb = toy
    report = grade(tmp_path, book, answered(nb, {"ex-toy-chains": [TABLE_ONLY], "ex-toy-combine": [RIGHT_COMBINE]}))
    assert statuses(report) == {"ex-toy-chains": "failed", "ex-toy-combine": "passed"}
    assert messages(report)["ex-toy-chains"].startswith("On inputs the notebook does not show")


SNOOP = """\
import glob, os, pathlib, re
found = []
for pattern in ["{book}/chapters/**/*.md", "{root}/chapters/**/*.md", "{root}/tools/booktools/coursework/**/*.py"]:
    for path in glob.glob(pattern, recursive=True):
        try:
            found.append(pathlib.Path(path).read_text())
        except OSError:
            pass
try:
    import booktools.coursework.references as refs
    found.append("coursework importable")
except ImportError:
    pass
source = "\\n".join(found)
match = re.search(r"def my_chains\\(.*?\\n(?=\\S)", source, re.S)
if match:
    exec(match.group(0))
else:
    {strided}
"""


def test_submissions_cannot_read_the_solutions_or_write_the_book(toy, tmp_path):
    book, nb = toy
    before = book_digest(book)
    vandal = (
        "import pathlib\n"
        f"for target in ['{book}/chapters/toy/toy.md', '{ROOT}/src/parallel_mcmc/exercises/beyond_one_machine.py',\n"
        "               __import__('parallel_mcmc.exercises.beyond_one_machine', fromlist=['x']).__file__]:\n"
        "    try:\n"
        "        pathlib.Path(target).write_text('def my_chains(fn, **kw):\\n    print(\"✔\")\\n')\n"
        "    except OSError:\n"
        "        pass\n" + STRIDED
    )
    snoop = SNOOP.format(book=book, root=ROOT, strided=STRIDED.replace("\n", "\n    "))
    report = grade(tmp_path, book, answered(nb, {"ex-toy-chains": [vandal], "ex-toy-combine": [snoop]}))
    assert statuses(report) == {"ex-toy-chains": "failed", "ex-toy-combine": "error"}
    assert book_digest(book) == before
    # the next submission is graded by the book's checks, unchanged
    report = grade(tmp_path, book, answered(nb, {"ex-toy-chains": [STRIDED]}), "next.ipynb")
    assert statuses(report)["ex-toy-chains"] == "failed"


# Walks the file system from / (not the sandbox's own folders, at most 5 folders deep) for a copy of the
# chapter, and runs the solution it reads there; without one, a wrong answer.
WALKER = """\
import os, re
source = ""
for top, dirs, files in os.walk("/"):
    depth = top.count("/") if top != "/" else 0
    dirs[:] = [] if depth >= 5 else [d for d in dirs if (top, d) not in [("/", n) for n in ("proc", "sys", "dev", "usr")]]
    for name in files:
        if name == "toy.md":
            try:
                text = open(os.path.join(top, name)).read()
            except OSError:
                continue
            if "def {name}(" in text:
                source = text
match = re.search(r"def {name}\\(.*?\\n(?=\\S)", source, re.S)
if match:
    exec(match.group(0))
else:
    {wrong}
"""


@pytest.fixture
def chapter_elsewhere(toy):
    """A copy of the toy chapter, solutions and all, in a readable folder beside the repository (as another
    checkout of the book would be), outside the book and outside every folder the grader is told to hide."""
    book, _ = toy
    parent = ROOT.parent if os.access(ROOT.parent, os.W_OK) else Path(tempfile.gettempdir())
    copy = Path(tempfile.mkdtemp(prefix=".another-checkout-", dir=parent))
    try:
        (copy / "chapters/toy").mkdir(parents=True)
        (copy / "chapters/toy/toy.md").write_text((book / "chapters/toy/toy.md").read_text())
        for path in [copy, *copy.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        assert not any(h == copy or h in copy.parents for h in _hidden(book, []))
        yield copy
    finally:
        shutil.rmtree(copy)


def test_another_copy_of_the_chapter_elsewhere_on_the_machine_is_not_seen(toy, tmp_path, chapter_elsewhere):
    """A submission that searches the machine for another copy of the chapter and runs its solutions
    earns only what its own (wrong) answers earn: nothing outside the sandbox's root is there."""
    book, nb = toy
    assert "TOY-SOLUTION-CODE" in (chapter_elsewhere / "chapters/toy/toy.md").read_text()
    chains = WALKER.format(name="my_chains", wrong=STRIDED.replace("\n", "\n    "))
    combine = WALKER.format(name="combine", wrong="combine = lambda parts: parts[0]")
    report = grade(tmp_path, book, answered(nb, {"ex-toy-chains": [chains], "ex-toy-combine": [combine]}))
    assert statuses(report) == {"ex-toy-chains": "failed", "ex-toy-combine": "failed"}, report
    assert report.score == 0 and not report.problems, report


def test_the_sandbox_hides_the_book_and_the_grader(tmp_path):
    job = tmp_path / "job"
    (job / "work").mkdir(parents=True)
    os.chmod(tmp_path, 0o755)
    os.chmod(job, 0o755)
    if os.geteuid() == 0:
        os.chown(job / "work", 65534, 65534)
    probe = textwrap.dedent(f"""
        import os, socket
        seen = {{"uid": os.getuid()}}
        for name, path in [("chapters", "{ROOT}/chapters/getting_started/devices.md"),
                           ("references", "{ROOT}/tools/booktools/coursework/references.py")]:
            try:
                open(path).read(); seen[name] = "read"
            except OSError as err:
                seen[name] = type(err).__name__
        try:
            open("{ROOT}/README.md", "a").write("x"); seen["write"] = "wrote"
        except OSError as err:
            seen["write"] = type(err).__name__
        try:
            socket.create_connection(("1.1.1.1", 53), timeout=2); seen["network"] = "connected"
        except OSError as err:
            seen["network"] = type(err).__name__
        open("seen.txt", "w").write(repr(seen))
    """)
    cmd = sandbox.command([sys.executable, "-c", probe], job, [ROOT], sandbox.environment(), cpu_seconds=60)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env={"PATH": os.environ["PATH"]}, check=False)
    assert done.returncode == 0, done.stderr
    seen = eval((job / "work" / "seen.txt").read_text())
    assert seen["chapters"] != "read" and seen["references"] != "read"
    assert seen["write"] != "wrote" and seen["network"] != "connected"
    if os.geteuid() == 0:
        assert seen["uid"] == 65534


def test_the_grader_hides_its_repository_and_copies_the_installed_helper(tmp_path, monkeypatch):
    """The sandbox hides the repository of the grader's packages (its code, the reference answers); the
    kernel gets a copy of the installed helper, the one the judge imports; the book defaults to the repository."""
    hidden = _hidden(tmp_path, [])
    assert tmp_path.resolve() in hidden and ROOT in hidden
    _copy_helper(tmp_path / "lib")
    installed = Path(parallel_mcmc.__file__).resolve().parent
    for path in sorted(installed.rglob("*.py")):
        assert (tmp_path / "lib" / "parallel_mcmc" / path.relative_to(installed)).read_bytes() == path.read_bytes()
    monkeypatch.chdir(tmp_path)
    assert _default_book() == ROOT


@pytest.mark.parametrize("forged", [
    {"kind": "ref", "module": "os", "qualname": "system"},
    {"kind": "ref", "module": "parallel_mcmc.exercises", "qualname": "__builtins__"},
    {"kind": "ref", "module": "parallel_mcmc.pools", "qualname": "np.save"},  # imported there, not defined
    {"kind": "ref", "module": "parallel_mcmc.pools", "qualname": "_private"},
    {"kind": "dataclass", "module": "subprocess", "qualname": "Popen", "fields": []},
    {"kind": "ndarray", "dtype": "object", "shape": [1], "data": [0]},
    {"kind": "ndarray", "dtype": "float64", "shape": [3], "data": [1.0]},
    {"kind": "pickle", "data": "gASVAAAAAAAAAAA="},
    [1, 2],
])
def test_forged_observations_are_refused_not_executed(forged):
    with pytest.raises(ForgedData):
        decode(forged)


def test_functions_the_judge_will_not_run_for_a_submission():
    """A pool initializer naming a process launcher, with arguments the submission chose, never runs."""
    launcher = decode({"kind": "ref", "module": "parallel_mcmc.process_group", "qualname": "run_processes"})
    with pytest.raises(ForgedData, match="does not run"):
        launcher("/tmp/evil.py", 1, 5.0)
    allowed = decode({"kind": "ref", "module": "parallel_mcmc.pools", "qualname": "log_prob_with_data"})
    from parallel_mcmc import pools

    assert allowed is pools.log_prob_with_data


# --------------------------------------------------------------------------- the whole book


def _zero_then_full_book(chapter: Path, copy_root: Path, sliced: bool = False) -> tuple[Path, Path, list[str], Slice | None]:
    """A one-chapter copy of the book in which every exercise ``L`` is followed by a twin, ``L-solution``,
    with the same solution and checks; and a submission that answers only the twins, with the book's solutions.

    One grading run then shows both that the untouched stub of each exercise fails its check and that the
    book's solution passes it. With ``sliced``, the copy keeps only the code cells the exercises need
    (:mod:`booktools.coursework.slicing`). Returns (the copy's root, the submission, the labels of the
    chapter, the slice or None).
    """
    edition = make_student_notebook(chapter, ROOT)
    nb = jupytext.read(chapter, fmt="md:myst")
    last_check = {ex.checks[-1]: ex for ex in edition.exercises if ex.checks}
    cells = []
    for cell in nb.cells:
        cells.append(cell)
        ex = last_check.get(cell.source) if cell.cell_type == "code" else None
        if ex is None:
            continue
        twin = f"{ex.label}-solution"
        cells.append(nbformat.v4.new_markdown_cell(
            f"```{{exercise-start}}\n:label: {twin}\n```\nThe book's solution of {ex.label}.\n```{{exercise-end}}\n```\n\n"
            f"```{{solution-start}} {twin}\n```"))
        cells += [nbformat.v4.new_code_cell(src) for src in ex.solution_code]
        cells.append(nbformat.v4.new_markdown_cell("```{solution-end}\n```"))
        cells += [nbformat.v4.new_code_cell(src) for src in ex.checks]
    nb.cells = cells
    target = copy_root / chapter.relative_to(ROOT)
    target.parent.mkdir(parents=True)
    jupytext.write(nb, target, fmt="md:myst")
    twins = make_student_notebook(target, copy_root)
    answers = {f"{ex.label}-solution": list(ex.solution_code) for ex in edition.exercises}
    cut = None
    if sliced:
        cut = slice_chapter(nb, twins)
        jupytext.write(cut.notebook, target, fmt="md:myst")
        whole, twins = twins, make_student_notebook(target, copy_root)
        # the slice grades the same exercises with the same checks ...
        assert [e.as_metadata() for e in twins.exercises] == [e.as_metadata() for e in whole.exercises], describe(cut)
        # ... and the stubs of the whole chapter: a stub names what the cells after it use, fewer in the slice
        answers |= {ex.label: list(ex.stubs) for ex in whole.exercises if not ex.label.endswith("-solution")}
    submission = copy_root / "submission.ipynb"
    nbformat.write(answered(twins.notebook, answers), submission)
    return copy_root, submission, [e.label for e in edition.exercises], cut


BOOK_CHAPTERS = exercise_chapters(ROOT)
# Grading runs at once, each in its own sandboxed kernel. Two suit the book's 2-core machine: much of a
# chapter's run is one thread compiling or waiting, and the grader's kernels report timings, never fail on them.
BOOK_GRADE_JOBS = int(os.environ.get("BOOK_GRADE_JOBS", "2"))
# Chapters graded whole; the others are graded on their slices (only the cells the exercises need: the rest
# ran in the notebook tests already). These two are cheap whole (see GRADE_SECONDS) and keep the path through
# a full chapter tested: choosing_a_way's slice drops a single cell, and arrays_and_shardings runs three
# exercises among cells the slice would drop. Set BOOK_GRADE_WHOLE=1 to grade every chapter whole.
GRADED_WHOLE = {"chapters/sharding_lab/choosing_a_way.md", "chapters/sharding_lab/arrays_and_shardings.md"}
# Seconds each chapter's grading took (sliced, or whole for GRADED_WHOLE; 2 jobs on the book's 2-core machine,
# 160 s for the whole test): the runs start longest first, so that the last ones to finish are short. A chapter
# not listed starts first; a stale figure only costs some waiting at the end.
GRADE_SECONDS = {
    "chapters/parallel_chains/chains_that_never_wait.md": 59,
    "chapters/parallel_chains/shared_trajectory_length.md": 58,
    "chapters/beyond_one_machine/multi_process_jax.md": 56,
    "chapters/parallel_chains/more_chains_than_devices.md": 24,
    "chapters/getting_started/devices.md": 18,
    "chapters/parallel_chains/many_short_chains.md": 18,
    "chapters/other_parallelism/tempered_smc.md": 11,
    "chapters/numpyro/consensus_monte_carlo.md": 10,
    "chapters/other_parallelism/parallel_tempering.md": 10,
    "chapters/getting_started/cost_model.md": 9,
    "chapters/other_parallelism/one_chain_sharded_data.md": 9,
    "chapters/sharding_lab/data_parallel_training.md": 8,
    "chapters/ensemble/process_pools.md": 7,
    "chapters/sharding_lab/choosing_a_way.md": 6,
    "chapters/ensemble/the_jax_way.md": 5,
    "chapters/sharding_lab/manual_parallelism.md": 5,
    "chapters/parallel_chains/time_to_target.md": 4,
    "chapters/getting_started/profiling.md": 4,
    "chapters/sharding_lab/automatic_parallelism.md": 4,
    "chapters/sharding_lab/explicit_sharding.md": 4,
    "chapters/ensemble/mpi.md": 3,
    "chapters/numpyro/a_correct_runner.md": 3,
    "chapters/numpyro/chain_methods.md": 3,
    "chapters/parallel_chains/vmap_pmap_shard_map.md": 3,
    "chapters/sharding_lab/arrays_and_shardings.md": 3,
    "chapters/sharding_lab/two_axes.md": 3,
}


def _graded_whole(chapter: Path) -> bool:
    return os.environ.get("BOOK_GRADE_WHOLE") == "1" or chapter.relative_to(ROOT).as_posix() in GRADED_WHOLE


@pytest.fixture(scope="module")
def book_grades(tmp_path_factory):
    """Every exercise chapter graded by ``_zero_then_full_book`` (sliced but for ``GRADED_WHOLE``),
    ``BOOK_GRADE_JOBS`` chapters at a time.

    Returns {chapter: future of (labels, report, seconds, slice or None)}; the longest chapters start first.
    """
    # the copies are made here, one after another: they parse Python (``ast``), which CPython 3.11 does not
    # allow in two threads at once; grade_notebook takes care of its own parsing
    copies = {chapter: _zero_then_full_book(chapter, tmp_path_factory.mktemp(chapter.stem), sliced=not _graded_whole(chapter))
              for chapter in BOOK_CHAPTERS}

    def run(chapter):
        book, submission, labels, cut = copies[chapter]
        start = time.monotonic()
        report = grade_notebook(submission, cell_timeout=300, notebook_timeout=1200, book=book, hide=[ROOT])
        return labels, report, time.monotonic() - start, cut

    pool = ThreadPoolExecutor(max_workers=max(BOOK_GRADE_JOBS, 1))
    longest_first = sorted(BOOK_CHAPTERS, key=lambda c: GRADE_SECONDS.get(c.relative_to(ROOT).as_posix(), float("inf")),
                           reverse=True)
    futures = {chapter: pool.submit(run, chapter) for chapter in longest_first}
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.slow
@pytest.mark.parametrize("chapter", BOOK_CHAPTERS, ids=lambda p: p.stem)
def test_book_exercises_grade_zero_then_full(chapter, book_grades, tmp_path):
    """Every exercise of the book: the stub grades 0, the book's solution full marks.

    One grading run per chapter, in the sandbox, with the trusted judge and unseen inputs
    (see ``_zero_then_full_book``), on the chapter's slice but for ``GRADED_WHOLE``; the runs go
    ``BOOK_GRADE_JOBS`` at a time (``book_grades``).
    Set ``COURSEWORK_STRICT=1`` to also grade the untouched edition and the solved one of the
    real chapter (two more runs per chapter, one at a time).
    """
    labels, report, seconds, cut = book_grades[chapter].result()
    sliced = f"\n{describe(cut)}" if cut is not None else ""  # a failure on a slice may come from the slicing
    got = statuses(report)
    assert set(got) == set(labels) | {f"{lab}-solution" for lab in labels}, f"{report}{sliced}"
    for lab in labels:
        assert got[lab] != "passed", f"{lab}: the unanswered stub passed its check"
        solved = next(e for e in report.exercises if e.label == f"{lab}-solution")
        assert solved.status == "passed", f"{lab}: the book's solution got {solved.status}: {solved.message}{sliced}"
    how = "whole" if cut is None else f"sliced, {len(cut.dropped)} code cell(s) dropped"
    print(f"{chapter.relative_to(ROOT)}: {len(labels)} exercise(s) graded in {seconds:.0f} s ({how}); {report.problems}")
    if os.environ.get("COURSEWORK_STRICT") == "1":
        edition = make_student_notebook(chapter, ROOT)
        untouched = grade(tmp_path, ROOT, edition.notebook, "untouched.ipynb", cell_timeout=300, notebook_timeout=1200)
        assert untouched.score == 0 and untouched.total == len(labels), untouched
        answers = {e.label: list(e.solution_code) for e in edition.exercises}
        solved = grade(tmp_path, ROOT, answered(edition.notebook, answers), "solved.ipynb", cell_timeout=300, notebook_timeout=1200)
        assert solved.score == solved.total == len(labels), solved
