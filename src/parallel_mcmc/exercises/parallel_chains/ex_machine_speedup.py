"""The exercise ``ex-machine-speedup`` of the chapter ``chapters/parallel_chains/chains_that_never_wait.md``: its check, :func:`machine_speedup`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc.exercises.common import as_float, call, expect_type, passed

__all__ = ["machine_speedup", "WRONG_ANSWERS"]


# (lengths with axes (chain, draw), step cost, iteration cost): inputs that tell the plausible wrong formulas
# apart (the answer is computed from them by the reference formula below, in the check).
CASES = [
    (np.array([[1, 3, 7], [7, 3, 1]]), 2e-6, 3e-6),
    (np.array([[15, 15, 15, 15]]), 1e-6, 1.5e-6),
    (np.array([[1, 20, 3], [3, 1, 3], [7, 7, 7]]), 4e-6, 5e-6),
    (np.array([[31, 63], [63, 31], [127, 1], [1, 127]]), 1e-5, 1.2e-5),
    (np.array([[5, 9, 2, 8, 1], [3, 3, 3, 3, 3], [1, 1, 1, 1, 20]]), 2e-6, 2.6e-6),
]


def _machine(lengths: np.ndarray, step: float, iteration: float) -> float:
    return float(lengths.max(axis=0).sum() * step / (lengths.sum(axis=1).max() * iteration))


def machine_speedup(fn: Callable[..., Any], cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(lengths, step_cost, iteration_cost)``: the model's speedup of a state machine over lockstep.

    ``lengths`` are every chain's steps at every draw, axes ``(chain, draw)``. Lockstep pays, at each draw,
    the longest chain's steps at ``step_cost`` each; the state machine runs until the chain with the most
    steps in all is done, at ``iteration_cost`` an iteration. ``cases`` (default: a fixed table) lists
    ``(lengths, step_cost, iteration_cost)``.

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ state machine speedup: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When a speedup ``fn`` gives is wrong for its case, naming the case.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, or returns something other than one number (``None``, one per chain).
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), f"Pass your function itself, `machine_speedup`, not the speedup it returns (got "
                              f"{type(fn).__name__}).")
    for lengths, step, iteration in cases if cases is not None else CASES:
        lengths = np.asarray(lengths)
        want = _machine(lengths, step, iteration)
        where = f"machine_speedup(lengths, {step:g}, {iteration:g}) for lengths={lengths.tolist()}"
        got = as_float(call(fn, lengths.copy(), step, iteration, what=where), where)
        if np.isclose(got, want, rtol=1e-5):
            continue
        if np.isclose(got, 1 / want, rtol=1e-5):
            raise AssertionError(f"{where} returned {got:.4f}, the inverse: a speedup is lockstep's time over the "
                                 "state machine's, above 1 when the state machine is faster.")
        no_wait = float(lengths.max(axis=0).sum() * step / (lengths.sum(axis=1).mean() * iteration))
        if np.isclose(got, no_wait, rtol=1e-5) and not np.isclose(no_wait, want, rtol=1e-5):
            raise AssertionError(f"{where} returned {got:.4f}: that divides by the chains' average total. The state "
                                 "machine's loop runs until the chain with the most steps in all has finished: the "
                                 "maximum over chains of their totals.")
        if np.isclose(got, _machine(lengths, 1.0, 1.0), rtol=1e-5):
            raise AssertionError(f"{where} returned {got:.4f}, a ratio of steps alone: an iteration of the state "
                                 "machine costs more than a lockstep step (its bookkeeping); weigh each count by "
                                 "its cost.")
        if np.isclose(got, _machine(lengths.T, step, iteration), rtol=1e-5):
            raise AssertionError(f"{where} returned {got:.4f}: the axes are swapped. They are (chain, draw): a "
                                 "lockstep draw waits for the slowest chain, the maximum over axis 0.")
        raise AssertionError(f"{where} returned {got:.4f}; expected {want:.4f}.")
    passed("state machine speedup")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ('the inverse of the speedup',
     lambda right: lambda L, s, i: 1 / right(L, s, i),
     'inverse'),
    ("the average chain's total instead of the longest",
     lambda right: lambda L, s, i: L.max(axis=0).sum() * s / (L.sum(axis=1).mean() * i),
     'average total|expected'),
    ('the axes swapped: the maximum over draws',
     lambda right: lambda L, s, i: right(np.asarray(L).T, s, i),
     'axes are swapped'),
    ('steps alone, not their costs',
     lambda right: lambda L, s, i: right(L, 1.0, 1.0),
     'steps alone|expected'),
]
