"""emcee under an MPI pool: run with ``mpiexec -n K+1 python -m parallel_mcmc.mpi_demo OUT.npz``.

The program of the chapter "MPI pools" as a module, so that the tests can run
it: rank 0 builds the sampler and hands out log-probability calls, ranks 1..K
evaluate them. Rank 0 writes the chain, the log-probabilities, the run times, its own CPU
time during them, and the number of workers to ``OUT.npz``.

    mpiexec -n 3 python -m parallel_mcmc.mpi_demo /tmp/mpi.npz --steps 15

The sampler is started from :func:`initial_walkers` with the random state
:func:`random_state`, so a serial run from the same start gives exactly the
same chain (see :func:`run_serial`).
"""

from __future__ import annotations

import argparse
import time
from typing import Sequence

import numpy as np

__all__ = ["NUM_WALKERS", "NUM_DIM", "initial_walkers", "random_state", "run_sampler", "run_serial", "main"]

NUM_WALKERS = 32
NUM_DIM = 5


def initial_walkers(num_walkers: int = NUM_WALKERS, ndim: int = NUM_DIM, seed: int = 42) -> np.ndarray:
    """The walkers' starting points, from a fixed seed."""
    return np.random.default_rng(seed).normal(size=(num_walkers, ndim))


def random_state(seed: int = 7) -> tuple:
    """emcee's random state (a legacy ``RandomState`` state), as ``emcee.State(..., random_state=...)`` takes it."""
    return np.random.RandomState(seed).get_state()


def run_sampler(pool, steps: int, cost: float):
    """Run the busy-wait sampler for ``steps`` steps with ``pool`` (``None``: serially)."""
    import emcee

    from .pools import busy_log_prob

    start = initial_walkers()
    sampler = emcee.EnsembleSampler(start.shape[0], start.shape[1], busy_log_prob, pool=pool, kwargs={"cost": cost})
    sampler.run_mcmc(emcee.State(start, random_state=random_state()), steps)
    return sampler


def run_serial(steps: int, cost: float):
    """The same run in this process, without a pool: the reference chain."""
    return run_sampler(None, steps, cost)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="where rank 0 writes its results (.npz)")
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--cost", type=float, default=0.002, help="CPU seconds per log-probability call")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    import emcee  # noqa: F401  (every rank imports it now, not while unpickling its first task)

    from .pools import MPIPoolClosingOnce

    # Workers (ranks >= 1) wait for tasks inside the constructor and exit when
    # the master closes the pool; only rank 0 gets past this line.
    with MPIPoolClosingOnce() as pool:
        times, cpu, sampler = [], [], None
        for _ in range(args.repeats + 1):  # the first run warms up
            begin, begin_cpu = time.perf_counter(), time.process_time()
            sampler = run_sampler(pool, args.steps, args.cost)
            times.append(time.perf_counter() - begin)
            cpu.append(time.process_time() - begin_cpu)
        np.savez(
            args.out,
            chain=sampler.get_chain(),
            log_prob=sampler.get_log_prob(),
            times=np.array(times[1:]),
            first_time=times[0],
            master_cpu=np.array(cpu[1:]),
            workers=pool.size,
        )


if __name__ == "__main__":
    main()
