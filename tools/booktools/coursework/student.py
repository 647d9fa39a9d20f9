"""The student edition: every chapter with exercises, its solutions taken out.

``python -m booktools.coursework.student`` (or ``make student``) reads every MyST
notebook under ``chapters/`` that has at least one exercise and writes, for
each, a ``.md`` and an ``.ipynb`` into ``_build/student/`` (same relative
path as the chapter), both as JupyterLab saves them, so that opening one
marks nothing modified. In them:

- every solution (``solution-start`` ... ``solution-end``: prose and code) is gone;
- each solution code cell is replaced by a *stub* cell that names what to
  write there (the functions, classes and variables the solution defines and
  the rest of the notebook uses) and leaves them unanswered (``...`` or
  ``raise NotImplementedError``), so the check fails until the learner answers;
- the check cells stay; cells tagged ``student-remove`` are dropped;
- a question inside an exercise that is answered in words, marked
  ``<!-- graded by hand: NAME -->`` (or ``<!-- graded by hand: NAME, 2 points -->``)
  right after it in the statement, gets a Markdown *answer cell* after the
  exercise's check, for the learner's answer, which the grader lists to be
  graded by hand (see :class:`WrittenPart`);
- a set-up cell comes first, the one the site's published notebooks get: it
  installs the helper package where it is missing (see :func:`setup_cell_adder`);
- code cells carry ``metadata["coursework"] = {"exercise": label, "role": "stub" | "check"}``
  so that :mod:`booktools.coursework.grade` can map cells to exercises.

A leak check then compares every student file with every solution of the book
and fails (exit status 1) if any non-trivial line of a solution survived.

The exercise convention it relies on is the book's (see the instructors' page):

````md
```{exercise-start}
:label: ex-chapter-topic
```
The task.
```{exercise-end}
```

```{solution-start} ex-chapter-topic
:class: dropdown
```
Why it works.
```{code-cell} ipython3
answer = ...
```
```{solution-end}
```

```{code-cell} ipython3
check.some_check(answer)
```
````
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import nbformat

from ..notebooks import as_saved_myst, is_myst_notebook
from ..notebooks import read as read_chapter
from ..site.published_notebooks import add_setup_cell, published_wheel

__all__ = [
    "Exercise",
    "WrittenPart",
    "StudentEdition",
    "LeakError",
    "find_book_root",
    "exercise_chapters",
    "is_myst_notebook",
    "make_student_notebook",
    "with_answers",
    "solution_lines",
    "find_leaks",
    "build_student_edition",
    "ipynb_as_saved",
    "main",
]

META = "coursework"  # key of the cell and notebook metadata written here
REMOVE_TAG = "student-remove"
# A question of an exercise answered in words, graded by hand: <!-- graded by hand: NAME[, N point(s)] -->
_BY_HAND = re.compile(r"<!--\s*graded\s+by\s+hand\b(?P<rest>.*?)-->", re.IGNORECASE)
_BY_HAND_REST = re.compile(r"^\s*:\s*(?P<name>[A-Za-z0-9][\w-]*)\s*(?:,\s*(?P<points>\d+(?:\.\d+)?)\s*points?)?\s*$")
ANSWER_PLACEHOLDER = "*Write your answer here, in place of this line.*"

# An opening fence: ``` or ~~~ or ::: (three or more), then the info string.
_FENCE = re.compile(r"^(?P<indent>\s{0,3})(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
_DIRECTIVE = re.compile(r"^\{(?P<name>[\w:-]+)\}\s*(?P<arg>.*)$")
_CHECK_CALL = re.compile(r"\bcheck\.\w+\s*\(|parallel_mcmc\.exercises|\bexercises\.\w+\s*\(")
_WORD = re.compile(r"[A-Za-z_]\w*")


class LeakError(RuntimeError):
    """Raised when a line of a solution survived in the student edition."""


@dataclass
class WrittenPart:
    """A question inside an exercise that the learner answers in words, graded by hand.

    Marked in the exercise's statement by ``<!-- graded by hand: NAME -->`` (worth 1 point) or
    ``<!-- graded by hand: NAME, 2 points -->`` right after the question: an HTML comment, which
    neither the website nor a notebook shows. The question is the sentence before the marker.
    """

    label: str  # the exercise it belongs to
    name: str  # unique within the exercise; the grader reports it as ``label:name``
    prompt: str  # the question, as the statement words it
    points: float = 1.0

    def as_metadata(self) -> dict:
        return {"name": self.name, "prompt": self.prompt, "points": self.points}

    def answer_header(self) -> str:
        """The first line of the learner's answer cell."""
        points = f"{self.points:g} point{'' if self.points == 1 else 's'}"
        return f"**Your answer** ({self.name}, graded by hand, {points}): {self.prompt}"

    def answer_cell(self) -> nbformat.NotebookNode:
        """The Markdown cell where the learner answers, marked for the grader."""
        return nbformat.v4.new_markdown_cell(
            f"{self.answer_header()}\n\n{ANSWER_PLACEHOLDER}",
            metadata={META: {"exercise": self.label, "role": "written", "part": self.name}})


