"""Shared set-up of the unit tests.

The tests mirror the two homes of the code: ``helper/`` tests the learners'
package ``parallel_mcmc`` (one file per module), ``tools/`` the package
``booktools`` that builds, tests, benches and grades the book, and ``book/``
the whole book (its build, its site, its wheel, its pages on other platforms).

JAX fixes its device count when its backend starts, once per process. All
in-process tests see 8 CPU devices, set here before any test touches JAX;
a test that needs another count runs Python in a subprocess (``run_python``).

``make test`` runs the tests in three parts. First the chapters (each must run in under 60 s on its own, and many
time something) and the tests that time the machine, one at a time, with nothing beside them: other work on both
cores, even at the lowest CPU priority (an idle cgroup), slowed one device's multi-threaded XLA run up to five times.
Then, side by side: the long tests that neither time anything nor read what the chapters write, marked
``background`` here (:data:`BACKGROUND`), one file at a time; and everything else, marked ``parallel`` here, two at a
time (pytest-xdist, ``--dist loadfile``): each file goes whole to one worker, and the files that share something go
together, in order (:data:`GROUPS`, :func:`pytest_xdist_make_scheduler`).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

# The importlib_metadata backport, when first imported, appends its finder to sys.meta_path and deletes the
# standard library's (PathFinder.find_distributions). If that first import happens inside a pytester test
# (jupyter_cache and myst_nb import it lazily), pytester restores sys.meta_path afterwards, which removes the
# backport's finder and leaves none at all: later tests find no installed distribution (pybtex's entry points,
# for one). Imported here, before any test, it stays.
import importlib_metadata  # noqa: F401

# The same holds for SQLAlchemy (jupyter_cache's database): pytester deletes the modules a test imported, and the
# second import re-runs SQLAlchemy's Python modules while its compiled cache-key extension keeps the first import's
# classes, so every later query fails with "TypeError: 'InternalTraversal' object is not callable". Imported here,
# it is imported once.
import jupyter_cache.cache.main  # noqa: F401
import pytest

from parallel_mcmc.devices import use_cpu_devices

use_cpu_devices(8)

pytest_plugins = ["pytester"]

# Unit tests whose figures another test running beside them would distort: they time the machine itself.
TIMES_THE_MACHINE = {"test_calibrate.py", "test_cores.py", "test_experiment.py", "test_judging.py", "test_timing.py",
                     "test_xla_threads.py"}

# Files of the second run that must go to one worker, one after another. "site": the tests that read the execution
# cache (the chapters of the first run filled it) or build the site from it (one `make book` at a time); "slurm":
# the tests that start the one-node SLURM cluster.
GROUPS = {"site": ["test_hidden_outputs.py", "test_sharding_pictures.py", "test_site.py", "test_site_trace.py"],
          "slurm": ["test_slurm_jobs.py", "test_dask_slurm.py"]}

# Long tests that run beside the parallel run, after the chapters (the docstring): they time nothing that is
# judged (the benchmark's smoke size checks its table, not its verdicts), have generous time limits (a starved
# minute costs nothing), and read nothing the chapters write (the execution cache is the site group's).
BACKGROUND = {"test_grade_book.py", "test_bench.py", "test_gpu_run.py", "test_published_notebooks.py",
              "test_grade_slicing.py", "test_class_timing.py"}

# The longest work units, dealt first: in the background run the book's grading (about four minutes on a quiet
# machine), in the second run the site's build; started last, they would finish last.
LONGEST_FIRST = ["test_grade_book.py", "site", "test_bench.py", "test_gpu_run.py", "test_grade.py",
                 "test_published_notebooks.py"]

ROOT = Path(__file__).resolve().parents[1]

# The page that reports the run (each page's time and cores got, from the execution cache): the first run's last.
RUN_LAST = "running_this_book.md"


def group_of(path: Path) -> str | None:
    """The work unit of the second run that the test file ``path`` belongs to: its entry in GROUPS, else the file
    itself; None for a file of the first run (a chapter, a test that times the machine)."""
    path = path if path.is_absolute() else ROOT / path
    if not path.is_relative_to(ROOT / "tests") or path.name in TIMES_THE_MACHINE:
        return None
    return next((group for group, files in GROUPS.items() if path.name in files), path.relative_to(ROOT).as_posix())


def pytest_collection_modifyitems(config, items):
    """Mark the tests that may run beside others ``parallel`` (see the docstring), and put the longest work units
    first (``LONGEST_FIRST``); the order within a unit, and of the first run, stays as collected, but for
    ``RUN_LAST``, which reads what the other chapters' runs left in the execution cache."""
    groups = {item: group_of(item.path) for item in items}
    for item, group in groups.items():
        if item.path.name in BACKGROUND:
            item.add_marker(pytest.mark.background)
        elif group is not None:
            item.add_marker(pytest.mark.parallel)
    first = {name: rank for rank, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: (len(first) + 1 + (item.path.name == RUN_LAST)) if groups[item] is None
               else first.get(groups[item], first.get(item.path.name, len(first))))


def pytest_xdist_make_scheduler(config, log):
    """With ``--dist loadfile``, the work units are the groups of :func:`group_of` (a file, or the files that share
    something), dealt in the order collected (longest first), not by their number of tests.

    (pytest-xdist's own ``loadgroup`` marks a test by rewriting its node id, which pytest 9 no longer allows.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class BookScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(Path(nodeid.split("::", 1)[0])) or nodeid.split("::", 1)[0]

    config.option.loadscopereorder = False
    return BookScheduling(config, log)


# Seconds spent in each work unit (setup, call and teardown of its tests; a module fixture counts in its first
# test), summed over the run: what LONGEST_FIRST orders by. Under xdist the controller receives every report.
UNIT_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report):
    path = Path(report.nodeid.split("::", 1)[0])
    unit = group_of(path) or path.as_posix()
    UNIT_SECONDS[unit] = UNIT_SECONDS.get(unit, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    """The work units that took longest, for ordering LONGEST_FIRST and finding what makes ``make test`` slow."""
    if len(UNIT_SECONDS) < 2 or hasattr(terminalreporter.config, "workerinput"):
        return
    ranked = sorted(UNIT_SECONDS.items(), key=lambda kv: -kv[1])
    terminalreporter.write_sep("=", f"longest work units (of {len(ranked)}, {sum(UNIT_SECONDS.values()):.0f} s in all)")
    for unit, seconds in ranked[:15]:
        terminalreporter.write_line(f"{seconds:8.1f} s  {unit}")

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
