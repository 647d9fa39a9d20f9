"""A chapter cut down to the cells its exercises need: for grading the book's own solutions quickly.

The whole-book grading test runs every chapter with exercises in the grader's sandbox, so that each
exercise's stub is seen to fail and the book's solution to pass. The chapters' other cells (sampling
runs, timing sweeps, plots) have already run in the notebook tests; running them again costs minutes
and tests nothing the exercises need. :func:`slice_chapter` keeps, from a chapter (read as a notebook):

- every markdown cell (they run nothing and hold the exercises' directives);
- every cell of an exercise: its solution (or stub) cells and its check cells, as the student edition
  (:func:`booktools.coursework.edition.make_student_notebook`) finds them;
- the *set-up* cells: the first code cell (device count, imports) and any cell that changes the
  process's global state at top level: the device count (``use_cpu_devices``), JAX's configuration
  (``jax.config.update``, ``jax.set_mesh``), the environment (``os.environ``), warning filters, seeds;
- transitively, every cell that binds a name a kept cell after it reads: a definition, an import,
  an assignment, or an object changed in place (``x[...] = ...``, ``x.attr = ...``, a statement
  ``x.method(...)``, ``%%writefile {x}``, or a call of a function of the chapter that does one of these
  to a global; names bound by imports are taken as modules, which such calls do not change). A kept
  cell reads the names its statements read before assigning them, in its function bodies too (less
  their own variables); a statement that reads a function of the chapter (calls it, or passes it on)
  also reads the globals that function reads, and those of the functions it reads. A cell that binds
  a name unconditionally at top level hides the earlier bindings of that name, unless it reads it.

What the analysis cannot see: a name reached through ``globals()`` or a string, a file written by one
cell and read by another under a name no cell shares, or a global rebound between the cell that hands
a function on (``f = jax.jit(g)``) and the cell that calls it under its new name.

It drops the rest, keeping the order. Two cell tags override the analysis where it cannot know:
``grade-keep`` keeps a cell, ``grade-drop`` drops one. Use them sparingly, with a
comment in the cell saying why. A slice that misses a cell fails loudly: the solution that needs it
raises (a ``NameError`` or a ``KeyError``), so its exercise does not pass; :func:`describe` says which
cells were dropped, for the message that reports such a failure.

The grader slices a submission too (:func:`booktools.coursework.grade.assemble.slice_submission`), with
the learner's own answer cells as roots: a learner's answer may read a name, or rely on a cell's side
effect, that the book's solution does not, so what the answer reads is kept, and an answered exercise
that raises on the slice (what the analysis cannot see) is graded again on the whole chapter.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import nbformat
from booktools.coursework.cell_names import CellNames, cell_names

from .edition import StudentEdition
from .markdown import MarkdownSplitter, META, REMOVE_TAG, tags

__all__ = ["KEEP_TAG", "DROP_TAG", "needed", "slice_chapter", "Slice", "describe"]

KEEP_TAG = "grade-keep"
DROP_TAG = "grade-drop"


def needed(cells: list[nbformat.NotebookNode], roots: list[bool],
           answers: dict[int, list[str]] | None = None) -> list[str | None]:
    """Which of ``cells`` (a notebook's cells, in order) a run of the ``roots`` needs: for each cell, why it
    is kept (``"root"``, ``"tagged grade-keep"``, ``"set-up"``, ``"binds x, y"``, ``"markdown"``) or None.

    A cell that is a root, a set-up cell or tagged ``grade-keep`` is kept; so is every code cell that binds
    a name a kept cell after it reads (see the module's docstring); a cell tagged ``grade-drop`` is not,
    unless it is a root. ``answers`` maps a cell's index to other sources that will run in its place (the
    solutions of a stub): the cell then binds and reads what they do too.
    """
    answers = answers or {}
    info: dict[int, CellNames] = {}
    functions: dict[str, tuple[set[str], set[str]]] = {}
    for i, cell in enumerate(cells):
        if cell.cell_type != "code":
            continue
        names, fn = cell_names(cell.source)
        for extra in answers.get(i, []):
            more, more_fn = cell_names(extra)
            names.statements += more.statements
            names.bound |= more.bound
            names.changed |= more.changed
            names.imported |= more.imported
            names.setup |= more.setup
            fn = {**fn, **{k: (fn.get(k, (set(), set()))[0] | v[0], fn.get(k, (set(), set()))[1] | v[1])
                           for k, v in more_fn.items()}}
        info[i] = names
        for k, (changed, reads) in fn.items():
            functions.setdefault(k, (set(), set()))
            functions[k][0].update(changed)
            functions[k][1].update(reads)
    # what calling a function may change: what it changes and what the functions it reads change
    changes = {k: set(v[0]) for k, v in functions.items()}
    grew = True
    while grew:
        grew = False
        for name, (_, reads) in functions.items():
            for other in reads & changes.keys():
                if not changes[other] <= changes[name]:
                    changes[name] |= changes[other]
                    grew = True
    imported = set().union(*(names.imported for names in info.values()))
    first_code = next((i for i, c in enumerate(cells) if c.cell_type == "code"), None)
    # what a function reads when it is called: its own globals and those of the functions it reads
    called = {k: set(v[1]) for k, v in functions.items()}
    grew = True
    while grew:
        grew = False
        for name, reads in list(called.items()):
            for other in reads & called.keys():
                if not called[other] <= reads:
                    reads |= called[other]
                    grew = True
    keep: list[str | None] = [None] * len(cells)
    wanted: set[str] = set()
    for i in range(len(cells) - 1, -1, -1):
        cell = cells[i]
        if cell.cell_type != "code":
            keep[i] = cell.cell_type
            continue
        names = info[i]
        cell_tags = tags(cell)
        changed = names.changed | {g for f in names.reads & changes.keys() for g in changes[f]}
        binds = names.bound | (changed - imported)
        if roots[i]:
            keep[i] = "root"
        elif KEEP_TAG in cell_tags:
            keep[i] = f"tagged {KEEP_TAG}"
        elif DROP_TAG in cell_tags:
            continue
        elif i == first_code or names.setup:
            keep[i] = "set-up"
        elif binds & wanted:
            keep[i] = "binds " + ", ".join(sorted(binds & wanted))
        if keep[i] is not None:
            for reads, hides in reversed(names.statements):
                # a statement that reads a function may call it: the function's globals are read there too
                wanted = (wanted - hides) | reads | {g for f in reads & called.keys() for g in called[f]}
    return keep


@dataclass
class Slice:
    """A chapter cut down by :func:`slice_chapter`."""

    notebook: nbformat.NotebookNode  # the chapter with the dropped code cells taken out
    kept: list[tuple[str, str]]  # (source, why it is kept) of the code cells kept
    dropped: list[str]  # sources of the code cells dropped


def _code_outside_solutions(nb: nbformat.NotebookNode) -> list[int]:
    """Indices of the chapter's code cells that the student edition copies (outside solutions, not removed)."""
    splitter = MarkdownSplitter()
    out = []
    for i, cell in enumerate(nb.cells):
        if REMOVE_TAG in tags(cell):
            continue
        if cell.cell_type == "markdown":
            splitter.feed(cell.source)
        elif cell.cell_type == "code" and splitter.scan.state != "solution":
            out.append(i)
    return out


def slice_chapter(chapter: nbformat.NotebookNode, edition: StudentEdition) -> Slice:
    """The chapter (a MyST notebook as read) with only the code cells its exercises need.

    ``edition`` is the chapter's student edition: its stub and check cells are the roots, with the
    book's solutions in place of the stubs; the chapter's solution cells are always kept.
    """
    ed_cells = edition.notebook.cells
    solutions = {e.label: list(e.solution_code) for e in edition.exercises}
    roots, answers = [], {}
    for i, cell in enumerate(ed_cells):
        meta = cell.metadata.get(META) or {}
        roots.append(meta.get("role") in ("stub", "check"))
        if meta.get("role") == "stub":
            answers[i] = solutions.get(meta.get("exercise"), [])
    keep = needed(ed_cells, roots, answers)
    given = [i for i, c in enumerate(ed_cells) if c.cell_type == "code" and (c.metadata.get(META) or {}).get("role") != "stub"]
    ours = _code_outside_solutions(chapter)
    if [ed_cells[i].source for i in given] != [chapter.cells[j].source for j in ours]:
        raise ValueError("the student edition's code cells do not match the chapter's: slice the chapter it was made from")
    drop = {j for i, j in zip(given, ours) if keep[i] is None}
    why = dict(zip(ours, (keep[i] for i in given)))
    sliced = copy.deepcopy(chapter)
    sliced.cells = [c for j, c in enumerate(sliced.cells) if j not in drop]
    kept = [(c.source, why.get(j, "solution")) for j, c in enumerate(chapter.cells) if c.cell_type == "code" and j not in drop
            and REMOVE_TAG not in tags(c)]
    return Slice(sliced, kept, [chapter.cells[j].source for j in sorted(drop)])


def describe(cut: Slice, width: int = 60) -> str:
    """A few lines saying what the slice dropped, for the message of a failure it may have caused."""
    firsts = [next((ln for ln in src.split("\n") if ln.strip()), "")[:width] for src in cut.dropped]
    return (f"graded on a slice of the chapter (booktools.coursework.slicing): {len(cut.kept)} code cell(s) kept, "
            f"{len(cut.dropped)} dropped; if the failure is a name or a file the solution misses, a dropped cell "
            f"held it: tag that cell '{KEEP_TAG}'. Dropped cells begin: " + "; ".join(repr(f) for f in firsts))
