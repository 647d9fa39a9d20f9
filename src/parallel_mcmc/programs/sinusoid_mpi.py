"""emcee on the sinusoid over MPI ranks, each holding the data: ``srun python -m parallel_mcmc.programs.sinusoid_mpi OUT.npz``.

The batch job of the page "SLURM jobs" (or ``mpiexec -n N`` on one machine).
Every rank imports :mod:`parallel_mcmc.models.sinusoid`, whose
:func:`~parallel_mcmc.models.sinusoid.log_prob` reads the model's data from
that module: each rank builds its own copy the first time it evaluates one
(from the fixed seed, so every copy is the same), and the tasks carry the
walkers' positions alone. Rank 0 runs emcee's ``EnsembleSampler`` with the
pool ``--pool`` names (:data:`parallel_mcmc.programs.emcee_mpi.POOLS`: ``sharing``,
the default, where rank 0 evaluates a share too, so ``N`` ranks give ``N``
workers; ``schwimmbad``, where ``N`` ranks give ``N - 1``).

The walkers start in a small ball around the true parameters
(:func:`~parallel_mcmc.models.sinusoid.initial_walkers`) with a fixed random
state, so :func:`run` without a pool draws exactly the same chain in one
process. Rank 0 writes ``OUT.npz``:

- ``chain``, ``log_prob``: emcee's ``get_chain()`` and ``get_log_prob()``, shape ``(steps, walkers[, 4])``;
- ``acceptance``: each walker's acceptance fraction;
- with ``--backend FILE``, every step is also written to that HDF5 file as it is made, and a job that
  stopped at its time limit, submitted again, goes on from the file's last step (:func:`run`);
- ``pool``, ``workers``, ``seconds``: the pool, the ranks that evaluate log-probabilities, the run's wall time;
- ``ranks``: one row ``(rank, pid, points of data held, times the data were built)`` a worker rank
  (:func:`rank_data`), and ``hosts``, each one's host name.
"""

from __future__ import annotations

import argparse
import os
import socket
import time
from typing import Any, Sequence

import emcee
import numpy as np

from parallel_mcmc.pools.emcee_tasks import random_state
from parallel_mcmc.programs.emcee_mpi import POOLS
from parallel_mcmc.models import sinusoid
from parallel_mcmc._validate import whole_number

__all__ = ["NUM_WALKERS", "NUM_STEPS", "run", "rank_data", "main"]

NUM_WALKERS = 16
NUM_STEPS = 100


def run(pool: Any, num_walkers: int = NUM_WALKERS, num_steps: int = NUM_STEPS,
        backend: emcee.backends.Backend | None = None) -> emcee.EnsembleSampler:
    """emcee on the sinusoid for ``num_steps`` steps with ``pool`` (``None``: in this process), from fixed starts.

    A file that already holds steps of this run (a job stopped at its time limit) is
    resumed from its last step, random state included, up to ``num_steps`` in all: the chain ends exactly as
    the uninterrupted run's.

    Parameters
    ----------
    pool : Any
        The pool, or ``None``.
    num_walkers : int, optional
        The number of walkers.
    num_steps : int, optional
        The steps in all, those already in ``backend`` included.
    backend : emcee.backends.Backend or None, optional
        Where the chain is kept, for example ``emcee.backends.HDFBackend(path)``, which writes every
        step to an HDF5 file.

    Returns
    -------
    emcee.EnsembleSampler
        The sampler after the run.

    Raises
    ------
    ValueError
        If ``backend`` holds another number of walkers or parameters, or more steps than ``num_steps``.
    """
    whole_number("num_steps", num_steps, 1)
    start = sinusoid.initial_walkers(num_walkers)
    done = 0
    if backend is not None and backend.initialized and backend.iteration > 0:
        if tuple(backend.shape) != start.shape:
            raise ValueError(f"The backend holds {backend.shape[0]} walkers of {backend.shape[1]} parameters, not "
                             f"{start.shape[0]} of {start.shape[1]}: resume with the walkers it was started with, "
                             "or give a new file.")
        done = backend.iteration
        if done > num_steps:
            raise ValueError(f"The backend already holds {done} steps, more than the {num_steps} asked for: ask for "
                             f"{done} or more steps, or give a new file.")
    elif backend is not None:
        backend.reset(*start.shape)
    sampler = emcee.EnsembleSampler(num_walkers, start.shape[1], sinusoid.log_prob, pool=pool, backend=backend)
    if done:
        if num_steps > done:
            sampler.run_mcmc(None, num_steps - done)  # from the file's last step and random state
    else:
        sampler.run_mcmc(emcee.State(start, random_state=random_state()), num_steps)
    return sampler


