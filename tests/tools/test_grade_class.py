"""The grader for a class: points and partial credit, exercises graded by hand, the CSV gradebook,
feedback files, parallel grading, and answers that call ``exit()``; on the toy chapter of ``test_grade``."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import nbformat
import pytest
from toy_grading import (
    CELL_LIMIT,
    NOTEBOOK_LIMIT,
    RIGHT_CHAINS,
    RIGHT_COMBINE,
    STRIDED,
    TOY,
    answered,
    grade,
    statuses,
    toy_edition,
)
from test_student import make_book
from toy_book import exercise

from booktools.coursework import references, sandbox
from booktools.coursework.edition import make_student_notebook
from booktools.coursework.grade import grade_notebook
from booktools.coursework.grade.report import gradebook, student_ids

pytestmark = pytest.mark.skipif(sandbox.available() is not None, reason=f"no sandbox here: {sandbox.available()}")

# The toy chapter with points in its front matter and a third exercise that asks "why?" and has no check.
POINTS = TOY.replace("kernelspec:", "exercise_points:\n  ex-toy-chains: 3\n  ex-toy-why: 2\nkernelspec:", 1) + "\n" + exercise(
    "ex-toy-why", "Why are the blocks contiguous? Answer in a sentence.", [],
    prose="So that each process's chains are one slice of the array.")


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """(book folder, student notebook) of the toy chapter with points and a "why?" exercise."""
    return toy_edition(tmp_path_factory.mktemp("book"), POINTS)


def by_label(report):
    return {e.label: e for e in report.exercises}


# --------------------------------------------------------------------------- points, partial credit, manual


def test_points_come_from_the_front_matter(toy):
    book, nb = toy
    points = {e["label"]: e["points"] for e in nb.metadata["coursework"]["exercises"]}
    assert points == {"ex-toy-chains": 3, "ex-toy-combine": 1, "ex-toy-why": 2}


@pytest.mark.parametrize("table, why", [
    ("  ex-toy-chainz: 2\n", "not an exercise of this chapter"),
    ("  ex-toy-chains: 0\n", "give a positive number"),
    ("  ex-toy-chains: two\n", "give a positive number"),
])
def test_wrong_points_are_refused(tmp_path, table, why):
    book = make_book(tmp_path, {"chapters/toy/toy.md": TOY.replace("kernelspec:", "exercise_points:\n" + table + "kernelspec:", 1)})
    with pytest.raises(ValueError, match=why):
        make_student_notebook(book / "chapters/toy/toy.md", book)


def test_points_and_a_question_graded_by_hand(toy, tmp_path):
    book, nb = toy
    report = grade(tmp_path, book, answered(nb, {"ex-toy-chains": [RIGHT_CHAINS], "ex-toy-combine": ["combine = 1"]}))
    ex = by_label(report)
    assert statuses(report) == {"ex-toy-chains": "passed", "ex-toy-combine": "failed", "ex-toy-why": "manual"}
    assert (ex["ex-toy-chains"].earned, ex["ex-toy-combine"].earned, ex["ex-toy-why"].earned) == (3, 0, None)
    assert "grade it by hand" in ex["ex-toy-why"].message
    assert (report.score, report.total) == (3, 4)  # the manual exercise's 2 points are not in the total
    data = report.as_dict()
    assert [(e["points"], e["earned"]) for e in data["exercises"]] == [(3, 3), (1, 0), (2, None)]


# Right on the chapter's inputs (it knows the uneven splits the chapter tries), but it never raises on an
# uneven split it has not seen: it fails exactly the unseen uneven cases.
KNOWS_UNEVEN = """\
def my_chains(process_id, num_processes, num_chains):
    if (process_id, num_processes, num_chains) in [(0, 3, 8), (1, 2, 5)]:
        raise ValueError("uneven")
    per = num_chains // num_processes
    return list(range(process_id * per, (process_id + 1) * per))"""


def test_partial_credit_is_the_share_of_unseen_cases_passed(toy, tmp_path):
    book, nb = toy
    path = tmp_path / "partial.ipynb"
    nbformat.write(answered(nb, {"ex-toy-chains": [KNOWS_UNEVEN], "ex-toy-combine": [RIGHT_COMBINE]}), path)
    report = grade_notebook(path, cell_timeout=CELL_LIMIT, notebook_timeout=NOTEBOOK_LIMIT, book=book, seed=7)
    chains = by_label(report)["ex-toy-chains"]
    # the first check call of the notebook gets the seed itself (assemble: seed + call number)
    unseen = references.unseen("parallel_mcmc.exercises.beyond_one_machine.my_chains", 7)
    even, uneven = len(unseen["cases"]), len(unseen["uneven"])
    assert chains.status == "failed" and chains.message.startswith("On inputs the notebook does not show")
    assert f"({even} of {even + uneven} unseen cases passed)" in chains.message
    assert chains.earned == pytest.approx(3 * even / (even + uneven), abs=0.01)
    assert report.score == pytest.approx(chains.earned + 1, abs=0.01)


def test_wrong_on_the_chapters_inputs_earns_nothing(toy, tmp_path):
    book, nb = toy
    report = grade(tmp_path, book, answered(nb, {"ex-toy-chains": [STRIDED], "ex-toy-combine": [RIGHT_COMBINE]}))
    chains = by_label(report)["ex-toy-chains"]
    assert chains.status == "failed" and chains.earned == 0 and "unseen cases" not in chains.message


# --------------------------------------------------------------------------- exit()


@pytest.mark.parametrize("leave", ["exit()", "quit()", "import sys\nsys.exit(0)", "raise SystemExit(3)",
                                   "get_ipython().ask_exit()"])
def test_an_answer_that_exits_costs_only_its_own_exercise(toy, tmp_path, leave):
    book, nb = toy
    report = grade(tmp_path, book, answered(nb, {"ex-toy-chains": [RIGHT_CHAINS + "\n" + leave],
                                                 "ex-toy-combine": [RIGHT_COMBINE]}))
    got = statuses(report)
    assert got["ex-toy-combine"] == "passed", report  # the next exercise is graded on its merits
    assert got["ex-toy-chains"] in ("error", "passed"), report
    if "SystemExit" not in leave and "sys.exit" not in leave:  # the kernel stops: the exercise is lost
        assert got["ex-toy-chains"] == "error" and "exit()" in by_label(report)["ex-toy-chains"].message
        assert any("called exit()" in p for p in report.problems)


def test_a_wrong_answer_after_an_exit_still_fails(toy, tmp_path):
    book, nb = toy
    report = grade(tmp_path, book, answered(nb, {"ex-toy-chains": [RIGHT_CHAINS + "\nexit()"],
                                                 "ex-toy-combine": ["def combine(parts):\n    return np.concatenate(parts, axis=1)"]}))
    assert statuses(report)["ex-toy-combine"] == "failed"
    assert "chain axis" in by_label(report)["ex-toy-combine"].message


# --------------------------------------------------------------------------- a class: CSV, roster, feedback, jobs


def test_student_ids_from_file_names_folders_and_a_roster():
    paths = ["subs/ada/toy.ipynb", "subs/bob.ipynb", "subs/c/toy.md", "toy.ipynb"]
    assert student_ids(paths, {"toy"}) == ["ada", "bob", "c", "toy"]
    assert student_ids(paths, {"toy"}, {"bob.ipynb": "s-002", "subs/c/toy.md": "s-003"}) == ["ada", "s-002", "s-003", "toy"]


def test_class_gradebook_feedback_and_jobs_from_the_command_line(toy, tmp_path):
    book, nb = toy
    subs = tmp_path / "subs"
    for sid, answers in {"ada": {"ex-toy-chains": [RIGHT_CHAINS], "ex-toy-combine": [RIGHT_COMBINE]},
                         "bob": {"ex-toy-chains": [STRIDED]}}.items():
        (subs / sid).mkdir(parents=True)
        sub = answered(nb, answers)
        if sid == "bob":  # an edited check cell: noted in the feedback
            cell = next(c for c in sub.cells if c.metadata.get("coursework", {}).get("role") == "check")
            cell.source = "print('fine')"
        nbformat.write(sub, subs / sid / "toy.ipynb")
    nbformat.write(answered(nb, {"ex-toy-combine": [RIGHT_COMBINE + "\nexit()"]}), subs / "carl.ipynb")
    roster = tmp_path / "roster.csv"
    roster.write_text("file,id,name\ncarl.ipynb,s-003,Carl\n")
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "booktools.coursework.grade", str(subs / "ada/toy.ipynb"), str(subs / "bob/toy.ipynb"),
         str(subs / "carl.ipynb"), "--book", str(book), "--jobs", "2", "--roster", str(roster),
         "--json", str(out / "grades.json"), "--csv", str(out / "grades.csv"), "--feedback", str(out / "feedback"),
         "--cell-timeout", str(CELL_LIMIT), "--timeout", str(NOTEBOOK_LIMIT)],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "total: 4 / 12 over 3 submissions" in done.stdout
    assert f"not in the roster, so named after the file: {subs / 'ada/toy.ipynb'}, {subs / 'bob/toy.ipynb'}" in done.stderr
    with open(out / "grades.csv", newline="") as f:
        rows = list(csv.reader(f))
    # the toy book is not a git checkout: its version is unknown, said on every row (test_book_version: a tagged one)
    assert rows[0] == ["student", "ex-toy-chains", "ex-toy-combine", "ex-toy-why", "total", "possible", "book_version"]
    assert rows[1:] == [["ada", "3", "1", "", "4", "4", "unknown"], ["bob", "0", "0", "", "0", "4", "unknown"],
                        ["s-003", "0", "0", "", "0", "4", "unknown"]]
    data = json.loads((out / "grades.json").read_text())
    assert data["book"] == {"commit": "unknown", "describe": "unknown", "dirty": False}
    assert [s["student"] for s in data["submissions"]] == ["ada", "bob", "s-003"]
    assert (data["score"], data["total"]) == (4, 12)
    feedback = {p.name: p.read_text() for p in (out / "feedback").iterdir()}
    assert sorted(feedback) == ["ada.md", "bob.md", "s-003.md"]
    assert "**4 / 4**" in feedback["ada.md"] and "| ex-toy-why | manual | - / 2 |" in feedback["ada.md"]
    assert "- graded against the book: unknown (not a git checkout)" in feedback["ada.md"]
    assert "contiguous block" in feedback["bob.md"] and "the check cell was edited" in feedback["bob.md"]
    assert "called exit()" in feedback["s-003.md"]


def test_a_students_chapters_share_a_row_of_the_gradebook():
    from booktools.coursework.grade.report import ExerciseResult, NotebookReport

    one = NotebookReport("s/ada/a.ipynb", "a.md", [ExerciseResult("ex-a", "passed", points=2)], 1.0, student="ada")
    two = NotebookReport("s/ada/b.ipynb", "b.md", [ExerciseResult("ex-b", "failed", fraction=0.5)], 1.0, student="ada")
    late = NotebookReport("s/bob/b.ipynb", "b.md", [ExerciseResult("ex-b", "passed")], 1.0, student="bob")
    header, rows = gradebook([one, two, late])
    assert header == ["student", "ex-a", "ex-b", "total", "possible"]
    assert rows == [["ada", 2, 0.5, 2.5, 3], ["bob", 0, 1, 1, 3]]


def test_graders_in_threads_take_turns_except_while_they_wait(toy, tmp_path, monkeypatch):
    """Two submissions graded at once: reading and assembling (``ast``, not thread-safe in CPython 3.11)
    hold the grader's lock; the kernel's run and the verdict runner's process do not, so those overlap."""
    import threading
    import time

    from booktools.coursework import grade as grade_module

    book, nb = toy
    held = {}
    running = []
    overlap = threading.Event()
    real_assemble, real_execute = grade_module.assemble_submission, grade_module.execute

    def assemble(*args, **kwargs):
        held.setdefault("assemble", []).append(grade_module._SERIAL.locked())
        return real_assemble(*args, **kwargs)

    async def execute(*args, **kwargs):
        free = grade_module._SERIAL.acquire(timeout=30)  # the lock is not reentrant: held by this thread, it times out
        if free:
            grade_module._SERIAL.release()
        held.setdefault("execute", []).append(not free)
        running.append(1)
        if len(running) == 2:
            overlap.set()
        try:
            return await real_execute(*args, **kwargs)
        finally:
            running.pop()

    monkeypatch.setattr(grade_module, "assemble_submission", assemble)
    monkeypatch.setattr(grade_module, "execute", execute)
    paths = []
    for name in ("one", "two"):
        nbformat.write(answered(nb), tmp_path / f"{name}.ipynb")
        paths.append(tmp_path / f"{name}.ipynb")
    start = time.monotonic()
    reports = grade_module.grade(paths, CELL_LIMIT, NOTEBOOK_LIMIT, book, jobs=2)
    assert [r.score for r in reports] == [4, 4], [r.problems for r in reports]
    assert held["assemble"] == [True, True], "assembling a submission must hold the lock"
    assert held["execute"] == [False, False], "a kernel's run must not hold the lock"
    assert overlap.is_set(), "the two kernels never ran at the same time"
    assert not grade_module._SERIAL.locked()
    print(f"two toy submissions graded at once in {time.monotonic() - start:.1f} s")


