"""Reading a chapter's Markdown cells the way the book's exercise convention marks them.

:class:`MarkdownSplitter` follows the directives of a chapter's Markdown cells, one cell after
another, and splits their lines into those the student edition keeps (the statements, the prose)
and those it takes out (every solution: ``solution-start`` ... ``solution-end``, or a whole
``solution`` directive). On the way it records where exercises and solutions start and end, and
the questions of a statement that are answered in words and graded by hand (:class:`WrittenPart`).

The student edition (:mod:`booktools.coursework.edition`), the grader's reading of a submission
(:mod:`booktools.coursework.grade.read`) and the chapter slicer (:mod:`booktools.coursework.slicing`)
all read chapters through it, with the shared markers defined here: the metadata key :data:`META`,
the tag :data:`REMOVE_TAG`, and :data:`CHECK_CALL`, what a check cell's call looks like.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import nbformat

__all__ = [
    "META",
    "REMOVE_TAG",
    "ANSWER_PLACEHOLDER",
    "CHECK_CALL",
    "WrittenPart",
    "MarkdownSplitter",
    "normalise",
    "tags",
]

META = "coursework"  # key of the cell and notebook metadata the student edition writes
REMOVE_TAG = "student-remove"
ANSWER_PLACEHOLDER = "*Write your answer here, in place of this line.*"
# A call of a check in a code cell: the cells after a solution that do this are its checks.
CHECK_CALL = re.compile(r"\bcheck\.\w+\s*\(|parallel_mcmc\.exercises|\bexercises\.\w+\s*\(")

# A question of an exercise answered in words, graded by hand: <!-- graded by hand: NAME[, N point(s)] -->
_BY_HAND = re.compile(r"<!--\s*graded\s+by\s+hand\b(?P<rest>.*?)-->", re.IGNORECASE)
_BY_HAND_REST = re.compile(r"^\s*:\s*(?P<name>[A-Za-z0-9][\w-]*)\s*(?:,\s*(?P<points>\d+(?:\.\d+)?)\s*points?)?\s*$")
# An opening fence: ``` or ~~~ or ::: (three or more), then the info string.
_FENCE = re.compile(r"^(?P<indent>\s{0,3})(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
_DIRECTIVE = re.compile(r"^\{(?P<name>[\w:-]+)\}\s*(?P<arg>.*)$")


def normalise(line: str) -> str:
    """A line with its surrounding and repeated whitespace removed.

    Parameters
    ----------
    line
        One line of text.

    Returns
    -------
    str
        The line's words joined by single spaces.
    """
    return " ".join(line.split())


def tags(cell: dict) -> list[str]:
    """The tags of a notebook cell.

    Parameters
    ----------
    cell
        A notebook cell (a dict with an optional ``metadata``).

    Returns
    -------
    list of str
        Its ``metadata["tags"]``, empty where it has none.
    """
    return list(cell.get("metadata", {}).get("tags", []) or [])


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
        """The part as the student notebook's metadata records it: name, prompt and points."""
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
class _Scan:
    """Where a markdown scan stands between cells."""

    state: str = "text"  # "text" | "exercise" | "solution"
    label: str | None = None  # the exercise being read
    pending_fence: tuple[str, str] | None = None  # (fence, kind) of a directive whose options are being read
    skip_fence: str | None = None  # closing fence of a literal block or of a whole {solution} directive
    skip_is_solution: bool = False


def _closes(line: str, fence: str) -> bool:
    """Whether ``line`` closes a block opened by ``fence``."""
    m = _FENCE.match(line)
    return bool(m and m.group("fence")[0] == fence[0] and len(m.group("fence")) >= len(fence) and not m.group("info").strip())


