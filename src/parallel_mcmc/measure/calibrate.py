"""Calibration loops of the cost model: the costs it needs that no single call shows.

:func:`pool_overhead` measures what a pool's ``map`` costs per task beyond the
work; :func:`collective_calls` builds the two compiled loops that price one
collective between real work, and :func:`collective_cost` reads their timings.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import jax

from parallel_mcmc._validate import whole_number
from parallel_mcmc.measure.timing import time_call

__all__ = [
    "pool_overhead",
    "collective_calls",
    "collective_cost",
]


def pool_overhead(pool: Any, fn: Callable[[Any], Any], tasks: Sequence[Any], repeats: int = 11) -> float:
    """Seconds per task that ``pool.map`` costs beyond the work: the fixed part of :func:`pool_time`.

    Give ``fn``, a task function that does no work but pickles like the real
    one (the same arguments, the same data), and ``tasks``, one round of
    tasks: a map of them is all overhead (pickling, sending, waking a worker,
    the answers coming back). One untimed map first lets the workers start;
    of the ``repeats`` timed maps (the book's one timing loop,
    :func:`~parallel_mcmc.measure.time_call`) the fastest, over ``len(tasks)``, is the
    overhead per task. The fastest, not the median: the model is a best case,
    and a map slowed by another program must not raise it.

    Parameters
    ----------
    pool : Any
        A pool with a ``map`` method.
    fn : callable
        A task function that does no work but pickles like the real one.
    tasks : sequence
        One round of tasks.
    repeats : int, optional
        Timed maps (at least 1).

    Returns
    -------
    float
        Seconds of overhead per task.

    Raises
    ------
    TypeError
        If ``pool`` has no ``map`` method, or ``repeats`` is not a whole number.
    ValueError
        If ``tasks`` is empty.
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
    :func:`parallel_mcmc.measure.time_with_calibration`) and read the cost with
    :func:`collective_cost`.

    Parameters
    ----------
    collective : callable
        ``collective(x)``, run inside ``shard_map``; returns an array of ``x``'s shape.
    mesh : jax.sharding.Mesh
        The mesh.
    axis : str
        The mesh axis the collective runs over.
    local : jax.Array
        The array placed along ``axis``.
    calls : int, optional
        Iterations of each loop (at least 1).
    work : int, optional
        Rounds of work before each collective.

    Returns
    -------
    dict of str to tuple
        ``{label: (fn, *args)}`` of the two loops, ``"collective between work"`` and ``"work alone"``.

    Raises
    ------
    TypeError
        If ``calls`` or ``work`` is not a whole number.
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
    """Seconds one collective adds between real work, from the :func:`collective_calls` loops' timings.

    The fastest loop with it less the fastest without, per call (never below zero).

    Parameters
    ----------
    timings : mapping of str to parallel_mcmc.measure.Timing
        ``{label: Timing}`` of both loops of :func:`collective_calls`.
    calls : int, optional
        The ``calls`` the loops were made with.

    Returns
    -------
    float
        Seconds per collective.

    Raises
    ------
    KeyError
        If a loop's timing is missing.
    """
    whole_number("calls", calls, 1)
    for label in ("collective between work", "work alone"):
        if label not in timings:
            raise KeyError(f"no timing named {label!r}: time both calls of collective_calls().")
    return max(timings["collective between work"].best - timings["work alone"].best, 0.0) / calls
