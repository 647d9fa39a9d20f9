"""The book's cost model: predict how long a way of running chains takes, from what was measured here.

Every prediction is built from a few quantities measured on the machine that
runs the page, never from assumptions:

- :class:`StepCost`: the time of one step (a NUTS integration step, a
  log-density gradient, one emcee log-probability) at each *width*, the number
  of chains vectorised into that step;
- ``cores``: the physical cores the process may use
  (:func:`parallel_mcmc.devices.physical_cores`);
- the step counts of every chain at every draw (NUTS's ``num_integration_steps``).

Three rules turn them into a time:

1. **Sequential**: work done one step after another costs the sum of its steps.
2. **Lockstep**: chains vectorised together take, at every draw, as many steps
   as their slowest chain, each at the cost of one step of that width.
3. **Concurrent**: independent jobs that run at once finish no sooner than the
   longest of them, and no sooner than their total CPU work spread over the
   cores, one core a job: ``max(max(t), sum(t) / cores)``.

The model leaves out every overhead it does not measure, so a prediction is the
best case: a lower bound on the time. The ideal of a speedup is the model's own
ratio, the baseline's predicted time over the candidate's predicted time, and
the measured speedup is median over median (:class:`parallel_mcmc.judge.Comparison`).
A measurement faster than its prediction (by more than its own spread) means
the model is wrong; a measurement much slower means some cost is missing from
it, and the page names and measures it. :class:`Prediction` holds the two side
by side, and :mod:`parallel_mcmc.judge` holds every threshold that decides
between them.

The concurrent rule counts one core for each job, though one device of a CPU
may keep more busy. It has to: the reading that would say how many
(:func:`parallel_mcmc.timing.cores_busy`, CPU time over wall time) cannot tell
a thread at work from one waiting actively, and a job counted at more cores
than it needs makes a prediction that a measurement can beat. A device that
truly needs several cores shows as a ratio below 1, with that reading beside
it as the cause.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import jax
import numpy as np

from .lockstep import lockstep_cost, steps_2d
from .timing import Timing, time_call
from .validate import real_number, whole_number

__all__ = [
    "StepCost",
    "concurrent",
    "sequential_time",
    "lockstep_time",
    "sharded_time",
    "pool_time",
    "pool_run_time",
    "chunked_pool_run_time",
    "map_chunksize",
    "Prediction",
    "predict",
    "pool_overhead",
    "collective_calls",
    "collective_cost",
    "split_call_time",
    "crossover",
]


@dataclass(frozen=True)
class StepCost:
    """Measured seconds of one step at each width (chains per vectorised step).

    Between measured widths the cost is interpolated linearly; outside them it
    is extrapolated from the nearest two, never below zero.
    """

    widths: tuple[int, ...]
    seconds: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.widths) != len(self.seconds) or not self.widths:
            raise ValueError("widths and seconds must be non-empty and of equal length.")
        if list(self.widths) != sorted(set(self.widths)):
            raise ValueError(f"widths must be increasing and distinct, got {self.widths}.")
        for w in self.widths:
            whole_number("width", w, 1)
        for s in self.seconds:
            real_number("seconds", s, above=0)

    def at(self, width: float) -> float:
        """Seconds of one step of ``width`` chains vectorised together."""
        real_number("width", width, above=0)
        w, s = np.asarray(self.widths, float), np.asarray(self.seconds, float)
        if len(w) == 1:
            return float(s[0] * width / w[0]) if width > w[0] else float(s[0])
        if width <= w[-1]:
            return float(np.interp(width, w, s))
        slope = (s[-1] - s[-2]) / (w[-1] - w[-2])
        return float(max(s[-1] + slope * (width - w[-1]), 0.0))

    def per_chain(self, width: float) -> float:
        """Seconds per chain-step at ``width``: below ``at(1)`` when vectorising pays."""
        return self.at(width) / width

    def __str__(self) -> str:
        parts = ", ".join(f"{w}: {s * 1e6:.1f} µs" for w, s in zip(self.widths, self.seconds))
        return f"one step at width {parts}"


def concurrent(times: Sequence[float], cores: float) -> float:
    """Best wall time of independent jobs run at once: the longest job, or all their work over the cores.

    ``times`` are the jobs' times when each has the machine to itself. Each job
    needs at least one core: with as many cores as jobs this is ``max(times)``;
    with fewer, the jobs share the cores and ``sum(times) / cores`` decides.
    """
    times = [real_number("time", t, least=0) for t in times]
    if not times:
        raise ValueError("times is empty: pass the time of at least one job.")
    cores = real_number("cores", cores, above=0)
    return max(max(times), sum(times) / cores)


def sequential_time(steps: Any, step: StepCost) -> float:
    """Chains one after another on one device: every step of every chain at width 1."""
    return float(steps_2d(steps).sum()) * step.at(1)


def lockstep_time(steps: Any, step: StepCost) -> float:
    """All chains vectorised together: the slowest chain's steps of every draw, at the full width."""
    steps = steps_2d(steps)
    return lockstep_cost(steps) * step.at(steps.shape[0])


