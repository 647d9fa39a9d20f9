"""Collect the book's MyST notebooks as tests.

Every ``.md`` file under the test paths whose front matter names a
``kernelspec`` is a notebook: jupytext reads it in memory (no converted copy
is written) and nbval runs its code cells, one test per cell, in a fresh
kernel per notebook. Cells tagged ``raises-exception`` must raise; cells
tagged ``skip-execution`` are skipped, as in the book build.
"""

from __future__ import annotations

import re
from pathlib import Path
from unittest import mock

import jupytext
import nbval.plugin
import pytest

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)


def is_myst_notebook(path: Path) -> bool:
    """True for a Markdown file whose front matter names a kernelspec."""
    if path.suffix != ".md":
        return False
    match = _FRONT_MATTER.match(path.read_text(encoding="utf-8", errors="replace")[:5000])
    return bool(match and re.search(r"^kernelspec:", match.group(1), re.MULTILINE))


class _NotebookReader:
    """Stands in for nbformat inside nbval while it collects one notebook."""

    def __init__(self, notebook):
        self._notebook = notebook

    def read(self, *args, **kwargs):
        return self._notebook

    def __getattr__(self, name):  # anything else comes from nbformat itself
        import nbformat

        return getattr(nbformat, name)


class MystNotebook(nbval.plugin.IPyNbFile):
    """An nbval notebook read from a MyST Markdown file by jupytext."""

    def collect(self):
        notebook = jupytext.read(self.path)
        for cell in notebook.cells:
            tags = cell.get("metadata", {}).get("tags", [])
            if cell.cell_type == "code" and "skip-execution" in tags and "nbval-skip" not in tags:
                cell.metadata["tags"] = [*tags, "nbval-skip"]
        with mock.patch.object(nbval.plugin, "nbformat", _NotebookReader(notebook)):
            yield from super().collect()


def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    if is_myst_notebook(file_path):
        return MystNotebook.from_parent(parent, path=file_path)
    return None


# --- How long each notebook took, reported at the end of the run ---------------------

NOTEBOOK_BUDGET_S = 90.0
_notebook_seconds: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    path = report.nodeid.split("::", 1)[0]
    if path.endswith(".md"):
        _notebook_seconds[path] = _notebook_seconds.get(path, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if not _notebook_seconds:
        return
    terminalreporter.section("notebook run times (kernel start included)")
    for path, seconds in sorted(_notebook_seconds.items()):
        flag = f"  over the {NOTEBOOK_BUDGET_S:.0f} s budget" if seconds > NOTEBOOK_BUDGET_S else ""
        terminalreporter.write_line(f"{seconds:7.1f} s  {path}{flag}")
    terminalreporter.write_line(f"{sum(_notebook_seconds.values()):7.1f} s  in all")
