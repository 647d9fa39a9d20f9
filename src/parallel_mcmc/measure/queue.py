"""The cost model of a pool of workers: tasks handed out, one at a time or in chunks, to workers that share cores.

emcee asks its pool to ``map`` the log-probability over half an ensemble at a
time. These functions predict how long such maps take from the cost of one task
and the pool's overhead per task (measured: :func:`parallel_mcmc.measure.pool_overhead`),
by playing the queue out: every worker takes the next task (or chunk) when it is
free, the master may spend CPU on every task it sends, and all of them share
the machine's cores (the concurrent rule of :mod:`parallel_mcmc.measure.model`).
"""

from __future__ import annotations

import math
from typing import Sequence

from parallel_mcmc._validate import real_number, whole_number

__all__ = [
    "map_chunksize",
    "pool_time",
    "pool_run_time",
    "chunked_pool_run_time",
    "emcee_run_time",
]


def map_chunksize(tasks: int, workers: int) -> int:
    """The chunk size ``multiprocessing.Pool.map`` picks for ``tasks`` tasks over ``workers`` workers.

    It cuts the tasks into about four chunks a worker: ``ceil(tasks / (4 * workers))``.

    Parameters
    ----------
    tasks : int
        The tasks of the map.
    workers : int
        The pool's workers.

    Returns
    -------
    int
        The chunk size.

    Raises
    ------
    ValueError
        If a count is not a whole number >= 1.
    """
    tasks = whole_number("tasks", tasks, 1)
    workers = whole_number("workers", workers, 1)
    return math.ceil(tasks / (4 * workers))


def pool_time(
    tasks_per_round: int,
    rounds: int,
    task_seconds: float,
    workers: int,
    cores: float,
    *,
    overhead_per_task: float = 0.0,
    master_cores: float = 0.0,
    master_cpu_per_task: float = 0.0,
    chunksize: int = 1,
) -> float:
    """A pool that evaluates ``tasks_per_round`` equal tasks per round, in ``rounds`` rounds one after another.

    emcee evaluates half its walkers per round (two rounds a step), and the
    next round cannot start before the last answer of this one is back. In a
    round the master sends the tasks in chunks of ``chunksize`` (``Pool.map``
    picks it: :func:`map_chunksize`; an MPI pool sends one task at a time),
    one chunk after another; ``overhead_per_task`` is the measured cost of
    sending one task and its answer (pickling, the pipe or the message), so a
    chunk keeps the channel busy for ``chunksize * overhead_per_task``. A
    worker takes its next chunk only when it is idle, and then works through
    it: the sending of one worker's chunk overlaps the others' work, never its
    own. The workers share what is left of ``cores`` after the master's
    ``master_cores`` (a polling master keeps about one core busy), so a round
    also lasts no less than its work spread over those cores. A master that
    does not poll still works for every task: ``master_cpu_per_task`` is its
    own CPU seconds per task (pickling, dispatch, reading the answers: the
    main process's CPU time of a map, ``Timing.cpu_times``,
    over its tasks), and that work takes its turn on the same cores as the
    workers' work, so a round lasts no less than
    ``(tasks * (task_seconds + master_cpu_per_task)) / cores``. Without
    overhead and with a core for each worker, a round lasts the busiest
    worker's ``ceil(tasks / workers)`` task times.

    Parameters
    ----------
    tasks_per_round : int
        Tasks of each round.
    rounds : int
        Rounds one after another.
    task_seconds : float
        Seconds of one task's work.
    workers : int
        The pool's workers.
    cores : float
        Cores the master and workers share.
    overhead_per_task : float, optional
        Seconds of sending one task and its answer.
    master_cores : float, optional
        Cores the master keeps busy (about 1 when it polls).
    master_cpu_per_task : float, optional
        The master's own CPU seconds per task.
    chunksize : int, optional
        Tasks sent at a time.

    Returns
    -------
    float
        The predicted seconds of all the rounds (a best case).

    Raises
    ------
    ValueError
        If an argument is out of range, or ``master_cores`` leaves no core to the workers.
    """
    tasks_per_round = whole_number("tasks_per_round", tasks_per_round, 1)
    rounds = whole_number("rounds", rounds, 1)
    workers = whole_number("workers", workers, 1)
    chunksize = whole_number("chunksize", chunksize, 1)
    task_seconds = real_number("task_seconds", task_seconds, least=0)
    cores = real_number("cores", cores, above=0)
    overhead_per_task = real_number("overhead_per_task", overhead_per_task, least=0)
    master_cores = real_number("master_cores", master_cores, least=0)
    master_cpu_per_task = real_number("master_cpu_per_task", master_cpu_per_task, least=0)
    free = cores - master_cores
    if free <= 0:
        raise ValueError(f"master_cores ({master_cores}) leaves none of the {cores} cores to the workers.")
    full, rest = divmod(tasks_per_round, chunksize)
    chunks = [chunksize] * full + ([rest] if rest else [])
    channel_free, worker_idle = 0.0, [0.0] * workers
    for size in chunks:
        worker = min(range(workers), key=worker_idle.__getitem__)  # the first worker to be idle takes it
        channel_free = max(channel_free, worker_idle[worker]) + size * overhead_per_task
        worker_idle[worker] = channel_free + size * task_seconds
    cores_bound = chunks[0] * overhead_per_task + tasks_per_round * (task_seconds + master_cpu_per_task) / free
    return rounds * max(max(worker_idle), cores_bound)


