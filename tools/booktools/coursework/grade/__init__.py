"""Grade submitted student notebooks, with verdicts computed where the submission cannot reach.

``python -m booktools.coursework.grade SUBMISSION.ipynb [...] [--json grades.json] [--csv grades.csv]
[--roster roster.csv] [--feedback DIR] [--jobs N] [--whole]``. A submission is untrusted code. For each one the grader goes through five stages,
one module each:

1. :mod:`~booktools.coursework.grade.read` reads it as data (JSON or MyST text)
   and finds the chapter of the book it answers: the chapter its metadata names
   if that chapter's exercises are all in it, otherwise the chapter whose
   exercises it contains (and says so);
2. :mod:`~booktools.coursework.grade.assemble` rebuilds that chapter's student
   edition from the book and puts the learner's answer cells (the code cells of
   each exercise, between its statement and its check) in place of the stubs;
   every other cell, the check cells included, comes from the book, and the
   submission's metadata and outputs are ignored. Each check cell is replaced
   by the harness (:mod:`booktools.coursework.harness`), which records the values
   the check is given and what the learner's functions return for the check's
   inputs and for unseen inputs the grader draws afresh.
   Then (:func:`~booktools.coursework.grade.assemble.slice_submission`) it empties
   the code cells that neither the checks nor the learner's answer cells need
   (:mod:`booktools.coursework.slicing`, from the source text only): a timing sweep
   or a plot no exercise reads does not run. An answer the analysis cannot read has
   the whole chapter run; ``--whole`` runs every chapter whole;
3. :mod:`~booktools.coursework.grade.run` runs that notebook in a sandboxed kernel
   (:mod:`booktools.coursework.sandbox`): no network, the user ``nobody``, a root
   file system of its own that holds the Python environment and the system folders
   read-only and nothing else of the machine (no book, no grader's repository), a
   scratch folder that holds only the student edition, a copy of the installed
   ``parallel_mcmc``, resource limits;
4. :mod:`~booktools.coursework.grade.verdicts` reads those records as data
   (:mod:`booktools.coursework.codec`) and has a separate, trusted process
   (:mod:`booktools.coursework.verdict_runner`) run the book's checks on them, with the
   reference answers of :mod:`booktools.coursework.references`;
5. :mod:`~booktools.coursework.grade.report` holds the grades and prints them
   (a table per submission) or writes them as JSON, as a CSV gradebook (a row per
   student, a column per exercise) and as one Markdown feedback file per submission,
   each naming the version of the book graded against (its git commit and tag).

This module chains the stages (:func:`grade_notebook`, :func:`grade`) and holds the
command line (:func:`main`).

Per exercise it reports ``passed`` (the verdict runner's checks passed, on the chapter's
inputs and on the unseen ones), ``failed`` (a check raised ``AssertionError``;
its message says what is wrong), ``error`` (not answered, an exception, the
kernel died, an ``exit()``, nothing observed), ``timeout``, or ``manual`` / ``ungraded`` (no check
the grader can run: graded by hand, left out of the score). A question inside an exercise that is
answered in words (marked ``<!-- graded by hand: NAME -->`` in the chapter) is listed with its
exercise (``ExerciseResult.parts``) as ``label:NAME``, ``manual``, with its points and the learner's answer. An exercise earns its points (the
chapter's front matter ``exercise_points``, default 1) when it passes, and the share of its unseen
cases it passed when it fails only on some of them. An answered exercise that gets ``error`` or
``timeout`` on the slice, or ``failed`` because the learner's function raised, has the whole chapter
graded again, and the whole run gives every grade (the report's notes say ``graded whole: ...``): the
slice may have left out a cell the answer reaches where the analysis cannot see (``globals()``, a string,
a file). Execution goes on after errors; a
cell that runs out of time is interrupted, and a kernel that does not come back
(or dies) is replaced, the cells that had run are run again (except the
offending one) and grading continues.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
from concurrent.futures import ThreadPoolExecutor
import os
import re
import secrets
import shutil
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import nbformat

from .. import sandbox
from ..edition import StudentEdition, exercise_chapters, find_book_root, make_student_notebook
from ..markdown import META
from .assemble import assemble_submission, slice_submission
from .read import SUBMISSION_LIMIT_BYTES, match_chapter, read_submission, structure, written_answers  # noqa: F401 - the limit, re-exported
from .report import (  # noqa: F401 - re-exported
    STATUSES,
    ExerciseResult,
    NotebookReport,
    book_version,
    print_reports,
    read_roster,
    student_ids,
    version_line,
    write_csv,
    write_feedback,
    write_json,
)
from .run import (  # noqa: F401 - the limits, re-exported
    MEMORY_BYTES,
    OUTPUT_LIMIT,
    copy_helper,
    execute,
    hidden_paths,
    kernel_env,
    package_dir,
)
from .schedule import longest_first
from .verdicts import exercise_results, observations, run_verdict_runner, with_written_parts

__all__ = ["ExerciseResult", "NotebookReport", "grade_notebook", "grade", "main"]


# Reading notebooks and writing the student edition parse Python with ``ast``, which CPython 3.11 does not
# allow in two threads at once ("AST constructor recursion depth mismatch"). Submissions graded at the same
# time (``grade(jobs=N)``) therefore take turns at everything but the two long waits, which run unlocked:
# the sandboxed kernel and the verdict runner's process.
_SERIAL = threading.Lock()


@contextmanager
def _unlocked():
    """Let another grading thread work while this one waits on a process."""
    _SERIAL.release()
    try:
        yield
    finally:
        _SERIAL.acquire()


def grade_notebook(path: str | Path, cell_timeout: float = 300, notebook_timeout: float = 1800,
                   book: Path | None = None, hide: Sequence[Path] = (), seed: int | None = None,
                   whole: bool = False) -> NotebookReport:
    """Grade one submission (see the module's docstring); ``seed`` fixes the unseen inputs (default: fresh).

    The chapter runs on its slice (:func:`~booktools.coursework.grade.assemble.slice_submission`: only the
    cells the checks and the learner's answers need), and again whole if an answered exercise gets ``error``
    or ``timeout`` there, or fails because the learner's function raised; ``whole`` runs every cell of the
    chapter from the start.

    Safe to call from several threads at once (:func:`grade` does with ``jobs``): the kernels and verdict runners of
    different submissions run at the same time, the rest takes turns.
    """
    with _SERIAL:
        return _grade_notebook(Path(path), cell_timeout, notebook_timeout, book, hide, seed, whole)


@dataclass
class _Run:
    """One run of an assembled chapter: its exercises' results, the kernel's problems, the cells left out."""

    exercises: list[ExerciseResult]
    problems: list[str]
    dropped: list[int]  # the indices of the code cells left out (emptied)
    answered: set[str]  # the exercises whose answer cells are not the stub as the book gives it


def _run_chapter(sub: nbformat.NotebookNode, chapter: Path, book: Path, student_edition: StudentEdition, seed: int,
                 cell_timeout: float, notebook_timeout: float, hide: Sequence[Path], problems: list[str],
                 whole: bool) -> _Run:
    """Assemble the submission (on the chapter's slice unless ``whole``), run it in a fresh sandbox, judge it."""
    problems = list(problems)
    with tempfile.TemporaryDirectory(prefix="coursework-") as tmp:
        job = Path(tmp)
        work = job / "work"
        work.mkdir()
        copy_helper(job / "lib")
        nb, checks, unchecked, devices, notes = assemble_submission(sub, chapter, book, work, seed)
        edition = copy.deepcopy(nb)
        dropped: list[int] = []
        if not whole:
            dropped, why = slice_submission(nb)
            if why:
                problems.append(f"graded whole: {why}")
        edition_file = work / chapter.with_suffix(".ipynb").name
        nbformat.write(student_edition.notebook, edition_file)
        os.chmod(job, 0o755)
        if os.geteuid() == 0:
            shutil.chown(work, sandbox.USER, sandbox.GROUP)
        os.chmod(work, 0o700)
        with _unlocked():
            results = asyncio.run(execute(nb, cell_timeout, notebook_timeout, job, kernel_env(job), problems,
                                          hide=hidden_paths(book, hide)))
        labels, roles, _ = structure(edition)
        items, owners = observations(labels, checks)
        with _unlocked():
            verdicts = run_verdict_runner(items, devices, timeout=max(120.0, notebook_timeout / 2)) if items else []
    exercises = exercise_results(nb, labels, roles, unchecked, notes, results, owners, verdicts, cell_timeout)
    # an exercise left as its stub fails on the slice as it does whole: only the answered ones are worth a rerun
    stubs = {e.label: set(e.stubs) for e in student_edition.exercises}
    answers: dict[str, list[str]] = {}
    for cell in edition.cells:
        meta = cell.metadata.get(META) or {}
        if cell.cell_type == "code" and meta.get("role") == "answer":
            answers.setdefault(meta.get("exercise"), []).append(cell.source)
    answered = {label for label, sources in answers.items() if not all(src in stubs.get(label, ()) for src in sources)}
    return _Run(exercises, problems, dropped, answered)


# how a check reports an exception of the learner's function (``parallel_mcmc.exercises.common``)
_RAISED = re.compile(r"\braised [A-Za-z_][\w.]*:|failed while JAX traced it")


def _suspect(result: ExerciseResult) -> bool:
    """Whether an exercise's result on the chapter's slice may come from a cell the slice left out."""
    return result.status in ("error", "timeout") or (result.status == "failed" and bool(_RAISED.search(result.message)))


def _grade_notebook(path: Path, cell_timeout: float, notebook_timeout: float, book: Path | None,
                    hide: Sequence[Path], seed: int | None, whole: bool = False) -> NotebookReport:
    start = time.monotonic()
    try:
        sub = read_submission(path)
    except Exception as err:  # noqa: BLE001 - an unreadable file is a grade, not a crash
        return NotebookReport(str(path), None, [], 0.0, [f"cannot read the notebook: {type(err).__name__}: {err}"])
    if book is None:
        return NotebookReport(str(path), None, [], 0.0, ["no book to grade against: pass --book PATH"])
    book = Path(book).resolve()
    why = sandbox.available()
    if why:
        return NotebookReport(str(path), None, [], 0.0, [f"not graded: {why}"])
    chapter, problems = match_chapter(sub, book)
    if chapter is None:
        return NotebookReport(str(path), None, [], time.monotonic() - start, problems)
    source = chapter.relative_to(book).as_posix()
    seed = secrets.randbelow(2**31) if seed is None else int(seed)
    student_edition = make_student_notebook(chapter, book)
    run = _run_chapter(sub, chapter, book, student_edition, seed, cell_timeout, notebook_timeout, hide, problems, whole)
    # On the slice an exception may come from a cell the analysis missed (a name reached through ``globals()`` or
    # a string, a file, a side effect): an answered exercise that got ``error`` or ``timeout`` there, or ``failed``
    # because the learner's function raised (the check reports it as "f(...) raised KeyError: ..."), has the whole
    # chapter run again, and the whole run's results are the grades. Any other ``failed`` check ran on the
    # learner's values. An exercise left as its stub fails the same way whole: it needs no second run.
    suspect = [e for e in run.exercises if e.label in run.answered and _suspect(e)] if run.dropped else []
    if suspect:
        why = "; ".join(f"{e.label} got {e.status} on the chapter's slice ({e.message})" for e in suspect)
        run = _run_chapter(sub, chapter, book, student_edition, seed, cell_timeout, notebook_timeout, hide, problems,
                           whole=True)
        run.problems.append(f"graded whole: {why}; the whole chapter ran again and its results are the grades")
    exercises = run.exercises
    points = {e.label: e.points for e in student_edition.exercises}
    for ex in exercises:
        ex.points = points.get(ex.label, 1.0)
    parts = [part for e in student_edition.exercises for part in e.parts]
    exercises = with_written_parts(exercises, parts, written_answers(sub, parts))
    return NotebookReport(str(path), source, exercises, time.monotonic() - start, run.problems,
                          skipped_cells=len(run.dropped))


def grade(paths: Sequence[str | Path], cell_timeout: float = 300, notebook_timeout: float = 1800,
          book: Path | None = None, hide: Sequence[Path] = (), jobs: int = 1,
          roster: dict[str, str] | None = None, whole: bool = False) -> list[NotebookReport]:
    """Grade several submissions, one fresh sandbox each, ``jobs`` at a time; the reports in the order of
    ``paths``, each with its student's id (:func:`~booktools.coursework.grade.report.student_ids`).
    ``whole`` runs every chapter whole, not on its slice (:func:`grade_notebook`)."""
    def one(path):
        return grade_notebook(path, cell_timeout, notebook_timeout, book, hide, whole=whole)

    if jobs > 1 and len(paths) > 1:
        # threads: each drives its own sandboxed kernel and verdict-runner process, in its own event loop; a
        # whole book's chapters start longest first (schedule), the reports keep the order of ``paths``
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = {i: pool.submit(one, paths[i]) for i in longest_first(paths)}
            reports = [futures[i].result() for i in range(len(paths))]
    else:
        reports = [one(p) for p in paths]
    stems = set()
    if book is not None:
        stems = {p.stem for p in exercise_chapters(Path(book).resolve())}
    for rep, sid in zip(reports, student_ids(paths, stems, roster)):
        rep.student = sid
    return reports


def default_book() -> Path | None:
    """The book to grade against when none is named.

    Returns
    -------
    Path or None
        The book at or above the working folder, else the one the grader is installed from (the
        repository holding ``tools/booktools``); None if neither is a book.
    """
    for start in (None, package_dir("booktools")):
        try:
            return find_book_root(start)
        except FileNotFoundError:
            continue
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools.coursework.grade",
                                     description="Run student notebooks in fresh kernels and grade their exercises.")
    parser.add_argument("submissions", nargs="+", type=Path, help="the submitted .ipynb (or .md) notebooks")
    parser.add_argument("--json", type=Path, default=None, help="also write the grades to this JSON file")
    parser.add_argument("--csv", type=Path, default=None,
                        help="also write a gradebook to this CSV file: a row per student, a column per exercise")
    parser.add_argument("--roster", type=Path, default=None,
                        help="a CSV with the columns 'file' and 'id' naming each submission's student "
                             "(default: the file's stem, or its folder when the file is named after the chapter)")
    parser.add_argument("--feedback", type=Path, default=None,
                        help="write one Markdown feedback file per submission into this folder")
    parser.add_argument("--jobs", type=int, default=1, help="submissions graded at the same time (default 1)")
    parser.add_argument("--cell-timeout", type=float, default=300, help="seconds one cell may run (default 300)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds one notebook may run (default 1800)")
    parser.add_argument("--book", type=Path, default=None,
                        help="the book's root folder, whose chapters hold the original checks (default: found from the cwd)")
    parser.add_argument("--hide", type=Path, action="append", default=[],
                        help="a folder inside the Python environment or /usr that the submissions must not see "
                             "(a copy of the book, say; nothing else of the machine is in the sandbox); repeat as needed")
    parser.add_argument("--whole", action="store_true",
                        help="run every chapter whole (default: only the cells the checks and the answers need, "
                             "and the whole chapter again where an answered exercise then gets error or timeout)")
    args = parser.parse_args(argv)
    book = args.book.resolve() if args.book is not None else default_book()
    missing = [str(p) for p in args.submissions if not p.is_file()]
    if missing:
        print(f"error: no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print("error: --jobs must be at least 1", file=sys.stderr)
        return 2
    why = sandbox.available()
    if why:  # nothing is graded outside the sandbox
        print(f"error: no submission was graded: {why}", file=sys.stderr)
        return 3
    roster = None
    if args.roster is not None:
        try:
            roster = read_roster(args.roster)
        except (OSError, ValueError, UnicodeDecodeError) as err:
            print(f"error: cannot read the roster: {err}", file=sys.stderr)
            return 2
    version = book_version(book)  # read before grading: the book as it was when the grading began
    reports = grade(args.submissions, args.cell_timeout, args.timeout, book, args.hide, jobs=args.jobs, roster=roster,
                    whole=args.whole)
    if roster is not None:
        unlisted = [str(p) for p in args.submissions if str(p) not in roster and p.name not in roster]
        if unlisted:
            print(f"note: not in the roster, so named after the file: {', '.join(unlisted)}", file=sys.stderr)
    print_reports(reports)
    print(f"graded against the book at {book}: {version_line(version)}")
    if args.json:
        write_json(reports, args.json, version)
        print(f"grades written to {args.json}")
    if args.csv:
        write_csv(reports, args.csv, version)
        print(f"gradebook written to {args.csv}")
    if args.feedback:
        files = write_feedback(reports, args.feedback, version)
        print(f"{len(files)} feedback file(s) written to {args.feedback}")
    return 0
