"""Worker functions for emcee's process pools, and the plumbing of MPI pools.

A pool sends each task to a worker process by pickling it. Under the ``spawn``
and ``forkserver`` start methods the worker imports the function by name, so
every function a pool calls must live in an importable module; those of the
chapter "Process pools on one machine" live here.

The log-probabilities are a standard normal density that first burns
``cost`` seconds of CPU time, a stand-in for an expensive model. They come in
four flavours that differ only in how they reach a large data array:

- :func:`log_prob_with_data` takes it as an argument (emcee's ``args``), so
  the pool pickles it with every task;
- :func:`log_prob_worker_data` reads it from this module's global, put there
  once per worker by the pool's initializer :func:`set_worker_data` (a copy
  per worker), or :func:`attach_shared_data` (a view of one block of shared
  memory, no copy).

:class:`MPIPoolClosingOnce` is schwimmbad's ``MPIPool`` closed exactly once,
and :func:`find_mpiexec` finds the ``mpiexec`` that belongs to this Python.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from multiprocessing import shared_memory
from pathlib import Path
from typing import Any

import numpy as np
from schwimmbad import MPIPool  # imports mpi4py only when a pool is made

__all__ = [
    "DEFAULT_COST",
    "burn_cpu",
    "busy_log_prob",
    "log_prob_with_data",
    "set_worker_data",
    "attach_shared_data",
    "worker_data",
    "log_prob_worker_data",
    "MPIPoolClosingOnce",
    "MPIExecNotFound",
    "find_mpiexec",
]

#: Seconds of CPU time one call of the busy log-probabilities burns by default.
DEFAULT_COST = 0.002

# Set in each worker by an initializer (or in the main process for a serial run).
_DATA: np.ndarray | None = None
_SHM: shared_memory.SharedMemory | None = None


def burn_cpu(seconds: float) -> None:
    """Keep one core busy for ``seconds`` of this process's CPU time.

    CPU time, not wall-clock time: when more processes spin than there are
    cores, each one takes longer, exactly as real computation would.
    """
    if not seconds >= 0:
        raise ValueError(f"seconds must be a non-negative number, got {seconds!r}.")
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def _standard_normal(theta: Any, centre: Any = 0.0) -> float:
    theta = np.asarray(theta, dtype=float)
    return float(-0.5 * np.sum((theta - centre) ** 2))


def busy_log_prob(theta: Any, cost: float = DEFAULT_COST) -> float:
    """Log-density of a standard normal, after burning ``cost`` s of CPU."""
    burn_cpu(cost)
    return _standard_normal(theta)


def _centre(data: np.ndarray, ndim: int) -> np.ndarray:
    # "Use the data somehow": the first row is the centre of the normal density.
    if data.ndim != 2 or data.shape[1] < ndim:
        raise ValueError(f"data must be a 2-d array with at least {ndim} columns, got shape {data.shape}.")
    return data[0, :ndim]


def log_prob_with_data(theta: Any, data: np.ndarray, cost: float = DEFAULT_COST) -> float:
    """Normal log-density centred on ``data[0]``, with the data passed as an argument.

    Given to emcee as ``EnsembleSampler(..., log_prob_with_data, args=(data,))``:
    with a pool, the data are pickled and sent along with every task.
    """
    burn_cpu(cost)
    theta = np.asarray(theta, dtype=float)
    return _standard_normal(theta, _centre(np.asarray(data), theta.size))


def set_worker_data(data: np.ndarray) -> None:
    """Pool initializer: keep ``data`` in this module for :func:`log_prob_worker_data`.

    Use ``Pool(initializer=set_worker_data, initargs=(data,))``: the data are
    sent once to each worker when it starts (a copy per worker), never again.
    Calling it in the main process prepares a serial run the same way.
    """
    global _DATA
    _DATA = np.asarray(data)


def attach_shared_data(name: str, shape: tuple[int, ...], dtype: str) -> None:
    """Pool initializer: view an existing shared-memory block as this worker's data.

    ``name``, ``shape`` and ``dtype`` describe a block made in the main process
    with ``multiprocessing.shared_memory.SharedMemory(create=True, ...)``.
    Only these few bytes travel to the worker; the array itself is not copied.
    The main process owns the block: it must ``close()`` and ``unlink()`` it
    after the pool has finished.
    """
    global _DATA, _SHM
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be the shared-memory block's name (shm.name), got {name!r}.")
    _SHM = shared_memory.SharedMemory(name=name)  # kept so that the view stays valid
    _DATA = np.ndarray(tuple(shape), dtype=np.dtype(dtype), buffer=_SHM.buf)


def worker_data() -> np.ndarray:
    """The data this process's initializer stored; a clear error if none did."""
    if _DATA is None:
        raise RuntimeError(
            f"No data in this process (pid {os.getpid()}): start the pool with "
            "initializer=set_worker_data (or attach_shared_data) and its initargs, "
            "or call set_worker_data(data) first for a serial run."
        )
    return _DATA


def log_prob_worker_data(theta: Any, cost: float = DEFAULT_COST) -> float:
    """Like :func:`log_prob_with_data`, but reads the data its worker already holds."""
    burn_cpu(cost)
    theta = np.asarray(theta, dtype=float)
    return _standard_normal(theta, _centre(worker_data(), theta.size))


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
