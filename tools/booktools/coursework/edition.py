"""One chapter's student edition, made in memory: its solutions out, stubs and checks in.

:func:`make_student_notebook` reads a MyST chapter and returns a :class:`StudentEdition`: the
student notebook (see :mod:`booktools.coursework.student` for what it holds) and what was taken
out of it, for the leak check (:mod:`booktools.coursework.leaks`) and the grader. Solutions are
found by :class:`~booktools.coursework.markdown.MarkdownSplitter` and replaced by the stubs of
:func:`~booktools.coursework.stubs.make_stub`; the code cells after a solution that call a check
become the exercise's check cells. :func:`with_answers` puts answers back in place of the stubs.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from ..notebooks import is_myst_notebook
from ..notebooks import read as read_chapter
from .markdown import CHECK_CALL, META, REMOVE_TAG, MarkdownSplitter, WrittenPart, normalise, tags
from .stubs import make_stub

__all__ = [
    "Exercise",
    "StudentEdition",
    "POINTS_KEY",
    "find_book_root",
    "exercise_chapters",
    "make_student_notebook",
    "with_answers",
]

POINTS_KEY = "exercise_points"  # front-matter key: {label: points} (sphinx-exercise refuses unknown options)


@dataclass
class Exercise:
    """One exercise of a chapter as the student edition sees it."""

    label: str
    stubs: list[str] = field(default_factory=list)  # stub cell sources
    checks: list[str] = field(default_factory=list)  # check cell sources
    solution_code: list[str] = field(default_factory=list)  # the solution's code cells
    solution_text: list[str] = field(default_factory=list)  # the solution's prose lines
    points: float = 1.0  # what it is worth in the grade (the chapter's ``exercise_points``, default 1)
    parts: list[WrittenPart] = field(default_factory=list)  # questions answered in words, graded by hand

    def as_metadata(self) -> dict:
        """The exercise as the student notebook's metadata records it: label, checks, points, parts."""
        meta = {"label": self.label, "checks": list(self.checks), "points": self.points}
        if self.parts:
            meta["parts"] = [p.as_metadata() for p in self.parts]
        return meta


@dataclass
class StudentEdition:
    """A chapter's student notebook and what was taken out of it."""

    source: Path  # the chapter, relative to the book root
    notebook: nbformat.NotebookNode
    exercises: list[Exercise]
    kept_text: set[str]  # normalised lines of the chapter outside every solution
    interface_lines: set[str]  # normalised lines the stubs give on purpose (def headers)


# --------------------------------------------------------------------------- discovery


def find_book_root(start: Path | None = None) -> Path:
    """The book's root folder: the one holding ``chapters/`` and ``_toc.yml`` (or ``_config.yml``).

    Parameters
    ----------
    start
        Where to start looking, then in its parents (default: the current folder).

    Returns
    -------
    Path
        The book's root, resolved.

    Raises
    ------
    FileNotFoundError
        If no such folder is at or above ``start``.
    """
    here = (start or Path.cwd()).resolve()
    for folder in [here, *here.parents]:
        if (folder / "chapters").is_dir() and ((folder / "_toc.yml").exists() or (folder / "_config.yml").exists()):
            return folder
    raise FileNotFoundError(
        f"No book found at or above {here}: run from the book's folder (the one with chapters/ and _toc.yml) "
        "or pass --book PATH."
    )


def exercise_chapters(root: Path) -> list[Path]:
    """Every MyST notebook under ``root/chapters`` with at least one ``exercise-start``.

    Parameters
    ----------
    root
        The book's root folder. Files under a folder whose name starts with ``.`` or ``_`` are skipped.

    Returns
    -------
    list of Path
        The chapters, sorted.

    Raises
    ------
    FileNotFoundError
        If ``root`` has no ``chapters/`` folder.
    """
    chapters = root / "chapters"
    if not chapters.is_dir():
        raise FileNotFoundError(f"{root} has no chapters/ folder; pass the book's root folder.")
    found = []
    for path in sorted(chapters.rglob("*.md")):
        if any(part.startswith((".", "_")) for part in path.relative_to(root).parts):
            continue
        if is_myst_notebook(path) and "{exercise-start}" in path.read_text(encoding="utf-8"):
            found.append(path)
    return found