def pool_run_time(
    tasks_per_map: Sequence[int], task_seconds: float, workers: int, cores: float, *,
    overhead_per_task: float = 0.0, master_cores: float = 0.0, master_cpu_per_task: float = 0.0,
    pool_map_chunks: bool = False,
) -> float:
    """A run whose maps had ``tasks_per_map`` tasks each, one map after another: a :func:`pool_time` round a map.

    Parameters
    ----------
    tasks_per_map : sequence of int
        The task count of every map of the run.
    task_seconds, workers, cores, overhead_per_task, master_cores, master_cpu_per_task
        As for :func:`pool_time`.
    pool_map_chunks : bool, optional
        The tasks go out in the chunks ``multiprocessing.Pool.map`` picks (:func:`map_chunksize`); otherwise one
        at a time, as an MPI pool sends them.

    Returns
    -------
    float
        The predicted seconds of the run (a best case).

    Raises
    ------
    ValueError
        If ``tasks_per_map`` is empty or an argument is out of range.
    """
    tasks_per_map = _task_counts(tasks_per_map)
    return sum(
        pool_time(
            n, 1, task_seconds, workers, cores,
            overhead_per_task=overhead_per_task, master_cores=master_cores,
            master_cpu_per_task=master_cpu_per_task, chunksize=map_chunksize(n, workers) if pool_map_chunks else 1,
        )
        for n in tasks_per_map
    )


