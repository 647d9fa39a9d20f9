"""The exercise ``ex-consensus-gaussian`` of the chapter ``chapters/numpyro/consensus_monte_carlo.md``: its check, :func:`gaussian_consensus`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc.exercises.common import call, expect, expect_type, passed

__all__ = ["gaussian_consensus", "WRONG_ANSWERS"]


# (means, covariances, mean of the product, covariance of the product), worked out by hand.
CASES = [
    ([[0.0], [3.0]], [[[1.0]], [[2.0]]], [1.0], [[2 / 3]]),
    ([[1.0, 0.0], [3.0, 3.0], [2.0, 6.0]],
     [[[1.0, 0.0], [0.0, 4.0]], [[1.0, 0.0], [0.0, 4.0]], [[2.0, 0.0], [0.0, 4.0]]],
     [2.0, 3.0], [[0.4, 0.0], [0.0, 4 / 3]]),
    ([[3.0, 0.0], [0.0, 3.0]], [[[2.0, 1.0], [1.0, 2.0]], [[1.0, 0.0], [0.0, 1.0]]],
     [1.5, 1.5], [[5 / 8, 1 / 8], [1 / 8, 5 / 8]]),
]


def _array(value: Any, where: str, what: str) -> np.ndarray:
    """``value`` as an array of floats; anything else (``None``, a dict, a string) is an answer of the wrong type."""
    try:
        out = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        out = None
    expect_type(out is not None and value is not None,
                f"{where} returned a {what} of type {type(value).__name__}; it should be an array of numbers.")
    return out


def gaussian_consensus(fn: Callable[[np.ndarray, np.ndarray], Any], cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(means, covs) -> (mean, cov)``: the product of S Gaussian sub-posteriors.

    ``cases`` (default: a fixed table) lists ``(means, covs, mean, cov)``: shards' means ``(S, d)``
    and covariances ``(S, d, d)``, and the mean and covariance of their product.

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ gaussian_consensus: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When the combined mean or covariance is wrong.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, or does not return a pair of arrays of the right shapes (the mean alone, a
        dict, ``None``).
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), "Pass your function itself, `gaussian_consensus`, not the result of calling it "
                              f"(got {type(fn).__name__}).")
    for means, covs, want_mean, want_cov in cases if cases is not None else CASES:
        means, covs = np.asarray(means, dtype=float), np.asarray(covs, dtype=float)
        want_mean, want_cov = np.asarray(want_mean, dtype=float), np.asarray(want_cov, dtype=float)
        S, d = means.shape
        where = f"gaussian_consensus(means, covs) for {S} shards of {d} parameter(s)"
        got = call(fn, means.copy(), covs.copy(), what=where)
        expect_type(
            isinstance(got, (tuple, list)) and len(got) == 2,
            f"{where} returned {type(got).__name__}"
            + (f" of shape {np.shape(got)}" if hasattr(got, "shape") else "") + "; return a pair (mean, cov).",
        )
        mean, cov = _array(got[0], where, "mean"), _array(got[1], where, "covariance")
        expect(
            mean.shape != (d, d) or cov.shape != (d,),
            "The pair is the wrong way round: return (mean, cov), the mean first.",
        )
        expect_type(mean.shape == (d,),
                    f"With {S} shards of {d} parameter(s) the mean must have shape ({d},), got {mean.shape}.")
        expect_type(cov.shape == (d, d),
                    f"With {d} parameter(s) the covariance must have shape ({d}, {d}), got {cov.shape}.")
        # float32 (jnp) linear algebra is good to about 1e-5 relative
        close = {"rtol": 1e-4, "atol": 1e-6}
        if np.allclose(mean, means.mean(axis=0)) and not np.allclose(want_mean, means.mean(axis=0)):
            raise AssertionError(
                "Your mean is the plain average of the shards' means. A shard whose sub-posterior is narrow knows "
                "more and must weigh more: weight each mean by its precision, the inverse covariance."
            )
        if np.allclose(cov, covs.mean(axis=0)) or np.allclose(cov, covs.mean(axis=0) / S):
            raise AssertionError(
                "Your covariance averages the shards' covariances. The product of Gaussians adds precisions: "
                "cov = inverse(sum of the inverse covariances)."
            )
        expect(
            np.allclose(cov, want_cov, **close),
            "The covariance is wrong: the product of the sub-posteriors has precision equal to the sum of their "
            "precisions (inverse covariances).",
        )
        expect(
            np.allclose(mean, want_mean, **close),
            "The covariance is right but the mean is not: it is cov @ sum_s (precision_s @ mean_s).",
        )
    passed("gaussian_consensus")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ('the means averaged, not weighed by precision',
     lambda right: lambda m, c: (m.mean(0), np.linalg.inv(np.linalg.inv(c).sum(0)) * 2),
     'precision'),
    ('the sum of the precisions returned as the covariance, not inverted',
     lambda right: lambda m, c: (right(m, c)[0], np.linalg.inv(c).sum(0)),
     'covariance is wrong'),
    ("the shards' covariances averaged",
     lambda right: lambda m, c: (right(m, c)[0], c.mean(0)),
     "averages the shards' covariances"),
]
