"""A chapter cut down to the cells its exercises need: for grading the book's own solutions quickly.

The whole-book grading test runs every chapter with exercises in the grader's sandbox, so that each
exercise's stub is seen to fail and the book's solution to pass. The chapters' other cells (sampling
runs, timing sweeps, plots) have already run in the notebook tests; running them again costs minutes
and tests nothing the exercises need. :func:`slice_chapter` keeps, from a chapter (read as a notebook):

- every markdown cell (they run nothing and hold the exercises' directives);
- every cell of an exercise: its solution (or stub) cells and its check cells, as the student edition
  (:func:`booktools.coursework.student.make_student_notebook`) finds them;
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

The slice is made for the book's own solutions, in the tests (``tests/tools/test_grade.py``): a
learner's answer may read a name, or rely on a cell's side effect, that the book's solution does not,
so the grader always runs the whole chapter for a submission.
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass, field
from typing import Iterable

import nbformat

from .student import META, REMOVE_TAG, StudentEdition, _MarkdownSplitter, _tags

__all__ = ["KEEP_TAG", "DROP_TAG", "CellNames", "cell_names", "needed", "slice_chapter", "Slice", "describe"]

KEEP_TAG = "grade-keep"
DROP_TAG = "grade-drop"

# Calls that change the process's state for every later cell, by the last part of the called name.
_STATE_CALLS = {"use_cpu_devices", "set_mesh", "filterwarnings", "simplefilter", "seed", "set_start_method",
                "set_host_device_count", "set_platform", "initialize", "putenv"}
_STATE_DOTTED = ("config.update", "environ.update", "environ.setdefault", "environ.pop")
# Cell magics whose body is Python; the body of any other (%%writefile, %%bash, ...) is not.
_PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun"}
_MAGIC_NAMES = re.compile(r"\{([^{}]*)\}|\$([A-Za-z_]\w*)")
_WORD = re.compile(r"[A-Za-z_]\w*")


@dataclass
class CellNames:
    """What one code cell does with names."""

    statements: list[tuple[set[str], set[str]]] = field(default_factory=list)  # (reads, hides) per top-level statement
    bound: set[str] = field(default_factory=set)  # names it binds, conditionally or not
    changed: set[str] = field(default_factory=set)  # names of objects it may change in place
    imported: set[str] = field(default_factory=set)  # names it binds by importing
    setup: bool = False  # changes the process's global state at top level

    @property
    def reads(self) -> set[str]:
        out: set[str] = set()
        for reads, _ in self.statements:
            out |= reads
        return out


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _root(node: ast.AST) -> str | None:
    """The name an attribute, subscript or method chain starts from: ``x`` of ``x.a[0].b``."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _stored(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _reads(node: ast.AST) -> set[str]:
    """The names ``node`` reads from the scope it runs in: not a function's, a lambda's or a
    comprehension's own variables."""
    out: set[str] = set()

    def visit(n: ast.AST, local: frozenset[str]) -> None:
        if isinstance(n, _SCOPES):
            outer = list(n.args.defaults) + [d for d in n.args.kw_defaults if d is not None]
            if not isinstance(n, ast.Lambda):
                outer += n.decorator_list
            for d in outer:
                visit(d, local)
            declared = {name for m in ast.walk(n) if isinstance(m, (ast.Global, ast.Nonlocal)) for name in m.names}
            params = {a.arg for a in ast.walk(n.args) if isinstance(a, ast.arg)}
            inner = frozenset(local | ((params | _stored(n)) - declared))
            for b in (n.body if isinstance(n.body, list) else [n.body]):
                visit(b, inner)
        elif isinstance(n, _COMPREHENSIONS):
            inner = frozenset(local | {name for g in n.generators for name in _stored(g.target)})
            for child in ast.iter_child_nodes(n):
                visit(child, inner)
        elif isinstance(n, (ast.For, ast.AsyncFor)):  # the body reads the loop's own variables
            visit(n.iter, local)
            for b in n.body:
                visit(b, frozenset(local | _stored(n.target)))
            for b in n.orelse:
                visit(b, local)
        elif isinstance(n, (ast.With, ast.AsyncWith)):
            names = set()
            for item in n.items:
                visit(item.context_expr, local)
                if item.optional_vars is not None:
                    names |= _stored(item.optional_vars)
            for b in n.body:
                visit(b, frozenset(local | names))
        elif isinstance(n, ast.Name):
            if not isinstance(n.ctx, ast.Store) and n.id not in local:
                out.add(n.id)
        else:
            for child in ast.iter_child_nodes(n):
                visit(child, local)

    visit(node, frozenset())
    return out


