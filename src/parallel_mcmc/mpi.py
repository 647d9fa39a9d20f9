"""MPI on one machine or many: find the launcher, and a schwimmbad pool that closes once.

MPI programs are started by MPI's launcher, ``mpiexec -n N``, which runs ``N``
copies (ranks) of the same program. :func:`find_mpiexec` finds the launcher
that belongs to this Python, for emcee's MPI pools and for multi-process JAX
alike. :class:`MPIPoolClosingOnce` is schwimmbad's ``MPIPool`` with its
double shut-down fixed.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from schwimmbad import MPIPool  # imports mpi4py only when a pool is made

__all__ = ["MPIPoolClosingOnce", "MPIExecNotFound", "find_mpiexec"]


class MPIPoolClosingOnce(MPIPool):
    """schwimmbad's ``MPIPool``, told to stop its workers exactly once.

    schwimmbad 0.4.2 stops the workers in ``close()`` (called when a ``with``
    block ends) and again from an ``atexit`` hook. The second round of stop
    messages goes to processes that have already left, which MPICH may answer
    by killing rank 0 as it exits. This pool forgets its workers once they are
    stopped, so the second call sends nothing.

    Run with ``mpiexec -n k+1``: rank 0 is the master that hands out tasks and
    does no likelihood work; ranks 1..k are the workers (they wait inside the
    constructor and leave with ``sys.exit(0)`` when stopped).
    """

    def close(self) -> None:
        if self.is_worker() or not getattr(self, "workers", None):
            return
        super().close()
        self.workers = set()  # the atexit hook now finds nobody to stop


class MPIExecNotFound(FileNotFoundError):
    """No ``mpiexec`` for this Python was found."""


def find_mpiexec() -> str:
    """Path of the ``mpiexec`` to run this Python's MPI programs with.

    Looks next to ``sys.executable`` first (``pip install mpi4py mpich``
    puts MPICH's ``mpiexec`` in the virtual environment's ``bin``), then on
    ``PATH``. Raises :class:`MPIExecNotFound` saying what to install otherwise.
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
