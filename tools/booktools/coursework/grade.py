"""Grade submitted student notebooks, with verdicts computed where the submission cannot reach.

``python -m booktools.coursework.grade SUBMISSION.ipynb [...] [--json grades.json]``. A
submission is untrusted code. For each one the grader:

1. reads it as data (JSON or MyST text) and finds the chapter of the book it
   answers: the chapter its metadata names if that chapter's exercises are all in
   it, otherwise the chapter whose exercises it contains (and says so);
2. rebuilds that chapter's student edition from the book and puts the learner's
   answer cells (the code cells of each exercise, between its statement and its
   check) in place of the stubs; every other cell, the check cells included,
   comes from the book, and the submission's metadata and outputs are ignored;
3. runs that notebook in a sandboxed kernel (:mod:`booktools.coursework.sandbox`): no
   network, the user ``nobody``, the book hidden, a scratch folder that holds only
   the student edition, a read-only copy of ``parallel_mcmc``, resource limits;
   each check cell is replaced by the harness (:mod:`booktools.coursework.harness`), which
   records the values the check is given and what the learner's functions return
   for the check's inputs and for unseen inputs the grader draws afresh;
4. reads those records as data (:mod:`booktools.coursework.codec`) and has a separate,
   trusted process (:mod:`booktools.coursework.judge`) run the book's checks on them, with
   the reference answers of :mod:`booktools.coursework.references`.

Per exercise it reports ``passed`` (the judge's checks passed, on the chapter's
inputs and on the unseen ones), ``failed`` (a check raised ``AssertionError``;
its message says what is wrong), ``error`` (not answered, an exception, the
kernel died, nothing observed) or ``timeout``. Execution goes on after errors; a
cell that runs out of time is interrupted, and a kernel that does not come back
(or dies) is replaced, the cells that had run are run again (except the
offending one) and grading continues.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import copy
import json
import math
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
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

from . import references, sandbox
from .codec import LIMIT_BYTES
from .harness import encode
from .student import (
    _CHECK_CALL,
    META,
    _MarkdownSplitter,
    exercise_chapters,
    find_book_root,
    make_student_notebook,
)

__all__ = ["ExerciseResult", "NotebookReport", "grade_notebook", "grade", "main"]

_TIMEOUT_ENAME = "GraderCellTimeout"
SUBMISSION_LIMIT_BYTES = 50 * 2**20  # a larger file is not read
# Address space of each process of the submission: the machine's memory (JAX reserves more than it uses,
# so a tighter bound would stop the chapters themselves).
MEMORY_BYTES = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
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


def _labels_in(nb: nbformat.NotebookNode) -> list[str]:
    """The exercise labels a submission's cells contain (its statements, and labels in its cell metadata)."""
    labels, _, _ = _structure(nb)
    return labels


def _match_chapter(nb: nbformat.NotebookNode, book: Path) -> tuple[Path | None, list[str]]:
    """The book's chapter this submission answers, and notes on how it was found.

    The chapter named in the notebook's metadata counts only if every exercise of
    that chapter is in the submission; otherwise the chapter whose exercises the
    submission contains (most of them, then the fewest others) is used.
    """
    notes: list[str] = []
    have = set(_labels_in(nb))
    chapters = {path.relative_to(book).as_posix(): path for path in exercise_chapters(book)}
    labels = {rel: [e.label for e in make_student_notebook(path, book).exercises] for rel, path in chapters.items()}
    meta = nb.metadata.get(META) if isinstance(nb.metadata.get(META), dict) else {}
    claimed = meta.get("source") if isinstance(meta.get("source"), str) else None
    if claimed in chapters and set(labels[claimed]) <= have:
        return chapters[claimed], notes
    scored = sorted(((len(set(ls) & have), -len(ls), rel) for rel, ls in labels.items()), reverse=True)
    if not scored or scored[0][0] == 0:
        return None, ["no chapter of the book has the exercises of this notebook; it was not graded"]
    best = scored[0][2]
    if claimed is None:
        notes.append(f"the notebook does not say which chapter it comes from; it was graded as {best}, "
                     "whose exercises it contains")
    elif claimed != best:
        notes.append(f"the notebook's metadata says it comes from {claimed!r}, but its exercises are those of "
                     f"{best}; it was graded as {best}")
    else:
        missing = sorted(set(labels[best]) - have)
        notes.append(f"exercises missing from the notebook: {', '.join(missing)}")
    return chapters[best], notes


