"""The exercise ``ex-dask-cost-for-speedup`` of the chapter ``chapters/ensemble/dask.md``: its check, :func:`cost_for_speedup`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

import reprlib
from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc.measure.queue import pool_run_time
from parallel_mcmc._validate import is_number
from parallel_mcmc.exercises.common import as_float, call, expect, expect_type, passed
from ._shared import EMCEE_MAPS, maps_text

__all__ = ["cost_for_speedup", "WRONG_ANSWERS"]


# (speedup, overhead_per_task, emcee_seconds, tasks_per_map, workers, cores, master_cores): a pool that deals out
# one task at a time (the Dask pool) wanting a speedup over the serial run; the last ones cannot reach it.
CASES = [
    (1.5, 0.5e-3, 0.02, EMCEE_MAPS, 2, 2.0, 0.3),
    (1.2, 1e-3, 0.2, EMCEE_MAPS, 2, 2.0, 0.0),
    (3.0, 0.3e-3, 0.05, [64] + [32] * 10, 8, 8.0, 1.0),
    (1.5, 2e-3, 0.01, [24] + [12] * 6, 4, 2.0, 0.5),
    (2.0, 0.5e-3, 0.02, EMCEE_MAPS, 2, 2.0, 0.3),
    (1.9, 0.5e-3, 0.02, EMCEE_MAPS, 4, 2.0, 0.2),
]


def _pool_speedup(cost: float, overhead: float, emcee: float, maps: Sequence[int], workers: int, cores: float,
                  master: float) -> float:
    pool = pool_run_time(maps, cost, workers, cores, overhead_per_task=overhead, master_cores=master)
    return (emcee + sum(maps) * cost) / (emcee + pool)


def _cost_for_speedup(speedup: float, overhead: float, emcee: float, maps: Sequence[int], workers: int, cores: float,
                      master: float) -> float | None:
    """The cheapest log-probability at which the model's speedup reaches ``speedup`` (bisection in log cost)."""
    low, high = 1e-9, 1e3
    if _pool_speedup(high, overhead, emcee, maps, workers, cores, master) < speedup:
        return None
    for _ in range(60):
        mid = (low * high) ** 0.5
        low, high = (low, mid) if _pool_speedup(mid, overhead, emcee, maps, workers, cores, master) >= speedup else (mid, high)
    return high


def cost_for_speedup(fn: Callable[..., Any], cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(speedup, overhead_per_task, emcee_seconds, tasks_per_map, workers, cores, master_cores)``: the
    cheapest log-probability at which a pool that deals out one task at a time reaches ``speedup`` over the serial
    run, in the book's model; ``None`` where no cost reaches it.

    The serial run takes ``emcee_seconds + sum(tasks_per_map) * c``, the pool's
    ``emcee_seconds + costmodel.pool_run_time(tasks_per_map, c, workers, cores, overhead_per_task=...,
    master_cores=...)``. ``cases`` (default: a fixed table) lists the arguments.

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ cost_for_speedup: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When a cost is off, or ``fn`` finds one where none reaches the speedup (or none where one does).
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, or returns something other than one number or ``None``.
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), f"Pass your function itself, `cost_for_speedup`, not the cost it returns (got "
                              f"a {type(fn).__name__}).")
    for case in cases if cases is not None else CASES:
        speedup, overhead, emcee, maps, workers, cores, master = case
        maps = [int(n) for n in maps]
        where = (f"cost_for_speedup({speedup:g}, {overhead:g}, {emcee:g}, {maps_text(maps)}, {workers}, {cores:g}, "
                 f"{master:g})")
        got = call(fn, speedup, overhead, emcee, list(maps), workers, cores, master, what=where)
        expect_type(got is None or is_number(got),
                    f"{where} returned {reprlib.repr(got)} ({type(got).__name__}); it should return one number, "
                    "the cost in "
                    "seconds, or None where no cost reaches the speedup.")
        want = _cost_for_speedup(speedup, overhead, emcee, maps, workers, cores, master)
        if want is None:
            if got is None:
                continue
            most = _pool_speedup(1e3, overhead, emcee, maps, workers, cores, master)
            raise AssertionError(
                f"{where} returned {got!r}; however dear a log-probability, {workers} workers on the "
                f"{cores - master:g} cores the master leaves them run at most {most:.2f} times the serial speed: "
                "return None.")
        expect(got is not None, f"{where} returned None, but the pool reaches {speedup:g}x from about "
                                f"{want * 1e6:.0f} µs a log-probability on.")
        value = as_float(got, where)
        if np.isclose(value, want, rtol=0.02):
            continue
        wrong = {
            speedup * overhead: "the speedup times the overhead, as if a round were only its overheads or only its "
                                "work: a round lasts its tasks' sending and the last task's work, and emcee's own "
                                "work runs serially in both runs",
            _cost_for_speedup(speedup, overhead, 0.0, maps, workers, cores, master) or -1.0:
                "as if emcee's own work (proposals, bookkeeping) cost nothing; it runs in the master, one step after "
                "another, in the pool's run as in the serial one, and dilutes the speedup",
            _cost_for_speedup(speedup, overhead, emcee, maps, workers, cores, 0.0) or -1.0:
                f"as if the master used no core; it keeps {master:g} busy, which the workers lose",
            _cost_for_speedup(speedup, overhead / workers, emcee, maps, workers, cores, master) or -1.0:
                "as if the workers shared the overhead; the master sends the tasks one after another, so a round pays "
                "every task's overhead in turn",
            _cost_for_speedup(1.0, overhead, emcee, maps, workers, cores, master) or -1.0:
                f"the break-even (a speedup of 1), not the cost at which the pool reaches {speedup:g}x",
        }
        for value_wrong, why in wrong.items():
            if not np.isclose(value_wrong, want, rtol=0.02) and np.isclose(value, value_wrong, rtol=0.02):
                raise AssertionError(f"{where} returned {value * 1e6:.1f} µs: {why}.")
        raise AssertionError(f"{where} returned {value * 1e6:.1f} µs; the model reaches {speedup:g}x from "
                             f"{want * 1e6:.1f} µs.")
    passed("cost_for_speedup")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ("emcee's own work left out",
     lambda right: lambda s, o, e, m, k, c, mc: right(s, o, 0.0, m, k, c, mc) or 1.0,
     "emcee's own work|reaches|return None"),
    ('the break-even instead of the speedup asked',
     lambda right: lambda s, o, e, m, k, c, mc: right(1.0, o, e, m, k, c, mc),
     'break-even|reaches|return None'),
    ('the speedup times the overhead',
     lambda right: lambda s, o, e, m, k, c, mc: s * o,
     'speedup times the overhead|reaches|return None'),
    ('the overhead shared out among the workers',
     lambda right: lambda s, o, e, m, k, c, mc: right(s, o / k, e, m, k, c, mc) or 1.0,
     'shared the overhead|reaches|return None'),
    ('infinity where no cost reaches the speedup',
     lambda right: lambda s, o, e, m, k, c, mc: right(s, o, e, m, k, c, mc) or float("inf"),
     'return None'),
]
