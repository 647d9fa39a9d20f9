"""The exercise ``ex-mpi-sharing-crossover`` of the chapter ``chapters/ensemble/mpi.md``: its check, :func:`sharing_crossover`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

import reprlib
from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc._validate import is_number
from parallel_mcmc.exercises.common import as_float, call, expect, expect_type, passed
from ._shared import EMCEE_MAPS, maps_text

__all__ = ["sharing_crossover", "WRONG_ANSWERS"]


CASES = [
    (0.6e-3, EMCEE_MAPS, 2, 2.0),
    (0.25e-3, EMCEE_MAPS, 4, 2.0),
    (1.5e-3, [64] + [32] * 10, 3, 4.0),
    (2e-3, [24] + [12] * 6, 8, 8.0),
    (0.6e-3, EMCEE_MAPS, 1, 2.0),
]


def _sharing_saved(tasks_per_map: Sequence[int], ranks: int, cores: float) -> float:
    """Task-times one run saves through the sharing pool: each map's tasks less its longest share."""
    return float(sum(n - max(-(-n // ranks), n / cores) for n in tasks_per_map))


def sharing_crossover(fn: Callable[..., Any], cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(round_overhead, tasks_per_map, ranks, cores)``: the cost of one log-probability at which the
    sharing pool's run takes as long as the serial run, in the book's model; ``None`` where it never pays.

    A map of ``n`` tasks of ``c`` seconds takes ``n * c`` serially and, through the pool
    (:func:`parallel_mcmc.measure.chunked_pool_run_time`), ``round_overhead`` plus the larger of
    ``ceil(n / ranks) * c`` and ``n * c / cores``; emcee's own work is the same on both sides. ``cases``
    (default: a fixed table) lists the arguments.

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ sharing_crossover: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When ``fn``'s crossover is wrong for a case: the message names the case and the slip it matches.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, or returns something other than one number or ``None``.
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), f"Pass your function itself, `sharing_crossover`, not the cost it returns (got "
                              f"a {type(fn).__name__}).")
    for overhead, maps, ranks, cores in cases if cases is not None else CASES:
        maps = [int(n) for n in maps]
        where = f"sharing_crossover({overhead:g}, {maps_text(maps)}, {ranks}, {cores:g})"
        got = call(fn, overhead, list(maps), ranks, cores, what=where)
        expect_type(got is None or is_number(got),
                    f"{where} returned {reprlib.repr(got)} ({type(got).__name__}); it should return one number, "
                    "the cost in "
                    "seconds of a log-probability, or None where the sharing never pays.")
        saved = _sharing_saved(maps, ranks, cores)
        if saved <= 0:
            if got is None:
                continue
            raise AssertionError(
                f"{where} returned {got!r}; with {ranks} rank(s) on {cores:g} core(s) no map is shorter through the "
                "pool than serially, whatever a log-probability costs, and every map pays the overhead: return None.")
        want = len(maps) * overhead / saved
        expect(got is not None, f"{where} returned None, but the pool pays from about {want * 1e6:.0f} µs on.")
        value = as_float(got, where)
        if np.isclose(value, want, rtol=0.02):
            continue
        wrong = {
            overhead: "the round overhead itself. A map pays it once, not once a task; what it buys is the "
                      "work of every rank but the slowest",
            overhead / maps[-1]: "the overhead over a map's tasks, as if the pool saved all their work. The longest "
                                 "share (the master's own chunk among them) still takes its time",
            overhead / (maps[-1] - max(-(-maps[-1] // ranks), maps[-1] / cores)):
                "right for a half-ensemble map, but emcee's first map asks for all the walkers: a run's maps differ, "
                "so add the overheads and the savings over all of them",
            len(maps) * overhead / sum(n - n / ranks for n in maps):
                "as if the tasks split evenly; a map of n tasks gives some rank ceil(n / ranks) of them",
            len(maps) * overhead / sum(n - -(-n // ranks) for n in maps):
                f"as if every rank had a core of its own; {ranks} ranks share {cores:g} core(s), so a map's work "
                "takes at least n * c / cores",
        }
        for value_wrong, why in wrong.items():
            if not np.isclose(value_wrong, want, rtol=0.02) and np.isclose(value, value_wrong, rtol=0.02):
                raise AssertionError(f"{where} returned {value * 1e6:.1f} µs: {why}.")
        raise AssertionError(f"{where} returned {value * 1e6:.1f} µs; the model breaks even at {want * 1e6:.1f} µs.")
    passed("sharing_crossover")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ('the round overhead itself',
     lambda right: lambda r, m, k, c: r,
     'round overhead itself|breaks even'),
    ('as if every rank had a core of its own',
     lambda right: lambda r, m, k, c: right(r, m, k, 1e12),
     'core of its own|split evenly|saved all their work|breaks even'),
    ('infinity where the sharing never pays',
     lambda right: lambda r, m, k, c: right(r, m, k, c) or float("inf"),
     'return None'),
    ('the overhead over one map of tasks, as if the pool saved all their work',
     lambda right: lambda r, m, k, c: r / m[-1],
     'saved all their work|breaks even|return None'),
    ('as if the tasks split evenly over the ranks',
     lambda right: lambda r, m, k, c: len(m) * r / sum(n - n / k for n in m) if k > 1 else None,
     'split evenly|core of its own|breaks even|return None'),
]