def _last_sentence(text: str) -> str:
    """The last sentence (or clause after a colon) of ``text``, on one line."""
    pieces = [p for p in re.split(r"(?<=[.!?:;])\s+", " ".join(text.split())) if p.strip()]
    return pieces[-1] if pieces else ""


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
    """The folder holding ``_toc.yml`` or ``chapters/`` at or above ``start`` (default: cwd)."""
    here = (start or Path.cwd()).resolve()
    for folder in [here, *here.parents]:
        if (folder / "chapters").is_dir() and ((folder / "_toc.yml").exists() or (folder / "_config.yml").exists()):
            return folder
    raise FileNotFoundError(
        f"No book found at or above {here}: run from the book's folder (the one with chapters/ and _toc.yml) "
        "or pass --book PATH."
    )


def exercise_chapters(root: Path) -> list[Path]:
    """Every MyST notebook under ``root/chapters`` with at least one ``exercise-start``, sorted."""
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


# --------------------------------------------------------------------------- markdown scanning


def normalise(line: str) -> str:
    """A line with its surrounding and repeated whitespace removed."""
    return " ".join(line.split())


_TRIVIAL_STATEMENTS = {"else:", "try:", "finally:", "pass", "break", "continue", "return", "except:", "..."}


def is_trivial(line: str) -> bool:
    """Lines too common to count as a leak: blank, comments, fences, bare names, short lines."""
    text = normalise(line)
    if not text or text.startswith("#") or text in _TRIVIAL_STATEMENTS:
        return True
    if text.startswith(("```", "~~~", ":::")) or re.fullmatch(r":\w+:.*", text):
        return True  # directive fences and options
    if re.fullmatch(r"[\w.]+", text):
        return True  # a bare name, e.g. a solution ending with `answer` to display it
    return sum(ch.isalnum() for ch in text) < 8


@dataclass
class _Scan:
    """Where a markdown scan stands between cells."""

    state: str = "text"  # "text" | "exercise" | "solution"
    label: str | None = None  # the exercise being read
    pending_fence: tuple[str, str] | None = None  # (fence, kind) of a directive whose options are being read
    skip_fence: str | None = None  # closing fence of a literal block or of a whole {solution} directive
    skip_is_solution: bool = False


def _closes(line: str, fence: str) -> bool:
    m = _FENCE.match(line)
    return bool(m and m.group("fence")[0] == fence[0] and len(m.group("fence")) >= len(fence) and not m.group("info").strip())


