"""``python -m booktools.conventions``: how far each chapter is from the book's page conventions.

The conventions (BOOK_GUIDE): a page is at most :data:`MAX_LINES` lines, and measuring plumbing is at most
:data:`MAX_PLUMBING` of its code. Plumbing: every line of a cell whose code the reader does not see at first, tagged
``remove-input``, ``remove-cell``, ``hide-input`` or ``hide-cell`` (harness, verdicts, glue, checks), and, in the
cells a reader sees, the lines that call ``glue(`` or ``assert``. The share is counted twice, over the non-blank code
lines and over all code lines (a hidden cell's blank lines are plumbing too), and the larger counts. Also counted: ``glue(`` calls in the whole page. Prints a table,
worst first; ``--over`` lists only the pages that break a convention; ``--check`` also exits 1 when a page does, or
when the book holds more than :data:`MAX_GLUE` ``glue(`` calls (``tests/tools/test_conventions.py`` runs it).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from booktools.notebooks import myst_notebooks, read

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 600
MAX_PLUMBING = 0.25
MAX_GLUE = 300
HIDDEN = {"remove-input", "remove-cell", "hide-input", "hide-cell"}


@dataclass(frozen=True)
class PageFigures:
    """One page's figures: its lines, its code lines and plumbing lines (non-blank, then all), ``glue(`` calls."""

    page: str
    lines: int
    code: int
    plumbing: int
    glue: int
    code_all: int = 0
    plumbing_all: int = 0

    @property
    def share(self) -> float:
        """The larger of the plumbing shares over the non-blank code lines and over all code lines."""
        nonblank = self.plumbing / self.code if self.code else 0.0
        return max(nonblank, self.plumbing_all / self.code_all if self.code_all else 0.0)

    @property
    def over(self) -> bool:
        return self.lines > MAX_LINES or self.share > MAX_PLUMBING


def figures(path: Path) -> PageFigures:
    """Count ``path``'s lines, code lines, plumbing lines and ``glue(`` calls."""
    notebook = read(path)
    code = plumbing = glue = code_all = plumbing_all = 0
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        hidden = bool(HIDDEN & set(cell.metadata.get("tags", [])))
        for line in cell.source.splitlines():
            is_plumbing = hidden or bool(re.match(r"\s*(assert\b|glue\()", line))
            code_all += 1
            plumbing_all += is_plumbing
            if not line.strip():
                continue
            code += 1
            glue += len(re.findall(r"\bglue\(", line))
            plumbing += is_plumbing
    name = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    return PageFigures(name, len(path.read_text().splitlines()), code, plumbing, glue, code_all, plumbing_all)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools.conventions", description=__doc__.splitlines()[0])
    parser.add_argument("--over", action="store_true", help="only the pages over a limit")
    parser.add_argument("--check", action="store_true", help="exit 1 when a page, or the book's glue, is over a limit")
    args = parser.parse_args(argv)
    pages = [figures(p) for p in myst_notebooks(ROOT / "chapters") if "reference/api" not in p.as_posix()]
    shown = [p for p in pages if p.over] if args.over else pages
    print(f"{'page':<52} {'lines':>5} {'plumbing':>8} {'glue':>5}")
    for p in sorted(shown, key=lambda p: (p.share, p.lines), reverse=True):
        flags = ("  >600 lines" if p.lines > MAX_LINES else "") + ("  >1/4 plumbing" if p.share > MAX_PLUMBING else "")
        print(f"{p.page:<52} {p.lines:>5} {p.share:>8.0%} {p.glue:>5}{flags}")
    over_lines = sum(p.lines > MAX_LINES for p in pages)
    over_share = sum(p.share > MAX_PLUMBING for p in pages)
    glue = sum(p.glue for p in pages)
    print(f"{len(pages)} pages: {over_lines} over {MAX_LINES} lines, {over_share} over a quarter of plumbing, "
          f"{glue} glue calls (at most {MAX_GLUE})")
    return int(args.check and (over_lines > 0 or over_share > 0 or glue > MAX_GLUE))


if __name__ == "__main__":
    sys.exit(main())
