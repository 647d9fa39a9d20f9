"""The last lines make test prints: each run's counts, every failure in one line, and the slowest tests.

``python -m booktools.test_report RUN=FILE.xml ...`` reads the JUnit XML report that each of ``make test``'s
pytest runs writes (``--junitxml``) and prints a short summary meant to be the end of the output, so that a log
that keeps only its last lines (a CI page) still says which test failed and why. A report that is missing (its run
never started, or stopped before writing it) is named as such; the exit status is always 0 (the runs' own exit
statuses decide whether ``make test`` passes).
"""

from __future__ import annotations

import argparse
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

WIDTH = 200  # characters of a failure's line


@dataclass(frozen=True)
class Case:
    """One test of a report: its name, time and, when it did not pass, what went wrong in one line."""

    name: str
    seconds: float
    problem: str = ""  # "failed: <message>", "error: <message>" or "" when it passed or was skipped


ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Timeout)\b")


def _one_line(text: str) -> str:
    """A failure's message in one line: the exception that ended a notebook cell's traceback (nbval's message
    starts with its own heading), else the message's first line."""
    lines = [line.strip() for line in ANSI.sub("", text or "").splitlines() if line.strip()]
    if not lines:
        return "(no message)"
    line = lines[0]
    if line.startswith("Notebook cell execution failed"):
        cell = next((found for found in lines[1:2] if found.startswith("Cell ")), "")
        raised = [i for i, found in enumerate(lines) if EXCEPTION.match(found)]
        if raised:  # the exception's line, and the next one where it ends in a colon (the judge's failure)
            i = raised[-1]
            said = lines[i] + (" " + lines[i + 1] if lines[i].endswith(":") and i + 1 < len(lines) else "")
            line = f"{cell.split(':')[0]}: {said}" if cell else said
        else:
            line = cell or line
    return line if len(line) <= WIDTH else line[: WIDTH - 1] + "…"


def read(path: Path) -> list[Case]:
    """The test cases of one JUnit XML report."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        name = "::".join(part for part in (case.get("classname", ""), case.get("name", "")) if part)
        problem = ""
        for kind in ("failure", "error"):
            found = case.find(kind)
            if found is not None:
                message = found.get("message") or found.text or ""
                problem = f"{'failed' if kind == 'failure' else 'error'}: {_one_line(message)}"
                break
        cases.append(Case(name, float(case.get("time") or 0.0), problem))
    return cases


def _short(name: str) -> str:
    """A test's name without its module; a notebook cell's (``chapters.part.page.md::Cell 9``) with its page."""
    module, _, test = name.rpartition("::")
    if test.startswith("Cell ") and module.endswith(".md"):
        return f"{module[:-3].rsplit('.', 1)[-1]} {test}"
    return test


def summary(reports: Sequence[tuple[str, Path]], slowest: int = 3, most_problems: int = 12) -> list[str]:
    """The summary's lines: per run, its counts and slowest tests, then every failure (at most most_problems)."""
    lines, problems = [], []
    for run, path in reports:
        if not path.exists():
            lines.append(f"{run}: no report ({path} is missing: the run did not finish)")
            continue
        try:
            cases = read(path)
        except ET.ParseError as error:
            lines.append(f"{run}: its report {path} cannot be read ({error})")
            continue
        bad = [case for case in cases if case.problem]
        top = sorted(cases, key=lambda case: case.seconds, reverse=True)[:slowest]
        slow = ", ".join(f"{_short(case.name)} {case.seconds:.0f} s" for case in top)
        lines.append(f"{run}: {len(cases)} tests, {len(bad)} not passed; slowest: {slow}")
        problems += [f"  {run}: {case.name}: {case.problem}" for case in bad]
    if problems:
        lines.append(f"not passed ({len(problems)}):")
        lines += problems[:most_problems]
        if len(problems) > most_problems:
            lines.append(f"  ... and {len(problems) - most_problems} more (the runs' output above has them all)")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", metavar="RUN=FILE.xml", help="a run's name and its JUnit XML report")
    args = parser.parse_args(argv)
    reports = []
    for item in args.reports:
        run, sep, file = item.partition("=")
        if not sep or not run or not file:
            parser.error(f"{item!r}: give each report as RUN=FILE.xml, for example first=_build/test-first.xml")
        reports.append((run, Path(file)))
    print("\n".join(summary(reports)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