def sharded_time(steps: Any, step: StepCost, num_devices: int, cores: float, inner: str = "map") -> float:
    """Chains split into equal consecutive blocks over ``num_devices`` devices that share ``cores`` cores.

    Each device runs its block one chain after another (``inner="map"``) or in
    lockstep (``inner="vmap"``); the devices run concurrently (:func:`concurrent`).
    """
    steps = steps_2d(steps)
    num_devices = whole_number("num_devices", num_devices, 1)
    if steps.shape[0] % num_devices:
        raise ValueError(f"{steps.shape[0]} chains cannot be split evenly over {num_devices} devices.")
    blocks = steps.reshape(num_devices, -1, steps.shape[1])
    if inner == "map":
        per_device = [sequential_time(b, step) for b in blocks]
    elif inner == "vmap":
        per_device = [lockstep_time(b, step) for b in blocks]
    else:
        raise ValueError(f"inner must be 'map' or 'vmap', got {inner!r}.")
    return concurrent(per_device, cores)


def map_chunksize(tasks: int, workers: int) -> int:
    """The chunk size ``multiprocessing.Pool.map`` picks for ``tasks`` tasks over ``workers`` workers.

    It cuts the tasks into about four chunks a worker: ``ceil(tasks / (4 * workers))``.
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
    main process's CPU time of a map, :attr:`~parallel_mcmc.timing.Timing.cpu_times`,
    over its tasks), and that work takes its turn on the same cores as the
    workers' work, so a round lasts no less than
    ``(tasks * (task_seconds + master_cpu_per_task)) / cores``. Without
    overhead and with a core for each worker, a round lasts the busiest
    worker's ``ceil(tasks / workers)`` task times.
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
    tasks_per_map: Sequence[int],
    task_seconds: float,
    workers: int,
    cores: float,
    *,
    overhead_per_task: float = 0.0,
    master_cores: float = 0.0,
    master_cpu_per_task: float = 0.0,
    pool_map_chunks: bool = False,
) -> float:
    """A run whose maps had ``tasks_per_map`` tasks each, one map after another: a :func:`pool_time` round a map.

    ``pool_map_chunks``: the tasks go out in the chunks ``multiprocessing.Pool.map``
    picks (:func:`map_chunksize`); otherwise one at a time, as an MPI pool sends them.
    """
    tasks_per_map = [whole_number("tasks in a map", n, 1) for n in tasks_per_map]
    if not tasks_per_map:
        raise ValueError("tasks_per_map is empty: pass the task count of every map the run made.")
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
    """
    tasks_per_map = [whole_number("tasks in a map", n, 1) for n in tasks_per_map]
    if not tasks_per_map:
        raise ValueError("tasks_per_map is empty: pass the task count of every map the run made.")
    ranks = whole_number("ranks", ranks, 1)
    task_seconds = real_number("task_seconds", task_seconds, least=0)
    cores = real_number("cores", cores, above=0)
    round_overhead = real_number("round_overhead", round_overhead, least=0)
    return sum(round_overhead + max(math.ceil(n / ranks) * task_seconds, n * task_seconds / cores)
               for n in tasks_per_map)