# --------------------------------------------------------------------------- the student notebook


def _exercise_points(nb: nbformat.NotebookNode, chapter: Path, exercises: dict[str, Exercise]) -> dict[str, float]:
    """The points of the chapter's exercises named in its front matter (``exercise_points: {label: N}``);
    a label that is not an exercise of the chapter, or points that are not a positive number, are an error."""
    table = nb.metadata.get(POINTS_KEY)
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise ValueError(f"{chapter}: {POINTS_KEY} in the front matter must map exercise labels to points")
    out = {}
    for label, points in table.items():
        if label not in exercises:
            raise ValueError(f"{chapter}: {POINTS_KEY} names {label!r}, which is not an exercise of this chapter "
                             f"(its exercises: {', '.join(exercises) or 'none'})")
        if isinstance(points, bool) or not isinstance(points, (int, float)) or not points > 0 or points != points:
            raise ValueError(f"{chapter}: {POINTS_KEY}: {label} is worth {points!r}; give a positive number")
        out[label] = float(points)
    return out


def _code_around(cells: list[nbformat.NotebookNode]) -> tuple[list[str], list[str]]:
    """The code after each cell (for deciding which names a solution must define) and the code before it
    (cells separated by ``"\\n\\x00\\n"``: variables it binds are not stubbed over)."""
    code_after = [""] * (len(cells) + 1)
    for k in range(len(cells) - 1, -1, -1):
        c = cells[k]
        code_after[k] = (c.source + "\n" if c.cell_type == "code" else "") + code_after[k + 1]
    code_before = [""] * (len(cells) + 1)
    for k, c in enumerate(cells):
        code_before[k + 1] = code_before[k] + (c.source + "\n\x00\n" if c.cell_type == "code" else "")
    return code_after, code_before


