"""Grade submitted student notebooks.

``python -m coursework.grade SUBMISSION.ipynb [...] [--json grades.json]``
runs each submission top to bottom in a fresh kernel (the ``python3`` kernel of
this environment, with the book's ``src/`` on ``PYTHONPATH``), with a time
limit per cell and per notebook, and reports for every exercise:

- ``passed``: every check cell of the exercise ran without error;
- ``failed``: a check raised ``AssertionError``; its message says what is wrong;
- ``error``: anything else went wrong (another exception in the check, the
  stub left unanswered, the kernel died, the check never ran);
- ``timeout``: a cell of the exercise, or the notebook as a whole, ran out of time.

Execution goes on after errors. A cell that runs out of time is interrupted;
if the kernel does not come back (or dies, for example on ``os._exit``), a new
kernel is started, the cells that had run are run again (except the offending
one) and grading continues. Exercises are found from the cell metadata that
:mod:`coursework.student` writes, or, when a learner's editor dropped it,
from the ``exercise-start`` blocks and the cells that call ``check.``. When the
chapter the submission was made from is in the book, its original check cells
are the ones that run: an edited or deleted check cell is put back.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

import ipykernel.kernelspec
import jupytext
import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from rich.console import Console
from rich.table import Table

from .student import _CHECK_CALL, META, _MarkdownSplitter, find_book_root, make_student_notebook

__all__ = ["ExerciseResult", "NotebookReport", "grade_notebook", "grade", "main"]

_TIMEOUT_ENAME = "GraderCellTimeout"
STATUSES = ("passed", "failed", "error", "timeout", "ungraded")


@dataclass
class ExerciseResult:
    """The grade of one exercise."""

    label: str
    status: str  # one of STATUSES
    message: str = ""
    notes: list[str] = field(default_factory=list)


@dataclass
class NotebookReport:
    """The grades of one submission."""

    notebook: str
    source: str | None
    exercises: list[ExerciseResult]
    seconds: float
    problems: list[str] = field(default_factory=list)

    @property
    def score(self) -> int:
        return sum(e.status == "passed" for e in self.exercises)

    @property
    def total(self) -> int:
        return sum(e.status != "ungraded" for e in self.exercises)

    def as_dict(self) -> dict[str, Any]:
        return {
            "notebook": self.notebook,
            "source": self.source,
            "score": self.score,
            "total": self.total,
            "seconds": round(self.seconds, 1),
            "exercises": [asdict(e) for e in self.exercises],
            "problems": list(self.problems),
        }


@dataclass
class _CellResult:
    status: str  # "ok" | "error" | "timeout" | "died" | "not-run"
    ename: str = ""
    evalue: str = ""
    seconds: float = 0.0


# --------------------------------------------------------------------------- structure


def _tags(cell: dict) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []) or [])


def _structure(nb: nbformat.NotebookNode) -> tuple[list[str], dict[int, tuple[str, str]], dict[str, int]]:
    """(exercise labels in order, cell index -> (label, role), label -> index of its last cell).

    Roles: "stub" and "check" from the metadata, "answer" for the learner's own
    cells between an exercise's prompt and its check.
    """
    splitter = _MarkdownSplitter()
    labels: list[str] = []
    roles: dict[int, tuple[str, str]] = {}
    last: dict[str, int] = {}
    current: str | None = None
    checked = False
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            before = len(splitter.events)
            splitter.feed(cell.source)
            for kind, label in splitter.events[before:]:
                if kind == "exercise":
                    if label not in labels:
                        labels.append(label)
                    current, checked = label, False
                    last[label] = i
            continue
        if cell.cell_type != "code":
            continue
        meta = cell.get("metadata", {}).get(META) or {}
        label, role = meta.get("exercise"), meta.get("role")
        if label and role in ("stub", "check", "answer"):
            if label not in labels:
                labels.append(label)
            if label != current:
                current, checked = label, False
            if role == "check":
                checked = True
        elif current is not None and _CHECK_CALL.search(cell.source) and (
            not checked or roles.get(i - 1, ("", ""))[1] == "check"
        ):
            label, role, checked = current, "check", True
        elif current is not None and not checked:
            label, role = current, "answer"
        else:
            continue
        roles[i] = (label, role)
        last[label] = i
    return labels, roles, last


def _reference(nb: nbformat.NotebookNode, book: Path | None) -> tuple[dict[str, list[str]] | None, str | None, Path | None]:
    """The original check cells per exercise, the chapter's relative path and its file, when known."""
    meta = nb.metadata.get(META) or {}
    source = meta.get("source")
    if book is not None and source:
        chapter = (book / source).resolve()
        if chapter.is_file() and book.resolve() in chapter.parents:
            edition = make_student_notebook(chapter, book)
            return {e.label: list(e.checks) for e in edition.exercises}, source, chapter
    if meta.get("exercises"):
        return {e["label"]: list(e.get("checks", [])) for e in meta["exercises"]}, source, None
    return None, source, None