def chunked_pool_run_time(
    tasks_per_map: Sequence[int],
    task_seconds: float,
    ranks: int,
    cores: float,
    *,
    round_overhead: float = 0.0,
) -> float:
    """A run through a pool that cuts every map into one fixed contiguous chunk per rank, sent in one message.

    The book's ``SharingMPIPool`` works so: each of the ``ranks`` (the master
    one of them) gets ``ceil(n / ranks)`` or ``floor(n / ranks)`` of a map's
    ``n`` equal tasks at once, and the map ends when the last chunk is back.
    ``round_overhead`` is the measured fixed cost of one map whatever its work
    (sending the chunks, waking the ranks that wait, the answers coming back):
    the time of a map of tasks that do no work. A map lasts that plus the
    largest chunk's work, and no less than that plus all its work spread over
    ``cores``. Nothing is balanced: tasks of unequal cost make the chunk with
    the dear ones last longer, which this best case does not count.

    Parameters
    ----------
    tasks_per_map : sequence of int
        The task counts, one a map, as :func:`pool_run_time` takes them.
    task_seconds : float
        Seconds of one task's work.
    ranks : int
        The ranks, the master one of them.
    cores : float
        Cores the ranks share.
    round_overhead : float, optional
        The measured fixed cost of one map.

    Returns
    -------
    float
        The predicted seconds of the run, a best case.

    Raises
    ------
    ValueError
        Where :func:`pool_run_time` raises it.
    """
    tasks_per_map = _task_counts(tasks_per_map)
    ranks = whole_number("ranks", ranks, 1)
    task_seconds = real_number("task_seconds", task_seconds, least=0)
    cores = real_number("cores", cores, above=0)
    round_overhead = real_number("round_overhead", round_overhead, least=0)
    return sum(round_overhead + max(math.ceil(n / ranks) * task_seconds, n * task_seconds / cores)
               for n in tasks_per_map)


def _task_counts(tasks_per_map: Sequence[int]) -> list[int]:
    """Every map's task count, checked: whole numbers >= 1, and at least one map."""
    counts = [whole_number("tasks in a map", n, 1) for n in tasks_per_map]
    if not counts:
        raise ValueError("tasks_per_map is empty: pass the task count of every map the run made.")
    return counts


def emcee_run_time(
    emcee_alone: float, tasks_per_map: Sequence[int], task_seconds: float, workers: int = 0, cores: float = 1.0, *,
    chunked: bool = False, **pool: float | bool,
) -> float:
    """The model's best time for one emcee run: emcee's own work, plus its maps of log-probabilities.

    The one model of the emcee chapters. emcee's own work (proposals, bookkeeping) is measured as a run whose
    log-probability does nothing (``emcee_alone``); each map then costs what its pool makes of it:

    - ``workers=0``: no pool, every log-probability one after another in this process;
    - ``chunked=False``: a pool that deals out tasks, one at a time or in ``Pool.map``'s chunks
      (:func:`pool_run_time`, which ``pool`` configures: ``overhead_per_task``, ``master_cores``,
      ``master_cpu_per_task``, ``pool_map_chunks``);
    - ``chunked=True``: a pool that sends each rank one contiguous chunk of every map (:func:`chunked_pool_run_time`,
      ``pool``: ``round_overhead``).

    Parameters
    ----------
    emcee_alone : float
        Seconds of the same run with a log-probability that does no work.
    tasks_per_map : sequence of int
        The log-probabilities of every map the run made (``nsteps`` maps of half the walkers, twice a step).
    task_seconds : float
        Seconds of one log-probability.
    workers : int, optional
        The pool's workers (ranks with ``chunked``); 0 for no pool.
    cores : float, optional
        The cores the pool's processes share.
    chunked : bool, optional
        The pool sends one contiguous chunk per rank (the book's ``SharingMPIPool``).
    **pool
        The pool's measured costs, as the function named above takes them.

    Returns
    -------
    float
        Seconds: emcee's own work plus the maps' best case.

    Raises
    ------
    ValueError
        If a count or a time is out of range, or ``pool`` is given without a pool.
    TypeError
        If ``pool`` names an argument the chosen function does not take.
    """
    emcee_alone = real_number("emcee_alone", emcee_alone, least=0, of=" (seconds of emcee's own work)")
    workers = whole_number("workers", workers, 0, of=" (0: no pool)")
    if workers == 0:
        if pool or chunked:
            raise ValueError(f"a run with no pool (workers=0) takes no pool costs; got chunked={chunked}, {pool}.")
        counts = _task_counts(tasks_per_map)
        return emcee_alone + sum(counts) * real_number("task_seconds", task_seconds, least=0)
    model = chunked_pool_run_time if chunked else pool_run_time
    return emcee_alone + model(tasks_per_map, task_seconds, workers, cores, **pool)
