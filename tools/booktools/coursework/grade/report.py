"""Stage 5, reporting: the grades of each exercise and submission, as rich tables and as JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from rich.console import Console
from rich.table import Table

STATUSES = ("passed", "failed", "error", "timeout", "ungraded")


@dataclass
class ExerciseResult:
    """The grade of one exercise."""

    label: str
    status: str  # one of STATUSES
    message: str = ""
    notes: list[str] = field(default_factory=list)


@dataclass
class NotebookReport:
    """The grades of one submission."""

    notebook: str
    source: str | None
    exercises: list[ExerciseResult]
    seconds: float
    problems: list[str] = field(default_factory=list)

    @property
    def score(self) -> int:
        return sum(e.status == "passed" for e in self.exercises)

    @property
    def total(self) -> int:
        return sum(e.status != "ungraded" for e in self.exercises)

    def as_dict(self) -> dict[str, Any]:
        return {
            "notebook": self.notebook,
            "source": self.source,
            "score": self.score,
            "total": self.total,
            "seconds": round(self.seconds, 1),
            "exercises": [asdict(e) for e in self.exercises],
            "problems": list(self.problems),
        }


_STYLE = {"passed": "green", "failed": "red", "error": "magenta", "timeout": "yellow", "ungraded": "dim"}


def print_reports(reports: Sequence[NotebookReport], console=None) -> None:
    """One rich table per submission, then the totals."""
    console = console or Console()
    for rep in reports:
        table = Table(title=f"{rep.notebook}" + (f"  ({rep.source})" if rep.source else ""), show_lines=False)
        table.add_column("exercise")
        table.add_column("result")
        table.add_column("message", overflow="fold")
        for ex in rep.exercises:
            message = "; ".join(filter(None, [ex.message, *ex.notes]))
            table.add_row(ex.label, f"[{_STYLE[ex.status]}]{ex.status}[/]", message)
        table.caption = f"score {rep.score} / {rep.total}, {rep.seconds:.0f} s"
        console.print(table)
        for problem in rep.problems:
            console.print(f"[yellow]note:[/] {problem}")
    if len(reports) > 1:
        console.print(f"total: {sum(r.score for r in reports)} / {sum(r.total for r in reports)} over {len(reports)} submissions")


def write_json(reports: Sequence[NotebookReport], path: Path) -> None:
    """Write the grades of ``reports`` and their totals to ``path`` as JSON (its folders made as needed)."""
    data = {
        "score": sum(r.score for r in reports),
        "total": sum(r.total for r in reports),
        "submissions": [r.as_dict() for r in reports],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
