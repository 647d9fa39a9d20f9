"""Worker functions for emcee's process pools, the data they are given, and a pool that counts tasks.

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

:func:`children_cpu_times` reads the CPU time a pool's workers have used, to
see how many cores they got while a sampler ran, and :class:`CountingPool`
wraps any pool to count the tasks emcee hands each ``map``.

MPI pools (finding ``mpiexec``, schwimmbad's ``MPIPool`` closed once, a pool
whose master shares the work) are in :mod:`parallel_mcmc.mpi`.
"""

from __future__ import annotations

import os
import time
from multiprocessing import shared_memory
from typing import Any, Callable, Iterable, NamedTuple

import numpy as np
import psutil

from .validate import real_number

__all__ = [
    "CountingPool",
    "DEFAULT_COST",
    "burn_cpu",
    "busy_log_prob",
    "log_prob_with_data",
    "set_worker_data",
    "attach_shared_data",
    "worker_data",
    "log_prob_worker_data",
    "CPUTimes",
    "children_cpu_times",
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
    real_number("seconds", seconds, least=0)
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


class CPUTimes(NamedTuple):
    """CPU seconds spent in user code and in the operating system (page faults, pipes, ...)."""

    user: float
    system: float

    @property
    def total(self) -> float:
        return self.user + self.system

    def __sub__(self, other: "CPUTimes") -> "CPUTimes":  # type: ignore[override]
        return CPUTimes(self.user - other.user, self.system - other.system)


def children_cpu_times() -> CPUTimes:
    """CPU seconds used so far by this process's live child processes, such as a pool's workers.

    Read it before and after a timed run: the difference's ``total`` over the
    run's wall-clock seconds is the number of cores the workers got, and its
    ``system`` part the time the operating system worked for them. A child
    that exits in between takes its seconds with it, so keep the pool open
    while measuring.
    """
    user = system = 0.0
    for child in psutil.Process().children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.NoSuchProcess:  # ended between listing and reading
            continue
        user, system = user + times.user, system + times.system
    return CPUTimes(user, system)


class CountingPool:
    """Hands emcee's ``map`` calls on to ``pool`` and counts the tasks of each in ``tasks_per_map``."""

    def __init__(self, pool: Any):
        self.pool = pool
        self.tasks_per_map: list[int] = []

    def map(self, func: Callable[[Any], Any], iterable: Iterable[Any]) -> list[Any]:
        tasks = list(iterable)
        self.tasks_per_map.append(len(tasks))
        return list(self.pool.map(func, tasks))