def _edited_checks(nb: nbformat.NotebookNode, checks: dict[str, list[str]]) -> dict[str, list[str]]:
    """Notes for the exercises whose check cells the submission changed or dropped (the book's run anyway)."""
    _, roles, _ = _structure(nb)
    have: dict[str, list[str]] = {}
    for i, (label, role) in sorted(roles.items()):
        if role == "check":
            have.setdefault(label, []).append(nb.cells[i].source)
    notes: dict[str, list[str]] = {}
    for label, sources in checks.items():
        if not sources or have.get(label) == sources:
            continue
        what = "edited" if have.get(label) else "missing"
        notes[label] = [f"the check cell was {what} in the submission; the book's check was run"]
    return notes


def _answers(nb: nbformat.NotebookNode, given: set[str]) -> dict[str, list[str]]:
    """The learner's answer cells per exercise: code cells between its statement and its check,
    except those that are the chapter's own cells unchanged."""
    _, roles, _ = _structure(nb)
    out: dict[str, list[str]] = {}
    for i, (label, role) in sorted(roles.items()):
        source = nb.cells[i].source
        if role in ("stub", "answer") and source.strip() and source not in given:
            out.setdefault(label, []).append(source)
    return out


@dataclass
class _CheckCall:
    """One ``check.function(arguments)`` of a chapter's check cell, as the grader parsed it from the book."""

    label: str
    module: str
    function: str
    args: list[str]
    kwargs: dict[str, str]
    literals: dict[str, dict]


_EXERCISES = "parallel_mcmc.exercises"


