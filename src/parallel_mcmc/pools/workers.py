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

Page faults: :func:`call_with_faults` runs one task and reports the minor page
faults its process took during it (and its seconds), and
:func:`keep_freed_memory`, a pool initializer, tells the C library's memory
allocator (glibc) to keep freed memory in the process, so that a worker does
not hand back and fault in again its temporary arrays at every task.
:func:`sinusoid_log_prob_points` is the sinusoid's log-probability on the
first ``num_points`` points of its data, for sweeps of the data size.

MPI pools (finding ``mpiexec``, schwimmbad's ``MPIPool`` closed once, a pool
whose master shares the work) are in :mod:`parallel_mcmc.pools`.
"""

from __future__ import annotations

import os
import time
from multiprocessing import shared_memory
from typing import Any, Callable, Iterable

import numpy as np

from parallel_mcmc._validate import real_number, whole_number

__all__ = [
    "CountingPool", "DEFAULT_COST", "burn_cpu", "busy_log_prob", "log_prob_with_data", "set_worker_data",
    "attach_shared_data", "worker_data", "log_prob_worker_data", "sinusoid_log_prob_points",
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

    Parameters
    ----------
    seconds : float
        CPU seconds to burn (non-negative).

    Raises
    ------
    ValueError
        If ``seconds`` is not a non-negative number.
    """
    real_number("seconds", seconds, least=0)
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def _standard_normal(theta: Any, centre: Any = 0.0) -> float:
    theta = np.asarray(theta, dtype=float)
    return float(-0.5 * np.sum((theta - centre) ** 2))


def busy_log_prob(theta: Any, cost: float = DEFAULT_COST) -> float:
    """Log-density of a standard normal, after burning ``cost`` s of CPU.

    Parameters
    ----------
    theta : array_like
        One walker's position.
    cost : float, optional
        CPU seconds to burn first.

    Returns
    -------
    float
        The log-density.
    """
    burn_cpu(cost)
    return _standard_normal(theta)


def _centre(data: np.ndarray, ndim: int) -> np.ndarray:
    # "Use the data somehow": the first row is the centre of the normal density.
    if data.ndim != 2 or data.shape[1] < ndim:
        raise ValueError(f"data must be a 2-d array with at least {ndim} columns, got shape {data.shape}.")
    return data[0, :ndim]


def _centred_log_prob(theta: Any, data: Callable[[], np.ndarray], cost: float) -> float:
    """Burn ``cost``, then the normal log-density at ``theta`` centred on the first row of ``data()``."""
    burn_cpu(cost)
    theta = np.asarray(theta, dtype=float)
    return _standard_normal(theta, _centre(data(), theta.size))


def log_prob_with_data(theta: Any, data: np.ndarray, cost: float = DEFAULT_COST) -> float:
    """Normal log-density centred on ``data[0]``, with the data passed as an argument.

    Given to emcee as ``EnsembleSampler(..., log_prob_with_data, args=(data,))``:
    with a pool, the data are pickled and sent along with every task.

    Parameters
    ----------
    theta, cost
        As for :func:`busy_log_prob`.
    data : numpy.ndarray
        The data.

    Returns
    -------
    float
        The log-density at ``theta``.
    """
    return _centred_log_prob(theta, lambda: np.asarray(data), cost)


def set_worker_data(data: np.ndarray) -> None:
    """Pool initializer: keep ``data`` in this module for :func:`log_prob_worker_data`.

    Use ``Pool(initializer=set_worker_data, initargs=(data,))``: the data are
    sent once to each worker when it starts (a copy per worker), never again.
    Calling it in the main process prepares a serial run the same way.

    Parameters
    ----------
    data : numpy.ndarray
        The data.
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

    Parameters
    ----------
    name : str
        The shared-memory block's name.
    shape : tuple of int
        The array's shape.
    dtype : str
        The array's dtype.

    Raises
    ------
    TypeError
        If ``name`` is not a string.
    """
    global _DATA, _SHM
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be the shared-memory block's name (shm.name), got {name!r}.")
    _SHM = shared_memory.SharedMemory(name=name)  # kept so that the view stays valid
    _DATA = np.ndarray(tuple(shape), dtype=np.dtype(dtype), buffer=_SHM.buf)


def worker_data() -> np.ndarray:
    """The data this process's initializer stored; a clear error if none did.

    Returns
    -------
    numpy.ndarray
        The data.

    Raises
    ------
    RuntimeError
        If no initializer stored any.
    """
    if _DATA is None:
        raise RuntimeError(
            f"No data in this process (pid {os.getpid()}): start the pool with "
            "initializer=set_worker_data (or attach_shared_data) and its initargs, "
            "or call set_worker_data(data) first for a serial run."
        )
    return _DATA


def log_prob_worker_data(theta: Any, cost: float = DEFAULT_COST) -> float:
    """Like :func:`log_prob_with_data`, but reads the data its worker already holds.

    Parameters
    ----------
    theta, cost
        The same as in :func:`busy_log_prob`.

    Returns
    -------
    float
        The log-density, centred on the worker's data.
    """
    return _centred_log_prob(theta, worker_data, cost)


class CountingPool:
    """Hands emcee's ``map`` calls on to ``pool`` and counts the tasks of each in ``tasks_per_map``.

    Parameters
    ----------
    pool : Any
        The pool that does the work.
    """

    def __init__(self, pool: Any):
        self.pool = pool
        self.tasks_per_map: list[int] = []

    def map(self, func: Callable[[Any], Any], iterable: Iterable[Any]) -> list[Any]:
        """Hand ``func`` and the tasks on to the pool's ``map``, after counting them in ``tasks_per_map``.

        Parameters
        ----------
        func : callable
            The task function.
        iterable : iterable
            The tasks.

        Returns
        -------
        list
            The pool's results.
        """
        tasks = list(iterable)
        self.tasks_per_map.append(len(tasks))
        return list(self.pool.map(func, tasks))




def sinusoid_log_prob_points(theta: Any, num_points: int) -> float:
    """:func:`parallel_mcmc.models.sinusoid.log_prob` on the first ``num_points`` points of the book's data.

    The same arithmetic in float64 on a prefix of the data (a view, no copy):
    the cost of a call grows with ``num_points``, for sweeps of the data size.
    With ``num_points = NUM_POINTS`` it is ``sinusoid.log_prob`` itself.

    Parameters
    ----------
    theta : array_like
        One walker's position.
    num_points : int
        How many of the data's points to use.

    Returns
    -------
    float
        The log-posterior.

    Raises
    ------
    ValueError
        If ``num_points`` is not a whole number between 1 and ``NUM_POINTS``, or ``theta`` does not hold 4
        parameters.
    """
    from parallel_mcmc.models import sinusoid

    num_points = whole_number("num_points", num_points, 1)
    if num_points > sinusoid.NUM_POINTS:
        raise ValueError(f"num_points must be at most {sinusoid.NUM_POINTS:,}, the data's size; got {num_points:,}.")
    theta = np.asarray(theta, dtype=float)
    if theta.shape != (4,):
        raise ValueError(f"theta must hold the 4 parameters of one walker, got shape {theta.shape}.")
    if np.any(theta <= sinusoid.PRIOR_LOW) or np.any(theta >= sinusoid.PRIOR_HIGH):
        return -np.inf
    t, y = sinusoid.data()
    t, y = t[:num_points], y[:num_points]
    amplitude, frequency, phase, offset = theta
    resid = y - (amplitude * np.sin(2 * np.pi * frequency * t + phase) + offset)
    return float(-0.5 * np.sum(resid * resid) / sinusoid.NOISE_SCALE**2)