class _MarkdownSplitter:
    """Split markdown cells into kept lines and solution lines, following the directives."""

    def __init__(self) -> None:
        self.scan = _Scan()
        self.events: list[tuple[str, str]] = []  # ("exercise" | "solution-start" | "solution-end", label)
        self.parts: list[WrittenPart] = []  # questions graded by hand, in the statements read
        self.problems: list[str] = []  # markers graded by hand that are malformed or outside a statement
        self._statement: list[str] = []  # the lines of the exercise statement being read
        self._count = 0

    def _by_hand(self, line: str) -> str:
        """Record the graded-by-hand markers of one line (see :class:`WrittenPart`); the line without them."""
        s = self.scan
        for match in _BY_HAND.finditer(line):
            rest = _BY_HAND_REST.match(match.group("rest"))
            if s.state != "exercise" or s.label is None:
                self.problems.append(f"{match.group(0)!r} is not inside an exercise statement (between "
                                     "exercise-start and exercise-end); put it right after the question it marks")
            elif rest is None:
                self.problems.append(f"{match.group(0)!r} in {s.label}: write <!-- graded by hand: NAME --> or "
                                     "<!-- graded by hand: NAME, 2 points -->, NAME made of letters, digits, - and _")
            else:
                before = "\n".join([*self._statement, _BY_HAND.sub("", line[:match.start()])])
                points = float(rest.group("points")) if rest.group("points") else 1.0
                self.parts.append(WrittenPart(s.label, rest.group("name"), _last_sentence(before), points))
        return _BY_HAND.sub("", line)

    def feed(self, text: str) -> tuple[list[str], list[str]]:
        """Return (kept lines, removed solution lines) of one markdown cell."""
        kept: list[str] = []
        removed: list[str] = []
        s = self.scan
        lines = text.split("\n")
        i = 0
        while i < len(lines):
            line = lines[i]
            i += 1
            if s.skip_fence is not None:  # inside a literal block or a whole {solution}
                (removed if s.skip_is_solution or s.state == "solution" else kept).append(line)
                if _closes(line, s.skip_fence):
                    s.skip_fence, s.skip_is_solution = None, False
                continue
            if s.pending_fence is not None:  # options of a gated directive
                fence, kind = s.pending_fence
                target = removed if kind.startswith("solution") else kept
                target.append(line)
                opt = re.match(r"^\s*:label:\s*(\S+)", line)
                if opt and kind == "exercise-start":
                    self._relabel(opt.group(1))
                if _closes(line, fence):
                    s.pending_fence = None
                continue
            m = _FENCE.match(line)
            if not m:
                if "<!--" in line:
                    bare = self._by_hand(line)
                else:
                    bare = line
                if s.state == "exercise":
                    self._statement.append(bare)
                (removed if s.state == "solution" else kept).append(line)
                continue
            fence, info = m.group("fence"), m.group("info").strip()
            d = _DIRECTIVE.match(info)
            name = d.group("name") if d else ""
            arg = d.group("arg").strip() if d else ""
            if name == "exercise-start":
                self._count += 1
                self._statement = []
                s.state, s.label = "exercise", arg or f"exercise-{self._count}"
                self.events.append(("exercise", s.label))
                kept.append(line)
                s.pending_fence = (fence, name)
            elif name == "exercise-end":
                s.state = "text"
                kept.append(line)
                s.pending_fence = (fence, name)
            elif name == "solution-start":
                s.state = "solution"
                if arg:
                    s.label = arg
                self.events.append(("solution-start", s.label or ""))
                removed.append(line)
                s.pending_fence = (fence, name)
            elif name == "solution-end":
                s.state = "text"
                self.events.append(("solution-end", s.label or ""))
                removed.append(line)
                s.pending_fence = (fence, name)
            elif name == "solution":  # the non-gated form: one directive holds the whole solution
                removed.append(line)
                s.skip_fence, s.skip_is_solution = fence, True
            else:
                if name == "exercise":  # the non-gated exercise: a prompt without code
                    self._count += 1
                    self.events.append(("exercise", arg or f"exercise-{self._count}"))
                (removed if s.state == "solution" else kept).append(line)
                s.skip_fence = fence
        return kept, removed

    def _relabel(self, label: str) -> None:
        """The exercise just opened names its label in an option."""
        old = self.scan.label
        self.scan.label = label
        for k in range(len(self.events) - 1, -1, -1):
            if self.events[k] == ("exercise", old):
                self.events[k] = ("exercise", label)
                break


# --------------------------------------------------------------------------- stubs


def _strip_magics(source: str) -> str:
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n"))