def _check_modules(source: str, aliases: dict[str, str]) -> None:
    """Record in ``aliases`` the names that ``source`` binds to check modules (``... import chains as check``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == _EXERCISES:
            for a in node.names:
                aliases[a.asname or a.name] = f"{_EXERCISES}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith(_EXERCISES + ".") and a.asname:
                    aliases[a.asname] = a.name


def _literal(node: ast.AST) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _parse_checks(label: str, source: str, aliases: dict[str, str]) -> tuple[list[_CheckCall], list[str]]:
    """The check calls of a check cell, and its other statements (run as they are)."""
    _check_modules(source, aliases)
    tree = ast.parse(source)
    calls, other = [], []
    for stmt in tree.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        func = getattr(call, "func", None)
        if (isinstance(call, ast.Call) and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                and func.value.id in aliases and not any(isinstance(a, ast.Starred) for a in call.args)
                and all(k.arg for k in call.keywords)):
            literals: dict[str, dict] = {"args": {}, "kwargs": {}}
            for index, arg in enumerate(call.args):
                ok, value = _literal(arg)
                if ok:
                    literals["args"][str(index)] = value
            for k in call.keywords:
                ok, value = _literal(k.value)
                if ok:
                    literals["kwargs"][k.arg] = value
            calls.append(_CheckCall(label, aliases[func.value.id], func.attr, [ast.unparse(a) for a in call.args],
                                    {k.arg: ast.unparse(k.value) for k in call.keywords}, literals))
        else:
            other.append(ast.get_source_segment(source, stmt) or ast.unparse(stmt))
    return calls, other


_HARNESS = Path(__file__).with_name("harness.py")


def _observation_cell(calls: list[tuple[_CheckCall, str, list]], other: list[str]) -> str:
    """A cell that runs the harness for each check call (the harness's source travels in the cell)."""
    lines = list(other)
    lines.append("__coursework = {'__name__': 'coursework_harness'}")
    lines.append(f"exec(compile({_HARNESS.read_text(encoding='utf-8')!r}, 'coursework-harness', 'exec'), __coursework)")
    for call, path, unseen in calls:
        lines.append(f"__coursework['observe']({path!r}, {call.label!r}, {call.module!r}, {call.function!r}, "
                     f"{call.args!r}, {call.kwargs!r}, {unseen!r}, globals())")
    lines.append("del __coursework")
    return "\n".join(lines)


def _devices(edition_nb: nbformat.NotebookNode) -> int | None:
    """The device count the chapter asks for (its ``use_cpu_devices(n)``), read from the book."""
    for cell in edition_nb.cells:
        m = re.search(r"use_cpu_devices\(\s*(\d+)\s*\)", cell.source) if cell.cell_type == "code" else None
        if m:
            return int(m.group(1))
    return None


def _assemble(sub: nbformat.NotebookNode, chapter: Path, book: Path, work: Path,
              seed: int) -> tuple[nbformat.NotebookNode, dict[str, list[tuple[_CheckCall, Path, int]]], list[str],
                                  int | None, dict[str, list[str]]]:
    """The notebook to run: the book's student edition with the learner's answers in place of the stubs.

    Returns it, the check calls per exercise (with where each observation is written and its seed),
    the labels of exercises without a check the grader can run, the chapter's device count and notes
    on check cells the submission changed.
    """
    edition = make_student_notebook(chapter, book)
    given = {c.source for c in edition.notebook.cells if c.cell_type == "code"
             and (c.metadata.get(META) or {}).get("role") != "stub"}
    answers = _answers(sub, given)
    cells: list[nbformat.NotebookNode] = []
    checks: dict[str, list[tuple[_CheckCall, Path, int]]] = {}
    unchecked: list[str] = []
    aliases: dict[str, str] = {}
    placed: set[str] = set()
    number = 0
    for cell in edition.notebook.cells:
        meta = cell.metadata.get(META) or {}
        label, role = meta.get("exercise"), meta.get("role")
        if cell.cell_type == "code" and role is None:
            _check_modules(cell.source, aliases)
        if role == "stub":
            if label in answers and label in placed:
                continue
            sources = answers.get(label) or [cell.source]
            placed.add(label)
            cells += [nbformat.v4.new_code_cell(src, metadata={META: {"exercise": label, "role": "answer"}}) for src in sources]
            continue
        if role == "check":
            try:
                calls, other = _parse_checks(label, cell.source, aliases)
            except SyntaxError:
                calls, other = [], []
            if not calls:
                unchecked.append(label)
                cells.append(nbformat.v4.new_code_cell(cell.source, metadata={META: {"exercise": label, "role": "given"}}))
                continue
            entries = []
            for call in calls:
                path = work / f"observed-{secrets.token_hex(8)}.json"
                call_seed = seed + number
                number += 1
                name = f"{call.module}.{call.function}"
                index, make_calls = references.CALLS.get(name, (0, None))
                unseen = []
                if make_calls is not None:
                    unseen = [[index, [encode(tuple(args)) for args in make_calls(references.unseen(name, call_seed))]]]
                entries.append((call, str(path), unseen))
                checks.setdefault(label, []).append((call, path, call_seed))
            cells.append(nbformat.v4.new_code_cell(_observation_cell(entries, other),
                                                   metadata={META: {"exercise": label, "role": "check"}}))
            continue
        new = copy.deepcopy(cell)
        if new.cell_type == "code":
            new.metadata[META] = {"role": "given"}
        cells.append(new)
    nb = nbformat.v4.new_notebook(metadata=copy.deepcopy(edition.notebook.metadata))
    nb.cells = cells
    for n, cell in enumerate(nb.cells):
        cell["id"] = f"graded-{n}"
    notes = _edited_checks(sub, {e.label: list(e.checks) for e in edition.exercises})
    return nb, checks, [lab for lab in unchecked if lab not in checks], _devices(edition.notebook), notes


# --------------------------------------------------------------------------- execution


def _kernel_spec_manager(job: Path, hide: Sequence[Path], cpu_seconds: int):
    """A kernel-spec manager whose ``python3`` is this interpreter's ipykernel, started in the sandbox."""
    # the environment, and the interpreter it was made from (a venv's python links to it)
    keep = list(dict.fromkeys([Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()]))

    class Sandboxed(KernelSpecManager):
        def get_kernel_spec(self, kernel_name):
            spec = ipykernel.kernelspec.get_kernel_dict()
            argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
            spec["argv"] = sandbox.command(argv, job, hide, keep, cpu_seconds, chown=["{connection_file}"],
                                           memory_bytes=MEMORY_BYTES)
            return self.kernel_spec_class(resource_dir=ipykernel.kernelspec.RESOURCES, **spec)

    return Sandboxed()


def _kernel_env(job: Path) -> dict[str, str]:
    """The kernel's whole environment: nothing of the grader's, the helper package's copy on the path."""
    work = job / "work"
    return {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(work), "TMPDIR": "/tmp", "MPLCONFIGDIR": str(work / ".matplotlib"),
        "PYTHONPATH": str(job / "lib"), "LANG": os.environ.get("LANG", "C.UTF-8"),
        "PYTHONDONTWRITEBYTECODE": "1", "JUPYTER_PLATFORM_DIRS": "1",
        **{k: v for k, v in os.environ.items() if k in ("PARALLEL_MCMC_PLATFORM",)},
    }


OUTPUT_LIMIT = 2**20  # characters of output kept per cell; the grade never reads outputs


class _BoundedClient(NotebookClient):
    """A notebook client that keeps at most :data:`OUTPUT_LIMIT` characters of each cell's output,
    so that a submission printing without end cannot fill the grader's memory."""

    def output(self, outs, msg, display_id, cell_index):
        kept = self.__dict__.setdefault("_kept", {})
        size = len(str(msg.get("content", "")))
        if kept.get(cell_index, 0) + size > OUTPUT_LIMIT:
            return None
        kept[cell_index] = kept.get(cell_index, 0) + size
        return super().output(outs, msg, display_id, cell_index)


def _outcome(cell: nbformat.NotebookNode, seconds: float) -> _CellResult:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return _CellResult("error", out.get("ename", ""), str(out.get("evalue", "")), seconds)
    return _CellResult("ok", seconds=seconds)


async def _execute(nb: nbformat.NotebookNode, cell_timeout: float, notebook_timeout: float, job: Path,
                   env: dict[str, str], problems: list[str], hide: Sequence[Path] = (),
                   max_restarts: int = 3) -> dict[int, _CellResult]:
    """Run the code cells of ``nb`` in place, in a sandboxed kernel; return each code cell's result by index."""
    cwd = job / "work"
    deadline = time.monotonic() + notebook_timeout
    todo = [i for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and c.source.strip() and "skip-execution" not in _tags(c)]
    for i in todo:
        nb.cells[i].outputs, nb.cells[i].execution_count = [], None
    results: dict[int, _CellResult] = {}
    pos = restarts = 0
    spec_manager = _kernel_spec_manager(job, hide, int(notebook_timeout * 4 + 60))

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
        # ZeroMQ over Unix sockets in the scratch folder: the kernel has no network to listen on.
        km = AsyncKernelManager(kernel_name="python3", kernel_spec_manager=spec_manager, transport="ipc",
                                ip=str(cwd / f"kernel-{restarts}"), connection_file=str(cwd / f"kernel-{restarts}.json"))
        client = _BoundedClient(
            nb, km=km, kernel_name="python3", allow_errors=True, interrupt_on_timeout=True,
            error_on_timeout={"ename": _TIMEOUT_ENAME, "evalue": "the cell ran out of time", "traceback": []},
            on_cell_executed=remember,
            timeout=int(cell_timeout), startup_timeout=120, iopub_timeout=5, shutdown_kernel="immediate",
            resources={"metadata": {"path": str(cwd)}},
        )
        restart = False
        # The kernel's own log (not the cells' output) would clutter the grades table: it goes to a file,
        # quoted only when the kernel fails to start.
        log = open(job / f"kernel-{restarts}.log", "wb")  # noqa: SIM115, ASYNC230 - a local file, closed below
        try:
            async with client.async_setup_kernel(env=env, cleanup_kc=True, stderr=log, stdout=log):
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
            tail = (job / f"kernel-{restarts}.log").read_text(errors="replace").strip().splitlines()[-3:]
            problems.append(f"the kernel failed: {type(err).__name__}: {err}" + (f" ({' / '.join(tail)})" if tail else ""))
            return results
        finally:
            log.close()
        if restart:
            restarts += 1
            if restarts > max_restarts:
                problems.append(f"more than {max_restarts} kernel restarts; the remaining cells were not run")
                return results
    return results


# --------------------------------------------------------------------------- grading


def _read(path: Path) -> nbformat.NotebookNode:
    if path.stat().st_size > SUBMISSION_LIMIT_BYTES:
        raise ValueError(f"the file is larger than {SUBMISSION_LIMIT_BYTES // 2**20} MiB")
    if path.suffix == ".md":
        return jupytext.read(path, fmt="md:myst")
    return nbformat.read(path, as_version=4)


def _read_observation(path: Path) -> Any:
    """The harness's record, as JSON data (never executed); None if missing, too large or not JSON."""
    try:
        if not path.is_file() or path.is_symlink() or path.stat().st_size > LIMIT_BYTES:
            return None
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # RecursionError: nested too deep to be the harness's
        return None


def _run_judge(items: list[dict], devices: int | None, book_src: Path, timeout: float) -> list[dict]:
    """Run :mod:`booktools.coursework.judge` in a fresh process on the observations; its verdicts."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(book_src), str(Path(__file__).resolve().parents[1])]))
    env.pop("XLA_FLAGS", None)
    job = json.dumps({"devices": devices, "checks": items})
    try:
        done = subprocess.run([sys.executable, "-m", "booktools.coursework.judge"], input=job, capture_output=True, text=True, check=False,
                              env=env, timeout=timeout)
        verdicts = json.loads(done.stdout) if done.returncode == 0 else None
    except (subprocess.TimeoutExpired, ValueError):
        verdicts = None
        done = None
    if not isinstance(verdicts, list) or len(verdicts) != len(items):
        why = "it ran out of time" if done is None else (done.stderr or "").strip().splitlines()[-1:] or ["no answer"]
        return [{"label": it["label"], "status": "error", "message": f"the judge failed: {why if isinstance(why, str) else why[0]}"}
                for it in items]
    return verdicts


def _judge(label: str, cells: list[tuple[int, str]], results: dict[int, _CellResult], verdicts: list[dict],
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
            return ExerciseResult(label, status, message)
    return ExerciseResult(label, "passed", "")


def _hidden(book: Path, extra: Sequence[Path]) -> list[Path]:
    """Folders the sandbox hides: the book, the grader's own project, the grader's home folder, the
    project this environment belongs to (if the environment sits inside one) and ``extra`` (other
    copies of the book). The environment and its interpreter are put back, read-only."""
    prefix = Path(sys.prefix).resolve()
    found = [book.resolve(), Path(__file__).resolve().parents[2], Path.home().resolve(), *(Path(p).resolve() for p in extra)]
    if any((prefix.parent / name).exists() for name in ("chapters", "src", "pyproject.toml")):
        found.append(prefix.parent)
    return [p for p in dict.fromkeys(found) if p != Path("/") and p.is_dir()]


def grade_notebook(path: str | Path, cell_timeout: float = 300, notebook_timeout: float = 1800,
                   book: Path | None = None, hide: Sequence[Path] = (), seed: int | None = None) -> NotebookReport:
    """Grade one submission (see the module's docstring); ``seed`` fixes the unseen inputs (default: fresh)."""
    path = Path(path)
    start = time.monotonic()
    try:
        sub = _read(path)
    except Exception as err:  # noqa: BLE001 - an unreadable file is a grade, not a crash
        return NotebookReport(str(path), None, [], 0.0, [f"cannot read the notebook: {type(err).__name__}: {err}"])
    if book is None:
        return NotebookReport(str(path), None, [], 0.0, ["no book to grade against: pass --book PATH"])
    book = Path(book).resolve()
    why = sandbox.available()
    if why:
        return NotebookReport(str(path), None, [], 0.0, [f"not graded: {why}"])
    chapter, problems = _match_chapter(sub, book)
    if chapter is None:
        return NotebookReport(str(path), None, [], time.monotonic() - start, problems)
    source = chapter.relative_to(book).as_posix()
    seed = secrets.randbelow(2**31) if seed is None else int(seed)
    with tempfile.TemporaryDirectory(prefix="coursework-") as tmp:
        job = Path(tmp)
        work, lib = job / "work", job / "lib"
        work.mkdir()
        book_src = book / "src" if (book / "src" / "parallel_mcmc").is_dir() else Path(__file__).resolve().parents[1]
        shutil.copytree(book_src / "parallel_mcmc", lib / "parallel_mcmc",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        nb, checks, unchecked, devices, notes = _assemble(sub, chapter, book, work, seed)
        edition = copy.deepcopy(nb)
        edition_file = work / Path(source).with_suffix(".ipynb").name
        nbformat.write(make_student_notebook(chapter, book).notebook, edition_file)
        os.chmod(job, 0o755)
        if os.geteuid() == 0:
            shutil.chown(work, sandbox.USER, sandbox.GROUP)
        os.chmod(work, 0o700)
        results = asyncio.run(_execute(nb, cell_timeout, notebook_timeout, job, _kernel_env(job), problems,
                                       hide=_hidden(book, hide)))
        labels, roles, _ = _structure(edition)
        items = []
        owners: list[str] = []
        for label in labels:
            for call, observed, call_seed in checks.get(label, []):
                items.append({"label": label, "module": call.module, "function": call.function, "seed": call_seed,
                              "literals": call.literals, "observation": _read_observation(observed)})
                owners.append(label)
        verdicts = _run_judge(items, devices, book_src, timeout=max(120.0, notebook_timeout / 2)) if items else []
    by_label: dict[str, list[dict]] = {}
    for owner, verdict in zip(owners, verdicts):
        by_label.setdefault(owner, []).append(verdict)
    errors = [(i, results[i]) for i in sorted(results)
              if results[i].status == "error" and roles.get(i, ("", ""))[1] != "check"
              and "raises-exception" not in _tags(nb.cells[i])]
    exercises = []
    for label in labels:
        cells = [(i, role) for i, (lab, role) in sorted(roles.items()) if lab == label]
        if label in unchecked:
            result = ExerciseResult(label, "ungraded", "this exercise has no check the grader can run: grade it by hand")
        else:
            result = _judge(label, cells, results, by_label.get(label, []), errors, cell_timeout)
        result.notes = notes.get(label, [])
        exercises.append(result)
    return NotebookReport(str(path), source, exercises, time.monotonic() - start, problems)


def grade(paths: Sequence[str | Path], cell_timeout: float = 300, notebook_timeout: float = 1800,
          book: Path | None = None, hide: Sequence[Path] = ()) -> list[NotebookReport]:
    """Grade several submissions, one fresh sandbox each."""
    return [grade_notebook(p, cell_timeout, notebook_timeout, book, hide) for p in paths]


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
    parser = argparse.ArgumentParser(prog="python -m booktools.coursework.grade",
                                     description="Run student notebooks in fresh kernels and grade their exercises.")
    parser.add_argument("submissions", nargs="+", type=Path, help="the submitted .ipynb (or .md) notebooks")
    parser.add_argument("--json", type=Path, default=None, help="also write the grades to this JSON file")
    parser.add_argument("--cell-timeout", type=float, default=300, help="seconds one cell may run (default 300)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds one notebook may run (default 1800)")
    parser.add_argument("--book", type=Path, default=None,
                        help="the book's root folder, whose chapters hold the original checks (default: found from the cwd)")
    parser.add_argument("--hide", type=Path, action="append", default=[],
                        help="another folder the submissions must not see (a copy of the book, say); repeat as needed")
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
    reports = grade(args.submissions, args.cell_timeout, args.timeout, book, args.hide)
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
