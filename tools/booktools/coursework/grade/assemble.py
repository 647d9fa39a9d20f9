"""Stage 2, assembling the notebook to run: the book's student edition with the learner's answers in it.

Every cell comes from the book except the learner's answer cells, which take the
place of the stubs. Each check cell is parsed (:func:`_parse_checks`) and
replaced by an observation cell that runs the harness
(:mod:`booktools.coursework.harness`) on the check's calls, with unseen inputs
drawn from :mod:`booktools.coursework.references`. :func:`slice_submission` then
empties the code cells that neither the checks nor the learner's answers need.
"""

from __future__ import annotations

import ast
import copy
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from .. import harness, references
from ..harness import encode
from ..edition import make_student_notebook
from ..cell_names import cell_names
from ..markdown import META
from ..slicing import needed
from .read import edited_checks, submitted_answers


@dataclass
class CheckCall:
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


def _parse_checks(label: str, source: str, aliases: dict[str, str]) -> tuple[list[CheckCall], list[str]]:
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
            calls.append(CheckCall(label, aliases[func.value.id], func.attr, [ast.unparse(a) for a in call.args],
                                    {k.arg: ast.unparse(k.value) for k in call.keywords}, literals))
        else:
            other.append(ast.get_source_segment(source, stmt) or ast.unparse(stmt))
    return calls, other


_HARNESS = Path(harness.__file__)


def _observation_cell(calls: list[tuple[CheckCall, str, list]], other: list[str]) -> str:
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


def assemble_submission(sub: nbformat.NotebookNode, chapter: Path, book: Path, work: Path,
                        seed: int) -> tuple[nbformat.NotebookNode, dict[str, list[tuple[CheckCall, Path, int]]],
                                            list[str], int | None, dict[str, list[str]]]:
    """The notebook to run: the book's student edition with the learner's answers in place of the stubs.

    Parameters
    ----------
    sub
        The submission (data only: nothing of it has run).
    chapter
        The book's chapter it answers.
    book
        The book's root folder.
    work
        The job's working folder, where the observations are written.
    seed
        The seed the unseen inputs are drawn from.

    Returns
    -------
    nb : nbformat.NotebookNode
        The notebook to run.
    checks : dict of str to list of (CheckCall, Path, int)
        Per exercise, its check calls, with where each observation is written and its seed.
    unchecked : list of str
        The labels of exercises without a check the grader can run.
    devices : int or None
        The chapter's device count.
    notes : dict of str to list of str
        Notes on check cells the submission changed.
    """
    edition = make_student_notebook(chapter, book)
    given = {c.source for c in edition.notebook.cells if c.cell_type == "code"
             and (c.metadata.get(META) or {}).get("role") != "stub"}
    answers = submitted_answers(sub, given)
    cells: list[nbformat.NotebookNode] = []
    checks: dict[str, list[tuple[CheckCall, Path, int]]] = {}
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
            # the book's check cell travels in the metadata (never run): the slice is found from what it reads
            cells.append(nbformat.v4.new_code_cell(_observation_cell(entries, other),
                                                   metadata={META: {"exercise": label, "role": "check", "book": cell.source}}))
            continue
        new = copy.deepcopy(cell)
        if new.cell_type == "code":
            new.metadata[META] = {"role": "given"}
        cells.append(new)
    nb = nbformat.v4.new_notebook(metadata=copy.deepcopy(edition.notebook.metadata))
    nb.cells = cells
    for n, cell in enumerate(nb.cells):
        cell["id"] = f"graded-{n}"
    notes = edited_checks(sub, {e.label: list(e.checks) for e in edition.exercises})
    return nb, checks, [lab for lab in unchecked if lab not in checks], _devices(edition.notebook), notes


def slice_submission(nb: nbformat.NotebookNode) -> tuple[list[int], str | None]:
    """Empty, in place, the code cells of the assembled notebook ``nb`` that no exercise needs.

    The roots are the cells of the exercises: the learner's answer cells (what they read is kept, whether the
    book's solution reads it or not) and the check cells (read as the book wrote them, not as the harness's
    observation cells); :func:`booktools.coursework.slicing.needed` finds the cells they need, the set-up cells
    and the cells tagged ``grade-keep`` among them (``grade-drop`` drops one). A dropped cell keeps its place
    with an empty source, which the kernel skips: every later stage finds the cells at the same indices.
    The analysis reads source text only (``ast``), in the grader's process; nothing of the submission runs.

    Parameters
    ----------
    nb
        The notebook to run (:func:`assemble_submission`); changed in place unless the whole chapter must run.

    Returns
    -------
    dropped : list of int
        The indices of the emptied cells (none: the whole chapter runs).
    whole : str or None
        Why the whole chapter runs (an answer cell that is not Python the analysis can read, or the analysis
        failed), None if the slice was made.
    """
    view, roots = [], []
    try:
        for cell in nb.cells:
            meta = cell.metadata.get(META) or {}
            is_root = cell.cell_type == "code" and meta.get("exercise") is not None
            if is_root and meta.get("role") == "answer" and not cell_names(cell.source)[0].readable:
                return [], f"an answer cell of {meta['exercise']} is not Python the grader can read"
            if is_root and meta.get("role") == "check" and isinstance(meta.get("book"), str):
                cell = nbformat.v4.new_code_cell(meta["book"], metadata=cell.metadata)
            view.append(cell)
            roots.append(is_root)
        keep = needed(view, roots)
    except (RecursionError, MemoryError, ValueError, SyntaxError) as err:  # source the analysis cannot take in
        return [], f"the cells could not be analysed ({type(err).__name__})"
    dropped = [i for i, (cell, why) in enumerate(zip(nb.cells, keep))
               if cell.cell_type == "code" and why is None and cell.source.strip()]
    for i in dropped:
        nb.cells[i].source = ""
    return dropped, None
