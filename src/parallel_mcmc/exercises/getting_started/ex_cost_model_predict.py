"""The exercise ``ex-cost-model-predict`` of the chapter ``chapters/getting_started/cost_model.md``: its check, :func:`predict_sharded`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc.exercises.common import as_float, call, expect, expect_type, passed

__all__ = ["predict_sharded", "WRONG_ANSWERS"]


# (steps with axes (chain, draw), seconds of a step at widths 1, 2, ..., devices, cores, inner): layouts that tell
# the plausible wrong rules apart; the answer is computed by the three rules (in the check, from the docstring).
CASES = [
    (np.array([[1, 3, 7], [7, 3, 1], [2, 2, 2], [5, 1, 9]]), np.array([1.0, 1.5, 2.0, 2.5]), 2, 2.0, "map"),
    (np.array([[1, 3, 7], [7, 3, 1], [2, 2, 2], [5, 1, 9]]), np.array([1.0, 1.5, 2.0, 2.5]), 2, 2.0, "vmap"),
    (np.array([[4, 1], [1, 4], [2, 2], [3, 3]]), np.array([2.0, 2.2, 2.4, 2.6]), 4, 2.0, "map"),
    (np.array([[4, 1], [1, 4], [2, 2], [3, 3], [9, 1], [1, 1]]), np.array([1.0, 1.2, 1.4, 1.6, 1.8, 2.0]), 3, 1.0,
     "vmap"),
    (np.array([[6, 1, 1], [1, 1, 6]]), np.array([3.0, 4.0]), 1, 4.0, "vmap"),
    (np.array([[2, 2], [8, 8], [1, 1], [1, 1]]), np.array([1.0, 1.1, 1.2, 1.3]), 2, 8.0, "map"),
]


def _layout(steps: np.ndarray, step_seconds: np.ndarray, num_devices: int, cores: float, inner: str) -> float:
    blocks = np.split(steps, num_devices)
    if inner == "map":
        times = [b.sum() * step_seconds[0] for b in blocks]
    else:
        times = [b.max(axis=0).sum() * step_seconds[len(b) - 1] for b in blocks]
    return float(max(max(times), sum(times) / cores))


def predict_sharded(fn: Callable[..., Any], cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(steps, step_seconds, num_devices, cores, inner)``: the model's time of chains split over devices.

    ``steps`` are every chain's steps at every draw, axes ``(chain, draw)``, split into equal contiguous blocks,
    one a device; ``step_seconds[w - 1]`` is the time of one step of ``w`` chains vectorised together. A device
    runs its block one chain after another (``inner="map"``: every step at width 1) or in lockstep
    (``inner="vmap"``: at each draw its slowest chain's steps, at its block's width); the devices run at once on
    ``cores`` cores: ``max(max(t), sum(t) / cores)``. ``cases`` (default: a fixed table) lists the arguments.

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ predict_sharded: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When a predicted time is wrong; the message says which case, and the mistake it matches.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, or returns something other than one number (``None``, each device's times).
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), f"Pass your function itself, `predict_sharded`, not the time it returns (got "
                              f"{type(fn).__name__}).")
    for steps, step_seconds, num_devices, cores, inner in cases if cases is not None else CASES:
        steps, step_seconds = np.asarray(steps), np.asarray(step_seconds, dtype=float)
        want = _layout(steps, step_seconds, num_devices, cores, inner)
        where = (f"predict_sharded(steps, step_seconds, {num_devices}, {cores:g}, {inner!r}) for "
                 f"steps={steps.tolist()}, step_seconds={step_seconds.tolist()}")
        got = as_float(call(fn, steps.copy(), step_seconds.copy(), num_devices, cores, inner, what=where), where)
        if np.isclose(got, want, rtol=1e-6):
            continue
        blocks = np.split(steps, num_devices)
        per = ([b.sum() * step_seconds[0] for b in blocks] if inner == "map"
               else [b.max(axis=0).sum() * step_seconds[len(b) - 1] for b in blocks])
        if np.isclose(got, max(per), rtol=1e-6):
            raise AssertionError(f"{where} returned {got:g}, the longest device alone. The devices share {cores:g} "
                                 f"core(s): they finish no sooner than all their work over the cores, {sum(per) / cores:g}.")
        if np.isclose(got, sum(per) / cores, rtol=1e-6):
            raise AssertionError(f"{where} returned {got:g}, all the work over the cores. A device is one job that "
                                 "uses one core at least: no sooner than the longest device either.")
        if inner == "vmap":
            full = [b.max(axis=0).sum() * step_seconds[len(steps) - 1] for b in blocks]
            if np.isclose(got, max(max(full), sum(full) / cores), rtol=1e-6):
                raise AssertionError(f"{where} returned {got:g}: a device's lockstep step has the width of its own "
                                     "block, not of all the chains.")
            summed = [b.sum() * step_seconds[len(b) - 1] for b in blocks]
            if np.isclose(got, max(max(summed), sum(summed) / cores), rtol=1e-6):
                raise AssertionError(f"{where} returned {got:g}: in lockstep a device takes, at each draw, as many "
                                     "steps as its slowest chain (the maximum over axis 0), not all its chains' steps.")
            swapped = [b.max(axis=1).sum() * step_seconds[len(b) - 1] for b in blocks]
            if np.isclose(got, max(max(swapped), sum(swapped) / cores), rtol=1e-6):
                raise AssertionError(f"{where} returned {got:g}: the maximum was taken over draws. The axes are "
                                     "(chain, draw): a lockstep draw waits for the slowest chain, axis 0.")
        raise AssertionError(f"{where} returned {got:g}; expected {want:g}.")
    passed("predict_sharded")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ('the devices as if each had a core',
     lambda right: lambda st, ss, d, c, i: right(st, ss, d, 1e9, i),
     'longest device alone|expected'),
    ('all the work over the cores, not bounded by the longest device',
     lambda right: lambda st, ss, d, c, i: right(st, ss, d, 1.0, i) / c,  # on one core the model's time is all the work
     'all the work over the cores'),
    ('twice the time',
     lambda right: lambda st, ss, d, c, i: 2 * right(st, ss, d, c, i),
     'expected'),
]
