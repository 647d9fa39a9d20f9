"""The README's layout table, written from the tree: every module's first docstring line beside its path.

The table in ``README.md`` between the ``layout:start`` and ``layout:end``
markers lists the top-level files by hand (:data:`TOP` and :data:`END`) and
every module of the helper package (``src/parallel_mcmc``) and of the tools
(``tools/booktools``) from the module itself, so that it follows the code.
The exercise checks and their reference twins, one module per exercise, are
summed up in one line each. ``python -m booktools.layout`` writes it;
``make test`` fails while it is stale (``tests/tools/test_layout.py``).
"""

from __future__ import annotations

import ast
import re
import sys
import textwrap
from pathlib import Path

__all__ = ["ROOT", "TOP", "END", "table", "write"]

ROOT = Path(__file__).resolve().parents[2]
WIDTH, COLUMN = 118, 28
#: Lines above the packages: written by hand, since they are not Python modules.
TOP = [
    ("_config.yml, _toc.yml", "Jupyter Book 1.x configuration and table of contents"),
    ("chapters/<part>/", "the pages: MyST Markdown notebooks, one folder per part"),
    ("chapters/beyond_one_machine/jobs/", "the SLURM job scripts its page shows and the tests submit"),
    ("chapters/reference/", "running this book (versions, devices, execution times), the API (generated), bibliography"),
    ("references.bib", "the papers cited in the text"),
    ("pyproject.toml", "the learners' package parallel_mcmc: exactly what it imports"),
]
#: Lines below the packages.
END = [
    ("conftest.py", "one line: loads booktools.nbtest"),
    ("tests/helper/", "unit tests of parallel_mcmc: test_<module>.py for each module (test_emcee_mpi: the emcee tasks "
                      "and their program; test_mpi: both MPI pools; test_judging: the judge and its rules; "
                      "test_surface: the declared names and the moved modules); test_exercise_units in tests/tools"),
    ("tests/tools/", "tests of booktools: notebook tests, format, bench, published notebooks, student edition, grader"),
    ("tests/book/", "the whole book: the site build, the site in a browser, the wheel, other platforms, the API page "
                    "and the names pages import, the course edition, SLURM jobs"),
    (".ci/run", "CI: installs what is missing, then `make test`"),
]
#: Folders of one module per exercise: summed up in one line.
PER_EXERCISE = {
    "src/parallel_mcmc/exercises": ("exercises/<part>/<label>.py", "one exercise's check, its fixed cases and its "
                                    "wrong answers, by its chapter label; common.py: what the checks share"),
    "tools/booktools/coursework/references": ("references/<part>/<label>.py", "one exercise's reference answer and "
                                              "unseen inputs, the twin of its check"),
}


def _summary(path: Path) -> str:
    source = path / "__init__.py" if path.is_dir() else path
    doc = ast.get_docstring(ast.parse(source.read_text())) if source.exists() else None
    paragraph = " ".join((doc or "").strip().split("\n\n")[0].split())
    paragraph = re.sub(r":\w+:`~?(?:[\w.]*\.)?([^`]+)`", r"\1", paragraph).replace("``", "")
    return re.split(r"(?<=[a-z)])\. ", paragraph)[0].rstrip(".")


def _row(name: str, text: str, indent: int) -> list[str]:
    head = " " * indent + name
    lines = textwrap.wrap(text, WIDTH - COLUMN) or [""]
    first = head.ljust(COLUMN - 1) + " " + lines[0] if len(head) < COLUMN - 1 else head
    rest = lines[1:] if len(head) < COLUMN - 1 else lines
    return [first.rstrip()] + [" " * COLUMN + line for line in rest]


def _package(folder: Path, indent: int) -> list[str]:
    rows: list[str] = []
    for path in sorted(folder.iterdir(), key=lambda p: (p.is_dir(), p.name)):
        if path.name.startswith(("__", ".")) or path.suffix not in (".py", "") or path.name.endswith(".egg-info"):
            continue
        if path.is_dir() and not (path / "__init__.py").exists():
            continue
        relative = str(path.relative_to(ROOT))
        if relative in PER_EXERCISE:
            name, text = PER_EXERCISE[relative]
            rows += _row(name, text, indent)
        elif path.is_dir():
            rows += _row(path.name + "/", _summary(path), indent) + _package(path, indent + 2)
        else:
            rows += _row(path.name, _summary(path), indent)
    return rows


def table() -> str:
    """The layout table's lines, as the README shows them (without the code fence)."""
    rows = [line for name, text in TOP for line in _row(name, text, 0)]
    rows += _row("src/parallel_mcmc/", _summary(ROOT / "src" / "parallel_mcmc"), 0)
    rows += _package(ROOT / "src" / "parallel_mcmc", 2)
    rows += _row("tools/pyproject.toml", "the book's tools: their own dependencies (notebook tooling, Jupyter Book)", 0)
    rows += _row("tools/booktools/", _summary(ROOT / "tools" / "booktools"), 0)
    rows += _package(ROOT / "tools" / "booktools", 2)
    rows += [line for name, text in END for line in _row(name, text, 0)]
    return "\n".join(rows)


_BLOCK = re.compile(r"(<!-- layout:start -->\n```\n).*?(\n```\n<!-- layout:end -->)", re.S)


def write(readme: Path = ROOT / "README.md") -> bool:
    """Write the table into ``readme``; return whether it changed."""
    text = readme.read_text()
    if not _BLOCK.search(text):
        raise ValueError(f"{readme} has no block between <!-- layout:start --> and <!-- layout:end --> markers.")
    new = _BLOCK.sub(lambda m: m.group(1) + table() + m.group(2), text)
    if new == text:
        return False
    readme.write_text(new)
    return True


if __name__ == "__main__":
    print("README.md:", "written" if write() else "up to date")
    sys.exit(0)
