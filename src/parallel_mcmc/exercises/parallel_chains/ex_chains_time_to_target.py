"""The exercise ``ex-chains-time-to-target`` of the chapter ``chapters/parallel_chains/time_to_target.md``: its check, :func:`time_to_target`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc.exercises.common import as_float, call, expect, expect_type, passed

__all__ = ["time_to_target", "WRONG_ANSWERS"]


# ((one chain's ESS per draw (bulk or tail, the smaller), chains, largest R-hat, target ESS, margin, warm-up seconds,
# seconds a draw of every chain), the answer: (draws per chain, seconds to the target), or None where R-hat is 1.01 or
# more). Written out as
# data; in each, margin x target / (ESS per chain-draw x chains) is far from a whole number, and the mistakes named
# below give other draws or times.
CASES = [
    ((0.31, 4, 1.004, 1000, 1.2, 0.35, 2.1e-4), (968, 0.55328)),
    ((0.052, 64, 1.006, 400, 1.5, 2.4, 9e-4), (181, 2.5629)),
    ((0.87, 2, 1.0009, 2000, 1.1, 0.05, 3e-5), (1265, 0.08795)),
    ((0.013, 256, 1.002, 1000, 1.25, 0.9, 4e-3), (376, 2.404)),
    ((0.42, 8, 1.01, 1000, 1.2, 0.6, 1e-3), None),
    ((0.0021, 128, 1.27, 500, 1.2, 1.5, 2e-3), None),
    ((0.6, 1, 1.0, 800, 1.3, 0.2, 5e-5), (1734, 0.2867)),
]


def _fail_naming_the_slip(got: float, want: float, slips: Sequence[tuple[float, str]], rtol: float, gave: str,
                          right: str, otherwise: str) -> None:
    """Fail with the first mistake in ``slips`` (``(what it gives, its name)``) that gives ``got`` (unless it happens
    to give the right answer ``want`` too): "``gave``, the mistake. ``right``"; with "``gave``; ``otherwise``" where
    none does."""
    slip = next((name for value, name in slips
                 if np.isclose(got, value, rtol=rtol) and not np.isclose(value, want, rtol=1e-9)), None)
    raise AssertionError(f"{gave}, {slip}. {right}" if slip else f"{gave}; {otherwise}")


def time_to_target(fn: Callable[..., Any], cases: Sequence[tuple[tuple, Any]] | None = None) -> None:
    """Check ``fn(ess_per_chain_draw, num_chains, max_rhat, target_ess, margin, warmup_seconds, seconds_per_draw)``.

    From a pilot run: ``ess_per_chain_draw`` is its smallest ESS, bulk or tail (of all its chains together), over
    all its draws (chains x draws per chain), ``max_rhat`` its largest R-hat; ``seconds_per_draw`` is the time of
    one draw of all ``num_chains`` chains (they advance together) and ``warmup_seconds`` the warm-up's time.
    ``fn`` returns ``(draws, seconds)``: the fewest whole draws per chain that give all the chains
    ``margin * target_ess`` at the pilot's rate, and the warm-up plus those draws; or ``None`` where ``max_rhat`` is
    1.01 or more (the chains disagree and their ESS means nothing). ``cases`` (default: a fixed table) lists
    ``(arguments, answer)``.

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ time to target: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When the draws or the time are wrong for a case, or are not None where R-hat is too high.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, or returns something other than a pair of numbers or None (a dict, one number).
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), f"Pass your function itself, `time_to_target`, not the draws and time it returns (got "
                              f"{type(fn).__name__}).")
    for args, want in cases if cases is not None else CASES:
        ess, chains, rhat, target, margin, warmup, per_draw = args
        where = f"time_to_target({', '.join(f'{a:g}' for a in args)})"
        try:
            got = call(fn, *args, what=where)
        except AssertionError as err:
            if want is None:
                raise AssertionError(f"{err}\nWhere R-hat is 1.01 or more, return None rather than raise.") from None
            raise
        if want is None:
            expect(got is None, f"{where} returned {got!r}, but the pilot's R-hat is {rhat:g}, 1.01 or more: its "
                                "chains disagree, and an ESS counted from them means nothing. Return None.")
            continue
        if got is None:
            raise AssertionError(f"{where} returned None, but the pilot's R-hat, {rhat:g}, is below 1.01: its chains "
                                 "agree. Refuse only at 1.01 or more.")
        expect_type(isinstance(got, (tuple, list)) and len(got) == 2,
                    f"{where} returned {got!r} ({type(got).__name__}); return two things: (draws per chain, "
                    "seconds to the target), or None.")
        draws, seconds = as_float(got[0], where + "'s draws"), as_float(got[1], where + "'s seconds")
        want_draws, want_seconds = int(want[0]), float(want[1])
        if draws != want_draws:
            exact = margin * target / (ess * chains)
            slips = [  # (what a mistake gives, its name)
                (exact, "not rounded: a chain cannot take part of a draw; round up"),
                (math.floor(exact), "rounded down: that many draws fall short of the target; round up"),
                (round(exact), "rounded to the nearest: that can fall short of the target; round up"),
                (math.ceil(margin * target / ess), f"the draws of all {chains} chains together: the ESS per "
                 f"chain-draw counts one chain, and {chains} chains add theirs at every draw; divide by them"),
                (math.ceil(target / (ess * chains)), "without the margin: the margin multiplies the target ESS"),
                (math.ceil((1 + margin) * target / (ess * chains)),
                 f"with {1 + margin:g} times the target: the margin is a factor, {margin:g} times the target"),
                (math.ceil(target / (margin * ess * chains)),
                 "with the target divided by the margin: the margin asks for more ESS, not less"),
            ]
            _fail_naming_the_slip(draws, want_draws, slips, 1e-6, f"{where} gave {draws:g} draws per chain",
                                  f"The chains need {want_draws}.",
                                  f"the chains need {want_draws}: margin x target over the ESS that all the chains "
                                  "make in a draw, rounded up.")
        if np.isclose(seconds, want_seconds, rtol=1e-5):
            continue
        slips = [
            (per_draw * want_draws, "the draws alone: every chain pays its warm-up before its first draw; add it"),
            ((warmup + per_draw * want_draws) * margin, "with the margin applied to the time too; it belongs on the "
                                                        "ESS alone, which sets the draws"),
            (warmup + per_draw * want_draws * chains, f"each draw paid {chains} times: seconds_per_draw is already "
                                                      f"the time of a draw of all {chains} chains"),
            (warmup + per_draw * margin * target / (ess * chains), "from the draws before rounding up; the chains "
                                                                   "run whole draws"),
        ]
        _fail_naming_the_slip(seconds, want_seconds, slips, 1e-5, f"{where} gave {seconds:g} s",
                              f"The time to the target is {want_seconds:g} s.",
                              f"the draws are right, but the time should be {want_seconds:g} s: the warm-up and "
                              "the draws at their time each.")
    passed("time to target")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ("one chain's effective draws only",
     lambda right: lambda e, c, r, t, m, w, s: right(e, 1, r, t, m, w, s),
     'chains together|the chains need'),
    ('the warm-up left out',
     lambda right: lambda e, c, r, t, m, w, s: right(e, c, r, t, m, 0.0, s),
     'warm-up|should be'),
    ('the margin left out',
     lambda right: lambda e, c, r, t, m, w, s: right(e, c, r, t, 1.0, w, s),
     'without the margin|the chains need'),
    ('an answer where the chains disagree',
     lambda right: lambda e, c, r, t, m, w, s: right(e, c, 1.0, t, m, w, s),
     'Return None'),
    ('draws not rounded up',
     lambda right: lambda e, c, r, t, m, w, s: None if r >= 1.01 else (m * t / (e * c), w + s * m * t / (e * c)),
     'not rounded'),
]