def _restore_checks(nb: nbformat.NotebookNode, reference: dict[str, list[str]]) -> dict[str, list[str]]:
    """Put the original check cells back where a learner edited or deleted them; return notes."""
    notes: dict[str, list[str]] = {}
    labels, roles, last = _structure(nb)
    inserts: list[tuple[int, list[nbformat.NotebookNode]]] = []
    for label, checks in reference.items():
        if not checks or label not in labels:
            continue
        found = [i for i, (lab, role) in sorted(roles.items()) if lab == label and role == "check"]
        have = [nb.cells[i].source for i in found]
        if have == checks:
            for i in found:
                nb.cells[i].metadata[META] = {"exercise": label, "role": "check"}
            continue
        new_cells = [nbformat.v4.new_code_cell(src, metadata={META: {"exercise": label, "role": "check"}}) for src in checks]
        if found:
            notes.setdefault(label, []).append("the check cell was edited; the original check was run")
            for i in found:  # the learner's version still runs, as an answer cell
                nb.cells[i].metadata[META] = {"exercise": label, "role": "answer"}
            inserts.append((found[-1] + 1, new_cells))
        else:
            notes.setdefault(label, []).append("the check cell was missing; the original check was run")
            inserts.append((last[label] + 1, new_cells))
    for position, cells in sorted(inserts, key=lambda item: item[0], reverse=True):
        nb.cells[position:position] = cells
    for number, cell in enumerate(nb.cells):
        cell["id"] = f"graded-{number}"
    return notes


# --------------------------------------------------------------------------- execution


def _kernel_spec_manager():
    """A kernel-spec manager whose ``python3`` is the interpreter running the grader."""
    class CurrentEnv(KernelSpecManager):
        def get_kernel_spec(self, kernel_name):  # noqa: D401 - jupyter_client API
            if kernel_name == "python3":
                spec = ipykernel.kernelspec.get_kernel_dict()
                spec["argv"][0] = sys.executable
                return self.kernel_spec_class(resource_dir=ipykernel.kernelspec.RESOURCES, **spec)
            return super().get_kernel_spec(kernel_name)

    return CurrentEnv()


def _outcome(cell: nbformat.NotebookNode, seconds: float) -> _CellResult:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return _CellResult("error", out.get("ename", ""), str(out.get("evalue", "")), seconds)
    return _CellResult("ok", seconds=seconds)