class MarkdownSplitter:
    """Split markdown cells into kept lines and solution lines, following the directives.

    Feed it a chapter's Markdown cells in order (:meth:`feed`); between cells, ``scan.state``
    says whether a code cell met now stands in an exercise statement, a solution or the text,
    and ``scan.label`` which exercise it belongs to.

    Attributes
    ----------
    scan
        Where the scan stands.
    events
        ``("exercise" | "solution-start" | "solution-end", label)``, in the order met.
    parts
        The questions graded by hand found in the statements read.
    problems
        Graded-by-hand markers that are malformed or stand outside a statement, described.
    """

    def __init__(self) -> None:
        self.scan = _Scan()
        self.events: list[tuple[str, str]] = []
        self.parts: list[WrittenPart] = []
        self.problems: list[str] = []
        self._statement: list[str] = []  # the lines of the exercise statement being read
        self._count = 0

    def feed(self, text: str) -> tuple[list[str], list[str]]:
        """Split one markdown cell.

        Parameters
        ----------
        text
            The cell's source.

        Returns
        -------
        kept : list of str
            Its lines outside every solution.
        removed : list of str
            Its lines inside a solution.
        """
        kept: list[str] = []
        removed: list[str] = []
        for line in text.split("\n"):
            self._line(line, kept, removed)
        return kept, removed

    def _line(self, line: str, kept: list[str], removed: list[str]) -> None:
        """Sort one line into ``kept`` or ``removed`` and follow the directive it opens or closes."""
        s = self.scan
        if s.skip_fence is not None:  # inside a literal block or a whole {solution}
            (removed if s.skip_is_solution or s.state == "solution" else kept).append(line)
            if _closes(line, s.skip_fence):
                s.skip_fence, s.skip_is_solution = None, False
            return
        if s.pending_fence is not None:  # options of a gated directive
            fence, kind = s.pending_fence
            (removed if kind.startswith("solution") else kept).append(line)
            opt = re.match(r"^\s*:label:\s*(\S+)", line)
            if opt and kind == "exercise-start":
                self._relabel(opt.group(1))
            if _closes(line, fence):
                s.pending_fence = None
            return
        m = _FENCE.match(line)
        if not m:
            bare = self._by_hand(line) if "<!--" in line else line
            if s.state == "exercise":
                self._statement.append(bare)
            (removed if s.state == "solution" else kept).append(line)
            return
        d = _DIRECTIVE.match(m.group("info").strip())
        name = d.group("name") if d else ""
        arg = d.group("arg").strip() if d else ""
        self._directive(name, arg, m.group("fence"), line, kept, removed)

    def _directive(self, name: str, arg: str, fence: str, line: str, kept: list[str], removed: list[str]) -> None:
        """Follow the fence ``line`` that opens directive ``name`` (``""`` for a literal block)."""
        s = self.scan
        if name == "exercise-start":
            self._count += 1
            self._statement = []
            s.state, s.label = "exercise", arg or f"exercise-{self._count}"
            self.events.append(("exercise", s.label))
            kept.append(line)
        elif name == "exercise-end":
            s.state = "text"
            kept.append(line)
        elif name == "solution-start":
            s.state = "solution"
            if arg:
                s.label = arg
            self.events.append(("solution-start", s.label or ""))
            removed.append(line)
        elif name == "solution-end":
            s.state = "text"
            self.events.append(("solution-end", s.label or ""))
            removed.append(line)
        elif name == "solution":  # the non-gated form: one directive holds the whole solution
            removed.append(line)
            s.skip_fence, s.skip_is_solution = fence, True
            return
        else:
            if name == "exercise":  # the non-gated exercise: a prompt without code
                self._count += 1
                self.events.append(("exercise", arg or f"exercise-{self._count}"))
            (removed if s.state == "solution" else kept).append(line)
            s.skip_fence = fence
            return
        s.pending_fence = (fence, name)

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

    def _relabel(self, label: str) -> None:
        """The exercise just opened names its label in an option."""
        old = self.scan.label
        self.scan.label = label
        for k in range(len(self.events) - 1, -1, -1):
            if self.events[k] == ("exercise", old):
                self.events[k] = ("exercise", label)
                break
