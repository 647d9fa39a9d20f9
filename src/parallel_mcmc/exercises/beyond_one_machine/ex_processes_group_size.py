"""The exercise ``ex-processes-group-size`` of the chapter ``chapters/beyond_one_machine/multi_process_jax.md``: its check, :func:`best_group`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc.exercises.common import WrongType, as_float, call, expect, expect_type, passed

__all__ = ["best_group", "WRONG_ANSWERS"]


# ((draws per chain, start-up that any group pays, start-up per process, seconds of a draw in one process, cores,
# the most processes to consider), the best group): cases whose best group is neither the largest nor 1, and ones
# where it is.
CASES = [
    ((40_000, 2.0, 1.0, 1e-4, 8, 16), 2),
    ((1_000, 2.0, 1.0, 1e-4, 8, 16), 1),
    ((200_000, 1.0, 0.5, 2e-4, 4, 16), 4),
    ((100_000, 3.0, 2.0, 1e-3, 16, 32), 7),
    ((5_000, 1.0, 3.0, 1e-3, 2, 8), 1),
    ((10_000_000, 1.0, 0.01, 1e-3, 16, 8), 8),  # the answer at the top of the range: max_processes itself
]


def _group_time(p: int, draws: int, base: float, per_process: float, per_draw: float, cores: float) -> float:
    """The job's time with ``p`` processes, as the exercise states it (for the messages)."""
    return base + per_process * p + draws * per_draw / min(p, cores)


def best_group(fn: Callable[..., Any], cases: Sequence[tuple[tuple, int]] | None = None) -> None:
    """Check ``fn(num_draws, start_up_base, start_up_per_process, seconds_per_draw, cores, max_processes)``.

    A job of ``p`` processes takes ``start_up_base + p * start_up_per_process`` to start and then
    ``num_draws * seconds_per_draw / min(p, cores)`` to sample (``seconds_per_draw`` is one process's time for a
    draw of all the chains; the chains are shared out, at most one process a core). The answer is the ``p`` from
    1 to ``max_processes`` with the shortest job, the smallest of equals. ``cases`` (default: a fixed table)
    lists ``((num_draws, start_up_base, start_up_per_process, seconds_per_draw, cores, max_processes), p)``.

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ best_group: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When ``fn`` picks another group size than the model's best, naming the case.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, or returns something other than one whole number (a float, ``None``,
        a list of times).
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), f"Pass your function itself, `best_group`, not the group size it returns (got a "
                              f"{type(fn).__name__}).")
    for (draws, base, per_process, per_draw, cores, most), want in cases if cases is not None else CASES:
        want = int(want)
        where = f"best_group({draws}, {base:g}, {per_process:g}, {per_draw:g}, {cores:g}, {most})"
        answer = call(fn, draws, base, per_process, per_draw, cores, most, what=where)
        got = as_float(answer, where)
        if got.is_integer() and not isinstance(answer, (int, np.integer)) and not (
                np.ndim(answer) == 0 and np.issubdtype(np.asarray(answer).dtype, np.integer)):
            raise WrongType(f"{where} returned {answer!r} ({type(answer).__name__}); a group is a whole number of "
                            f"processes: return an int ({int(got)}), as range() gives it.")
        if got == want:
            continue
        times = {p: _group_time(p, draws, base, per_process, per_draw, cores) for p in range(1, most + 1)}
        if got not in times:
            raise AssertionError(f"{where} returned {got:g}; a group has a whole number of processes, 1 to {most}.")
        got = int(got)
        if want == most and got == most - 1:
            raise AssertionError(f"{where} returned {got}, one short of the largest group, {most}, which is the "
                                 f"fastest here ({times[want]:.2f} s against {times[got]:.2f} s): the search stops "
                                 f"one short. range(1, max_processes + 1) includes max_processes.")
        # the answer's job beats the right one's in a world the exercise does not describe: the mistake's name
        without_per_process = {p: _group_time(p, draws, base, 0.0, per_draw, cores) for p in (got, want)}
        without_cores = {p: _group_time(p, draws, base, per_process, per_draw, math.inf) for p in (got, want)}
        if got > want and without_per_process[got] < without_per_process[want]:
            raise AssertionError(f"{where} returned {got:g}, as if more processes started no slower. Each one adds "
                                 f"{per_process:g} s of start-up: {got:g} processes take {times[got]:.2f} s, "
                                 f"{want} take {times[want]:.2f} s.")
        if got > cores and without_cores[got] <= without_cores[want]:
            raise AssertionError(f"{where} returned {got:g}, more processes than the {cores:g} cores: beyond one "
                                 "process a core, sampling gets no faster, and start-up still grows.")
        raise AssertionError(f"{where} returned {got:g} ({times[got]:.2f} s); {want} processes take "
                             f"{times[want]:.2f} s.")
    passed("best_group")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ('start-up that does not grow with the processes',
     lambda right: lambda d, b, pp, pd, c, m: right(d, b, 0.0, pd, c, m),
     'no slower|processes take|more processes'),
    ('the search stops one short of max_processes',
     lambda right: lambda d, b, pp, pd, c, m: right(d, b, pp, pd, c, m - 1) if m > 1 else 1,
     'stops one short|processes take|more processes'),
    ('always the most processes',
     lambda right: lambda d, b, pp, pd, c, m: m,
     'processes take|no slower|more processes'),
    ('a float, not a whole number of processes',
     lambda right: lambda d, b, pp, pd, c, m: float(right(d, b, pp, pd, c, m)),
     'whole number of processes: return an int'),
]