class _EditionBuilder:
    """The student notebook's cells, made one chapter cell after another (see :func:`make_student_notebook`)."""

    def __init__(self, chapter: Path, cells: list[nbformat.NotebookNode]) -> None:
        self.chapter = chapter
        self.splitter = MarkdownSplitter()
        self.out_cells: list[nbformat.NotebookNode] = []
        self.exercises: dict[str, Exercise] = {}
        self.kept_text: set[str] = set()  # normalised lines outside every solution
        self.interface: set[str] = set()  # def headers the stubs give
        self.code_after, self.code_before = _code_around(cells)
        self.awaiting_check: str | None = None  # label whose solution just ended
        self.check_candidates: list[nbformat.NotebookNode] = []
        self.prose_seen = False  # prose came between solution-end and the next code cell
        self.solution_had_code = False
        self.statements: dict[str, nbformat.NotebookNode] = {}  # label -> the cell of its statement's end
        self.answered: set[str] = set()  # exercises whose answer cells (questions graded by hand) are placed

    def exercise(self, label: str) -> Exercise:
        return self.exercises.setdefault(label, Exercise(label))

    def add_stub(self, stub: str, label: str) -> None:
        self.out_cells.append(nbformat.v4.new_code_cell(stub, metadata={META: {"exercise": label, "role": "stub"}}))
        self.exercise(label).stubs.append(stub)

    def place_answers(self, label: str) -> None:
        """Put the answer cells of the exercise's questions graded by hand after its last stub or check."""
        ex = self.exercises.get(label)
        if ex is None or not ex.parts or label in self.answered:
            return
        self.answered.add(label)
        out = self.out_cells
        where = [k for k, c in enumerate(out) if (c.metadata.get(META) or {}).get("exercise") == label]
        if not where and self.statements.get(label) is not None:
            where = [k for k, c in enumerate(out) if c is self.statements[label]]
        at = where[-1] + 1 if where else len(out)
        out[at:at] = [part.answer_cell() for part in ex.parts]

    def settle_checks(self) -> None:
        """Mark the check cells of the exercise whose solution ended last."""
        label, candidates = self.awaiting_check, self.check_candidates
        if label is not None and candidates:
            # Cells that call a check; failing that, the code cell right after solution-end.
            first_adjacent = candidates[:1] if candidates[0].metadata.get("_adjacent") else []
            for c in [c for c in candidates if CHECK_CALL.search(c.source)] or first_adjacent:
                c.metadata[META] = {"exercise": label, "role": "check"}
                self.exercise(label).checks.append(c.source)
        for c in candidates:
            c.metadata.pop("_adjacent", None)
        if label is not None:
            self.place_answers(label)
        self.awaiting_check, self.check_candidates, self.prose_seen = None, [], False

    def add(self, index: int, cell: nbformat.NotebookNode) -> None:
        """Take in the chapter's cell number ``index``."""
        if REMOVE_TAG in tags(cell):
            return
        if cell.cell_type == "markdown":
            self.add_markdown(cell)
        elif cell.cell_type != "code":
            self.out_cells.append(copy.deepcopy(cell))
        elif self.splitter.scan.state == "solution":
            self.add_solution_code(index, cell)
        else:
            self.add_code(cell)

    def follow(self, events: list[tuple[str, str]]) -> None:
        """Act on the exercise and solution boundaries a Markdown cell held."""
        for kind, label in events:
            if kind == "exercise":
                self.settle_checks()
                self.exercise(label)
            elif kind == "solution-start":
                self.settle_checks()
                self.solution_had_code = False
            elif kind == "solution-end":
                if not self.solution_had_code:
                    self.add_stub(make_stub("", label, "")[0], label)
                self.awaiting_check = label
                self.check_candidates, self.prose_seen = [], False

    def add_markdown(self, cell: nbformat.NotebookNode) -> None:
        """A Markdown cell: its lines outside solutions stay, the others go to their exercise."""
        splitter = self.splitter
        events_before, parts_before = len(splitter.events), len(splitter.parts)
        kept, removed = splitter.feed(cell.source)
        new_events, new_parts = splitter.events[events_before:], splitter.parts[parts_before:]
        self.kept_text.update(normalise(line) for line in kept)
        if removed:
            self.exercise(splitter.scan.label or "?").solution_text.extend(removed)
        self.follow(new_events)
        # A heading or a new exercise ends the search for check cells.
        text = "\n".join(kept)
        if self.awaiting_check is not None and self.check_candidates and re.search(r"^#{1,6}\s", text, re.MULTILINE):
            self.settle_checks()
        if text.strip() and self.awaiting_check is not None and not new_events:
            self.prose_seen = True  # prose in between: only cells that call a check count
        if text.strip():
            new = copy.deepcopy(cell)
            new.source = text.strip("\n")
            self.out_cells.append(new)
            for part in new_parts:
                self.statements[part.label] = new
        for part in new_parts:
            ex = self.exercise(part.label)
            if any(p.name == part.name for p in ex.parts):
                raise ValueError(f"{self.chapter}: {part.label} has two questions graded by hand named {part.name!r}; "
                                 "give each its own name")
            ex.parts.append(part)

    def add_solution_code(self, index: int, cell: nbformat.NotebookNode) -> None:
        """A code cell of a solution: a stub takes its place."""
        label = self.splitter.scan.label or "?"
        stub, headers = make_stub(cell.source, label, self.code_after[index + 1], self.code_before[index])
        self.interface.update(headers)
        self.exercise(label).solution_code.append(cell.source)
        self.add_stub(stub, label)
        self.solution_had_code = True

    def add_code(self, cell: nbformat.NotebookNode) -> None:
        """A code cell outside solutions: copied without outputs, a check candidate after a solution."""
        new = copy.deepcopy(cell)
        new.outputs, new.execution_count = [], None
        new.metadata.pop(META, None)
        self.kept_text.update(normalise(line) for line in cell.source.split("\n"))
        if self.awaiting_check is not None:
            if not self.check_candidates and not self.prose_seen:
                new.metadata["_adjacent"] = True
            self.check_candidates.append(new)
        self.out_cells.append(new)

    def finish(self) -> None:
        """Settle the last exercise; raise :class:`ValueError` on an unclosed solution or a malformed marker."""
        self.settle_checks()
        if self.splitter.scan.state == "solution":
            raise ValueError(f"{self.chapter}: a solution-start has no solution-end; close it with ```{{solution-end}}```.")
        if self.splitter.problems:
            raise ValueError(f"{self.chapter}: " + "; ".join(self.splitter.problems))
        for label in list(self.exercises):
            self.place_answers(label)  # an exercise without a solution: after its statement