@dataclass(frozen=True)
class Prediction:
    """A measured time beside the cost model's prediction of it.

    ``ratio`` is predicted over measured time: 1 means the model accounts for
    all of it, below 1 that a cost is missing from the model (name and measure
    it), above 1 that the measurement beat the model's best case.
    """

    measured: Timing
    predicted: float
    reason: str = ""

    @property
    def ratio(self) -> float:
        return self.predicted / self.measured.median

    @property
    def fastest_ratio(self) -> float:
        """Predicted over the fastest measured repeat: what a lower bound ("not far slower than the model")
        checks, since a repeat slowed by another program says nothing about the method, and a method
        that is truly slow is slow in every repeat."""
        return self.predicted / self.measured.best

    @property
    def spread(self) -> float:
        """Relative spread of the measured repeats: (max - min) / median."""
        return self.measured.spread / self.measured.median

    def __str__(self) -> str:
        parts = [
            f"measured {self.measured.median * 1e3:.1f} ms (spread {self.spread:.0%})",
            f"predicted {self.predicted * 1e3:.1f} ms" + (f" ({self.reason})" if self.reason else ""),
            f"predicted/measured {self.ratio:.2f}",
        ]
        return f"{self.measured.label}: " + ", ".join(parts)

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))


def predict(measured: Timing, predicted: float, reason: str = "") -> Prediction:
    """Put a :class:`~parallel_mcmc.timing.Timing` beside the model's predicted seconds."""
    if not isinstance(measured, Timing):
        raise TypeError(f"measured must be a Timing from time_call(), got {type(measured).__name__}.")
    return Prediction(measured, real_number("predicted", predicted, above=0), reason)


def pool_overhead(pool: Any, fn: Callable[[Any], Any], tasks: Sequence[Any], repeats: int = 11) -> float:
    """Seconds per task that ``pool.map`` costs beyond the work: the fixed part of :func:`pool_time`.

    Give ``fn``, a task function that does no work but pickles like the real
    one (the same arguments, the same data), and ``tasks``, one round of
    tasks: a map of them is all overhead (pickling, sending, waking a worker,
    the answers coming back). One untimed map first lets the workers start;
    of the ``repeats`` timed maps (the book's one timing loop,
    :func:`~parallel_mcmc.timing.time_call`) the fastest, over ``len(tasks)``, is the
    overhead per task. The fastest, not the median: the model is a best case,
    and a map slowed by another program must not raise it.
    """
    whole_number("repeats", repeats, 1)
    tasks = list(tasks)
    if not tasks:
        raise ValueError("tasks is empty: pass one round of tasks, as the sampler would map them.")
    if not callable(getattr(pool, "map", None)):
        raise TypeError(f"pool must have a map method, got {type(pool).__name__}.")
    return time_call(pool.map, fn, tasks, repeats=repeats, label="pool.map").best / len(tasks)


def collective_calls(collective: Callable[[Any], Any], mesh: Any, axis: str, local: Any, calls: int = 50,
                     work: int = 20) -> dict[str, tuple]:
    """Two compiled loops that calibrate a collective as a run meets it: between real work.

    ``collective(x)`` runs inside ``shard_map`` over ``axis`` of ``mesh`` on each
    device's ``local`` array (the array placed along ``axis``) and returns an array of
    ``x``'s shape. Back to back, a collective between two CPU devices is cheap: both
    threads are already waiting. Between real work the first device to arrive waits
    for the other, and on a quiet machine that wait costs far more (measured here:
    about 7 µs back to back, about 70 µs between work). So each of ``calls``
    iterations first does ``work`` rounds of a small elementwise computation, then
    the collective; a second loop does the work alone. Time both in the rounds of the
    runs they predict (``{label: (fn, *args)}``, for
    :func:`parallel_mcmc.timing.time_with_calibration`) and read the cost with
    :func:`collective_cost`.
    """
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec

    whole_number("calls", calls, 1)
    whole_number("work", work, 1)

    def loop(with_collective: bool):
        def body(i, carry):
            x, busy = carry
            for _ in range(work):
                busy = jnp.sin(busy) * 1.0001 + 1e-3
            x = x + 1e-9 * busy[0]  # the work reaches the result in both loops, so none of it can be dropped
            if with_collective:
                x = x + 1e-9 * collective(x)
            return x, busy

        def run(x):
            return jax.lax.fori_loop(0, calls, body, (x, jnp.ones(2048, x.dtype)))[0]

        spec = PartitionSpec(axis)
        return jax.jit(jax.shard_map(run, mesh=mesh, in_specs=spec, out_specs=spec, check_vma=False))

    return {"collective between work": (loop(True), local), "work alone": (loop(False), local)}


