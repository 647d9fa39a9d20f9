"""The MPI chapter's program: emcee with an MPI pool, run as ``mpiexec -n N python -m parallel_mcmc.programs.emcee_mpi OUT.npz``.

``--pool`` chooses how the ``N`` ranks share the work:

- ``schwimmbad`` (the default): schwimmbad's ``MPIPool``
  (:class:`~parallel_mcmc.pools.MPIPoolClosingOnce`). Rank 0 runs the sampler
  and hands out log-probability calls one at a time; ranks 1..N-1 evaluate
  them, so ``-n K+1`` gives ``K`` workers.
- ``sharing``: :class:`~parallel_mcmc.pools.SharingMPIPool`. Rank 0 runs the
  sampler and evaluates a share of every batch of calls itself, so
  ``-n K`` gives ``K`` workers.
- ``mpi4py``: ``mpi4py.futures.MPIPoolExecutor``
  (:class:`~parallel_mcmc.pools.FuturesPool`), one task at a time like
  schwimmbad's; start it through mpi4py's server,
  ``mpiexec -n K+1 python -m mpi4py.futures -m parallel_mcmc.programs.emcee_mpi ...``,
  for ``K`` workers.
- ``mpi4py_chunks``: the same executor with ``chunksize=ceil(n / K)``
  (``FuturesPool(chunked=True)``): each worker gets its share of a ``map`` in
  one message, as the sharing pool's workers do, while rank 0 only waits.

The sampler starts from :func:`~parallel_mcmc.pools.emcee_tasks.initial_walkers` with the random state
:func:`~parallel_mcmc.pools.emcee_tasks.random_state`, so :func:`~parallel_mcmc.pools.emcee_tasks.run_serial` draws exactly the same chain in
one process. It runs at every cost of one log-probability that ``--costs``
lists (CPU seconds a call), all in one launch, since starting MPI and
Python on every rank takes seconds. Three calibration calls of the cost
model are timed in the same interleaved rounds as the runs (the book's one
timing loop, :func:`~parallel_mcmc.measure.time_interleaved`): a round of
tasks that do no work (:data:`~parallel_mcmc.pools.emcee_tasks.ROUND_MAPS` maps of a half ensemble), one such
round with ``--data-bytes`` of data in emcee's ``args``, and an uneven round
(:func:`~parallel_mcmc.pools.emcee_tasks.uneven_costs`). Every call runs once to warm up, then ``--repeats``
times, and rank 0 writes to ``OUT.npz``:

- ``costs``: the costs of one log-probability, in seconds;
- ``chains``, ``acceptance``: the last run's chain and acceptance fractions at each cost;
- ``times``, ``master_cpu``: the wall-clock seconds of the runs, and rank 0's CPU seconds during each
  (cost by repeat); ``first_time``: the warm-up run's seconds at each cost;
- ``pool``, ``workers``: the pool's name and the number of ranks that evaluate log-probabilities;
- ``tasks_per_map``, ``log_prob_calls``: the log-probability calls of each ``map`` of a run, and their sum;
- ``round_tasks``, ``no_work_round``: the tasks of a half ensemble, and the seconds of one round of them
  that does no work, in each repeat;
- ``data_bytes``, ``data_task_bytes``, ``data_round``: the size of the data, of one pickled task that
  carries them, and the seconds of one round of such tasks doing no work (empty without ``--data-bytes``);
- ``uneven_costs``, ``uneven_round``: the costs of the tasks of the uneven round, and its seconds;
- ``timed_seconds``, ``master_cpu_total``: the wall-clock seconds of every timed call together, and rank 0's
  CPU seconds during them;
- ``ranks``, ``rank_cpu``: the evaluating ranks, and the CPU seconds each used during all the timed calls;
- ``master_wait_seconds``, ``master_wait_cpu``: the wall-clock and CPU seconds rank 0 spent
  waiting for answers during the timed calls (sharing pool only; NaN otherwise).

Run it as::

    mpiexec -n 3 python -m parallel_mcmc.programs.emcee_mpi /tmp/mpi.npz --pool schwimmbad --costs 1e-4 2e-3
    mpiexec -n 2 python -m parallel_mcmc.programs.emcee_mpi /tmp/mpi.npz --pool sharing
    mpiexec -n 3 python -m mpi4py.futures -m parallel_mcmc.programs.emcee_mpi /tmp/mpi.npz --pool mpi4py
"""

from __future__ import annotations

import argparse
import functools
import pickle
import time
from typing import Any, Callable, Sequence

import emcee
import numpy as np

from parallel_mcmc.measure.timing import time_interleaved
from parallel_mcmc.pools.emcee_tasks import (
    DEFAULT_STEPS,
    NUM_WALKERS,
    ROUND_MAPS,
    cpu_by_rank,
    data_for,
    initial_walkers,
    run_sampler,
    task_function,
    uneven_costs,
)
from parallel_mcmc.pools.mpi import FuturesPool, MPIPoolClosingOnce
from parallel_mcmc.pools.sharing import SharingMPIPool
from parallel_mcmc.pools.workers import DEFAULT_COST, CountingPool, burn_cpu

