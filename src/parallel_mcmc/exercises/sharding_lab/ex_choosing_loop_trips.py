"""The exercise ``ex-choosing-loop-trips`` of the chapter ``chapters/sharding_lab/choosing_a_way.md``: its check, :func:`device_trips`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from parallel_mcmc.exercises.common import call, expect, expect_type, passed
from ._shared import numbers, require_function, shown

__all__ = ["device_trips", "WRONG_ANSWERS"]


# (steps with axes (chain, draw), number of devices): inputs that tell the plausible wrong answers apart,
# uneven splits among them (the answer is computed by the rule in the docstring, in the check).
CASES = [
    (np.array([[1, 3, 7], [7, 3, 1], [2, 2, 2], [5, 1, 9]]), 2),
    (np.array([[4, 4], [1, 9], [6, 2], [3, 3], [8, 1]]), 2),
    (np.array([[2, 11, 3, 1], [9, 1, 1, 4], [1, 1, 12, 2], [3, 5, 2, 6], [7, 2, 2, 2], [1, 8, 1, 1], [2, 2, 9, 3]]), 3),
    (np.array([[5, 5, 5], [1, 1, 1], [2, 9, 2]]), 3),
]


def _trips(steps: np.ndarray, num_devices: int) -> tuple[np.ndarray, np.ndarray]:
    blocks = np.array_split(steps, num_devices)
    return (np.full(num_devices, steps.max(axis=0).sum()), np.array([b.max(axis=0).sum() for b in blocks]))


def _other_splits(steps: np.ndarray, num_devices: int) -> list[np.ndarray]:
    """Each device's trips under shard_map with the chains split otherwise than evenly, the first devices taking
    one more: the rest on the last device, or blocks of the rounded-up size."""
    n = len(steps)
    floor, ceil = n // num_devices, -(-n // num_devices)
    rest_last = [steps[i * floor:(i + 1) * floor if i < num_devices - 1 else n] for i in range(num_devices)]
    rounded_up = [steps[i * ceil:(i + 1) * ceil] for i in range(num_devices)]
    return [np.array([b.max(axis=0).sum() if len(b) else 0 for b in blocks]) for blocks in (rest_last, rounded_up)]


def device_trips(fn: Callable[..., Any], cases: Any = None) -> None:
    """Check ``fn(steps, num_devices)``: each device's loop trips under ``jit(vmap)`` and under ``shard_map``.

    ``steps`` are every chain's trips at every draw, axes ``(chain, draw)``; chains are split over the devices
    in contiguous blocks, the first ``num_chains % num_devices`` devices taking one more. A ``vmap``ped loop
    runs, at each draw, as long as the longest chain it holds: all chains under ``jit``, the device's own
    under ``shard_map``. ``cases`` (default: a fixed table) lists ``(steps, num_devices)``.

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    cases : sequence, optional
        The grader's unseen cases, in the form of the fixed ones; by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ loop trips per device: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When a device's count of loop trips is wrong.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function (the counts it returns) or returns something other than two arrays of
        numbers (``None``, a dict, one array).
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    require_function(fn, "fn", "your `device_trips`")
    for steps, num_devices in cases if cases is not None else CASES:
        steps = np.asarray(steps)
        want_jit, want_map = _trips(steps, num_devices)
        where = f"device_trips(steps, {num_devices}) for steps={steps.tolist()}"
        out = call(fn, steps.copy(), num_devices, what=where)
        expect_type(isinstance(out, (tuple, list)) and len(out) == 2,
                    f"{where} returned {shown(out)}; return two arrays: (trips under jit, trips under shard_map).")
        got_jit, got_map = (numbers(o, f"A count {where} returned").reshape(-1) for o in out)
        expect(got_jit.shape == (num_devices,) and got_map.shape == (num_devices,),
               f"{where} returned arrays of shapes {got_jit.shape} and {got_map.shape}; each needs one count per "
               f"device: ({num_devices},).")
        if np.allclose(got_jit, want_jit) and np.allclose(got_map, want_map):
            continue
        if np.allclose(got_jit, want_map) and np.allclose(got_map, want_jit):
            raise AssertionError(f"{where}: the two arrays are swapped. Return (under jit, under shard_map).")
        if np.allclose(got_jit, want_map):
            raise AssertionError(f"{where}: under jit you gave each device its own slowest chain. Under jit the "
                                 "vmap holds every chain, split over the devices, and its loop runs until the "
                                 "slowest chain on any device is done: one global count for every device.")
        blocks = np.array_split(steps, num_devices)
        if np.allclose(got_map, [b.max(axis=1).sum() for b in blocks]):
            raise AssertionError(f"{where}: the maximum was taken over draws. The axes are (chain, draw): at each "
                                 "draw the loop waits for the slowest chain, the maximum over axis 0 of a block.")
        if np.allclose(got_map, [b.sum() for b in blocks]):
            raise AssertionError(f"{where}: that is every chain's trips added up, as if a device ran its chains one "
                                 "after another. Under vmap they run together: at each draw, the longest of them.")
        other_splits = _other_splits(steps, num_devices)
        if np.allclose(got_jit, want_jit) and any(np.allclose(got_map, other) for other in other_splits):
            raise AssertionError(f"{where}: under jit right; under shard_map you returned {got_map.tolist()}, "
                                 f"expected {want_map.tolist()}: the chains are split otherwise. Split them as evenly "
                                 "as they go, the first devices taking one more (np.array_split).")
        if np.allclose(got_jit, want_jit):
            raise AssertionError(f"{where}: under jit right; under shard_map the answer is wrong here: you returned "
                                 f"{got_map.tolist()}, expected {want_map.tolist()}.")
        raise AssertionError(f"{where}: the answer is wrong here: it returned {got_jit.tolist()} and "
                             f"{got_map.tolist()}; expected {want_jit.tolist()} and {want_map.tolist()}.")
    passed("loop trips per device")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ('the two counts swapped',
     lambda right: lambda s, d: right(s, d)[::-1],
     'swapped'),
    ('one count for both ways',
     lambda right: lambda s, d: (right(s, d)[1], right(s, d)[1]),
     'one global count'),
    ('the steps added up instead of the slowest per draw',
     lambda right: lambda s, d: (right(s, d)[0], [b.sum() for b in np.array_split(s, d)]),
     'added up'),
    ('the slowest draw of each chain instead of the slowest chain at each draw (the axes swapped)',
     lambda right: lambda s, d: (right(s, d)[0], [b.max(axis=1).sum() for b in np.array_split(s, d)]),
     'over draws'),
    ('the chains that do not split evenly put on the last device instead of one more on each of the first',
     lambda right: lambda s, d: (right(s, d)[0],
                                 [s[i * (len(s) // d):(i + 1) * (len(s) // d) if i < d - 1 else len(s)]
                                  .max(axis=0).sum() for i in range(d)]),
     'first devices taking one more'),
]
