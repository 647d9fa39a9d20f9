"""Stage 5, reporting: the grades of each exercise and submission, as rich tables, JSON, a CSV gradebook
and one feedback file per submission."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

STATUSES = ("passed", "failed", "error", "timeout", "ungraded", "manual")
# statuses that the grader does not score: the instructor grades these exercises by hand
BY_HAND = ("ungraded", "manual")


def _number(x: float) -> float | int:
    """``x`` rounded to two decimals, as an int when it is whole (3, not 3.0)."""
    x = round(float(x), 2)
    return int(x) if x == int(x) else x


@dataclass
class ExerciseResult:
    """The grade of one exercise: its status, the points it is worth and the points it earned."""

    label: str
    status: str  # one of STATUSES
    message: str = ""
    notes: list[str] = field(default_factory=list)
    points: float = 1.0  # what the exercise is worth (the chapter's ``exercise_points``, default 1)
    fraction: float | None = None  # the share of the points earned; None: all when passed, none otherwise
    answer: str | None = None  # a question answered in words: the learner's answer ("" if none), graded by hand
    # the exercise's questions answered in words, each a ``manual`` result labelled ``<label>:<name>``
    parts: list[ExerciseResult] = field(default_factory=list)

    @property
    def earned(self) -> float | None:
        """Points earned; None for an exercise graded by hand."""
        if self.status in BY_HAND:
            return None
        if self.status == "passed":
            return self.points
        return self.points * (self.fraction or 0.0)

    def as_dict(self) -> dict[str, Any]:
        earned = self.earned
        data = {"label": self.label, "status": self.status, "message": self.message, "notes": list(self.notes),
                "points": _number(self.points), "earned": None if earned is None else _number(earned)}
        if self.answer is not None:
            data["answer"] = self.answer
        if self.parts:
            data["by_hand"] = [part.as_dict() for part in self.parts]
        return data


@dataclass
class NotebookReport:
    """The grades of one submission."""

    notebook: str
    source: str | None
    exercises: list[ExerciseResult]
    seconds: float
    problems: list[str] = field(default_factory=list)
    student: str = ""  # the student's id (see :func:`student_ids`); the file's stem when not set
    # code cells of the chapter left out of the run: no exercise needed them (0: the whole chapter ran)
    skipped_cells: int = 0

    def items(self) -> list[ExerciseResult]:
        """Every exercise, each followed by its questions graded by hand (:attr:`ExerciseResult.parts`)."""
        return [item for ex in self.exercises for item in (ex, *ex.parts)]

    @property
    def score(self) -> float | int:
        return _number(sum(e.earned or 0.0 for e in self.exercises))

    @property
    def total(self) -> float | int:
        return _number(sum(e.points for e in self.exercises if e.status not in BY_HAND))

    def as_dict(self) -> dict[str, Any]:
        return {
            "student": self.student or Path(self.notebook).stem,
            "notebook": self.notebook,
            "source": self.source,
            "score": self.score,
            "total": self.total,
            "seconds": round(self.seconds, 1),
            "skipped_cells": self.skipped_cells,
            "exercises": [e.as_dict() for e in self.exercises],
            "problems": list(self.problems),
        }


def student_ids(paths: Sequence[str | Path], chapter_stems: set[str] = frozenset(),
                roster: dict[str, str] | None = None) -> list[str]:
    """The student's id of each submission: from ``roster`` (file path as given, or file name, to id) if it
    names the file, else the parent folder's name when the file is named after a chapter
    (``submissions/ada/devices.ipynb``: ``ada``), else the file's stem (``submissions/ada.ipynb``: ``ada``)."""
    ids = []
    for path in map(Path, paths):
        roster = roster or {}
        if str(path) in roster or path.name in roster:
            ids.append(roster.get(str(path)) or roster[path.name])
        elif path.stem in chapter_stems and path.parent.name not in ("", "."):
            ids.append(path.parent.name)
        else:
            ids.append(path.stem)
    return ids


