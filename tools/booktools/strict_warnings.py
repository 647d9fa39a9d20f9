"""Which warnings fail ``make test``: DeprecationWarning and FutureWarning from the book's stack or its own code.

The stack is jax, jaxlib, numpyro, blackjax and ArviZ (with its parts arviz_base, arviz_stats and
arviz_plots); the book's own code is the helper (``parallel_mcmc``), the tools (``booktools``), the
tests and the pages (code in a notebook cell runs as ``__main__``). A deprecated call is thus caught
whether the library warns from inside itself or, with ``stacklevel``, at the line of the book that
made the call. Warnings of other packages (Jupyter's, for example) stay warnings.

:mod:`booktools.nbtest` applies :func:`pytest_filters` to the tests and runs :data:`KERNEL_CODE` (which
calls :func:`install`) in every notebook's kernel before its first cell.
"""

from __future__ import annotations

import re
import warnings

__all__ = ["LIBRARIES", "OWN_CODE", "CATEGORIES", "MODULES", "install", "pytest_filters", "KERNEL_CODE"]

LIBRARIES = ("jax", "jaxlib", "numpyro", "blackjax", "arviz", "arviz_base", "arviz_stats", "arviz_plots")
OWN_CODE = ("parallel_mcmc", "booktools", "__main__", "conftest")
CATEGORIES = (DeprecationWarning, FutureWarning)
#: The modules whose warnings of those categories are errors: a package and its submodules, or a test file.
MODULES = r"((%s)(\.|$)|test_\w+$|tests\.)" % "|".join(re.escape(name) for name in LIBRARIES + OWN_CODE)


def install() -> None:
    """Make those warnings errors in this process."""
    for category in CATEGORIES:
        warnings.filterwarnings("error", category=category, module=MODULES)


def pytest_filters() -> list[str]:
    """The same filters as pytest's ``filterwarnings`` lines."""
    return [f"error::{category.__name__}:{MODULES}" for category in CATEGORIES]


#: Run silently in a notebook's kernel before its first cell: the same :func:`install`, in that process.
KERNEL_CODE = "from booktools.strict_warnings import install as _install\n_install()\ndel _install\n"
