"""Stage 1, reading a submission: the notebook as data, the chapter it answers, its cells per exercise.

Nothing of the submission runs here: its file is parsed (JSON or MyST text), its
cells are sorted into exercises by the book's markers, and its metadata is only
a hint as to which chapter it answers.
"""

from __future__ import annotations

from pathlib import Path

import jupytext
import nbformat

from ..edition import exercise_chapters, make_student_notebook
from ..markdown import ANSWER_PLACEHOLDER, CHECK_CALL, META, MarkdownSplitter, WrittenPart

SUBMISSION_LIMIT_BYTES = 50 * 2**20  # a larger file is not read
WRITTEN_LIMIT = 20_000  # characters of a written answer kept for the report


def read_submission(path: Path) -> nbformat.NotebookNode:
    """A submission as data, never run.

    Parameters
    ----------
    path
        The submitted notebook: an ``.ipynb``, or a MyST ``.md``.

    Returns
    -------
    nbformat.NotebookNode
        The notebook.

    Raises
    ------
    ValueError
        If the file is larger than :data:`SUBMISSION_LIMIT_BYTES`, or is not a notebook that nbformat reads.
    """
    if path.stat().st_size > SUBMISSION_LIMIT_BYTES:
        raise ValueError(f"the file is larger than {SUBMISSION_LIMIT_BYTES // 2**20} MiB")
    if path.suffix == ".md":
        return jupytext.read(path, fmt="md:myst")
    return nbformat.read(path, as_version=4)


def structure(nb: nbformat.NotebookNode) -> tuple[list[str], dict[int, tuple[str, str]], dict[str, int]]:
    """The cells of a notebook sorted into exercises.

    Parameters
    ----------
    nb
        A student notebook, answered or not.

    Returns
    -------
    labels : list of str
        The exercise labels, in order.
    roles : dict of int to (str, str)
        Cell index -> (label, role). Roles: "stub" and "check" from the metadata, "answer" for
        the learner's own cells between an exercise's prompt and its check.
    last : dict of str to int
        Label -> index of the exercise's last cell.
    """
    splitter = MarkdownSplitter()
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
        elif current is not None and CHECK_CALL.search(cell.source) and (
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
    labels, _, _ = structure(nb)
    return labels


def match_chapter(nb: nbformat.NotebookNode, book: Path) -> tuple[Path | None, list[str]]:
    """The book's chapter this submission answers, and notes on how it was found.

    The chapter named in the notebook's metadata counts only if every exercise of
    that chapter is in the submission; otherwise the chapter whose exercises the
    submission contains (most of them, then the fewest others) is used.

    Parameters
    ----------
    nb
        The submission.
    book
        The book's root folder.

    Returns
    -------
    chapter : Path or None
        The chapter, or None if no chapter of the book has an exercise of the submission.
    notes : list of str
        How it was found, for the report.
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


def edited_checks(nb: nbformat.NotebookNode, checks: dict[str, list[str]]) -> dict[str, list[str]]:
    """Notes for the exercises whose check cells the submission changed or dropped (the book's run anyway).

    Parameters
    ----------
    nb
        The submission.
    checks
        Label -> the sources of the exercise's check cells in the book.

    Returns
    -------
    dict of str to list of str
        Label -> notes, for the exercises whose check cells differ from the book's.
    """
    _, roles, _ = structure(nb)
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


def written_answers(nb: nbformat.NotebookNode, parts: list[WrittenPart]) -> dict[tuple[str, str], str]:
    """The learner's answers to the questions graded by hand: ``(label, name) -> text``, from the Markdown
    answer cells of the student edition (marked in their metadata), without the edition's own header and
    placeholder (a cell whose metadata was lost is known by its first line, the question's header); a question
    whose cell is missing or left as it was handed out is left out.

    Parameters
    ----------
    nb
        The submission.
    parts
        The chapter's questions graded by hand.

    Returns
    -------
    dict of (str, str) to str
        ``(label, name)`` -> the answer's text, cut at :data:`WRITTEN_LIMIT` characters.
    """
    wanted = {(p.label, p.name): p for p in parts}
    headers = {p.answer_header(): key for key, p in wanted.items()}
    out: dict[tuple[str, str], str] = {}
    for cell in nb.cells:
        if cell.cell_type != "markdown" or not isinstance(cell.source, str):
            continue
        meta = cell.get("metadata", {}).get(META)
        if isinstance(meta, dict) and meta.get("role") == "written":
            key = (meta.get("exercise"), meta.get("part"))
        else:  # an editor that dropped the cell's metadata: the cell still starts with the question's header
            key = headers.get(cell.source.split("\n", 1)[0].strip())
        if key not in wanted:
            continue
        lines = cell.source.split("\n")
        if lines and lines[0].strip() == wanted[key].answer_header():
            lines = lines[1:]
        text = "\n".join(line for line in lines if line.strip() != ANSWER_PLACEHOLDER).strip()
        if text:
            out[key] = out[key] + "\n\n" + text if key in out else text
    return {key: text[:WRITTEN_LIMIT] + (" [cut]" if len(text) > WRITTEN_LIMIT else "") for key, text in out.items()}


def submitted_answers(nb: nbformat.NotebookNode, given: set[str]) -> dict[str, list[str]]:
    """The learner's answer cells per exercise: code cells between its statement and its check,
    except those that are the chapter's own cells unchanged.

    Parameters
    ----------
    nb
        The submission.
    given
        The sources of the chapter's own code cells.

    Returns
    -------
    dict of str to list of str
        Label -> the sources of its answer cells, in order.
    """
    _, roles, _ = structure(nb)
    out: dict[str, list[str]] = {}
    for i, (label, role) in sorted(roles.items()):
        source = nb.cells[i].source
        if role in ("stub", "answer") and source.strip() and source not in given:
            out.setdefault(label, []).append(source)
    return out