def collective_cost(timings: Any, calls: int = 50) -> float:
    """Seconds one collective adds between real work, from the :func:`collective_calls` loops' timings
    (``{label: Timing}``): the fastest loop with it less the fastest without, per call (never below zero)."""
    whole_number("calls", calls, 1)
    for label in ("collective between work", "work alone"):
        if label not in timings:
            raise KeyError(f"no timing named {label!r}: time both calls of collective_calls().")
    return max(timings["collective between work"].best - timings["work alone"].best, 0.0) / calls


def split_call_time(work_seconds: float, num_devices: int, cores: float, fixed_seconds: float,
                    cores_busy: float = 1.0) -> float:
    """One call whose work is split into ``num_devices`` equal pieces on devices that share ``cores`` cores.

    ``work_seconds`` is one piece's work alone on one device, with the call's own
    fixed cost taken out (a piece's time less the same call doing no work);
    ``fixed_seconds`` is the fixed cost of one call over all ``num_devices``
    devices (the same call doing no work, measured on those devices). The
    pieces run at once (:func:`concurrent`), after the fixed cost: small work
    pays the fixed cost and gains little, large work gains up to
    ``min(num_devices, cores)``.

    ``cores_busy``: the cores one piece keeps busy alone on one device (its
    :attr:`~parallel_mcmc.timing.Timing.cores_busy`; XLA's CPU backend spreads a
    large operation over threads). A piece's CPU work is then its time times
    that, and the pieces' CPU work together shares the cores:
    ``max(work, num_devices * work * cores_busy / cores)``, so large work gains
    only up to ``cores / cores_busy``. The default, 1, is the concurrent rule's
    one core a piece. Readings below 1 (a busy machine) count as 1 and readings
    above ``cores`` as ``cores``. A reading that counts threads waiting actively
    overstates the work: a run that beats this prediction says so.
    """
    work_seconds = real_number("work_seconds", work_seconds, least=0)
    num_devices = whole_number("num_devices", num_devices, 1)
    fixed_seconds = real_number("fixed_seconds", fixed_seconds, least=0)
    cores = real_number("cores", cores, above=0)
    busy = min(max(real_number("cores_busy", cores_busy, above=0), 1.0), cores)
    return fixed_seconds + max(work_seconds, num_devices * work_seconds * busy / cores)


def crossover(sizes: Sequence[float], speedups: Sequence[float]) -> float | None:
    """The size at which a speedup first rises above 1, from a sweep: ``speedups[i]`` measured or predicted at
    ``sizes[i]`` (increasing).

    Between the two sizes where it first goes from at most 1 to above 1, the
    crossing is interpolated linearly in log size and log speedup (a sweep on
    a log grid). Returns ``sizes[0]`` when the speedup is above 1 from the
    first size (the crossover lies at or below it), ``None`` when it is above
    1 at none of them.
    """
    x = [real_number("size", v, above=0) for v in sizes]
    s = [real_number("speedup", v, above=0) for v in speedups]
    if len(x) != len(s) or not x:
        raise ValueError("sizes and speedups must be non-empty and of equal length.")
    if any(b <= a for a, b in zip(x, x[1:])):
        raise ValueError(f"sizes must be increasing, got {list(sizes)}.")
    if s[0] > 1:
        return x[0]
    for (x0, s0), (x1, s1) in zip(zip(x, s), zip(x[1:], s[1:])):
        if s0 <= 1 < s1:
            t = -math.log(s0) / (math.log(s1) - math.log(s0))
            return float(math.exp(math.log(x0) + t * (math.log(x1) - math.log(x0))))
    return None
