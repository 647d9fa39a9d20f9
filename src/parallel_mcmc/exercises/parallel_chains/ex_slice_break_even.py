"""The exercise ``ex-slice-break-even`` of the chapter ``chapters/parallel_chains/elliptical_slice.md``: its check, :func:`break_even_chains`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

import numbers
from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc.measure.lockstep import expected_lockstep_steps
from parallel_mcmc.exercises.common import call, expect_type, passed

__all__ = ["break_even_chains", "WRONG_ANSWERS"]


# (one chain's evaluations per draw, a state-machine iteration's cost over a lockstep one's). The cases cover an
# iteration cheaper than lockstep's (one chain already pays), one so dear that the state machine never pays (None),
# and counts like elliptical slice sampling's, where comparing with the ratio alone, stopping one chain short, or
# reading P(X < k) for the distribution function each give another answer (the first case tells them all apart).
CASES = [
    (np.array([5, 6, 6, 7, 7, 7, 8, 8, 9, 10, 11, 13, 16, 21]), 1.6),
    (np.array([2, 3, 3, 4, 4, 4, 5, 6, 8, 12]), 1.8),
    (np.array([1, 2, 2, 3, 3, 3, 4, 5, 7, 9]), 2.0),
    (np.array([1, 1, 1, 3]), 1.2),
    (np.array([1, 1, 1, 3]), 0.9),
    (np.array([1, 1, 1, 3]), 2.5),
]

#: The most chains a search need try: none of the cases (nor the grader's) breaks even beyond.
MAX_CHAINS = 100_000


def _expected_max(evaluations: np.ndarray, num_chains: int, side: str = "right") -> float:
    """E[max of num_chains draws]; ``side="left"`` reads P(X < k) for F(k), a plausible mistake."""
    levels = np.arange(int(evaluations.max()) + 1)
    below = np.searchsorted(np.sort(evaluations), levels, side=side) / evaluations.size
    return float(np.sum(1.0 - below ** num_chains))


def _break_even(evaluations: np.ndarray, cost_ratio: float, per_draw: Callable[[int], float] | None = None,
                target: float | None = None) -> int | None:
    """The fewest chains at which lockstep's expected evaluations per draw exceed ``target`` (by default
    ``cost_ratio`` times the mean); None where they never do (``target`` at or above the largest count)."""
    per_draw = per_draw or (lambda c: expected_lockstep_steps(evaluations, c))
    target = cost_ratio * evaluations.mean() if target is None else target
    if target >= evaluations.max():
        return None
    c = 1
    while per_draw(c) <= target and c < MAX_CHAINS:
        c += 1
    return c


def break_even_chains(fn: Callable[..., Any], cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(evaluations, cost_ratio)``: the fewest chains at which the state machine beats lockstep.

    ``evaluations`` are one chain's likelihood evaluations at each of many draws, 1-D (every chain's have this
    distribution); ``cost_ratio`` is a state-machine iteration's cost over a lockstep iteration's. Over a long run
    the state machine pays about one chain's mean evaluations per draw, at ``cost_ratio``; lockstep pays the expected
    largest of ``C`` chains' evaluations per draw (:func:`parallel_mcmc.measure.expected_lockstep_steps`). The answer
    is the smallest whole ``C >= 1`` at which lockstep's cost is strictly larger, or ``None`` where no ``C`` gets
    there (the expected maximum never passes the largest count). ``cases`` (default: a fixed table) lists
    ``(evaluations, cost_ratio)``.

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ break-even chain count: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When an answer is wrong; the message names the case and, where the answer shows it, the mistake.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, or returns something other than a whole number or ``None``.
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), f"Pass your function itself, `break_even_chains`, not what it returns (got "
                              f"{type(fn).__name__}).")
    for evaluations, ratio in cases if cases is not None else CASES:
        evaluations = np.asarray(evaluations)
        want = _break_even(evaluations, ratio)
        where = f"break_even_chains(evaluations, {ratio:g}) for evaluations={evaluations.tolist()}"
        got = call(fn, evaluations.copy(), ratio, what=where)
        whole = isinstance(got, numbers.Integral) or (isinstance(got, (float, np.floating)) and float(got).is_integer())
        expect_type(got is None or (whole and not isinstance(got, bool)),
                    f"{where} returned {got!r} ({type(got).__name__}); it should return a whole number of chains, "
                    "or None where the state machine never pays.")
        got = None if got is None else int(got)
        if got == want:
            continue
        mean = evaluations.mean()
        if want is None:
            raise AssertionError(f"{where} returned {got}, but the state machine never pays here: {ratio:g} times "
                                 f"the mean, {ratio * mean:.4g} evaluations a draw, is at least the largest count, "
                                 f"{evaluations.max()}, which lockstep's expected maximum never passes. Return None.")
        if got is None:
            raise AssertionError(f"{where} returned None, but lockstep's expected maximum passes {ratio:g} times "
                                 f"the mean ({ratio * mean:.4g}) at {want} chains: the largest count, "
                                 f"{evaluations.max()}, lies above it.")
        if got == want - 1:
            raise AssertionError(f"{where} returned {got}: the most chains at which the state machine does not yet "
                                 f"pay. Return the fewest at which it does, {got} + 1.")
        if got == _break_even(evaluations, ratio, target=ratio):
            raise AssertionError(f"{where} returned {got}: that compares lockstep's evaluations per draw with "
                                 f"{ratio:g} itself. The state machine pays the mean evaluations per draw, "
                                 f"{mean:.4g}, at {ratio:g} times the cost: compare with {ratio * mean:.4g}.")
        if got == _break_even(evaluations, ratio, lambda c: _expected_max(evaluations, c, side="left")):
            raise AssertionError(f"{where} returned {got}: that reads F(k) as P(X < k). The maximum of C chains "
                                 "exceeds k with probability 1 - P(X <= k)^C.")
        raise AssertionError(f"{where} returned {got}; the answer is wrong here: expected {want}.")
    passed("break-even chain count")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches). On the grader's unseen cases two
#: mistakes may give the same count (stopping one chain short and reading P(X < k), say), so a message may name
#: either; the fixed cases' first tells them apart.
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ('the most chains at which the state machine does not yet pay',
     lambda right: lambda e, r: None if right(e, r) is None else right(e, r) - 1,
     'does not yet pay'),
    ("lockstep's evaluations compared with the cost ratio, not the ratio times the mean",
     lambda right: lambda e, r: _break_even(np.asarray(e), r, target=r),
     'compares lockstep|never pays|does not yet pay'),
    ('a chain count even where the state machine never pays',
     lambda right: lambda e, r: right(e, r) or MAX_CHAINS,
     'never pays'),
    ('F(k) read as P(X < k)',
     lambda right: lambda e, r: _break_even(np.asarray(e), r, lambda c: _expected_max(np.asarray(e), c, "left")),
     'P\\(X < k\\)|does not yet pay'),
]