def _student_notebook(nb: nbformat.NotebookNode, cells: list[nbformat.NotebookNode], source: str,
                      exercises: list[Exercise]) -> nbformat.NotebookNode:
    """The student notebook: ``nb``'s metadata with the exercises', the given cells with unique ids, validated."""
    student = nbformat.v4.new_notebook()
    student.metadata = copy.deepcopy(nb.metadata)
    student.metadata[META] = {"source": source, "exercises": [e.as_metadata() for e in exercises]}
    student.cells = cells
    student = nbformat.from_dict(json.loads(json.dumps(student)))
    ids: set[str] = set()
    for number, c in enumerate(student.cells):
        if not c.get("id") or c["id"] in ids:
            c["id"] = f"cell-{number}"
        ids.add(c["id"])
    nbformat.validate(student)
    return student


def make_student_notebook(chapter: Path, root: Path | None = None) -> StudentEdition:
    """Build the student edition of one chapter in memory.

    Parameters
    ----------
    chapter
        The chapter, a MyST notebook.
    root
        The book's root folder, which the edition's ``source`` is relative to (default: the chapter's folder).

    Returns
    -------
    StudentEdition
        The student notebook, its exercises, and the chapter's lines outside solutions.

    Raises
    ------
    ValueError
        If a solution is not closed, a graded-by-hand marker is malformed or outside a statement, two
        questions of an exercise share a name, or the front matter's ``exercise_points`` is wrong.
    """
    chapter = Path(chapter)
    root = Path(root) if root is not None else chapter.parent
    nb = read_chapter(chapter)
    builder = _EditionBuilder(chapter, nb.cells)
    for index, cell in enumerate(nb.cells):
        builder.add(index, cell)
    builder.finish()
    try:
        rel = chapter.resolve().relative_to(root.resolve())
    except ValueError:
        rel = Path(chapter.name)
    exercises = builder.exercises
    for label, points in _exercise_points(nb, chapter, exercises).items():
        exercises[label].points = points
    ordered = list(exercises.values())
    student = _student_notebook(nb, builder.out_cells, rel.as_posix(), ordered)
    return StudentEdition(rel, student, ordered, builder.kept_text, builder.interface)


def with_answers(nb: nbformat.NotebookNode, answers: dict[str, list[str]]) -> nbformat.NotebookNode:
    """A copy of a student notebook with the stubs of the given exercises replaced by answers, in order.

    Parameters
    ----------
    nb
        A student notebook.
    answers
        An exercise's label -> the sources of its answer cells (for the book's own solutions:
        ``Exercise.solution_code``). Exercises missing from it, and stubs beyond the answers given,
        keep their stubs.

    Returns
    -------
    nbformat.NotebookNode
        The answered copy; ``nb`` is left as it was.
    """
    nb = copy.deepcopy(nb)
    seen: dict[str, int] = {}
    for cell in nb.cells:
        meta = cell.metadata.get(META, {})
        if meta.get("role") == "stub" and meta.get("exercise") in answers:
            k = seen.get(meta["exercise"], 0)
            if k < len(answers[meta["exercise"]]):
                cell.source = answers[meta["exercise"]][k]
            seen[meta["exercise"]] = k + 1
    return nb
