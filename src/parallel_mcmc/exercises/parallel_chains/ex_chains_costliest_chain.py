"""The exercise ``ex-chains-costliest-chain`` of the chapter ``chapters/parallel_chains/vmap_pmap_shard_map.md``: its check, :func:`costliest_chain`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc.measure.lockstep import lockstep_cost
from parallel_mcmc.exercises.common import as_float, call, expect, expect_type, passed

__all__ = ["costliest_chain", "WRONG_ANSWERS"]


# steps with axes (chain, draw): in each, the chain the others wait for most is neither the chain with the most
# steps in all nor the one with the single longest draw, so that those plausible wrong answers are told apart. The
# last case's answer is the last chain (the end of a search over chains), and the best of the others is neither.
CASES = [
    np.array([[4, 4, 4, 4, 4, 4], [9, 9, 9, 1, 1, 1], [9, 9, 9, 1, 1, 1], [1, 1, 1, 1, 1, 12], [1, 1, 1, 1, 1, 11]]),
    np.array([[3, 3, 3, 3], [8, 8, 1, 1], [8, 8, 1, 1], [1, 1, 1, 10], [1, 1, 1, 9]]),
    np.array([[1, 15, 1, 1, 1], [14, 14, 1, 1, 1], [3, 1, 5, 5, 5], [14, 1, 2, 2, 2]]),
    np.array([[4, 4, 4], [10, 2, 2], [10, 2, 2], [1, 11, 1], [1, 10, 1], [1, 1, 1]]),
    np.array([[8, 12, 8, 3, 4], [2, 10, 6, 5, 6], [1, 3, 1, 8, 9], [9, 12, 9, 7, 1], [12, 6, 3, 12, 3]]),
]


def _savings(steps: np.ndarray) -> np.ndarray:
    """Lockstep steps saved by leaving out each chain."""
    full = lockstep_cost(steps)
    return np.array([full - lockstep_cost(np.delete(steps, c, axis=0)) for c in range(steps.shape[0])])


def costliest_chain(fn: Callable[[np.ndarray], Any], cases: Sequence[Any] | None = None) -> None:
    """Check ``fn(steps)``: which chain the lockstep run waits for most, and the share of its steps that costs.

    ``steps`` are every chain's integration steps at every draw, axes ``(chain, draw)``. In lockstep a draw costs
    its slowest chain's steps; leaving chain ``c`` out saves the lockstep steps it alone made the others wait.
    ``fn`` returns ``(c, saved)``: the chain whose removal saves the most, and those saved steps as a fraction of
    the lockstep total. ``cases`` (default: a fixed table) lists step arrays whose answer is unique.

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ costliest chain: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When ``fn`` picks another chain, or a wrong count of steps.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, or returns something other than a pair of numbers (one number, a dict).
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), f"Pass your function itself, `costliest_chain`, not its answer (got "
                              f"{type(fn).__name__}).")
    for steps in cases if cases is not None else CASES:
        steps = np.asarray(steps)
        saved = _savings(steps)
        want = int(np.argmax(saved))
        share = saved[want] / lockstep_cost(steps)
        where = f"costliest_chain(steps) for steps={steps.tolist()}"
        out = call(fn, steps.copy(), what=where)
        expect_type(isinstance(out, (tuple, list)) and len(out) == 2,
                    f"{where} returned {out!r} ({type(out).__name__}); return two things: (the chain's index, the "
                    "share saved).")
        got_chain = as_float(out[0], where + "'s chain")
        got_share = as_float(out[1], where + "'s share")
        if got_chain != want:
            # chains counted from 1: named alone, or beside another mistake that gives the same chain
            one_based = got_chain == want + 1
            also = (f" (or chain {want}, the right one, counted from 1: the chains are numbered from 0, as the rows "
                    "of steps are)" if one_based else "")
            if got_chain == int(np.argmax(steps.sum(axis=1))):
                raise AssertionError(f"{where} named chain {got_chain:g}, the one with the most steps in all{also}. "
                                     "The others wait for a chain only at the draws where it is the slowest, by how "
                                     "much it exceeds the next slowest: leave each chain out and compare the lockstep "
                                     "cost.")
            if got_chain == int(np.argmax(steps.max(axis=1))):
                raise AssertionError(f"{where} named chain {got_chain:g}, the one with the single longest "
                                     f"draw{also}. One long draw costs less than many moderately long ones that the "
                                     "others wait for.")
            last = steps.shape[0] - 1
            if want == last > 0 and got_chain == int(np.argmax(saved[:-1])):
                raise AssertionError(f"{where} named chain {got_chain:g}, the best of chains 0 to {last - 1}: leaving "
                                     f"out the last chain, {last}, saves more ({saved[want]} lockstep steps against "
                                     f"{saved[int(got_chain)]}). Let the search over the chains reach the last one: "
                                     "range(num_chains), not range(num_chains - 1).")
            if one_based:
                raise AssertionError(f"{where} named chain {got_chain:g}: the chains are numbered from 0, as the rows "
                                     f"of steps are; the chain the others wait for most is row {want}.")
            raise AssertionError(f"{where} named chain {got_chain:g}; leaving out chain {want} saves the most "
                                 f"lockstep steps ({saved[want]} of {lockstep_cost(steps)}).")
        if np.isclose(got_share, share, rtol=1e-5):
            continue
        if np.isclose(got_share, 100 * share, rtol=1e-5):
            raise AssertionError(f"{where} returned {got_share:g}, a percentage; return the share as a fraction, "
                                 f"{share:.4f}.")
        if np.isclose(got_share, saved[want], rtol=1e-5):
            raise AssertionError(f"{where} returned {got_share:g}, the steps saved; return them as a fraction of the "
                                 f"lockstep total, {lockstep_cost(steps)}.")
        if np.isclose(got_share, saved[want] / steps.sum(), rtol=1e-5):
            raise AssertionError(f"{where} returned {got_share:g}: that divides by all chains' steps. The share is of "
                                 "the lockstep total: the sum over draws of the slowest chain's steps.")
        raise AssertionError(f"{where}: the chain is right; the share {got_share:g} should be {share:.4f}.")
    passed("costliest chain")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ('the chain with the most steps in all',
     lambda right: lambda s: (int(np.argmax(np.asarray(s).sum(axis=1))), 0.5),
     'most steps in all|saves the most|single longest|should be'),
    ('the chain counted from 1',
     lambda right: lambda s: (right(s)[0] + 1, right(s)[1]),
     'numbered from 0'),
    ('the share as a percentage',
     lambda right: lambda s: (right(s)[0], 100 * right(s)[1]),
     'percentage'),
    ('twice the share of steps saved',
     lambda right: lambda s: (right(s)[0], 2 * right(s)[1]),
     'should be|steps saved'),
]
