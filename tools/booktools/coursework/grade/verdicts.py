"""Stage 4, judging: the harness's records read as data, verdicts from a separate, trusted process.

:func:`observations` reads what the sandbox wrote (JSON data only, never
executed, :mod:`booktools.coursework.codec`'s size limit); :func:`run_verdict_runner` hands it to
:mod:`booktools.coursework.verdict_runner`, started fresh with the installed packages
(``parallel_mcmc``'s checks, :mod:`booktools.coursework.references`' answers);
:func:`exercise_results` turns its verdicts and the cells' outcomes into one
:class:`~booktools.coursework.grade.report.ExerciseResult` per exercise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat

from ..codec import LIMIT_BYTES
from ..markdown import WrittenPart, tags
from .assemble import CheckCall
from .report import ExerciseResult
from .run import CellResult


def _read_observation(path: Path) -> Any:
    """The harness's record, as JSON data (never executed); None if missing, too large or not JSON."""
    try:
        if not path.is_file() or path.is_symlink() or path.stat().st_size > LIMIT_BYTES:
            return None
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # RecursionError: nested too deep to be the harness's
        return None


def observations(labels: list[str],
                 checks: dict[str, list[tuple[CheckCall, Path, int]]]) -> tuple[list[dict], list[str]]:
    """The verdict runner's job: what the sandbox observed of each check call, read as data.

    Parameters
    ----------
    labels
        The chapter's exercise labels, in order.
    checks
        Per exercise, its check calls, with where each observation was written and its seed
        (:func:`~booktools.coursework.grade.assemble.assemble_submission`).

    Returns
    -------
    items : list of dict
        One item per check call, in the order of the exercises.
    owners : list of str
        The label each item belongs to.
    """
    items = []
    owners: list[str] = []
    for label in labels:
        for call, observed, call_seed in checks.get(label, []):
            items.append({"label": label, "module": call.module, "function": call.function, "seed": call_seed,
                          "literals": call.literals, "observation": _read_observation(observed)})
            owners.append(label)
    return items, owners


def run_verdict_runner(items: list[dict], devices: int | None, timeout: float) -> list[dict]:
    """Run :mod:`booktools.coursework.verdict_runner` in a fresh process on the observations.

    Parameters
    ----------
    items
        The check calls and their observations (:func:`observations`).
    devices
        The chapter's device count, which the verdict runner's JAX is given.
    timeout
        Seconds the process may run.

    Returns
    -------
    list of dict
        One verdict per item, ``{"label", "status", "message"}`` (and ``"fraction"`` for partial credit);
        all ``error`` if the process failed or ran out of time.
    """
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    job = json.dumps({"devices": devices, "checks": items})
    try:
        done = subprocess.run([sys.executable, "-m", "booktools.coursework.verdict_runner"], input=job, capture_output=True, text=True, check=False,
                              env=env, timeout=timeout)
        verdicts = json.loads(done.stdout) if done.returncode == 0 else None
    except (subprocess.TimeoutExpired, ValueError):
        verdicts = None
        done = None
    if not isinstance(verdicts, list) or len(verdicts) != len(items):
        why = "it ran out of time" if done is None else (done.stderr or "").strip().splitlines()[-1:] or ["no answer"]
        return [{"label": it["label"], "status": "error", "message": f"the verdict runner failed: {why if isinstance(why, str) else why[0]}"}
                for it in items]
    return verdicts


