"""The grader against crafted submissions, the threat model of the instructors' page: overriding the checks,
forged metadata and cells, answers that only know the chapter's inputs, reading the solutions or writing the book,
forged observations, functions the verdict runner will not run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from booktools.coursework import sandbox
from booktools.coursework.codec import ForgedData, decode
from booktools.coursework.grade import default_book
from booktools.coursework.grade.run import copy_helper, hidden_paths
from toy_grading import RIGHT_COMBINE, ROOT, STRIDED, TABLE_ONLY, answered, book_digest, grade, messages, statuses

import parallel_mcmc

pytestmark = pytest.mark.skipif(sandbox.available() is not None, reason=f"no sandbox here: {sandbox.available()}")


# --------------------------------------------------------------------------- crafted submissions




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
        assert not any(h == copy or h in copy.parents for h in hidden_paths(book, []))
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
                           ("references", "{ROOT}/tools/booktools/coursework/references/__init__.py")]:
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
    kernel gets a copy of the installed helper, the one the verdict runner imports; the book defaults to the repository."""
    hidden = hidden_paths(tmp_path, [])
    assert tmp_path.resolve() in hidden and ROOT in hidden
    copy_helper(tmp_path / "lib")
    installed = Path(parallel_mcmc.__file__).resolve().parent
    for path in sorted(installed.rglob("*.py")):
        assert (tmp_path / "lib" / "parallel_mcmc" / path.relative_to(installed)).read_bytes() == path.read_bytes()
    monkeypatch.chdir(tmp_path)
    assert default_book() == ROOT


@pytest.mark.parametrize("forged", [
    {"kind": "ref", "module": "os", "qualname": "system"},
    {"kind": "ref", "module": "parallel_mcmc.exercises", "qualname": "__builtins__"},
    {"kind": "ref", "module": "parallel_mcmc.pools.workers", "qualname": "np.save"},  # imported there, not defined
    {"kind": "ref", "module": "parallel_mcmc.pools.workers", "qualname": "_private"},
    {"kind": "dataclass", "module": "subprocess", "qualname": "Popen", "fields": []},
    {"kind": "ndarray", "dtype": "object", "shape": [1], "data": [0]},
    {"kind": "ndarray", "dtype": "float64", "shape": [3], "data": [1.0]},
    {"kind": "pickle", "data": "gASVAAAAAAAAAAA="},
    [1, 2],
])
def test_forged_observations_are_refused_not_executed(forged):
    with pytest.raises(ForgedData):
        decode(forged)


def test_functions_the_verdict_runner_will_not_run_for_a_submission():
    """A pool initializer naming a process launcher, with arguments the submission chose, never runs."""
    launcher = decode({"kind": "ref", "module": "parallel_mcmc.pools.process_group", "qualname": "run_processes"})
    with pytest.raises(ForgedData, match="does not run"):
        launcher("/tmp/evil.py", 1, 5.0)
    allowed = decode({"kind": "ref", "module": "parallel_mcmc.pools.workers", "qualname": "log_prob_with_data"})
    from parallel_mcmc import pools

    assert allowed is pools.log_prob_with_data


