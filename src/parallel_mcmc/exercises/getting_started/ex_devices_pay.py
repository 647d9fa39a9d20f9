"""The exercise ``ex-devices-pay`` of the chapter ``chapters/getting_started/devices.md``: its check, :func:`steps_to_pay`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc.exercises.common import as_float, call, expect, expect_type, passed

__all__ = ["steps_to_pay", "WRONG_ANSWERS"]


# (work of one step, fixed cost of a split call, devices, cores, cores one piece keeps busy): thresholds that are
# not whole numbers, so that rounding up and "the first whole number above" agree; three cases never pay. The edges
# of the ranges: readings of cores_busy below 1 (counted as 1: one case pays later than the reading itself says, one
# never pays), and a split that pays from the first step (the smallest answer there is).
CASES = [
    (1e-6, 1.013e-4, 2, 2.0, 1.0),
    (2e-6, 3.37e-5, 4, 2.0, 1.0),
    (1e-6, 5.05e-5, 4, 8.0, 1.0),
    (3e-6, 2.5e-4, 2, 2.0, 1.6),
    (1e-6, 1e-4, 8, 16.0, 2.5),
    (1e-6, 1e-4, 1, 8.0, 1.0),
    (5e-6, 1e-4, 4, 1.0, 1.0),
    (1e-6, 1e-4, 4, 4.0, 4.0),
    (1e-6, 1.013e-4, 4, 2.0, 0.5),
    (2e-6, 3.37e-5, 8, 4.0, 0.25),
    (5e-6, 1e-4, 4, 1.0, 0.5),
    (1e-5, 3e-6, 2, 2.0, 1.0),
]


def _pays_from(work: float, fixed: float, num_devices: int, cores: float, busy: float) -> int | None:
    share = max(1.0 / num_devices, min(max(busy, 1.0), cores) / cores)
    if share >= 1.0:
        return None
    return int(np.floor(fixed / (work * (1.0 - share)))) + 1


_BELOW_ONE = (" A piece keeps one core busy at least: a reading of cores_busy below 1 ({busy:g}) counts as 1, "
              "busy = min(max(cores_busy, 1), cores).")


def _pays_unraised(work: float, fixed: float, num_devices: int, cores: float, busy: float) -> int | None:
    """The answer of the slip that keeps ``cores_busy`` below ``cores`` but does not raise it to 1."""
    share = max(1.0 / num_devices, min(busy, cores) / cores)
    return None if share >= 1.0 else int(np.floor(fixed / (work * (1.0 - share)))) + 1


def steps_to_pay(fn: Callable[..., Any], cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(work_per_step, fixed_seconds, num_devices, cores, cores_busy)``: where a split call starts to pay.

    One device runs a call of ``n`` steps in ``n * work_per_step``. Split over ``num_devices`` devices that share
    ``cores`` cores it costs ``fixed_seconds`` more, plus the pieces at once
    (:func:`parallel_mcmc.measure.split_call_time`): ``n * work_per_step * max(1 / num_devices, busy / cores)``,
    where ``busy`` is
    ``cores_busy`` kept between 1 and ``cores``. The answer is the smallest whole ``n`` at which the split is
    faster, or ``None`` where it never is. ``cases`` (default: a fixed table) lists the arguments.

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ steps_to_pay: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When ``fn``'s number of steps is wrong for a case.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, or returns something other than one number or ``None`` (a dict, a string).
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), f"Pass your function itself, `steps_to_pay`, not the number it returns (got "
                              f"{type(fn).__name__}).")
    for work, fixed, num_devices, cores, busy in cases if cases is not None else CASES:
        want = _pays_from(work, fixed, num_devices, cores, busy)
        where = f"steps_to_pay({work:g}, {fixed:g}, {num_devices}, {cores:g}, {busy:g})"
        got = call(fn, work, fixed, num_devices, cores, busy, what=where)
        if want is None:
            if got is None:
                continue
            raise AssertionError(
                f"{where} returned {got!r}; a split over {num_devices} device(s) sharing {cores:g} core(s), each "
                f"piece keeping {max(busy, 1.0):g} busy, is never faster than one device: return None."
                + (_BELOW_ONE.format(busy=busy) if busy < 1 else ""))
        expect(got is not None, f"{where} returned None, but the split pays from {want:,} steps on.")
        value = as_float(got, where)
        if value == want:
            continue
        threshold = fixed / (work * (1.0 - max(1.0 / num_devices, min(max(busy, 1.0), cores) / cores)))
        if np.isclose(value, threshold, rtol=1e-6):
            raise AssertionError(f"{where} returned {value:g}, the break-even itself; a call has a whole number of "
                                 f"steps: the smallest one above it, {want:,}.")
        if value == int(np.floor(threshold)):
            raise AssertionError(f"{where} returned {value:g}: at that many steps the split is still slower; the "
                                 f"smallest whole number above the break-even is {want:,}.")
        if busy < 1 and value == _pays_unraised(work, fixed, num_devices, cores, busy):
            raise AssertionError(f"{where} returned {value:g}, which takes the reading {busy:g} as it is; the split "
                                 f"pays from {want:,}." + _BELOW_ONE.format(busy=busy))
        no_busy = _pays_from(work, fixed, num_devices, cores, 1.0)
        if busy > 1 and no_busy is not None and value == no_busy:
            raise AssertionError(f"{where} returned {value:g}, as if a piece kept one core busy; it keeps {busy:g}, "
                                 "and the pieces' CPU work shares the cores.")
        no_cores = _pays_from(work, fixed, num_devices, 1e12, 1.0)
        if no_cores is not None and value == no_cores:
            raise AssertionError(f"{where} returned {value:g}, as if every device had a core of its own. The pieces "
                                 f"share {cores:g} core(s): their work together takes at least n * work * busy / cores.")
        raise AssertionError(f"{where} returned {value:g}; expected {want:,}.")
    passed("steps_to_pay")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ('as if every device had a core of its own',
     lambda right: lambda w, f, d, c, b: right(w, f, d, 1e12, 1.0),
     'core of its own|kept one core|never faster|expected'),
    ('one step too few: the break-even rounded down',
     lambda right: lambda w, f, d, c, b: None if right(w, f, d, c, b) is None else right(w, f, d, c, b) - 1,
     'still slower'),
    ('a number where the split never pays',
     lambda right: lambda w, f, d, c, b: right(w, f, d, c, b) or 0,
     'return None'),
]