def _defined(tree: ast.Module) -> tuple[list[tuple[str, str, str]], list[str]]:
    """(top-level definitions as (name, kind, signature), every name bound outside functions)."""
    top: list[tuple[str, str, str]] = []
    bound: list[str] = []

    def add_targets(target: ast.AST, into: list[str]) -> None:
        if isinstance(target, ast.Name):
            into.append(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                add_targets(elt, into)
        elif isinstance(target, ast.Starred):
            add_targets(target.value, into)

    def visit(body: Sequence[ast.stmt], is_top: bool) -> None:
        for node in body:
            names: list[str] = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                sig = f"{'async ' if isinstance(node, ast.AsyncFunctionDef) else ''}def {node.name}({ast.unparse(node.args)}):"
                if is_top:
                    top.append((node.name, "function", sig))
                bound.append(node.name)
                continue
            if isinstance(node, ast.ClassDef):
                if is_top:
                    top.append((node.name, "class", f"class {node.name}:"))
                bound.append(node.name)
                continue
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    add_targets(t, names)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                add_targets(node.target, names)
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                add_targets(node.target, names)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None:
                        add_targets(item.optional_vars, names)
            for name in names:
                bound.append(name)
                if is_top and isinstance(node, (ast.Assign, ast.AnnAssign)):
                    top.append((name, "variable", ""))
            for attr in ("body", "orelse", "finalbody"):
                visit(getattr(node, attr, []) or [], False)
            for handler in getattr(node, "handlers", []) or []:
                visit(handler.body, False)

    visit(tree.body, True)
    return top, bound


def _bound_names(code: str) -> set[str]:
    """Names that ``code`` (several cells, one after another) binds at top level, imports included."""
    names: set[str] = set()
    for chunk in code.split("\n\x00\n"):
        try:
            tree = ast.parse(_strip_magics(chunk))
        except SyntaxError:
            continue
        names.update(_defined(tree)[1])
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def make_stub(solution: str, label: str, later_code: str, earlier_code: str = "") -> tuple[str, list[str]]:
    """The stub cell that replaces one solution code cell, and the def headers it gives.

    It names what the solution defines that the rest of the notebook uses
    (or, failing that, what it defines at top level) and leaves it unanswered.
    Variables the notebook already had before the solution are left alone.
    """
    later = set(_WORD.findall(later_code))
    earlier = _bound_names(earlier_code)
    try:
        top, bound = _defined(ast.parse(_strip_magics(solution)))
    except SyntaxError:
        top, bound = [], []
    seen: set[str] = set()
    top = [t for t in top if not (t[0] in seen or seen.add(t[0]))]
    used_top = [t for t in top if t[0] in later]
    used_names = {t[0] for t in used_top}
    extra = [n for n in dict.fromkeys(bound) if n in later and n not in used_names]
    chosen = used_top + [(n, "variable", "") for n in extra] if (used_top or extra) else top
    chosen = [t for t in chosen if not (t[1] == "variable" and t[0] in earlier)]

    lines = [f"# Exercise {label}: write your answer here."]
    headers: list[str] = []
    if not chosen:
        lines += ["# Replace the ... below with your code.", "..."]
        return "\n".join(lines), headers
    described = ", ".join(f"`{name}`" + (" (a function)" if kind == "function" else " (a class)" if kind == "class" else "")
                          for name, kind, _ in chosen)
    lines.append(f"# Define {described}; the check below uses {'it' if len(chosen) == 1 else 'them'}.")
    for name, kind, sig in chosen:
        if kind == "function":
            headers.append(normalise(sig))
            lines += [sig, f'    raise NotImplementedError("{label}: write {name}")', ""]
        elif kind == "class":
            headers.append(normalise(sig))
            lines += [sig, f'    """Write {name} here."""', "", '    def __init__(self, *args, **kwargs):',
                      f'        raise NotImplementedError("{label}: write {name}")', ""]
        else:
            lines.append(f"{name} = ...  # replace ... with your answer")
    return "\n".join(lines).rstrip(), headers


# --------------------------------------------------------------------------- the student notebook


def _tags(cell: dict) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []) or [])


POINTS_KEY = "exercise_points"  # front-matter key: {label: points} (sphinx-exercise refuses unknown options)


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


