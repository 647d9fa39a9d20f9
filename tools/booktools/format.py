"""Chapters as JupyterLab saves them: fixed points of jupytext's MyST round trip.

In ``make lab`` JupyterLab opens a chapter through jupytext (``jupytext.read``)
and its autosave writes it back (``jupytext.writes(notebook, fmt="md:myst")``).
A chapter that the round trip changes (a missing ``jupytext_version`` in the
front matter, blank lines jupytext puts around a code cell, trailing blank
lines in a cell) is rewritten by merely opening it. ``python -m
booktools.format`` (or ``make format``) rewrites every chapter as
jupytext would, so that opening one leaves ``git status`` clean;
``--check`` only reports the chapters that would change.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path
from typing import Sequence

from .notebooks import is_myst_notebook, myst_notebooks, normalised_text, saved_text

__all__ = ["unstable", "main"]


def unstable(path: Path, context: int = 1, max_lines: int = 30) -> str | None:
    """None if saving ``path`` leaves it as it is; otherwise a message with a short diff."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    saved = saved_text(text, path)
    if saved == text:
        return None
    diff = list(difflib.unified_diff(text.splitlines(keepends=True), saved.splitlines(keepends=True),
                                     f"{path}", f"{path} (as JupyterLab saves it)", n=context))
    excerpt = "".join(diff[:max_lines]) + ("...\n" if len(diff) > max_lines else "")
    return f"{path} changes when JupyterLab saves it; run `make format` and commit the result.\n{excerpt}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools.format", description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks or folders (default: chapters/)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a notebook would change")
    args = parser.parse_args(argv)
    paths: list[Path] = []
    for given in args.paths or [Path("chapters")]:
        if given.is_dir():
            paths += myst_notebooks(given)
        elif is_myst_notebook(given):
            paths.append(given)
        else:
            print(f"error: {given} is not a folder or a MyST notebook (a .md file with a kernelspec)", file=sys.stderr)
            return 2
    changed = 0
    for path in paths:
        if args.check:
            message = unstable(path)
            if message:
                changed += 1
                print(message)
            continue
        text = path.read_text(encoding="utf-8")
        new = normalised_text(text, path)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed += 1
            print(f"normalised {path}")
    verb = "would change" if args.check else "normalised"
    print(f"{len(paths)} notebook(s), {changed} {verb}.")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