async def _execute(nb: nbformat.NotebookNode, cell_timeout: float, notebook_timeout: float, cwd: Path,
                   env: dict[str, str], problems: list[str], max_restarts: int = 3) -> dict[int, _CellResult]:
    """Run the code cells of ``nb`` in place; return each code cell's result by index."""
    deadline = time.monotonic() + notebook_timeout
    todo = [i for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and c.source.strip() and "skip-execution" not in _tags(c)]
    for i in todo:
        nb.cells[i].outputs, nb.cells[i].execution_count = [], None
    results: dict[int, _CellResult] = {}
    pos = restarts = 0
    spec_manager = _kernel_spec_manager()

    replies: dict[int, dict] = {}

    def remember(cell=None, cell_index=None, execute_reply=None, **_):
        if execute_reply is not None:
            replies[cell_index] = execute_reply.get("content", {})

    async def run(client, index: int, cell, timeout: float) -> _CellResult:
        """Run one cell; a time-out interrupts the kernel (nbclient) and reads as status "timeout"."""
        client.timeout = max(1, math.ceil(timeout))
        replies.pop(index, None)
        start = time.monotonic()
        try:
            await client.async_execute_cell(cell, index)
        except DeadKernelError:
            return _CellResult("died", seconds=time.monotonic() - start)
        except CellTimeoutError:  # IOPub silent after the reply: count it as a time-out
            return _CellResult("timeout", seconds=time.monotonic() - start)
        seconds = time.monotonic() - start
        reply = replies.get(index)
        if reply is None:
            return _outcome(cell, seconds)
        if reply.get("status") == "error":
            if reply.get("ename") == _TIMEOUT_ENAME:
                return _CellResult("timeout", seconds=seconds)
            return _CellResult("error", reply.get("ename", ""), str(reply.get("evalue", "")), seconds)
        if reply.get("status") == "aborted":
            return _CellResult("error", "Aborted", "the kernel aborted this cell", seconds)
        return _CellResult("ok", seconds=seconds)

    async def alive_after_interrupt(client) -> bool:
        """After nbclient interrupted a cell that ran out of time: does the kernel answer again?"""
        nb.cells.append(nbformat.v4.new_code_cell("pass"))
        try:
            probe = await run(client, len(nb.cells) - 1, nb.cells[-1], 10)
        finally:
            nb.cells.pop()
        return probe.status == "ok"

    while pos < len(todo):
        km = AsyncKernelManager(kernel_name="python3", kernel_spec_manager=spec_manager)
        client = NotebookClient(
            nb, km=km, kernel_name="python3", allow_errors=True, interrupt_on_timeout=True,
            error_on_timeout={"ename": _TIMEOUT_ENAME, "evalue": "the cell ran out of time", "traceback": []},
            on_cell_executed=remember,
            timeout=int(cell_timeout), startup_timeout=120, iopub_timeout=5, shutdown_kernel="immediate",
            resources={"metadata": {"path": str(cwd)}},
        )
        restart = False
        try:
            # The kernel's own log (not the cells' output) would clutter the grades table.
            async with client.async_setup_kernel(env=env, cleanup_kc=True, stderr=subprocess.DEVNULL):
                if restarts:  # bring the new kernel to where the old one was, without the offending cells
                    for i in todo[:pos]:
                        if results[i].status in ("timeout", "died", "not-run"):
                            continue
                        remaining = deadline - time.monotonic()
                        replay = await run(client, i, nb.cells[i], min(cell_timeout, max(remaining, 1)))
                        if replay.status in ("timeout", "died"):
                            problems.append(f"cell {i + 1} did not run again after the kernel restart; grading stopped")
                            return results
                while pos < len(todo):
                    i = todo[pos]
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return results
                    result = await run(client, i, nb.cells[i], min(cell_timeout, remaining))
                    if result.status == "timeout" and remaining < cell_timeout:
                        result.evalue = "notebook time limit"
                    results[i] = result
                    pos += 1
                    if result.status == "died":
                        problems.append(f"the kernel died while running cell {i + 1}; a new kernel was started")
                        restart = True
                        break
                    if result.status == "timeout" and not await alive_after_interrupt(client):
                        problems.append(f"cell {i + 1} timed out and its kernel did not answer; a new kernel was started")
                        restart = True
                        break
        except Exception as err:  # noqa: BLE001 - a kernel that cannot start is reported, not raised
            problems.append(f"the kernel failed: {type(err).__name__}: {err}")
            return results
        if restart:
            restarts += 1
            if restarts > max_restarts:
                problems.append(f"more than {max_restarts} kernel restarts; the remaining cells were not run")
                return results
    return results


# --------------------------------------------------------------------------- grading


def _read(path: Path) -> nbformat.NotebookNode:
    if path.suffix == ".md":
        return jupytext.read(path, fmt="md:myst")
    return nbformat.read(path, as_version=4)


def _judge(label: str, cells: list[tuple[int, str]], results: dict[int, _CellResult],
           errors: list[tuple[int, _CellResult]], cell_timeout: float) -> ExerciseResult:
    checks = [i for i, role in cells if role == "check"]
    for i, _ in cells:
        r = results.get(i)
        if r and r.status == "timeout":
            limit = "the notebook's time limit" if r.evalue else f"the {cell_timeout:g} s limit per cell"
            return ExerciseResult(label, "timeout", f"cell {i + 1} ran past {limit} and was stopped")
        if r and r.status == "died":
            return ExerciseResult(label, "error", f"the kernel died while running cell {i + 1}")
    if not checks:
        return ExerciseResult(label, "error", "no check cell found for this exercise")
    for i in checks:
        r = results.get(i)
        if r is None or r.status == "not-run":
            return ExerciseResult(label, "timeout", f"the check (cell {i + 1}) never ran: the notebook ran out of time")
        if r.status == "error":
            if r.ename == "AssertionError":
                return ExerciseResult(label, "failed", r.evalue or "the check failed")
            if r.ename == "NotImplementedError":
                return ExerciseResult(label, "error", f"not answered: {r.evalue or 'the stub is still there'}")
            message = f"{r.ename}: {r.evalue}"
            before = [(j, e) for j, e in errors if j < i]
            if before and r.ename in ("NameError", "AttributeError", "TypeError"):
                j, e = before[-1]
                message += f" (an earlier cell, {j + 1}, had already failed with {e.ename}: {e.evalue})"
            return ExerciseResult(label, "error", message)
    return ExerciseResult(label, "passed", "")