def make_student_notebook(chapter: Path, root: Path | None = None) -> StudentEdition:
    """Build the student edition of one chapter in memory."""
    chapter = Path(chapter)
    root = Path(root) if root is not None else chapter.parent
    nb = read_chapter(chapter)
    splitter = _MarkdownSplitter()
    out_cells: list[nbformat.NotebookNode] = []
    exercises: dict[str, Exercise] = {}
    kept_text: set[str] = set()
    interface: set[str] = set()

    def exercise(label: str) -> Exercise:
        return exercises.setdefault(label, Exercise(label))

    # Code after each cell, for deciding which names a solution must define.
    code_after = [""] * (len(nb.cells) + 1)
    for k in range(len(nb.cells) - 1, -1, -1):
        c = nb.cells[k]
        code_after[k] = (c.source + "\n" if c.cell_type == "code" else "") + code_after[k + 1]
    code_before = [""] * (len(nb.cells) + 1)
    for k, c in enumerate(nb.cells):
        code_before[k + 1] = code_before[k] + (c.source + "\n\x00\n" if c.cell_type == "code" else "")

    awaiting_check: str | None = None  # label whose solution just ended
    check_candidates: list[nbformat.NotebookNode] = []
    prose_seen = False  # prose came between solution-end and the next code cell
    solution_had_code = False

    statements: dict[str, nbformat.NotebookNode] = {}  # label -> the cell of its statement's end
    answered: set[str] = set()  # exercises whose answer cells (questions graded by hand) are placed

    def place_answers(label: str) -> None:
        """Put the answer cells of the exercise's questions graded by hand after its last stub or check."""
        ex = exercises.get(label)
        if ex is None or not ex.parts or label in answered:
            return
        answered.add(label)
        where = [k for k, c in enumerate(out_cells) if (c.metadata.get(META) or {}).get("exercise") == label]
        if not where and statements.get(label) is not None:
            where = [k for k, c in enumerate(out_cells) if c is statements[label]]
        at = where[-1] + 1 if where else len(out_cells)
        out_cells[at:at] = [part.answer_cell() for part in ex.parts]

    def settle_checks() -> None:
        """Mark the check cells of the exercise whose solution ended last."""
        nonlocal awaiting_check, check_candidates, prose_seen
        if awaiting_check is not None and check_candidates:
            # Cells that call a check; failing that, the code cell right after solution-end.
            first_adjacent = check_candidates[:1] if check_candidates[0].metadata.get("_adjacent") else []
            chosen = [c for c in check_candidates if _CHECK_CALL.search(c.source)] or first_adjacent
            for c in chosen:
                c.metadata[META] = {"exercise": awaiting_check, "role": "check"}
                exercise(awaiting_check).checks.append(c.source)
        for c in check_candidates:
            c.metadata.pop("_adjacent", None)
        if awaiting_check is not None:
            place_answers(awaiting_check)
        awaiting_check, check_candidates, prose_seen = None, [], False

    for index, cell in enumerate(nb.cells):
        if REMOVE_TAG in _tags(cell):
            continue
        if cell.cell_type == "markdown":
            events_before, parts_before = len(splitter.events), len(splitter.parts)
            kept, removed = splitter.feed(cell.source)
            new_events = splitter.events[events_before:]
            new_parts = splitter.parts[parts_before:]
            for line in kept:
                kept_text.add(normalise(line))
            for line in removed:
                exercise(splitter.scan.label or "?").solution_text.append(line)
            for kind, label in new_events:
                if kind == "exercise":
                    settle_checks()
                    exercise(label)
                elif kind == "solution-start":
                    settle_checks()
                    solution_had_code = False
                elif kind == "solution-end":
                    if not solution_had_code:
                        stub, _ = make_stub("", label, "")
                        out_cells.append(nbformat.v4.new_code_cell(stub, metadata={META: {"exercise": label, "role": "stub"}}))
                        exercise(label).stubs.append(stub)
                    awaiting_check = label
                    check_candidates, prose_seen = [], False
            # A heading or a new exercise ends the search for check cells.
            text = "\n".join(kept)
            if awaiting_check is not None and check_candidates and re.search(r"^#{1,6}\s", text, re.MULTILINE):
                settle_checks()
            if text.strip() and awaiting_check is not None and not new_events:
                prose_seen = True  # prose in between: only cells that call a check count
            if text.strip():
                new = copy.deepcopy(cell)
                new.source = text.strip("\n")
                out_cells.append(new)
                for part in new_parts:
                    statements[part.label] = new
            for part in new_parts:
                ex = exercise(part.label)
                if any(p.name == part.name for p in ex.parts):
                    raise ValueError(f"{chapter}: {part.label} has two questions graded by hand named {part.name!r}; "
                                     "give each its own name")
                ex.parts.append(part)
            continue
        if cell.cell_type != "code":
            out_cells.append(copy.deepcopy(cell))
            continue
        if splitter.scan.state == "solution":
            label = splitter.scan.label or "?"
            stub, headers = make_stub(cell.source, label, code_after[index + 1], code_before[index])
            interface.update(headers)
            exercise(label).solution_code.append(cell.source)
            exercise(label).stubs.append(stub)
            out_cells.append(nbformat.v4.new_code_cell(stub, metadata={META: {"exercise": label, "role": "stub"}}))
            solution_had_code = True
            continue
        new = copy.deepcopy(cell)
        new.outputs, new.execution_count = [], None
        new.metadata.pop(META, None)
        for line in cell.source.split("\n"):
            kept_text.add(normalise(line))
        if awaiting_check is not None:
            if not check_candidates and not prose_seen:
                new.metadata["_adjacent"] = True
            check_candidates.append(new)
        out_cells.append(new)
    settle_checks()
    if splitter.scan.state == "solution":
        raise ValueError(f"{chapter}: a solution-start has no solution-end; close it with ```{{solution-end}}```.")
    if splitter.problems:
        raise ValueError(f"{chapter}: " + "; ".join(splitter.problems))
    for label in list(exercises):
        place_answers(label)  # an exercise without a solution: after its statement

    student = nbformat.v4.new_notebook()
    student.metadata = copy.deepcopy(nb.metadata)
    try:
        rel = chapter.resolve().relative_to(root.resolve())
    except ValueError:
        rel = Path(chapter.name)
    ordered = list(exercises.values())
    for label, points in _exercise_points(nb, chapter, exercises).items():
        exercises[label].points = points
    student.metadata[META] = {"source": rel.as_posix(), "exercises": [e.as_metadata() for e in ordered]}
    student.cells = out_cells
    student = nbformat.from_dict(json.loads(json.dumps(student)))
    ids: set[str] = set()
    for number, c in enumerate(student.cells):
        if not c.get("id") or c["id"] in ids:
            c["id"] = f"cell-{number}"
        ids.add(c["id"])
    nbformat.validate(student)
    return StudentEdition(rel, student, ordered, kept_text, interface)


