"""The MPI chapter's program: emcee with an MPI pool, run as ``mpiexec -n K+1 python -m parallel_mcmc.emcee_mpi OUT.npz``.

Rank 0 runs the sampler and hands out log-probability calls; ranks 1..K
evaluate them. The sampler starts from :func:`initial_walkers` with the random
state :func:`random_state`, so :func:`run_serial` draws exactly the same chain
in one process. Rank 0 writes the chain, the acceptance fractions, the run
times, its own CPU time during them and the number of workers to ``OUT.npz``::

    mpiexec -n 3 python -m parallel_mcmc.emcee_mpi /tmp/mpi.npz --steps 8
"""

from __future__ import annotations

import argparse
import time
from typing import Sequence

import emcee
import numpy as np

from .mpi import MPIPoolClosingOnce
from .pools import DEFAULT_COST, busy_log_prob

__all__ = ["NUM_WALKERS", "NUM_DIM", "initial_walkers", "random_state", "run_sampler", "run_serial", "main"]

NUM_WALKERS = 32
NUM_DIM = 5


def initial_walkers(num_walkers: int = NUM_WALKERS, ndim: int = NUM_DIM, seed: int = 42) -> np.ndarray:
    """The walkers' starting points, from a fixed seed."""
    return np.random.default_rng(seed).normal(size=(num_walkers, ndim))


def random_state(seed: int = 7) -> tuple:
    """emcee's random state (a legacy ``RandomState`` state), as ``emcee.State(..., random_state=...)`` takes it."""
    return np.random.RandomState(seed).get_state()


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
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--cost", type=float, default=DEFAULT_COST, help="CPU seconds per log-probability call")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    # Ranks 1..K stay inside the constructor, evaluating log-probabilities,
    # until rank 0 closes the pool; then they exit. Only rank 0 goes on.
    with MPIPoolClosingOnce() as pool:
        times, master_cpu, sampler = [], [], None
        for _ in range(args.repeats + 1):  # the first run warms up
            wall, cpu = time.perf_counter(), time.process_time()
            sampler = run_sampler(pool, args.steps, args.cost)
            times.append(time.perf_counter() - wall)
            master_cpu.append(time.process_time() - cpu)
        np.savez(
            args.out,
            chain=sampler.get_chain(),
            acceptance=sampler.acceptance_fraction,
            times=np.array(times[1:]),
            master_cpu=np.array(master_cpu[1:]),
            workers=pool.size,
        )


if __name__ == "__main__":
    main()
