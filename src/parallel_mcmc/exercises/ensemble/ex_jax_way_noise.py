"""The exercise ``ex-jax-way-noise`` of the chapter ``chapters/ensemble/the_jax_way.md``: its check, :func:`vectorized_log_prob`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc.models import sinusoid
from parallel_mcmc.exercises.common import WrongType, call, expect, expect_type, passed

__all__ = ["vectorized_log_prob", "WRONG_ANSWERS"]


# The log-densities of the fixed points the check tries (-inf: outside the prior), written out.
_LOG_PROB_VALUES = [
    [18580.812173, 19042.898101, 19118.775483, 18945.281523, 18395.699762, None],
    [None, 19043.133431, 19108.847204, 18172.64063, 18936.440444, 19024.022174, 18967.751303, 19035.224879, None],
    [18350.488049, 18706.607761, None],
]


def _fixed_log_prob_cases() -> list[tuple[np.ndarray, np.ndarray]]:
    """(thetas, log-densities) near the true parameters, with walkers outside the prior box."""
    rng = np.random.default_rng(11)
    truth = np.append(sinusoid.TRUE_PARAMS, np.log(sinusoid.NOISE_SCALE))
    cases = []
    for values in _LOG_PROB_VALUES:
        n = len(values)
        thetas = truth + 1e-3 * rng.normal(size=(n, 5))
        thetas[-1, 0] = -1.0  # a negative amplitude: outside the prior
        if n == 9:
            thetas[0, 4] = 6.0  # log sigma above the prior's bound
        cases.append((thetas, np.array([-np.inf if v is None else v for v in values])))
    return cases


def vectorized_log_prob(fn: Callable[[np.ndarray], Any], cases: Sequence[tuple[Any, Any]] | None = None) -> None:
    """Check a vectorised log-density for emcee: ``(n, 5)`` NumPy in, ``(n,)`` NumPy float out.

    ``cases`` (default: fixed points near the true parameters) lists ``(thetas, log-densities)``.

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ vectorized_log_prob: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When the log-densities ``fn`` gives for a batch of positions are wrong.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, or returns something other than a NumPy array of floats (a JAX array,
        a list, ``None``, a number).
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), f"Pass your function itself, not the result of calling it (got a {type(fn).__name__}).")
    for thetas, want in cases if cases is not None else _fixed_log_prob_cases():
        thetas, want = np.array(thetas, dtype=float), np.asarray(want, dtype=float)
        n = thetas.shape[0]
        out = call(fn, thetas.copy(), what=f"your log-density on {n} walkers")
        if type(out).__module__.startswith("jax"):
            raise WrongType(
                f"The function returned a {type(out).__name__}, a JAX array. emcee works on NumPy arrays: "
                "convert the result with np.asarray(...) before returning it."
            )
        expect_type(isinstance(out, np.ndarray),
                    f"The function returned {type(out).__name__} for {n} walkers; return a NumPy array of shape ({n},)"
                    + (": a number for the whole batch is not one value per walker." if np.isscalar(out) else "."))
        expect(
            out.shape == (n,),
            f"For {n} walkers the function returned shape {out.shape}; emcee needs one value per walker, shape ({n},)."
            + (" Drop the extra axis (for example with out[:, 0] or by returning a scalar per walker)." if out.size == n else "")
            + (" Do not sum over the walkers." if out.size == 1 else ""),
        )
        expect_type(np.issubdtype(out.dtype, np.floating), f"The values have dtype {out.dtype}; they should be floats.")
        outside = ~np.isfinite(want)
        expect(
            np.all(out[outside] == -np.inf),
            "Walkers outside the prior box (for example a negative amplitude, or log sigma above 5) must get -inf; "
            f"got {out[outside].tolist()}.",
        )
        ok = np.isclose(out[~outside], want[~outside], rtol=1e-5, atol=0.5)
        if not ok.all():
            diff = out[~outside] - want[~outside]
            hint = ""
            norm = sinusoid.NUM_POINTS * thetas[~outside, 4]
            if np.allclose(diff, norm, rtol=1e-4, atol=0.5):
                hint = (
                    " The difference is n*log(sigma): the -n*log(sigma) term is missing. With sigma unknown "
                    "it is not a constant and cannot be dropped."
                )
            elif np.allclose(diff, diff[0], rtol=1e-4, atol=0.5):
                hint = " The values differ by a constant: drop constant terms such as -n*log(2*pi)/2."
            raise AssertionError(
                f"The log-densities differ from the expected ones by up to {np.abs(diff).max():.3g} "
                f"(for example {out[~outside][0]:.2f} instead of {want[~outside][0]:.2f}).{hint}"
            )
    passed("vectorized_log_prob")


def _as_jax(values: np.ndarray) -> Any:
    """``values`` as a JAX array, what a jitted function returns (JAX is imported only here)."""
    import jax.numpy as jnp

    return jnp.asarray(values)


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ('a constant off',
     lambda right: lambda th: right(th) + 3.0,
     'differ from the expected'),
    ('the n log(sigma) term left out',
     lambda right: lambda th: right(th) + sinusoid.NUM_POINTS * th[:, 4],
     r"n\*log\(sigma\)"),
    ('0 instead of -inf outside the prior box',
     lambda right: lambda th: np.nan_to_num(right(th), neginf=0.0),
     'outside the prior'),
    ('the JAX array returned as it is',
     lambda right: lambda th: _as_jax(right(th)),
     'JAX array'),
    ('an extra axis: one column of values',
     lambda right: lambda th: right(th)[:, None],
     'Drop the extra axis'),
]
