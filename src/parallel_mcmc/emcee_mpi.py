"""The MPI chapter's program: emcee with an MPI pool, run as ``mpiexec -n N python -m parallel_mcmc.emcee_mpi OUT.npz``.

``--pool`` chooses how the ``N`` ranks share the work:

- ``schwimmbad`` (the default): schwimmbad's ``MPIPool``
  (:class:`~parallel_mcmc.mpi.MPIPoolClosingOnce`). Rank 0 runs the sampler
  and hands out log-probability calls; ranks 1..N-1 evaluate them, so
  ``-n K+1`` gives ``K`` workers.
- ``sharing``: :class:`~parallel_mcmc.mpi.SharingMPIPool`. Rank 0 runs the
  sampler and evaluates a share of every batch of calls itself, so
  ``-n K`` gives ``K`` workers.

The sampler starts from :func:`initial_walkers` with the random state
:func:`random_state`, so :func:`run_serial` draws exactly the same chain in
one process. It runs once to warm up, then ``--repeats`` times, and rank 0
writes to ``OUT.npz``:

- ``chain``, ``acceptance``: the last run's chain and acceptance fractions;
- ``times``, ``first_time``: the wall-clock seconds of the runs, and of the warm-up run;
- ``master_cpu``: rank 0's CPU seconds during each run;
- ``pool``, ``workers``: the pool's name and the number of ranks that evaluate log-probabilities;
- ``tasks_per_map``, ``log_prob_calls``: the log-probability calls of each ``map`` of a run, and their sum;
- ``ranks``, ``rank_cpu``: those ranks, and the CPU seconds each used during all the timed runs;
- ``master_wait_seconds``, ``master_wait_cpu``: the wall-clock and CPU seconds rank 0 spent
  waiting for answers during the timed runs (sharing pool only; NaN otherwise).

Run it as::

    mpiexec -n 3 python -m parallel_mcmc.emcee_mpi /tmp/mpi.npz --pool schwimmbad
    mpiexec -n 2 python -m parallel_mcmc.emcee_mpi /tmp/mpi.npz --pool sharing
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable, Iterable, Sequence

import emcee
import numpy as np

from .mpi import MPIPoolClosingOnce, SharingMPIPool
from .pools import DEFAULT_COST, CountingPool, busy_log_prob
from .timing import time_interleaved

__all__ = [
    "NUM_WALKERS",
    "NUM_DIM",
    "DEFAULT_STEPS",
    "POOLS",
    "initial_walkers",
    "random_state",
    "rank_cpu_time",
    "cpu_by_rank",
    "run_sampler",
    "run_serial",
    "main",
]

NUM_WALKERS = 32
NUM_DIM = 5
DEFAULT_STEPS = 8

#: The pools ``--pool`` can choose, by name.
POOLS = {"schwimmbad": MPIPoolClosingOnce, "sharing": SharingMPIPool}


def initial_walkers(num_walkers: int = NUM_WALKERS, ndim: int = NUM_DIM, seed: int = 42) -> np.ndarray:
    """The walkers' starting points, from a fixed seed."""
    return np.random.default_rng(seed).normal(size=(num_walkers, ndim))


def random_state(seed: int = 7) -> tuple:
    """emcee's random state (a legacy ``RandomState`` state), as ``emcee.State(..., random_state=...)`` takes it."""
    return np.random.RandomState(seed).get_state()


def rank_cpu_time(pause: float) -> tuple[int, float]:
    """Sleep ``pause`` seconds, then return ``(MPI rank, CPU seconds this process has used)``.

    Mapped over one task per evaluating rank, it reads every rank's CPU
    clock; the pause keeps a rank busy so that the next task goes to another.
    """
    from mpi4py import MPI

    time.sleep(pause)
    return MPI.COMM_WORLD.Get_rank(), time.process_time()


def cpu_by_rank(pool: Any) -> dict[int, float]:
    """The CPU clock of every rank that evaluates tasks, by rank (one :func:`rank_cpu_time` task each)."""
    clocks = dict(pool.map(rank_cpu_time, [0.05] * pool.size))
    if len(clocks) != pool.size:
        raise RuntimeError(f"Expected one CPU clock from each of {pool.size} ranks, got ranks {sorted(clocks)}.")
    return clocks


def _waited(pool: Any) -> np.ndarray:
    # Wall-clock and CPU seconds the master has spent waiting for answers (the sharing pool counts them).
    return np.array([getattr(pool, "wait_seconds", np.nan), getattr(pool, "wait_cpu", np.nan)])


def run_sampler(pool, steps: int, cost: float = DEFAULT_COST) -> emcee.EnsembleSampler:
    """Run the busy-wait sampler for ``steps`` steps with ``pool`` (``None``: serially)."""
    start = initial_walkers()
    sampler = emcee.EnsembleSampler(start.shape[0], start.shape[1], busy_log_prob, pool=pool, kwargs={"cost": cost})
    sampler.run_mcmc(emcee.State(start, random_state=random_state()), steps)
    return sampler


def run_serial(steps: int, cost: float = DEFAULT_COST) -> emcee.EnsembleSampler:
    """The same run in this process, without a pool: the reference chain."""
    return run_sampler(None, steps, cost)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="where rank 0 writes its results (.npz)")
    parser.add_argument("--pool", choices=sorted(POOLS), default="schwimmbad", help="which MPI pool (default: schwimmbad)")
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS)
    parser.add_argument("--cost", type=float, default=DEFAULT_COST, help="CPU seconds per log-probability call")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    # The ranks other than 0 stay inside the constructor, evaluating
    # log-probabilities, until rank 0 closes the pool; then they exit.
    with POOLS[args.pool]() as pool:
        # The book's one timing loop (timing.time_interleaved), twice: the warm-up run alone, then the timed
        # runs, each with a fresh count of its maps, with every rank's CPU clock read between them.
        counted: list[CountingPool] = []

        def counted_run() -> emcee.EnsembleSampler:
            counted.append(CountingPool(pool))
            return run_sampler(counted[-1], args.steps, args.cost)

        warm_up = time_interleaved({"warm-up": (counted_run,)}, repeats=1, warmup=0)[0]["warm-up"]
        cpu_before, waited_before = cpu_by_rank(pool), _waited(pool)
        timings, outputs = time_interleaved({args.pool: (counted_run,)}, repeats=args.repeats, warmup=0)
        timing, sampler, counted = timings[args.pool], outputs[args.pool], counted[-1]
        cpu_after, waited = cpu_by_rank(pool), _waited(pool) - waited_before
        np.savez(
            args.out,
            chain=sampler.get_chain(),
            acceptance=sampler.acceptance_fraction,
            times=np.array(timing.times),
            first_time=warm_up.times[0],
            master_cpu=np.array(timing.cpu_times),
            pool=args.pool,
            workers=pool.size,
            tasks_per_map=np.array(counted.tasks_per_map),
            log_prob_calls=sum(counted.tasks_per_map),
            ranks=np.array(sorted(cpu_after)),
            rank_cpu=np.array([cpu_after[r] - cpu_before[r] for r in sorted(cpu_after)]),
            master_wait_seconds=waited[0],
            master_wait_cpu=waited[1],
        )


if __name__ == "__main__":
    main()
