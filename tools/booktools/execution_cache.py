"""The site build's cache of executed notebooks, shared with the notebook tests.

``make book`` executes the chapters through myst-nb, which keeps every executed
notebook in a jupyter-cache at ``_build/.jupyter_cache``, keyed by a hash of its
code cells, and runs a page again only when its code changed. ``make test`` runs
every chapter once under nbval first; :mod:`booktools.nbtest` puts each chapter
that ran without a failure into the same cache, with nbval's outputs
(:func:`store`), so the site build that follows (``tests/book/test_site.py``)
finds every page there and executes none of them a second time.

The hash does not see the helper package the notebooks import, so the cache is
only good for the ``src/`` it ran with: :func:`forget_if_src_changed` empties it
when a file under ``src/`` is newer than ``_build/.src-stamp``, and stamps the
moment it did. It also forgets Sphinx's record of the pages it read
(``_build/.doctrees``, and the course edition's in ``_build/course/``): Sphinx reads again only the pages whose text changed,
so with the cache alone emptied, a page left unchanged would keep the outputs
of the old ``src/`` and never run again. The Makefile calls it before every
build, the notebook tests before nbval runs anything. Every path is taken
from the book's root folder (the one holding ``_config.yml``).

Run as ``python -m booktools.execution_cache forget-if-src-changed [ROOT]``
(``ROOT`` defaults to the current folder).
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BookCache", "src_changed", "forget_if_src_changed", "store", "cached", "executed"]


@dataclass(frozen=True)
class BookCache:
    """Where a book keeps its execution cache, its stamp, Sphinx's doctrees and its helper's sources."""

    root: Path

    @property
    def cache(self) -> Path:
        return Path(self.root) / "_build" / ".jupyter_cache"

    @property
    def stamp(self) -> Path:
        return Path(self.root) / "_build" / ".src-stamp"

    @property
    def doctrees(self) -> Path:
        return Path(self.root) / "_build" / ".doctrees"

    @property
    def course_doctrees(self) -> Path:
        """Sphinx's doctrees of the course edition (``make book EDITION=course``), built from the same cache."""
        return Path(self.root) / "_build" / "course" / "_build" / ".doctrees"

    @property
    def sources(self) -> Path:
        return Path(self.root) / "src"


def _source_files(src: Path) -> list[Path]:
    """The files of the helper package, without what Python and pip write there themselves."""
    return [
        p for p in Path(src).rglob("*")
        if p.is_file() and not any(part == "__pycache__" or part.endswith(".egg-info") for part in p.parts)
    ]


def src_changed(src: Path, stamp: Path) -> bool:
    """True when there is no stamp or a file under ``src`` is newer than it."""
    if not stamp.exists():
        return True
    since = stamp.stat().st_mtime
    return any(p.stat().st_mtime > since for p in _source_files(src))


def forget_if_src_changed(book: BookCache) -> bool:
    """Empty the cache and Sphinx's doctrees (the full site's and the course edition's) if the book's ``src/``
    changed since the stamp, then stamp; True if emptied."""
    changed = src_changed(book.sources, book.stamp)
    if changed:
        shutil.rmtree(book.cache, ignore_errors=True)
        shutil.rmtree(book.doctrees, ignore_errors=True)
        shutil.rmtree(book.course_doctrees, ignore_errors=True)
    book.stamp.parent.mkdir(parents=True, exist_ok=True)
    book.stamp.touch()
    return changed


def store(book: BookCache, notebook, source: Path, seconds: float, timings: dict | None = None) -> None:
    """Put an executed ``notebook`` (read from ``source``, every output in place) into the book's cache.

    The site build matches it by the hash of its code cells and their metadata,
    exactly as it would match a notebook it had executed itself. The record's data holds
    ``execution_seconds`` and, when given, ``timings``: the summary of the run's timing verdicts
    (:func:`booktools.nbtest.verdict_summary`).
    """
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    book.cache.parent.mkdir(parents=True, exist_ok=True)
    get_cache(str(book.cache)).cache_notebook_bundle(
        CacheBundleIn(notebook, str(source), data={"execution_seconds": float(seconds),
                                                   **({"timings": timings} if timings is not None else {})}),
        check_validity=False,
        overwrite=True,
    )


def cached(root: Path, page: Path):
    """``page``'s notebook with the outputs of its cached run, or None where the cache holds no run of the
    page as it is now (or the helper package changed since it ran); never runs anything."""
    from .notebooks import read

    book = BookCache(root)
    if not book.cache.exists() or src_changed(book.sources, book.stamp):
        return None
    from jupyter_cache import get_cache

    try:
        return get_cache(str(book.cache)).merge_match_into_notebook(read(page))[1]
    except KeyError:
        return None


def executed(root: Path, page: Path):
    """``page``'s notebook with its outputs: the cached run if it matches the page and the helper package,
    else a new run (for tests that read what a chapter showed)."""
    from .notebooks import read

    notebook = cached(root, page)
    if notebook is not None:
        return notebook
    notebook = read(page)
    from nbclient import NotebookClient

    NotebookClient(notebook, timeout=600, resources={"metadata": {"path": str(page.parent)}}).execute()
    return notebook


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "forget-if-src-changed" or len(argv) > 2:
        print("usage: python -m booktools.execution_cache forget-if-src-changed [ROOT]", file=sys.stderr)
        return 2
    if forget_if_src_changed(BookCache(Path(argv[1] if len(argv) == 2 else ".").resolve())):
        print("src/ changed: executing every notebook again")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