def with_answers(nb: nbformat.NotebookNode, answers: dict[str, list[str]]) -> nbformat.NotebookNode:
    """A copy of a student notebook with the stubs of the given exercises replaced by answers, in order.

    ``answers`` maps an exercise's label to the sources of its answer cells
    (for the book's own solutions: ``Exercise.solution_code``). Exercises
    missing from ``answers``, and stubs beyond the answers given, keep their stubs.
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


# --------------------------------------------------------------------------- leak check


def solution_lines(editions: Iterable[StudentEdition]) -> dict[str, str]:
    """Every non-trivial solution line of the book (normalised) -> the exercise it comes from."""
    lines: dict[str, str] = {}
    for ed in editions:
        for ex in ed.exercises:
            for text in [*ex.solution_text, *"\n".join(ex.solution_code).split("\n")]:
                if not is_trivial(text):
                    lines.setdefault(normalise(text), f"{ed.source}: {ex.label}")
    return lines


def find_leaks(student_text: str, edition: StudentEdition, solutions: dict[str, str]) -> list[str]:
    """Solution lines found in ``student_text`` that the chapter does not show outside its solutions."""
    allowed = edition.kept_text | edition.interface_lines
    leaks = []
    for line in student_text.split("\n"):
        key = normalise(line)
        if key in solutions and key not in allowed:
            leaks.append(f"{solutions[key]}: {key!r}")
    return leaks


def _ipynb_text(nb: nbformat.NotebookNode) -> str:
    return "\n".join(c.source for c in nb.cells)


# --------------------------------------------------------------------------- the command


def build_student_edition(root: Path, out: Path | None = None, chapters: Sequence[Path] | None = None,
                          verbose: bool = True) -> list[Path]:
    """Write the student edition of the book at ``root`` into ``out``; return the files written.

    Raises :class:`LeakError` (after writing) if any solution line survived.
    """
    root = Path(root).resolve()
    out = Path(out) if out is not None else root / "_build" / "student"
    chapters = [Path(c).resolve() for c in chapters] if chapters else exercise_chapters(root)
    editions = [make_student_notebook(c, root) for c in chapters]
    written: list[Path] = []
    if out.exists():
        for old in sorted(out.rglob("*"), reverse=True):
            if old.is_file() and old.suffix in {".md", ".ipynb"}:
                old.unlink()
    setup = setup_cell_adder(root)
    for ed in editions:
        target = out / ed.source
        target.parent.mkdir(parents=True, exist_ok=True)
        md = target.with_suffix(".md")
        ipynb = target.with_suffix(".ipynb")
        nb = setup(copy.deepcopy(ed.notebook))
        md.write_text(as_saved_myst(nb), encoding="utf-8")
        nbformat.write(ipynb_as_saved(nb), ipynb)
        written += [md, ipynb]
        if verbose:
            labels = ", ".join(e.label for e in ed.exercises)
            print(f"{ipynb.relative_to(out)}: {len(ed.exercises)} exercise(s): {labels}")
    check_written(editions, out)
    return written


def setup_cell_adder(root: Path):
    """A function that puts the published notebooks' set-up cell first in a notebook (see
    :mod:`booktools.site.published_notebooks`).

    The cell installs the helper package from the wheel the site publishes
    where it is missing (a learner's Colab or laptop) and does nothing where
    it is there (the book's environment, the grader's sandbox). The grader
    does not need it: it rebuilds each chapter's edition from the book. A
    book without a ``_config.yml`` naming a ``repository.url`` (the tests'
    toy books) gets no set-up cell.
    """
    try:
        wheel, constraints = published_wheel(root)
    except (FileNotFoundError, ValueError):
        return lambda nb: nb
    return lambda nb: add_setup_cell(nb, wheel, constraints)


def ipynb_as_saved(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``nb`` as JupyterLab saves it: normalised by nbformat, with cell ids, and with the
    ``language_info`` that the kernel (ipykernel in this interpreter) reports, which JupyterLab
    would otherwise add on opening and so mark the notebook modified. Write it with ``nbformat.write``."""
    nb = copy.deepcopy(nb)
    nb.metadata.pop("jupytext", None)
    try:
        from ipykernel.ipkernel import IPythonKernel

        nb.metadata.setdefault("language_info", copy.deepcopy(IPythonKernel.language_info))
    except ImportError:
        pass
    _, normalised = nbformat.validator.normalize(nb)
    nb = nbformat.from_dict(normalised)
    nbformat.validate(nb)
    return nb


def check_written(editions: Sequence[StudentEdition], out: Path) -> None:
    """Read back every student file written and raise :class:`LeakError` on a surviving solution line."""
    solutions = solution_lines(editions)
    leaks: list[str] = []
    for ed in editions:
        md = (out / ed.source).with_suffix(".md")
        ipynb = (out / ed.source).with_suffix(".ipynb")
        for path, text in [(md, md.read_text(encoding="utf-8")), (ipynb, _ipynb_text(nbformat.read(ipynb, as_version=4)))]:
            leaks += [f"{path}: {leak}" for leak in find_leaks(text, ed, solutions)]
    if leaks:
        raise LeakError(
            f"{len(leaks)} solution line(s) survived in the student edition:\n  " + "\n  ".join(leaks)
            + "\nCheck that each solution sits between ```{solution-start}``` and ```{solution-end}```."
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools.coursework.student", description=__doc__.split("\n")[0])
    parser.add_argument("chapters", nargs="*", type=Path, help="chapters to convert (default: every chapter with exercises)")
    parser.add_argument("--book", type=Path, default=None, help="the book's root folder (default: found from the cwd)")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: BOOK/_build/student)")
    args = parser.parse_args(argv)
    try:
        root = args.book.resolve() if args.book else find_book_root()
        written = build_student_edition(root, args.out, args.chapters or None)
    except LeakError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except (FileNotFoundError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    out = args.out or root / "_build" / "student"
    print(f"Student edition: {len(written) // 2} notebook(s) in {out}; no solution line left in them.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