def rank_data(pause: float) -> tuple[int, str, int, int, int]:
    """Sleep ``pause`` s, then ``(MPI rank, host, pid, points of data this process holds, times it built them)``.

    Mapped over one task per evaluating rank, it shows that every rank holds
    the data, built there once. The pause keeps a rank busy, so that a pool
    that deals tasks out one at a time hands the next one to another rank.

    Parameters
    ----------
    pause : float
        As for :func:`parallel_mcmc.pools.emcee_tasks.rank_cpu_time`.

    Returns
    -------
    tuple of (int, str, int, int, int)
        The rank, host, pid, points of data and times they were built.
    """
    from mpi4py import MPI

    time.sleep(pause)
    t, _ = sinusoid.data()
    return (MPI.COMM_WORLD.Get_rank(), socket.gethostname(), os.getpid(), int(t.size),
            int(sinusoid.data.cache_info().misses))


def main(argv: Sequence[str] | None = None) -> None:
    """Run the program: parse the command line (``OUT.npz``, ``--pool``, ``--walkers``, ``--steps``, ``--backend``)
    and write the results on rank 0.

    Parameters
    ----------
    argv : sequence of str or None, optional
        The command-line arguments (default: ``sys.argv[1:]``).
    """
    parser = argparse.ArgumentParser(prog="python -m parallel_mcmc.programs.sinusoid_mpi", description=__doc__.splitlines()[0])
    parser.add_argument("out", help="where rank 0 writes its results (.npz)")
    parser.add_argument("--pool", choices=sorted(POOLS), default="sharing", help="which MPI pool (default: sharing)")
    parser.add_argument("--walkers", type=int, default=NUM_WALKERS)
    parser.add_argument("--steps", type=int, default=NUM_STEPS, help="steps in all, those already in --backend included")
    parser.add_argument("--backend", help="an HDF5 file that keeps every step; a run stopped part-way resumes from it")
    args = parser.parse_args(argv)
    whole_number("--walkers", args.walkers, 8, of=" (twice the dimension at least)")
    whole_number("--steps", args.steps, 1)

    # The ranks other than 0 stay inside the constructor, evaluating tasks, until rank 0 closes the pool.
    with POOLS[args.pool]() as pool:
        start = time.perf_counter()
        backend = emcee.backends.HDFBackend(args.backend) if args.backend else None
        sampler = run(pool, args.walkers, args.steps, backend)
        seconds = time.perf_counter() - start
        held = sorted(set(pool.map(rank_data, [0.05] * pool.size)))
        if len({row[0] for row in held}) != pool.size:
            raise RuntimeError(f"Expected one answer from each of {pool.size} ranks, got ranks {[r[0] for r in held]}.")
        np.savez(
            args.out,
            chain=sampler.get_chain(),
            log_prob=sampler.get_log_prob(),
            acceptance=sampler.acceptance_fraction,
            pool=args.pool,
            workers=pool.size,
            seconds=seconds,
            ranks=np.array([(rank, pid, points, built) for rank, _, pid, points, built in held]),
            hosts=np.array([host for _, host, *_ in held]),
        )
        print(f"{args.pool} pool, {pool.size} workers: {args.steps} steps of {args.walkers} walkers in "
              f"{seconds:.2f} s, mean acceptance {sampler.acceptance_fraction.mean():.2f}", flush=True)


if __name__ == "__main__":
    main()
