"""Chapters as JupyterLab saves them: fixed points of jupytext's MyST round trip.

In ``make lab`` JupyterLab opens a chapter through jupytext (``jupytext.read``)
and its autosave writes it back (``jupytext.writes(notebook, fmt="md:myst")``).
A chapter that the round trip changes (a missing ``jupytext_version`` in the
front matter, blank lines jupytext puts around a code cell, trailing blank
lines in a cell) is rewritten by merely opening it. ``python -m
parallel_mcmc.chapter_format`` (or ``make format``) rewrites every chapter as
jupytext would, so that opening one leaves ``git status`` clean;
``--check`` only reports the chapters that would change.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path
from typing import Sequence

import jupytext
from jupytext.config import load_jupytext_config

__all__ = ["FORMAT", "myst_notebooks", "saved_text", "normalised_text", "unstable", "main"]

FORMAT = "md:myst"
MAX_ROUNDS = 5  # a cell ending in blank lines loses one per round trip

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)


def is_myst_notebook(path: Path) -> bool:
    """True for a Markdown file whose front matter names a kernelspec."""
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
    parser = argparse.ArgumentParser(prog="python -m parallel_mcmc.chapter_format", description=__doc__.split("\n")[0])
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
