"""Chapters as notebooks: which files are MyST notebooks, reading them, and jupytext's round trip.

Every tool that reads a chapter goes through here: the notebook tests
(:mod:`booktools.nbtest`), ``make format`` (:mod:`booktools.format`) and the
student edition (:mod:`booktools.coursework.student`). JupyterLab opens a
chapter through jupytext and its autosave writes it back in the same
``md:myst`` format; :func:`saved_text` is that round trip, and
:func:`normalised_text` repeats it until nothing changes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jupytext
from jupytext.config import load_jupytext_config

__all__ = ["FORMAT", "is_myst_notebook", "myst_notebooks", "read", "saved_text", "normalised_text", "as_saved_myst"]

#: jupytext's name of the chapters' format.
FORMAT = "md:myst"
MAX_ROUNDS = 5  # a cell ending in blank lines loses one per round trip

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)


def is_myst_notebook(path: Path) -> bool:
    """True for a Markdown file whose front matter names a kernelspec."""
    path = Path(path)
    if path.suffix != ".md" or not path.is_file():
        return False
    match = _FRONT_MATTER.match(path.read_text(encoding="utf-8", errors="replace")[:5000])
    return bool(match and re.search(r"^kernelspec:", match.group(1), re.MULTILINE))


def myst_notebooks(folder: Path) -> list[Path]:
    """Every MyST notebook under ``folder`` (hidden and ``_`` folders left out), sorted."""
    folder = Path(folder)
    return [
        path for path in sorted(folder.rglob("*.md"))
        if not any(part.startswith((".", "_")) for part in path.relative_to(folder).parts[:-1])
        and is_myst_notebook(path)
    ]


def read(path: Path) -> Any:
    """The notebook a MyST chapter holds, read in memory by jupytext (no converted copy is written)."""
    return jupytext.read(Path(path), fmt=FORMAT)


def saved_text(text: str, path: Path | None = None) -> str:
    """``text`` after one round trip: what JupyterLab writes when it saves the notebook unchanged."""
    config = load_jupytext_config(str(Path(path).resolve())) if path is not None else None
    return jupytext.writes(jupytext.reads(text, fmt=FORMAT, config=config), fmt=FORMAT, config=config)


def normalised_text(text: str, path: Path | None = None) -> str:
    """``text`` round-tripped until the round trip no longer changes it."""
    for _ in range(MAX_ROUNDS):
        saved = saved_text(text, path)
        if saved == text:
            return text
        text = saved
    raise ValueError(f"{path or 'the notebook'} still changes after {MAX_ROUNDS} jupytext round trips.")


def as_saved_myst(notebook: Any) -> str:
    """``notebook`` as MyST text that JupyterLab (reading and writing through jupytext) saves back unchanged."""
    return normalised_text(jupytext.writes(notebook, fmt=FORMAT))