def read_roster(path: Path) -> dict[str, str]:
    """A roster CSV with a header: a column ``file`` (the submission's file name or path) and a column
    ``id`` (the student's id, as the LMS knows it); other columns are ignored."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        fields = {name.strip().lower(): name for name in reader.fieldnames or []}
        if "file" not in fields or "id" not in fields:
            raise ValueError(f"{path}: the roster needs the columns 'file' and 'id' (it has {reader.fieldnames})")
        rows = {row[fields["file"]].strip(): row[fields["id"]].strip() for row in reader if row.get(fields["file"])}
    return {file: sid for file, sid in rows.items() if sid}


UNKNOWN = "unknown"


def book_version(book: str | Path | None) -> dict[str, Any]:
    """The version of the book at ``book``, read from git: the grades say which checks and chapters they came from.

    Returns
    -------
    dict
        ``commit``: the full hash of the checkout's ``HEAD`` (``git rev-parse HEAD``); ``describe``: ``git describe
        --tags --always --dirty``, the tag on that commit (``course-2027-spring``), else the last tag before it with
        the commits since (``course-2027-spring-3-g1a2b3c4``), else the short hash, with ``-dirty`` appended when a
        tracked file has uncommitted changes; ``dirty``: whether one has. Both strings are ``"unknown"`` (and
        ``dirty`` False) where git is missing, ``book`` is not in a git checkout or has no commit yet; never raises.
    """
    unknown = {"commit": UNKNOWN, "describe": UNKNOWN, "dirty": False}
    if book is None or not Path(book).is_dir():
        return unknown
    # the book's own repository, not one named by the caller's environment; no lock files taken (a read-only
    # checkout works); a checkout owned by another user (the grader run as root) is read all the same, and no
    # command its configuration names (core.fsmonitor) is run
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_OPTIONAL_LOCKS"] = "0"

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-c", "safe.directory=*", "-c", "core.fsmonitor=false", "-C", str(book), *args],
                              capture_output=True, text=True, env=env, timeout=60, check=True)
        return done.stdout.strip()

    try:
        commit = git("rev-parse", "--verify", "HEAD")
        describe = git("describe", "--tags", "--always", "--dirty")
        dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError, UnicodeDecodeError):
        return unknown
    if not commit or not describe:
        return unknown
    return {"commit": commit, "describe": describe, "dirty": dirty}


def version_line(version: dict[str, Any]) -> str:
    """``version`` (:func:`book_version`) on one line: ``course-2027-spring (commit 1a2b..., uncommitted changes)``."""
    if version.get("commit", UNKNOWN) == UNKNOWN:
        return "unknown (not a git checkout)"
    changes = ", uncommitted changes" if version.get("dirty") else ""
    return f"{version['describe']} (commit {version['commit']}{changes})"


_STYLE = {"passed": "green", "failed": "red", "error": "magenta", "timeout": "yellow", "ungraded": "dim",
          "manual": "cyan"}


def _points(ex: ExerciseResult) -> str:
    earned = ex.earned
    return f"- / {_number(ex.points)}" if earned is None else f"{_number(earned)} / {_number(ex.points)}"


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def print_reports(reports: Sequence[NotebookReport], console=None) -> None:
    """One rich table per submission, then the totals."""
    console = console or Console()
    for rep in reports:
        who = f"{rep.student}: " if rep.student and rep.student != Path(rep.notebook).stem else ""
        table = Table(title=escape(f"{who}{rep.notebook}" + (f"  ({rep.source})" if rep.source else "")), show_lines=False)
        table.add_column("exercise")
        table.add_column("result")
        table.add_column("points")
        table.add_column("message", overflow="fold")
        for ex in rep.items():
            answer = f"answer: {_short(ex.answer)}" if ex.answer else ""
            message = "; ".join(filter(None, [ex.message, answer, *ex.notes]))
            table.add_row(ex.label, f"[{_STYLE[ex.status]}]{ex.status}[/]", _points(ex), escape(message))
        by_hand = sum(e.status in BY_HAND for e in rep.items())
        table.caption = f"score {rep.score} / {rep.total}, {rep.seconds:.0f} s" + (
            f", {rep.skipped_cells} unneeded cell(s) skipped" if rep.skipped_cells else "") + (
            f", {by_hand} to grade by hand" if by_hand else "")
        console.print(table)
        for problem in rep.problems:
            console.print(f"[yellow]note:[/] {escape(problem)}")
    if len(reports) > 1:
        score, total = _number(sum(r.score for r in reports)), _number(sum(r.total for r in reports))
        console.print(f"total: {score} / {total} over {len(reports)} submissions")


def write_json(reports: Sequence[NotebookReport], path: Path, book: dict[str, Any] | None = None) -> None:
    """Write the grades of ``reports`` and their totals to ``path`` as JSON (its folders made as needed), with the
    version of the book graded against (:func:`book_version`) under ``"book"`` when given."""
    data: dict[str, Any] = {} if book is None else {"book": dict(book)}
    data.update({
        "score": _number(sum(r.score for r in reports)),
        "total": _number(sum(r.total for r in reports)),
        "submissions": [r.as_dict() for r in reports],
    })
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def gradebook(reports: Sequence[NotebookReport]) -> tuple[list[str], list[list[Any]]]:
    """The class's gradebook: a header (``student``, one column per exercise label in the order met,
    ``total``, ``possible``) and one row per student, the points earned in each exercise.

    A student's submissions (one per chapter, say) share a row; an exercise graded by hand is left
    empty, for the instructor to fill; one a student did not hand in counts 0 of its points.
    """
    labels: dict[str, float] = {}
    for rep in reports:
        for ex in rep.items():
            labels.setdefault(ex.label, ex.points)
    rows: dict[str, dict[str, Any]] = {}
    for rep in reports:
        row = rows.setdefault(rep.student or Path(rep.notebook).stem, {})
        for ex in rep.items():
            earned = ex.earned
            if earned is None:
                row.setdefault(ex.label, "")
            elif row.get(ex.label) in (None, "") or earned > row[ex.label]:
                row[ex.label] = _number(earned)  # handed in twice: the better grade counts
    auto = [lab for lab in labels if any(ex.label == lab and ex.status not in BY_HAND
                                         for rep in reports for ex in rep.exercises)]
    possible = _number(sum(labels[lab] for lab in auto))
    header = ["student", *labels, "total", "possible"]
    table = []
    for sid, row in rows.items():
        total = _number(sum(row.get(lab) or 0 for lab in auto))
        table.append([sid, *(row.get(lab, 0 if lab in auto else "") for lab in labels), total, possible])
    return header, table


def write_csv(reports: Sequence[NotebookReport], path: Path, book: dict[str, Any] | None = None) -> None:
    """Write the gradebook (:func:`gradebook`) to ``path`` as CSV, ready to import into an LMS; given the version
    of the book graded against (:func:`book_version`), a last column ``book_version`` holds its ``describe`` on
    every row (a column, not a comment line, so that an import keeps it or drops it whole)."""
    header, rows = gradebook(reports)
    if book is not None:
        header = [*header, "book_version"]
        rows = [[*row, book.get("describe", UNKNOWN)] for row in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)


_UNSAFE = re.compile(r"[^A-Za-z0-9._@+-]+")


def _md(text: str) -> str:
    """``text`` on one line of a Markdown table."""
    return " ".join(str(text).split()).replace("|", "\\|")


def feedback_markdown(rep: NotebookReport, book: dict[str, Any] | None = None) -> str:
    """The feedback for one submission, as Markdown: each exercise's status, points and message, and
    what the grader noted (edited check cells, a kernel that died, other problems); given the version of the
    book graded against (:func:`book_version`), a line names it."""
    student = rep.student or Path(rep.notebook).stem
    lines = [f"# Feedback: {student}", "", f"- notebook: `{Path(rep.notebook).name}`",
             f"- chapter: {rep.source or 'not found'}"]
    if book is not None:
        lines.append(f"- graded against the book: {_md(version_line(book))}")
    lines.append(f"- score: **{rep.score} / {rep.total}**")
    by_hand = [e.label for e in rep.items() if e.status in BY_HAND]
    if by_hand:
        lines.append(f"- graded by hand, not in the score yet: {', '.join(by_hand)}")
    lines += ["", "| exercise | result | points | message |", "| --- | --- | --- | --- |"]
    for ex in rep.items():
        lines.append(f"| {ex.label} | {ex.status} | {_points(ex)} | {_md(ex.message)} |")
    written = [ex for ex in rep.items() if ex.answer is not None]
    if written:
        lines += ["", "## Answers to be graded by hand", ""]
        for ex in written:
            lines += [f"**{ex.label}** ({_number(ex.points)} point{'' if ex.points == 1 else 's'}): "
                      f"{_md(ex.message.removeprefix('graded by hand: '))}", ""]
            lines += [f"> {line}" if line.strip() else ">" for line in ex.answer.split("\n")] if ex.answer else ["(no answer)"]
            lines.append("")
        lines.pop()
    notes = [f"{ex.label}: {note}" for ex in rep.exercises for note in ex.notes] + list(rep.problems)
    if notes:
        lines += ["", "## Noted while grading", ""] + [f"- {_md(n)}" for n in notes]
    return "\n".join(lines) + "\n"


def write_feedback(reports: Sequence[NotebookReport], folder: Path, book: dict[str, Any] | None = None) -> list[Path]:
    """One Markdown file per submission in ``folder`` (``<student>.md``, or ``<student>-<notebook>.md``
    where the student handed in several), each naming the book's version when given; returns the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    ids = [rep.student or Path(rep.notebook).stem for rep in reports]
    written: list[Path] = []
    for rep, sid in zip(reports, ids):
        name = sid if ids.count(sid) == 1 else f"{sid}-{Path(rep.notebook).stem}"
        path = folder / (_UNSAFE.sub("_", name).strip("._") or "submission")
        path = path.with_name(path.name + ".md")
        n = 2
        while path in written:
            path = path.with_name(f"{path.stem}-{n}.md")
            n += 1
        path.write_text(feedback_markdown(rep, book), encoding="utf-8")
        written.append(path)
    return written
