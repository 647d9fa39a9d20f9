"""emcee's busy-wait ensemble over any pool: the walkers, the tasks emcee maps, the runs and their CPU clocks.

The ensemble chapters run one fixed emcee problem through every kind of pool
(serial, ``multiprocessing``, MPI, Dask) so that their timings compare: a
log-probability that burns a set number of CPU seconds
(:func:`parallel_mcmc.pools.busy_log_prob`), :data:`NUM_WALKERS` walkers in
:data:`NUM_DIM` dimensions started by :func:`initial_walkers` with the random
state :func:`random_state`, so that :func:`run_serial` draws exactly the chain a
pool draws. :func:`task_function` is what emcee hands to ``pool.map``, for
calibrating a pool's overhead with tasks that pickle like the real ones, and
:func:`cpu_by_rank` reads every MPI rank's CPU clock. The MPI program
(``python -m parallel_mcmc.programs.emcee_mpi``) is a thin main over these.
"""

from __future__ import annotations

import time
from typing import Any

import emcee
import numpy as np
from emcee.ensemble import _FunctionWrapper

from parallel_mcmc.pools.workers import DEFAULT_COST, busy_log_prob, log_prob_with_data

__all__ = [
    "NUM_WALKERS",
    "NUM_DIM",
    "DEFAULT_STEPS",
    "ROUND_MAPS",
    "UNEVEN_COST",
    "initial_walkers",
    "random_state",
    "task_function",
    "data_for",
    "uneven_costs",
    "rank_cpu_time",
    "cpu_by_rank",
    "run_sampler",
    "run_serial",
]

#: Walkers of the ensemble.
NUM_WALKERS = 32
#: Dimensions of a walker.
NUM_DIM = 5
#: Ensemble steps of a run.
DEFAULT_STEPS = 8
#: Maps of a half ensemble in one timed calibration call; a round is short, and several make a call long enough.
ROUND_MAPS = 5
#: CPU seconds of the expensive tasks of the uneven round (:func:`uneven_costs`).
UNEVEN_COST = 1e-3


def initial_walkers(num_walkers: int = NUM_WALKERS, ndim: int = NUM_DIM, seed: int = 42) -> np.ndarray:
    """The walkers' starting points, from a fixed seed.

    Parameters
    ----------
    num_walkers : int, optional
        The number of walkers.
    ndim : int, optional
        The dimension.
    seed : int, optional
        The seed.

    Returns
    -------
    numpy.ndarray
        ``(num_walkers, ndim)``.
    """
    return np.random.default_rng(seed).normal(size=(num_walkers, ndim))


def random_state(seed: int = 7) -> tuple:
    """emcee's random state (a legacy ``RandomState`` state), as ``emcee.State(..., random_state=...)`` takes it.

    Parameters
    ----------
    seed : int, optional
        The seed.

    Returns
    -------
    tuple
        The state of a ``numpy.random.RandomState``.
    """
    return np.random.RandomState(seed).get_state()


def task_function(cost: float = DEFAULT_COST, data: np.ndarray | None = None) -> _FunctionWrapper:
    """What emcee hands to ``pool.map``: its wrapper of the log-probability, with the ``args`` and ``kwargs``.

    Without ``data`` it wraps :func:`~parallel_mcmc.pools.busy_log_prob`;
    with ``data`` it wraps :func:`~parallel_mcmc.pools.log_prob_with_data`
    and the data go into the wrapper's ``args``, as
    ``EnsembleSampler(..., args=(data,))`` puts them.

    Parameters
    ----------
    cost : float, optional
        CPU seconds each evaluation burns.
    data : numpy.ndarray or None, optional
        Data passed with every task.

    Returns
    -------
    emcee.ensemble._FunctionWrapper
        emcee's wrapper of the log-probability.
    """
    if data is None:
        return _FunctionWrapper(busy_log_prob, (), {"cost": cost})
    return _FunctionWrapper(log_prob_with_data, (data,), {"cost": cost})


def data_for(num_bytes: int) -> np.ndarray:
    """A fixed data array of about ``num_bytes`` bytes (float64, ``NUM_DIM`` columns) for :func:`task_function`.

    Parameters
    ----------
    num_bytes : int
        About how many bytes.

    Returns
    -------
    numpy.ndarray
        float64, ``(rows, NUM_DIM)``.
    """
    rows = max(int(num_bytes) // (8 * NUM_DIM), 1)
    return np.random.default_rng(1).normal(size=(rows, NUM_DIM))


def uneven_costs(tasks: int, cost: float = UNEVEN_COST) -> list[float]:
    """Task costs of an uneven round: the first half of the ``tasks`` cost ``cost`` seconds each, the rest none.

    Mapped with :func:`~parallel_mcmc.pools.burn_cpu`: a pool that deals tasks
    out one at a time to whichever worker is idle shares the expensive ones;
    a pool that cuts the round into fixed contiguous chunks gives them all to
    one rank.

    Parameters
    ----------
    tasks : int
        The tasks of the round.
    cost : float, optional
        Seconds of each expensive task.

    Returns
    -------
    list of float
        Each task's cost.
    """
    return [cost] * (tasks // 2) + [0.0] * (tasks - tasks // 2)


def rank_cpu_time(pause: float) -> tuple[int, float]:
    """Sleep ``pause`` seconds, then return ``(MPI rank, CPU seconds this process has used)``.

    Mapped over one task per evaluating rank, it reads every rank's CPU
    clock; the pause keeps a rank busy so that the next task goes to another.

    Parameters
    ----------
    pause : float
        Seconds to sleep.

    Returns
    -------
    rank : int
        This process's MPI rank.
    cpu_seconds : float
        The CPU seconds it has used.
    """
    from mpi4py import MPI

    time.sleep(pause)
    return MPI.COMM_WORLD.Get_rank(), time.process_time()


def cpu_by_rank(pool: Any) -> dict[int, float]:
    """The CPU clock of every rank that evaluates tasks, by rank (one :func:`rank_cpu_time` task each).

    Parameters
    ----------
    pool : Any
        An MPI pool with ``map`` and ``size``.

    Returns
    -------
    dict of int to float
        CPU seconds by rank.

    Raises
    ------
    RuntimeError
        If the tasks did not reach every evaluating rank.
    """
    clocks = dict(pool.map(rank_cpu_time, [0.05] * pool.size))
    if len(clocks) != pool.size:
        raise RuntimeError(f"Expected one CPU clock from each of {pool.size} ranks, got ranks {sorted(clocks)}.")
    return clocks


def run_sampler(pool, steps: int, cost: float = DEFAULT_COST) -> emcee.EnsembleSampler:
    """Run the busy-wait sampler for ``steps`` steps with ``pool`` (``None``: serially).

    Parameters
    ----------
    pool : Any
        The pool, or ``None`` to run serially.
    steps : int
        The sampler's steps.
    cost : float, optional
        CPU seconds each evaluation burns.

    Returns
    -------
    emcee.EnsembleSampler
        The sampler after the run.
    """
    start = initial_walkers()
    sampler = emcee.EnsembleSampler(start.shape[0], start.shape[1], busy_log_prob, pool=pool, kwargs={"cost": cost})
    sampler.run_mcmc(emcee.State(start, random_state=random_state()), steps)
    return sampler


def run_serial(steps: int, cost: float = DEFAULT_COST) -> emcee.EnsembleSampler:
    """The same run in this process, without a pool: the reference chain.

    Parameters
    ----------
    steps, cost
        The steps and cost of :func:`run_sampler`.

    Returns
    -------
    emcee.EnsembleSampler
        The sampler after its serial run.
    """
    return run_sampler(None, steps, cost)
