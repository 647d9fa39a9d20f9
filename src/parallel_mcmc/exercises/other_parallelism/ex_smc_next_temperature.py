"""The exercise ``ex-smc-next-temperature`` of the chapter ``chapters/other_parallelism/tempered_smc.md``: its check, :func:`next_temperature`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc.exercises.common import WrongType, as_float, call, expect, expect_type, passed

__all__ = ["next_temperature", "WRONG_ANSWERS"]


# --------------------------------------------------------------------------- tempered SMC


def _ess_fraction(log_likelihoods: np.ndarray, increment: float) -> float:
    """The effective sample size, as a fraction of the particles, of the weights exp(increment * loglik)."""
    w = increment * log_likelihoods
    w = np.exp(w - w.max())
    return float(w.sum() ** 2 / (w**2).sum() / w.size)


def next_temperature(fn: Callable[..., Any], log_likelihoods: Any, cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(log_likelihoods, lam)``: the next tempering exponent of adaptive tempered SMC.

    The answer is the largest ``new`` in ``(lam, 1]`` whose incremental weights
    ``exp((new - lam) * log_likelihoods)`` keep an effective sample size of at least half the
    particles: exactly half unless even ``new = 1`` keeps more. ``log_likelihoods`` are the chapter's
    particles' (checked at ``lam = 0`` and two more exponents); ``cases`` (the grader's) lists more
    ``(log_likelihoods, lam)``.

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    log_likelihoods : array_like
        The chapter's particles' log-likelihoods.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ next tempering exponent: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When the exponent ``fn`` finds is wrong for the particles' log-likelihoods.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, returns something other than one number (an array, a tuple, ``None``),
        or ``log_likelihoods`` is not an array of numbers.
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), f"Pass your function itself, `next_temperature`, not the exponent it returns (got a "
                              f"{type(fn).__name__}).")
    try:
        base = np.asarray(log_likelihoods, np.float64).ravel()
    except (TypeError, ValueError):
        raise WrongType(f"log_likelihoods should be the particles' log-likelihoods, an array of numbers; got "
                        f"{type(log_likelihoods).__name__}.") from None
    expect(base.size >= 2 and bool(np.all(np.isfinite(base))),
           "log_likelihoods should be the particles' log-likelihoods: a finite array of at least two numbers.")
    for values, lam in [(base, 0.0), (base, 0.3), (base, 0.999999)] + [(np.asarray(v), float(l)) for v, l in cases or ()]:
        values = np.asarray(values, np.float64)
        where = f"next_temperature(log_likelihoods, lam={lam:g}) for {values.size} particles"
        new = as_float(call(fn, values.copy(), lam, what=where), where)
        if not np.isfinite(new):
            raise AssertionError(
                f"{where} returned {new}. exp of a log-likelihood times an exponent overflows or underflows "
                "in floating point: subtract the largest value before exp (or work with logsumexp)."
            )
        if 0 < new <= lam:
            raise AssertionError(f"{where} returned {new:.6g}, not above lam: the answer is the new exponent, lam + increment.")
        expect(lam < new <= 1 + 1e-9, f"{where} returned {new:.6g}; the next exponent lies in (lam, 1] = ({lam:g}, 1].")
        at_one = _ess_fraction(values, 1.0 - lam)
        if at_one >= 0.5:
            expect(new >= 1 - 1e-6, f"{where} returned {new:.6g}, but even the exponent 1 keeps {at_one:.1%} of the "
                   "particles effective, more than half: return 1 and finish.")
            continue
        ess = _ess_fraction(values, new - lam)
        expect(ess >= 0.49, f"{where} returned {new:.6g}, whose weights keep only {ess:.1%} of the particles "
               "effective: a step too far (the target is half).")
        expect(ess <= 0.51, f"{where} returned {new:.6g}, whose weights keep {ess:.1%} effective: a step too "
               "cautious. Find the increment where the effective sample size is exactly half (bisection converges).")
    passed("next tempering exponent")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ('half the step: too cautious',
     lambda right: lambda v, lam: lam + 0.5 * (right(v, lam) - lam),
     'too cautious|return 1'),
    ('the increment, not the new exponent',
     lambda right: lambda v, lam: right(v, lam) - lam if right(v, lam) < 1 else 1.0,
     'not above lam|too cautious|too far|lies in'),
    ('twice the step: too far',
     lambda right: lambda v, lam: min(1.0, lam + 2 * (right(v, lam) - lam)),
     'too far|return 1'),
    ('always the exponent 1',
     lambda right: lambda v, lam: 1.0,
     'too far'),
    ('the exponent as an array of one',
     lambda right: lambda v, lam: np.array([right(v, lam)]),
     'it should return one number'),
]
