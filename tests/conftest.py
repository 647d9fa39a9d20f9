"""Shared set-up of the unit tests.

The tests mirror the two homes of the code: ``helper/`` tests the learners'
package ``parallel_mcmc`` (one file per module), ``tools/`` the package
``booktools`` that builds, tests, benches and grades the book, and ``book/``
the whole book (its build, its site, its wheel, its pages on other platforms).

JAX fixes its device count when its backend starts, once per process. All
in-process tests see 8 CPU devices, set here before any test touches JAX;
a test that needs another count runs Python in a subprocess (``run_python``).

``make test`` runs the tests in two parts: first the chapters, ``book/`` and the tests that time the machine, one
at a time; then the rest of ``helper/`` and ``tools/``, marked ``parallel`` here, two at a time (pytest-xdist).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

# The importlib_metadata backport, when first imported, appends its finder to sys.meta_path and deletes the
# standard library's (PathFinder.find_distributions). If that first import happens inside a pytester test
# (jupyter_cache and myst_nb import it lazily), pytester restores sys.meta_path afterwards, which removes the
# backport's finder and leaves none at all: later tests find no installed distribution (pybtex's entry points,
# for one). Imported here, before any test, it stays.
import importlib_metadata  # noqa: F401
import pytest

from parallel_mcmc.devices import use_cpu_devices

use_cpu_devices(8)

pytest_plugins = ["pytester"]

# Unit tests whose figures another test running beside them would distort: they time the machine itself.
TIMES_THE_MACHINE = {"test_calibrate.py", "test_cores.py", "test_experiment.py", "test_judging.py", "test_timing.py",
                     "test_xla_threads.py"}


# The longest files of the second run, dealt to the workers first (each file goes whole to one worker): the book's
# grading alone takes about four minutes, and started last it would finish last.
LONGEST_FIRST = ["test_grade_book.py", "test_bench.py", "test_gpu_run.py", "test_grade.py", "test_published_notebooks.py"]


def pytest_collection_modifyitems(config, items):
    """Mark the tests of ``helper/`` and ``tools/`` that may run two at a time ``parallel`` (see the docstring), and
    put the longest of their files first (``LONGEST_FIRST``); the order of the other tests stays as collected."""
    tests = config.rootpath / "tests"
    for item in items:
        if item.path.parent in (tests / "helper", tests / "tools") and item.path.name not in TIMES_THE_MACHINE:
            item.add_marker(pytest.mark.parallel)
    first = {name: rank for rank, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: first.get(item.path.name, len(first)) if item.get_closest_marker("parallel")
               else len(first))


@pytest.fixture
def run_python():
    """Run a snippet of Python in a fresh interpreter; return the completed process."""

    def run(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=timeout,
        )

    return run



@pytest.fixture(scope="session")
def cluster():
    """A one-node SLURM cluster on this machine (``booktools.slurm_cluster``), started once for every test that
    submits jobs to it; skipped, with the reason, where it cannot start."""
    from booktools import slurm_cluster

    reason = slurm_cluster.unavailable()
    if reason:
        pytest.skip(reason)
    with slurm_cluster.SlurmCluster() as started:
        print(f"\nSLURM cluster started in {started.start_seconds:.2f} s")
        yield started