__all__ = ["POOLS", "main"]

#: The pools ``--pool`` can choose, by name.
POOLS = {"schwimmbad": MPIPoolClosingOnce, "sharing": SharingMPIPool, "mpi4py": FuturesPool,
         "mpi4py_chunks": functools.partial(FuturesPool, chunked=True)}


def _waited(pool: Any) -> np.ndarray:
    # Wall-clock and CPU seconds the master has spent waiting for answers (the sharing pool counts them).
    return np.array([getattr(pool, "wait_seconds", np.nan), getattr(pool, "wait_cpu", np.nan)])


def _maps(pool: Any, func: Callable[[Any], Any], tasks: list, times: int) -> None:
    for _ in range(times):
        pool.map(func, tasks)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the program from its command line (``OUT.npz``, ``--pool``, ``--steps``, ...); rank 0 writes the results.

    Parameters
    ----------
    argv : sequence of str or None, optional
        The command-line arguments (default: ``sys.argv[1:]``).
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="where rank 0 writes its results (.npz)")
    parser.add_argument("--pool", choices=sorted(POOLS), default="schwimmbad", help="which MPI pool (default: schwimmbad)")
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS)
    parser.add_argument("--costs", type=float, nargs="+", default=[DEFAULT_COST],
                        help="CPU seconds per log-probability call: one run per cost")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data-bytes", type=int, default=0,
                        help="also time a round of tasks that carry this many bytes of data in args (0: no)")
    args = parser.parse_args(argv)
    if args.data_bytes < 0 or any(c < 0 for c in args.costs):
        parser.error("--costs and --data-bytes must not be negative")

    # The ranks other than 0 stay inside the constructor, evaluating tasks, until rank 0 closes the pool; then they
    # exit. (Under `python -m mpi4py.futures` only rank 0 runs this function at all.)
    with POOLS[args.pool]() as pool:
        half = initial_walkers()[: NUM_WALKERS // 2]
        counted: dict[float, CountingPool] = {}

        def counted_run(cost: float) -> tuple[emcee.EnsembleSampler, CountingPool]:
            counted[cost] = CountingPool(pool)
            return run_sampler(counted[cost], args.steps, cost)

        runs = {f"cost {i}": (counted_run, c) for i, c in enumerate(args.costs)}
        calibration = {
            "no work": (_maps, pool, task_function(0.0), list(half), ROUND_MAPS),
            "uneven": (pool.map, burn_cpu, uneven_costs(len(half))),
        }
        data = data_for(args.data_bytes) if args.data_bytes else None
        if data is not None:
            calibration["data"] = (_maps, pool, task_function(0.0, data), list(half), 1)
        calls = {**runs, **calibration}
        # The book's one timing loop, twice: every call once to warm up, then the timed rounds, with every
        # rank's CPU clock read around them.
        warm_up = time_interleaved(calls, repeats=1, warmup=0)[0]
        cpu_before, waited_before, master_before = cpu_by_rank(pool), _waited(pool), time.process_time()
        timings, outputs = time_interleaved(calls, repeats=args.repeats, warmup=0)
        master_cpu_total = time.process_time() - master_before
        cpu_after, waited = cpu_by_rank(pool), _waited(pool) - waited_before
        samplers = [outputs[name] for name in runs]
        tasks_per_map = counted[args.costs[-1]].tasks_per_map
        ranks = sorted(cpu_after)
        np.savez(
            args.out,
            costs=np.array(args.costs),
            chains=np.array([s.get_chain() for s in samplers]),
            acceptance=np.array([s.acceptance_fraction for s in samplers]),
            times=np.array([timings[name].times for name in runs]),
            master_cpu=np.array([timings[name].cpu_times for name in runs]),
            first_time=np.array([warm_up[name].times[0] for name in runs]),
            pool=args.pool,
            workers=pool.size,
            tasks_per_map=np.array(tasks_per_map),
            log_prob_calls=sum(tasks_per_map),
            round_tasks=len(half),
            no_work_round=np.array(timings["no work"].times) / ROUND_MAPS,
            data_bytes=0 if data is None else data.nbytes,
            data_task_bytes=0 if data is None else len(pickle.dumps((task_function(0.0, data), half[0]))),
            data_round=np.array([] if data is None else timings["data"].times),
            uneven_costs=np.array(uneven_costs(len(half))),
            uneven_round=np.array(timings["uneven"].times),
            timed_seconds=sum(sum(t.times) for t in timings.values()),
            master_cpu_total=master_cpu_total,
            ranks=np.array(ranks),
            rank_cpu=np.array([cpu_after[r] - cpu_before[r] for r in ranks]),
            master_wait_seconds=waited[0],
            master_wait_cpu=waited[1],
        )


if __name__ == "__main__":
    main()
