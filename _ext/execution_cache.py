"""The site build's cache of executed notebooks, shared with the notebook tests.

``make book`` executes the chapters through myst-nb, which keeps every executed
notebook in a jupyter-cache at ``_build/.jupyter_cache``, keyed by a hash of its
code cells, and runs a page again only when its code changed. ``make test`` runs
every chapter once under nbval first; ``conftest.py`` puts each chapter that ran
without a failure into the same cache, with nbval's outputs (:func:`store`), so
the site build that follows (``tests/test_site.py``) finds every page there and
executes none of them a second time.

The hash does not see the helper package the notebooks import, so the cache is
only good for the ``src/`` it ran with: :func:`forget_if_src_changed` empties it
when a file under ``src/`` is newer than ``_build/.src-stamp``, and stamps the
moment it did. It also forgets Sphinx's record of the pages it read
(``_build/.doctrees``): Sphinx reads again only the pages whose text changed,
so with the cache alone emptied, a page left unchanged would keep the outputs
of the old ``src/`` and never run again. The Makefile calls it before every build, ``conftest.py`` before
nbval runs anything.

Run as a script: ``python _ext/execution_cache.py forget-if-src-changed``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "_build" / ".jupyter_cache"
STAMP = ROOT / "_build" / ".src-stamp"
DOCTREES = ROOT / "_build" / ".doctrees"
SOURCES = ROOT / "src"


def _source_files(src: Path) -> list[Path]:
    """The files of the helper packages, without what Python and pip write there themselves."""
    return [
        p for p in src.rglob("*")
        if p.is_file() and not any(part == "__pycache__" or part.endswith(".egg-info") for part in p.parts)
    ]


def src_changed(src: Path = SOURCES, stamp: Path = STAMP) -> bool:
    """True when there is no stamp or a file under ``src`` is newer than it."""
    if not stamp.exists():
        return True
    since = stamp.stat().st_mtime
    return any(p.stat().st_mtime > since for p in _source_files(src))


def forget_if_src_changed(
    cache: Path = CACHE, src: Path = SOURCES, stamp: Path = STAMP, doctrees: Path = DOCTREES
) -> bool:
    """Empty the cache and Sphinx's doctrees if ``src`` changed since the stamp, then stamp; True if emptied."""
    changed = src_changed(src, stamp)
    if changed:
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(doctrees, ignore_errors=True)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.touch()
    return changed


def store(notebook, source: Path, seconds: float, cache: Path = CACHE) -> None:
    """Put an executed ``notebook`` (read from ``source``, every output in place) into the cache.

    The site build matches it by the hash of its code cells and their metadata,
    exactly as it would match a notebook it had executed itself.
    """
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    cache.parent.mkdir(parents=True, exist_ok=True)
    get_cache(str(cache)).cache_notebook_bundle(
        CacheBundleIn(notebook, str(source), data={"execution_seconds": float(seconds)}),
        check_validity=False,
        overwrite=True,
    )


if __name__ == "__main__":
    if sys.argv[1:] != ["forget-if-src-changed"]:
        sys.exit("usage: python _ext/execution_cache.py forget-if-src-changed")
    if forget_if_src_changed():
        print("src/ changed: executing every notebook again")