def _block_reads(body: Iterable[ast.stmt], assigned: set[str]) -> set[str]:
    """The names the statements of a block read before the block itself assigns them (``assigned``: the
    names already assigned when it starts); branches and loops are followed, what they assign is not
    counted after them."""
    assigned = set(assigned)
    out: set[str] = set()
    for stmt in body:
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            out |= _reads(stmt.iter) - assigned
            out |= _block_reads(stmt.body, assigned | _stored(stmt.target)) | _block_reads(stmt.orelse, assigned)
        elif isinstance(stmt, (ast.If, ast.While)):
            out |= _reads(stmt.test) - assigned
            out |= _block_reads(stmt.body, assigned) | _block_reads(stmt.orelse, assigned)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            names: set[str] = set()
            for item in stmt.items:
                out |= _reads(item.context_expr) - assigned
                if item.optional_vars is not None:
                    names |= _stored(item.optional_vars)
            out |= _block_reads(stmt.body, assigned | names)
        elif isinstance(stmt, ast.Try):
            out |= _block_reads(stmt.body, assigned) | _block_reads(stmt.orelse, assigned)
            out |= _block_reads(stmt.finalbody, assigned)
            for handler in stmt.handlers:
                if handler.type is not None:
                    out |= _reads(handler.type) - assigned
                out |= _block_reads(handler.body, assigned | ({handler.name} if handler.name else set()))
        else:
            out |= _reads(stmt) - assigned
            if isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, (ast.Name, ast.Tuple, ast.List)):
                        assigned |= _stored(target)
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(stmt.target, ast.Name):
                assigned.add(stmt.target.id)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                assigned.add(stmt.name)
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                assigned |= {(a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*"}
    return out


def _target_names(target: ast.AST, into: set[str], changed: set[str]) -> None:
    """Names bound by an assignment target into ``into``; roots of attribute/subscript targets into ``changed``."""
    if isinstance(target, ast.Name):
        into.add(target.id)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            _target_names(elt, into, changed)
    elif isinstance(target, ast.Starred):
        _target_names(target.value, into, changed)
    elif isinstance(target, (ast.Attribute, ast.Subscript)):
        root = _root(target)
        if root:
            changed.add(root)


def _walk_outside_functions(body: Iterable[ast.stmt]):
    """Every node of ``body`` that is not inside a function or class body (their headers included)."""
    stack = list(body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack += node.decorator_list
            if not isinstance(node, ast.ClassDef):
                stack += [d for d in node.args.defaults + node.args.kw_defaults if d is not None]
            else:
                stack += node.bases + [k.value for k in node.keywords]
            continue
        if isinstance(node, ast.Lambda):
            continue
        stack += list(ast.iter_child_nodes(node))


def _changes(body: Iterable[ast.stmt], local: set[str]) -> tuple[set[str], set[str], bool]:
    """(names bound, names of objects changed in place, whether global state is set) by ``body``,
    outside its function bodies; names in ``local`` are ignored."""
    bound: set[str] = set()
    changed: set[str] = set()
    for node in _walk_outside_functions(body):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                _target_names(t, bound, changed)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            _target_names(node.target, bound, changed)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            _target_names(node.target, bound, changed)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    _target_names(item.optional_vars, bound, changed)
        elif isinstance(node, ast.NamedExpr):
            _target_names(node.target, bound, changed)
        elif isinstance(node, ast.Delete):
            for t in node.targets:
                _target_names(t, bound, changed)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            changed |= set(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Attribute):  # x.method(...) as a statement: it may change x
                root = _root(func)
                if root:
                    changed.add(root)
    return bound - local, changed - local, _sets_state(body)


def _sets_state(body: Iterable[ast.stmt]) -> bool:
    """Whether a top-level statement of ``body`` changes the process's global state (see _STATE_CALLS)."""
    for stmt in body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            name = _dotted(stmt.value.func)
            if name.split(".")[-1] in _STATE_CALLS or name.endswith(_STATE_DOTTED):
                return True
        elif isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Subscript) and _dotted(t.value).endswith("environ") for t in stmt.targets):
            return True
    return False


def _function_changes(tree: ast.Module) -> dict[str, tuple[set[str], set[str]]]:
    """For each function and class a cell defines: (the global names it may change in place or rebind,
    the names it reads, the other functions it may call among them)."""
    out: dict[str, tuple[set[str], set[str]]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        local: set[str] = set()
        declared: set[str] = set()
        for inner in ast.walk(node):
            if isinstance(inner, ast.arg):
                local.add(inner.arg)
            elif isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
                local.add(inner.id)
            elif isinstance(inner, (ast.Global, ast.Nonlocal)):
                declared |= set(inner.names)
        local -= declared
        changed: set[str] = set(declared)
        for inner in ast.walk(node):
            body = getattr(inner, "body", None)
            if isinstance(body, list):
                changed |= _changes([s for s in body if isinstance(s, ast.stmt)], local)[1]
        before = out.setdefault(node.name, (set(), set()))
        before[0].update(changed)
        before[1].update(_reads(node))
    return out


def _magic_names(line: str) -> set[str]:
    names: set[str] = set()
    for braces, dollar in _MAGIC_NAMES.findall(line):
        names |= set(_WORD.findall(braces)) if braces else {dollar}
    return names


def cell_names(source: str) -> tuple[CellNames, dict[str, tuple[set[str], set[str]]]]:
    """What a code cell reads, binds and changes; and for each function or class it defines, the globals
    it may change and the names it reads."""
    lines = source.split("\n")
    out = CellNames()
    magic_reads: set[str] = set()
    if lines and lines[0].lstrip().startswith("%%"):
        magic = lines[0].lstrip()[2:].split()[:1]
        magic_reads = _magic_names(lines[0])
        if not magic or magic[0] not in _PYTHON_CELL_MAGICS:  # the body is not Python: a file, a shell script
            out.statements = [(magic_reads, set())]
            out.changed = set(magic_reads)  # %%writefile {path}: the file behind the name changes
            return out, {}
        lines = lines[1:]
    code = []
    for line in lines:
        if line.lstrip().startswith(("%", "!")):
            magic_reads |= _magic_names(line)
            code.append("")
        else:
            code.append(line)
    try:
        tree = ast.parse("\n".join(code))
    except SyntaxError:  # not Python the analysis can read: it reads and binds every word in it
        words = set(_WORD.findall(source))
        out.statements, out.bound = [(words, set())], words
        return out, {}
    for stmt in tree.body:
        hides: set[str] = set()
        if isinstance(stmt, ast.Assign) and all(isinstance(t, (ast.Name, ast.Tuple, ast.List)) for t in stmt.targets):
            for t in stmt.targets:
                _target_names(t, hides, set())
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(stmt.target, ast.Name):
            hides.add(stmt.target.id)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            hides.add(stmt.name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            hides |= {(a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*"}
        out.statements.append((_block_reads([stmt], set()), hides))
    if magic_reads:
        out.statements.append((magic_reads, set()))
    out.bound, out.changed, out.setup = _changes(tree.body, set())
    out.imported = {(a.asname or a.name).split(".")[0] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                    for a in n.names}
    return out, _function_changes(tree)


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
        tags = _tags(cell)
        changed = names.changed | {g for f in names.reads & changes.keys() for g in changes[f]}
        binds = names.bound | (changed - imported)
        if roots[i]:
            keep[i] = "root"
        elif KEEP_TAG in tags:
            keep[i] = f"tagged {KEEP_TAG}"
        elif DROP_TAG in tags:
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
    splitter = _MarkdownSplitter()
    out = []
    for i, cell in enumerate(nb.cells):
        if REMOVE_TAG in _tags(cell):
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
            and REMOVE_TAG not in _tags(c)]
    return Slice(sliced, kept, [chapter.cells[j].source for j in sorted(drop)])


def describe(cut: Slice, width: int = 60) -> str:
    """A few lines saying what the slice dropped, for the message of a failure it may have caused."""
    firsts = [next((ln for ln in src.split("\n") if ln.strip()), "")[:width] for src in cut.dropped]
    return (f"graded on a slice of the chapter (booktools.coursework.slicing): {len(cut.kept)} code cell(s) kept, "
            f"{len(cut.dropped)} dropped; if the failure is a name or a file the solution misses, a dropped cell "
            f"held it: tag that cell '{KEEP_TAG}'. Dropped cells begin: " + "; ".join(repr(f) for f in firsts))