def grade_notebook(path: str | Path, cell_timeout: float = 300, notebook_timeout: float = 1800,
                   book: Path | None = None) -> NotebookReport:
    """Run one submission and grade each of its exercises."""
    path = Path(path)
    start = time.monotonic()
    problems: list[str] = []
    try:
        nb = _read(path)
    except Exception as err:  # noqa: BLE001 - an unreadable file is a grade, not a crash
        return NotebookReport(str(path), None, [], 0.0, [f"cannot read the notebook: {type(err).__name__}: {err}"])
    try:
        reference, source, chapter = _reference(nb, book)
    except Exception as err:  # noqa: BLE001 - a broken chapter must not stop grading
        reference, source, chapter = None, None, None
        problems.append(f"the original chapter could not be read ({err}); the checks were run as submitted")
    notes = _restore_checks(nb, reference) if reference else {}
    labels, roles, _ = _structure(nb)
    order = list(reference) + [lab for lab in labels if lab not in reference] if reference else labels

    src = (book / "src") if book is not None and (book / "src").is_dir() else Path(__file__).resolve().parents[1]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))
    cwd = chapter.parent if chapter is not None else path.resolve().parent
    results = asyncio.run(_execute(nb, cell_timeout, notebook_timeout, cwd, env, problems)) if roles else {}

    errors = [(i, results[i]) for i in sorted(results)
              if results[i].status == "error" and roles.get(i, ("", ""))[1] != "check"
              and "raises-exception" not in _tags(nb.cells[i])]
    exercises = []
    for label in order:
        cells = [(i, role) for i, (lab, role) in sorted(roles.items()) if lab == label]
        if reference is not None and label in reference and not reference[label]:
            result = ExerciseResult(label, "ungraded", "this exercise has no check cell: grade it by hand")
        elif label not in labels:
            result = ExerciseResult(label, "error", "the exercise is missing from the submission "
                                    "(deleted, or added to the chapter after the student edition was made)")
        else:
            result = _judge(label, cells, results, errors, cell_timeout)
        result.notes = notes.get(label, [])
        exercises.append(result)
    if not order:
        problems.append("no exercise found: is this a notebook of the student edition?")
    return NotebookReport(str(path), source, exercises, time.monotonic() - start, problems)


def grade(paths: Sequence[str | Path], cell_timeout: float = 300, notebook_timeout: float = 1800,
          book: Path | None = None) -> list[NotebookReport]:
    """Grade several submissions, one fresh kernel each."""
    return [grade_notebook(p, cell_timeout, notebook_timeout, book) for p in paths]


# --------------------------------------------------------------------------- reporting


_STYLE = {"passed": "green", "failed": "red", "error": "magenta", "timeout": "yellow", "ungraded": "dim"}


def print_reports(reports: Sequence[NotebookReport], console=None) -> None:
    """One rich table per submission, then the totals."""
    console = console or Console()
    for rep in reports:
        table = Table(title=f"{rep.notebook}" + (f"  ({rep.source})" if rep.source else ""), show_lines=False)
        table.add_column("exercise")
        table.add_column("result")
        table.add_column("message", overflow="fold")
        for ex in rep.exercises:
            message = "; ".join(filter(None, [ex.message, *ex.notes]))
            table.add_row(ex.label, f"[{_STYLE[ex.status]}]{ex.status}[/]", message)
        table.caption = f"score {rep.score} / {rep.total}, {rep.seconds:.0f} s"
        console.print(table)
        for problem in rep.problems:
            console.print(f"[yellow]note:[/] {problem}")
    if len(reports) > 1:
        console.print(f"total: {sum(r.score for r in reports)} / {sum(r.total for r in reports)} over {len(reports)} submissions")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coursework.grade",
                                     description="Run student notebooks in fresh kernels and grade their exercises.")
    parser.add_argument("submissions", nargs="+", type=Path, help="the submitted .ipynb (or .md) notebooks")
    parser.add_argument("--json", type=Path, default=None, help="also write the grades to this JSON file")
    parser.add_argument("--cell-timeout", type=float, default=300, help="seconds one cell may run (default 300)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds one notebook may run (default 1800)")
    parser.add_argument("--book", type=Path, default=None,
                        help="the book's root folder, whose chapters hold the original checks (default: found from the cwd)")
    args = parser.parse_args(argv)
    if args.book is not None:
        book: Path | None = args.book.resolve()
    else:
        try:
            book = find_book_root()
        except FileNotFoundError:
            candidate = Path(__file__).resolve().parents[2]
            book = candidate if (candidate / "chapters").is_dir() else None
    missing = [str(p) for p in args.submissions if not p.is_file()]
    if missing:
        print(f"error: no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    reports = grade(args.submissions, args.cell_timeout, args.timeout, book)
    print_reports(reports)
    if args.json:
        data = {
            "score": sum(r.score for r in reports),
            "total": sum(r.total for r in reports),
            "submissions": [r.as_dict() for r in reports],
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"grades written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