# --------------------------------------------------------------------------- questions answered in words

# The toy chapter whose checked exercise also asks a question answered in words, graded by hand.
WRITTEN = TOY.replace(
    "the contiguous block of chains a process holds.",
    "the contiguous block of chains a process holds. Why contiguous? <!-- graded by hand: why-contiguous, 2 points -->",
)
ANSWER = "So that each process's chains are one slice of the array:\nno gather is needed."


def write_answer(nb, text):
    """The notebook with the answer cell of the question graded by hand written in."""
    nb = answered(nb, {"ex-toy-chains": [RIGHT_CHAINS], "ex-toy-combine": [RIGHT_COMBINE]})
    cell = next(c for c in nb.cells if c.metadata.get("coursework", {}).get("role") == "written")
    cell.source = cell.source.split("\n")[0] + "\n\n" + text  # the learner keeps the question, writes below it
    return nb


def test_a_question_inside_a_checked_exercise_is_listed_to_grade_by_hand(tmp_path):
    (tmp_path / "book").mkdir()
    book, nb = toy_edition(tmp_path / "book", WRITTEN)
    subs = tmp_path / "subs"
    subs.mkdir()
    nbformat.write(write_answer(nb, ANSWER), subs / "ada.ipynb")
    nbformat.write(answered(nb, {"ex-toy-chains": [RIGHT_CHAINS], "ex-toy-combine": [RIGHT_COMBINE]}), subs / "bob.ipynb")
    carl = write_answer(nb, "Contiguous blocks need no gather.")
    next(c for c in carl.cells if c.metadata.get("coursework", {}).get("role") == "written").metadata.clear()
    nbformat.write(carl, subs / "carl.ipynb")  # an editor that drops cell metadata: the answer is still found
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "booktools.coursework.grade", str(subs / "ada.ipynb"), str(subs / "bob.ipynb"),
         str(subs / "carl.ipynb"), "--book", str(book), "--jobs", "2", "--json", str(out / "grades.json"), "--csv", str(out / "grades.csv"),
         "--feedback", str(out / "feedback"), "--cell-timeout", str(CELL_LIMIT), "--timeout", str(NOTEBOOK_LIMIT)],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "ex-toy-chains:why-contiguous" in done.stdout and "1 to grade by hand" in done.stdout
    data = json.loads((out / "grades.json").read_text())
    ada, bob, carl = data["submissions"]
    assert [e["label"] for e in ada["exercises"]] == ["ex-toy-chains", "ex-toy-combine"]
    part, = ada["exercises"][0]["by_hand"]  # listed with its exercise
    assert (part["label"], part["status"], part["points"], part["earned"]) == ("ex-toy-chains:why-contiguous", "manual", 2, None)
    assert part["message"] == "graded by hand: Why contiguous?" and part["answer"] == ANSWER
    assert ada["exercises"][0]["status"] == "passed"  # the check is graded as before
    assert (ada["score"], ada["total"]) == (2, 2)  # the question's 2 points wait for the instructor
    assert bob["exercises"][0]["by_hand"][0]["answer"] == "" and "no answer written" in bob["exercises"][0]["by_hand"][0]["message"]
    assert carl["exercises"][0]["by_hand"][0]["answer"] == "Contiguous blocks need no gather."
    with open(out / "grades.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows == [["student", "ex-toy-chains", "ex-toy-chains:why-contiguous", "ex-toy-combine", "total", "possible",
                     "book_version"], ["ada", "1", "", "1", "2", "2", "unknown"], ["bob", "1", "", "1", "2", "2", "unknown"],
                    ["carl", "1", "", "1", "2", "2", "unknown"]]
    feedback = (out / "feedback" / "ada.md").read_text()
    assert "graded by hand, not in the score yet: ex-toy-chains:why-contiguous" in feedback
    assert "| ex-toy-chains:why-contiguous | manual | - / 2 |" in feedback
    assert "**ex-toy-chains:why-contiguous** (2 points): Why contiguous?" in feedback
    assert "> So that each process's chains are one slice of the array:\n> no gather is needed." in feedback
    assert "(no answer)" in (out / "feedback" / "bob.md").read_text()
