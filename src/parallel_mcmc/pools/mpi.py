"""MPI on one machine or many: find the launcher, and two MPI pools for emcee.

MPI programs are started by MPI's launcher, ``mpiexec -n N``, which runs ``N``
copies (ranks) of the same program. :func:`find_mpiexec` finds the launcher
that belongs to this Python, for emcee's MPI pools and for multi-process JAX
alike. Two pools turn the ranks into something with a ``map`` method:

- :class:`MPIPoolClosingOnce` is schwimmbad's ``MPIPool`` with its double
  shut-down fixed. Rank 0 is a master that only hands out tasks, one at a
  time, and polls for the answers; ``-n k+1`` ranks give ``k`` workers.
- :class:`SharingMPIPool` makes every rank a worker, the master included:
  each ``map`` is cut into one contiguous chunk per rank, each rank gets its
  whole chunk in one message, and a rank with nothing to do sleeps between
  looks at its mailbox instead of spinning. ``-n k`` ranks give ``k``
  workers.
- :class:`FuturesPool` is ``mpi4py.futures.MPIPoolExecutor`` with the
  ``map`` emcee calls: rank 0 runs the program, the other ranks serve tasks
  one at a time; start it with ``mpiexec -n k+1 python -m mpi4py.futures``.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Callable, Iterable

from schwimmbad import MPIPool

from parallel_mcmc._validate import real_number

__all__ = ["MPIPoolClosingOnce", "FuturesPool", "MPIExecNotFound", "find_mpiexec"]


class MPIPoolClosingOnce(MPIPool):
    """schwimmbad's ``MPIPool``, told to stop its workers exactly once.

    schwimmbad 0.4.2 stops the workers in ``close()`` (called when a ``with``
    block ends) and again from an ``atexit`` hook. The second round of stop
    messages goes to processes that have already left, which MPICH may answer
    by killing rank 0 as it exits. This pool forgets its workers once they are
    stopped, so the second call sends nothing.

    Run with ``mpiexec -n k+1``: rank 0 is the master that hands out tasks and
    does no likelihood work; ranks 1..k are the workers (they wait inside the
    constructor and leave with ``sys.exit(0)`` when stopped). ``size`` is the
    number of workers, ``k``.

    Attributes
    ----------
    size : int
        The number of workers, ``k``.
    """

    def close(self) -> None:
        if self.is_worker() or not getattr(self, "workers", None):
            return
        super().close()
        self.workers = set()  # the atexit hook now finds nobody to stop




def _mpi():
    # Importing mpi4py.MPI starts MPI in this process, so it happens only when a pool is made.
    from mpi4py import MPI

    return MPI


class FuturesPool:
    """``mpi4py.futures.MPIPoolExecutor`` as an emcee pool: ``map`` returns a list, ``size`` counts the workers.

    Start the program with ``mpiexec -n k+1 python -m mpi4py.futures -m your.module``
    (or ``... -m mpi4py.futures your_script.py``): rank 0 runs it, and ranks
    1..k wait in mpi4py's server for tasks. The executor sends one task
    (``(func, args, kwargs)``, pickled) at a time to an idle worker. Its
    waiting ranks sleep between looks at their mailbox, each sleep twice the
    last, up to ``backoff`` seconds (mpi4py's default: 1 ms). ``size`` is the
    number of workers, ``k``. Use it as a context manager, or call
    :meth:`close`, which shuts the executor down once.

    With ``chunked=True``, ``map`` passes ``chunksize=ceil(n / k)`` for ``n`` tasks and ``k`` workers, so that
    each worker gets its share of a ``map`` in one message (``MPIPoolExecutor.map``'s own option): one overhead
    a worker per ``map`` instead of one a task, and fixed chunks that nothing rebalances.

    Parameters
    ----------
    backoff : float or None, optional
        The longest sleep of a waiting rank, in seconds (default: mpi4py's, 1 ms).
    chunked : bool, optional
        Send each worker its share of a ``map`` in one message (default: one task a message).
    """

    def __init__(self, backoff: float | None = None, chunked: bool = False):
        from mpi4py.futures import MPIPoolExecutor

        if not isinstance(chunked, bool):
            raise TypeError(f"chunked must be True or False, got {chunked!r}.")
        self.chunked = chunked
        options = {} if backoff is None else {"backoff": real_number("backoff", backoff, least=0, of=" of seconds")}
        self.executor = MPIPoolExecutor(**options)
        self.size = self.executor.num_workers  # waits until the workers are there
        if self.size < 1:
            raise ValueError(
                "FuturesPool found no workers. Start the program as `mpiexec -n 3 python -m mpi4py.futures "
                "-m your.module` (3 ranks: the program and 2 workers)."
            )

    def is_master(self) -> bool:
        """Whether this is the master: always, since only rank 0 runs the program under ``python -m mpi4py.futures``.

        Returns
        -------
        bool
            Always True: only rank 0 runs the program.
        """
        return True  # only rank 0 runs the program under `python -m mpi4py.futures`

    def map(self, func: Callable[[Any], Any], iterable: Iterable[Any]) -> list[Any]:
        """``[func(x) for x in iterable]``, one task per message (with ``chunked``, one chunk per worker), the
        results in the order of the tasks.

        Parameters
        ----------
        func, iterable
            As for :meth:`parallel_mcmc.pools.CountingPool.map`.

        Returns
        -------
        list
            The results, in the order of the tasks.
        """
        tasks = list(iterable)
        chunksize = max(math.ceil(len(tasks) / self.size), 1) if self.chunked else 1
        return list(self.executor.map(func, tasks, chunksize=chunksize))

    def close(self) -> None:
        """Shut the executor down (waiting for its tasks); later calls do nothing."""
        self.executor.shutdown(wait=True)

    def __enter__(self) -> "FuturesPool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class MPIExecNotFound(FileNotFoundError):
    """No ``mpiexec`` for this Python was found."""


def find_mpiexec() -> str:
    """Path of the ``mpiexec`` to run this Python's MPI programs with.

    Looks next to ``sys.executable`` first (``pip install mpi4py mpich``
    puts MPICH's ``mpiexec`` in the virtual environment's ``bin``), then on
    ``PATH``.

    Returns
    -------
    str
        The path.

    Raises
    ------
    MPIExecNotFound
        Saying what to install, if there is none.
    """
    here = Path(sys.executable).parent / "mpiexec"
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    on_path = shutil.which("mpiexec")
    if on_path:
        return on_path
    raise MPIExecNotFound(
        "No `mpiexec` found next to this Python "
        f"({Path(sys.executable).parent}) nor on PATH. Install MPI for this environment with "
        "`python -m pip install mpi4py mpich` (the mpich wheel provides mpiexec), "
        "or install your system's MPI (e.g. `apt-get install mpich`) and mpi4py built against it."
    )
