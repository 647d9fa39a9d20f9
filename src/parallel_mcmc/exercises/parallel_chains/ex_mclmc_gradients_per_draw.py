"""The exercise ``ex-mclmc-gradients-per-draw`` of the chapter ``chapters/parallel_chains/mclmc.md``: its check, :func:`gradients_per_draw`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc.measure.lockstep import lockstep_cost
from parallel_mcmc.exercises.common import as_float, call, expect_type, passed

__all__ = ["gradients_per_draw", "WRONG_ANSWERS"]


# (steps with axes (chain, draw), effective draws of all chains together, gradients per step). The cases cover one
# chain (nothing waits), steps all equal (MCLMC: one step a draw), two gradients a step, an effective size above the
# draws (answers below 1), and uneven NUTS-like counts, where each plausible wrong formula below gives another answer.
CASES = [
    (np.array([[3, 7, 1], [5, 2, 2], [1, 1, 9], [4, 4, 4]]), 6.0, 1),
    (np.ones((4, 6), dtype=int), 10.0, 2),
    (np.array([[2, 9, 4, 1, 6]]), 3.0, 1),
    (np.array([[1, 15, 3], [7, 1, 3], [3, 3, 31], [1, 1, 1], [15, 7, 1], [3, 1, 3]]), 4.5, 2),
    (np.ones((8, 5), dtype=int), 100.0, 2),
    (np.array([[7, 3], [3, 7], [1, 1]]), 2.0, 3),
]


def _per_draw(steps: np.ndarray, ess: float, gradients_per_step: int) -> float:
    """Gradients paid in lockstep by all the chains, over their effective draws."""
    return float(steps.shape[0] * lockstep_cost(steps) * gradients_per_step / ess)


def gradients_per_draw(fn: Callable[..., Any], cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(steps, ess, gradients_per_step)``: the gradient evaluations a lockstep run pays per effective draw.

    ``steps`` are every chain's integration steps at every draw, axes ``(chain, draw)`` (an MCLMC run: all ones, a
    draw a step); ``ess`` the effective draws of all the chains together; ``gradients_per_step`` the gradient
    evaluations of one step (two for BlackJAX's MCLMC, one for NUTS's leapfrog). In lockstep every chain pays, at
    every draw, the slowest chain's steps; the answer is all the gradients paid, over ``ess``. ``cases`` (default:
    a fixed table) lists ``(steps, ess, gradients_per_step)``.

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ gradients per effective draw: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When an answer is wrong; the message names the case and, where the answer shows it, the mistake.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, or returns something other than one number (``None``, a pair).
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), f"Pass your function itself, `gradients_per_draw`, not the number it returns (got "
                              f"{type(fn).__name__}).")
    for steps, ess, per_step in cases if cases is not None else CASES:
        steps = np.asarray(steps)
        want = _per_draw(steps, ess, per_step)
        chains, paid = steps.shape[0], lockstep_cost(steps)
        where = f"gradients_per_draw(steps, {ess:g}, {per_step}) for steps={steps.tolist()}"
        got = as_float(call(fn, steps.copy(), ess, per_step, what=where), where)
        if np.isclose(got, want, rtol=1e-5):
            continue
        close = lambda value: np.isclose(got, value, rtol=1e-5)  # noqa: E731
        if close(1 / want):
            raise AssertionError(f"{where} returned {got:.4g}, the inverse: effective draws per gradient. Return "
                                 "the gradients paid over the effective draws.")
        if close(steps.sum() * per_step / ess):
            raise AssertionError(f"{where} returned {got:.4g}: that counts the steps the chains need, "
                                 f"{steps.sum()}. In lockstep every chain pays each draw's slowest steps: {chains} "
                                 f"chains times {paid}.")
        if chains > 1 and close(paid * per_step / ess):
            raise AssertionError(f"{where} returned {got:.4g}: that counts the lockstep steps once. Each of the "
                                 f"{chains} chains takes them (under vmap every chain computes every step), and "
                                 "ess counts all the chains' draws together.")
        if per_step != 1 and close(chains * paid / ess):
            raise AssertionError(f"{where} returned {got:.4g}: that counts one gradient a step; each step takes "
                                 f"{per_step}.")
        if close(chains * steps.shape[1] * steps.max() * per_step / ess):
            raise AssertionError(f"{where} returned {got:.4g}: that pays the single longest trajectory at every "
                                 "draw. Each draw pays its own slowest chain's steps, the maximum over the chains "
                                 "(axis 0) at that draw.")
        if steps.shape[0] != steps.shape[1] and close(steps.shape[1] * lockstep_cost(steps.T) * per_step / ess):
            raise AssertionError(f"{where} returned {got:.4g}: the axes are swapped. They are (chain, draw): at a "
                                 "draw, the chains wait for the slowest of them, the maximum over axis 0.")
        raise AssertionError(f"{where} returned {got:.4g}; the answer is wrong here: expected {want:.4g} "
                             f"({chains} chains × {paid} lockstep steps × {per_step} gradients / {ess:g}).")
    passed("gradients per effective draw")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ('the steps the chains need, not those paid for in lockstep',
     lambda right: lambda s, e, g: np.asarray(s).sum() * g / e,
     'steps the chains need'),
    ('the lockstep steps counted once, not once per chain',
     lambda right: lambda s, e, g: np.asarray(s).max(axis=0).sum() * g / e,
     'counts the lockstep steps once'),
    ('one gradient a step',
     lambda right: lambda s, e, g: right(s, e, 1),
     'one gradient a step|steps the chains need'),
    ('effective draws per gradient, the inverse',
     lambda right: lambda s, e, g: 1 / right(s, e, g),
     'the inverse'),
    ('the single longest trajectory at every draw',
     lambda right: lambda s, e, g: np.asarray(s).size * np.asarray(s).max() * g / e,
     'single longest trajectory|steps the chains need'),
]
