"""The instructors' page (``chapters/teaching.md``) against the book: its term's plan names every chapter of the
table of contents once, in order, with its number of exercises, and every option of the grader it writes exists."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "chapters" / "teaching.md"
#: A row of the term's plan: ``| 3 | {doc}`part/chapter` (2), ... | objectives | needs |``.
SESSION = re.compile(r"^\| (\d+) \| (.*?) \|")
CHAPTER = re.compile(r"\{doc\}`([^`]+)` \((\d+)\)")


def plan() -> list[tuple[int, list[tuple[str, int]]]]:
    """The sessions of "A term with this book": (number, [(chapter, exercises), ...])."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("## A term with this book", 1)[1].split("\n## ", 1)[0]
    rows = [SESSION.match(line) for line in section.splitlines()]
    return [(int(row[1]), [(doc, int(n)) for doc, n in CHAPTER.findall(row[2])]) for row in rows if row]


def test_the_term_covers_every_chapter_once_in_order_with_its_exercises():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    chapters = [entry["file"].removeprefix("chapters/") for part in toc["parts"] for entry in part["chapters"]
                if "/" in entry["file"].removeprefix("chapters/")
                and not entry["file"].startswith("chapters/reference/")]
    sessions = plan()
    assert [number for number, _ in sessions] == list(range(1, len(sessions) + 1))
    planned = [doc for _, docs in sessions for doc, _ in docs]
    assert planned == chapters, "the term's plan must list the chapters of _toc.yml, each once, in order"
    for doc, count in (item for _, docs in sessions for item in docs):
        text = (ROOT / "chapters" / f"{doc}.md").read_text(encoding="utf-8")
        assert text.count("```{exercise-start}") == count, f"{doc} has {text.count('```{exercise-start}')} exercises"


def test_every_grader_option_on_the_page_exists():
    """The options written after ``booktools.coursework.grade`` or in ``GRADE_ARGS`` (and on the lines that continue
    them), and those of the options' table, are the grader's own (``--help``)."""
    done = subprocess.run([sys.executable, "-m", "booktools.coursework.grade", "--help"], capture_output=True,
                          text=True, check=True, cwd=ROOT)
    known = set(re.findall(r"--[a-z][a-z-]*", done.stdout))
    used, follow = set(), False
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if follow or "coursework.grade " in line or "GRADE_ARGS=" in line or line.startswith("| `--"):
            used |= set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", line))
        follow = line.rstrip().endswith("\\") and (follow or "coursework.grade " in line or "GRADE_ARGS=" in line)
    assert {"--book", "--jobs", "--roster", "--csv", "--feedback", "--json"} <= used
    assert used <= known, f"options the grader does not have: {sorted(used - known)}"
