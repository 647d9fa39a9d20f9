"""The exercise ``ex-chains-grouped-efficiency`` of the chapter ``chapters/parallel_chains/shared_trajectory_length.md``: its check, :func:`grouped_efficiency`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc.measure.lockstep import lockstep_cost
from parallel_mcmc.exercises.common import as_float, call, expect_type, passed

__all__ = ["grouped_efficiency", "WRONG_ANSWERS"]


# (steps with axes (chain, draw), number of groups): in each, the plausible wrong formulas below give another answer.
CASES = [
    (np.array([[1, 9, 2], [8, 1, 2], [1, 1, 7], [3, 2, 1]]), 2),
    (np.array([[5, 1, 1, 2], [1, 5, 1, 2], [1, 1, 5, 9], [2, 2, 2, 2], [7, 1, 3, 1], [1, 1, 1, 1]]), 3),
    (np.array([[31, 3, 7], [1, 63, 3], [15, 1, 1], [3, 7, 127], [1, 1, 3], [7, 15, 1], [3, 3, 3], [1, 31, 15]]), 4),
    (np.array([[2, 6, 1, 4], [9, 1, 1, 1], [1, 1, 8, 2], [4, 4, 4, 4]]), 2),
    (np.array([[3, 1, 4], [1, 5, 9], [2, 6, 5], [3, 5, 8], [9, 7, 9], [3, 2, 3]]), 1),
]


def _grouped(steps: np.ndarray, num_groups: int) -> float:
    """All the steps over those paid for: each block's chains times its lockstep cost."""
    return float(steps.sum() / sum(b.shape[0] * lockstep_cost(b) for b in np.split(steps, num_groups)))


def grouped_efficiency(fn: Callable[..., Any], cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(steps, num_groups)``: the lockstep efficiency of chains split into groups that each run in lockstep.

    ``steps`` are every chain's integration steps at every draw, axes ``(chain, draw)``. The chains are split into
    ``num_groups`` equal consecutive blocks (as ``shard_map`` splits them over devices); in each block every chain
    waits, at every draw, for the block's slowest. The efficiency is the share of the steps paid for that the chains
    need: all their steps over the sum, over blocks, of the block's chains times its lockstep steps. ``cases``
    (default: a fixed table) lists ``(steps, num_groups)``.

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ grouped lockstep efficiency: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When an efficiency is wrong; the message names the case.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, or returns something other than one number (``None``, one per group).
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), f"Pass your function itself, `grouped_efficiency`, not the efficiency it returns (got "
                              f"{type(fn).__name__}).")
    for steps, num_groups in cases if cases is not None else CASES:
        steps = np.asarray(steps)
        want = _grouped(steps, num_groups)
        where = f"grouped_efficiency(steps, {num_groups}) for steps={steps.tolist()}"
        got = as_float(call(fn, steps.copy(), num_groups, what=where), where)
        if np.isclose(got, want, rtol=1e-5):
            continue
        if np.isclose(got, 1 / want, rtol=1e-5):
            raise AssertionError(f"{where} returned {got:.4f}, the inverse: the efficiency is the steps the chains "
                                 "need over the steps paid for, at most 1.")
        if got > 1 + 1e-6:
            raise AssertionError(f"{where} returned {got:.4f}, above 1: in a block, the slowest chain's steps are "
                                 "paid by every chain of the block, so count them once per chain.")
        if num_groups > 1 and np.isclose(got, _grouped(steps, 1), rtol=1e-5):
            raise AssertionError(f"{where} returned {got:.4f}, the efficiency of all chains in one lockstep group: "
                                 f"each of the {num_groups} blocks waits only for its own slowest chain.")
        order = np.arange(steps.shape[0]).reshape(num_groups, -1).T.ravel()  # chain g, g + G, ... in block g
        if np.isclose(got, _grouped(steps[order], num_groups), rtol=1e-5):
            raise AssertionError(f"{where} returned {got:.4f}: that puts chains 0, {num_groups}, {2 * num_groups}, "
                                 "... in one block. The blocks are consecutive: the first chains in the first "
                                 "block, as shard_map splits an array.")
        if np.isclose(got, np.mean([b.mean(axis=0) / b.max(axis=0) for b in np.split(steps, num_groups)]), rtol=1e-5):
            raise AssertionError(f"{where} returned {got:.4f}, a mean of each draw's ratio: a draw with long "
                                 "trajectories costs more than one with short ones. Divide the total steps by the "
                                 "total paid for.")
        if np.isclose(got, steps.mean() / steps.max(), rtol=1e-5):
            raise AssertionError(f"{where} returned {got:.4f}: the single longest trajectory is not what each draw "
                                 "pays; each draw of a block pays that block's slowest chain at that draw.")
        if steps.shape[1] % num_groups == 0 and np.isclose(got, _grouped(steps.T, num_groups), rtol=1e-5):
            raise AssertionError(f"{where} returned {got:.4f}: the axes are swapped. They are (chain, draw): at a "
                                 "draw, a block waits for its slowest chain, the maximum over its chains (axis 0).")
        raise AssertionError(f"{where} returned {got:.4f}; expected {want:.4f}.")
    passed("grouped lockstep efficiency")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ('the inverse of the efficiency',
     lambda right: lambda s, g: 1 / right(s, g),
     'inverse'),
    ('one lockstep group for all the chains',
     lambda right: lambda s, g: right(s, 1),
     'one lockstep group|expected'),
    ('blocks of every num_groups-th chain, not consecutive ones',
     lambda right: lambda s, g: right(np.asarray(s)[np.arange(len(s)).reshape(g, -1).T.ravel()], g),
     'consecutive'),
    ('the mean over the single longest trajectory',
     lambda right: lambda s, g: s.mean() / s.max(),
     'single longest trajectory|expected'),
]