def _exercise_result(label: str, cells: list[tuple[int, str]], results: dict[int, CellResult], verdicts: list[dict],
                     errors: list[tuple[int, CellResult]], cell_timeout: float) -> ExerciseResult:
    """The result of one exercise from how its cells ran and its checks' verdicts."""
    checks = [i for i, role in cells if role == "check"]
    for i, _ in cells:
        r = results.get(i)
        if r and r.status == "timeout":
            limit = "the notebook's time limit" if r.evalue else f"the {cell_timeout:g} s limit per cell"
            return ExerciseResult(label, "timeout", f"cell {i + 1} ran past {limit} and was stopped")
        if r and r.status == "died":
            return ExerciseResult(label, "error", f"the kernel died while running cell {i + 1}")
        if r and r.status == "exited":
            return ExerciseResult(label, "error", f"cell {i + 1} called exit() or quit(), which stops the kernel; "
                                                  "the rest of the notebook ran in a new kernel")
    if not checks:
        return ExerciseResult(label, "manual", "this exercise has no check: grade it by hand")
    for i in checks:
        r = results.get(i)
        if r is None or r.status == "not-run":
            return ExerciseResult(label, "timeout", f"the check (cell {i + 1}) never ran: the notebook ran out of time")
    # partial credit: the share of unseen cases each check passed, where the verdict runner could run them one by one
    shares = [1.0 if v.get("status") == "passed" else v.get("fraction") for v in verdicts]
    fraction = None
    if verdicts and all(isinstance(x, (int, float)) and 0 <= x <= 1 for x in shares):
        fraction = sum(shares) / len(shares)
    for verdict in verdicts:
        if verdict.get("status") != "passed":
            status = verdict.get("status") if verdict.get("status") in ("failed", "error") else "error"
            message = str(verdict.get("message", ""))
            broken = [results[i] for i in checks if results.get(i) and results[i].status == "error"]
            if message.startswith("the check never ran") and broken:
                message = f"the check could not run: {broken[0].ename}: {broken[0].evalue}"
            before = [(j, e) for j, e in errors if j < checks[0]]
            if status == "error" and before and message.split(":")[0] in ("NameError", "AttributeError", "TypeError"):
                j, e = before[-1]
                message += f" (an earlier cell, {j + 1}, had already failed with {e.ename}: {e.evalue})"
            return ExerciseResult(label, status, message, fraction=fraction if status == "failed" else None)
    return ExerciseResult(label, "passed", "")


def with_written_parts(exercises: list[ExerciseResult], parts: list[WrittenPart],
                       answers: dict[tuple[str, str], str]) -> list[ExerciseResult]:
    """The exercises' results, each given one ``manual`` result per question of it answered in words.

    Parameters
    ----------
    exercises
        The exercises' results; changed in place.
    parts
        The chapter's questions graded by hand.
    answers
        ``(label, name)`` -> the learner's answer (:func:`~booktools.coursework.grade.read.written_answers`).

    Returns
    -------
    list of ExerciseResult
        ``exercises``, each with a result per question in :attr:`ExerciseResult.parts` (``label:name``,
        its own points, the learner's answer), to be graded by hand.
    """
    by_label: dict[str, list[WrittenPart]] = {}
    for part in parts:
        by_label.setdefault(part.label, []).append(part)
    for result in exercises:
        for part in by_label.get(result.label, []):
            answer = answers.get((part.label, part.name), "")
            message = f"graded by hand: {part.prompt}" + ("" if answer else " (no answer written in the submission)")
            result.parts.append(ExerciseResult(f"{part.label}:{part.name}", "manual", message, points=part.points,
                                               answer=answer))
    return exercises


def exercise_results(nb: nbformat.NotebookNode, labels: list[str], roles: dict[int, tuple[str, str]],
                     unchecked: list[str], notes: dict[str, list[str]], results: dict[int, CellResult],
                     owners: list[str], verdicts: list[dict], cell_timeout: float) -> list[ExerciseResult]:
    """One result per exercise of the chapter, from the verdict runner's verdicts and how the notebook ran.

    Parameters
    ----------
    nb
        The notebook that ran.
    labels, roles
        The chapter's exercises and its cells' roles (:func:`~booktools.coursework.grade.read.structure`).
    unchecked
        Exercises without a check the grader can run.
    notes
        Notes per exercise, added to its result.
    results
        Each code cell's result (:func:`~booktools.coursework.grade.run.execute`).
    owners, verdicts
        The label of each verdict, and the verdicts (:func:`run_verdict_runner`).
    cell_timeout
        Seconds a cell could run, named in a timeout's message.

    Returns
    -------
    list of ExerciseResult
        One per label, in order.
    """
    by_label: dict[str, list[dict]] = {}
    for owner, verdict in zip(owners, verdicts):
        by_label.setdefault(owner, []).append(verdict)
    errors = [(i, results[i]) for i in sorted(results)
              if results[i].status == "error" and roles.get(i, ("", ""))[1] != "check"
              and "raises-exception" not in tags(nb.cells[i])]
    exercises = []
    for label in labels:
        cells = [(i, role) for i, (lab, role) in sorted(roles.items()) if lab == label]
        if label in unchecked:
            result = ExerciseResult(label, "ungraded", "this exercise has no check the grader can run: grade it by hand")
        else:
            result = _exercise_result(label, cells, results, by_label.get(label, []), errors, cell_timeout)
        result.notes = notes.get(label, [])
        exercises.append(result)
    return exercises
