"""The exercise ``ex-sharded-gradient`` of the chapter ``chapters/other_parallelism/one_chain_sharded_data.md``: its check, :func:`sharded_gradient`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc._validate import is_number
from parallel_mcmc.exercises.common import (WrongType, call, check_rows_sharded, expect, expect_type, jax_module,
                                            passed, traced_program, uses)

__all__ = ["sharded_gradient", "WRONG_ANSWERS"]


# --------------------------------------------------------------------------- one chain over sharded data

_BETAS = (
    np.zeros(5, np.float32),
    np.array([0.5, 1.0, -1.0, 0.3, 0.0], np.float32),
    np.array([0.2, -0.4, 0.1, 0.8, -0.3], np.float32),
)


def _logistic_pieces(beta: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The log-likelihood's gradient of each row (float64): row_i * (y_i - sigmoid(row_i @ beta))."""
    logits = X @ beta
    return X * (y - 0.5 * (1.0 + np.tanh(0.5 * logits)))[:, None]


def _close(got: np.ndarray, want: np.ndarray) -> bool:
    # float32 sums over many rows: good to about 1e-4 of the gradient's size
    scale = max(1.0, float(np.abs(want).max()))
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=1e-3, atol=2e-4 * scale))


def _gradient_verdict(got: Any, beta: np.ndarray, X: np.ndarray, y: np.ndarray, prior_sd: float,
                      num_devices: int, where: str) -> None:
    pieces = _logistic_pieces(beta.astype(np.float64), X, y)
    likelihood = pieces.sum(axis=0)
    prior = -beta.astype(np.float64) / prior_sd**2
    want = likelihood + prior
    if isinstance(got, tuple) and len(got) == 2 and np.ndim(got[0]) == 0:
        raise WrongType(f"{where} returned a pair, ({type(got[0]).__name__}, {type(got[1]).__name__}): the value "
                        "and the gradient, as jax.value_and_grad gives them. Return the gradient only (jax.grad).")
    expect_type(got is not None and not isinstance(got, (str, bytes, dict)),
                f"{where} returned {type(got).__name__}; return the gradient, an array of one entry per coefficient.")
    try:
        got = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        raise WrongType(f"{where} returned {type(got).__name__}, which is not an array of numbers; return the "
                        "gradient, an array of one entry per coefficient.") from None
    d = beta.size
    if got.shape in ((num_devices, d), (num_devices * d,)) and num_devices > 1:
        raise AssertionError(
            f"{where} returned {num_devices} gradients, one per device (shape {got.shape}): each device's gradient "
            "covers its own rows only. Add them across devices with jax.lax.psum(..., axis) and use out_specs=P()."
        )
    expect(got.shape == (d,), f"{where} returned shape {got.shape}; the gradient has one entry per coefficient: ({d},).")
    expect(bool(np.all(np.isfinite(got))), f"{where} returned {got}, which is not finite.")
    if _close(got, want):
        return
    if _close(got, likelihood):
        raise AssertionError(f"{where} is the log-likelihood's gradient only: add the prior's gradient, -beta / prior_sd**2.")
    if num_devices > 1 and (_close(got, num_devices * likelihood + prior) or _close(got, num_devices * want)):
        raise AssertionError(
            f"{where} is {num_devices} times the log-likelihood's gradient: the devices' gradients are added twice. "
            "Inside shard_map, with the varying-axes check on (the default), jax.grad with respect to a replicated "
            "argument already adds the devices' contributions (the program shows a psum_invariant); a psum on top "
            f"adds {num_devices} copies of that sum. Take the gradient of the psum-ed log-density instead, "
            "jax.grad(lambda b: jax.lax.psum(log_likelihood(b, X, y), axis) + log_prior(b))."
        )
    if num_devices > 1 and _close(got, likelihood + num_devices * prior):
        raise AssertionError(
            f"{where} counts the prior {num_devices} times, once per device: psum adds whatever each device "
            "holds, so add the prior's gradient once, outside the psum (or only on one device)."
        )
    blocks = np.array_split(pieces, num_devices)
    if num_devices > 1 and any(_close(got, b.sum(axis=0) + prior) or _close(got, b.sum(axis=0)) for b in blocks):
        raise AssertionError(f"{where} is the gradient of one device's rows only: combine the devices' gradients with psum.")
    if _close(got, want / len(y)) or _close(got, likelihood / len(y) + prior):
        raise AssertionError(f"{where} averages over the rows; the log-likelihood is a sum over rows, not a mean.")
    if _close(got, -want):
        raise AssertionError(f"{where} has the wrong sign: it is the gradient of the negative log-density.")
    raise AssertionError(f"{where} returned {got.round(4)}, but the gradient of the log-density there is {want.round(4)}.")


def sharded_gradient(fn: Callable[..., Any], X: Any, y: Any, prior_sd: float,
                     cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(beta, X, y)``: the gradient of the logistic log-density (a normal prior of sd ``prior_sd``)
    over data whose rows are sharded, computed with ``shard_map`` and ``psum``.

    ``X`` and ``y`` are the chapter's sharded data; ``cases`` (the grader's) lists more
    coefficient vectors ``beta`` to try on them.

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    X : jax.Array
        The chapter's covariates, split by rows over the mesh.
    y : jax.Array
        The chapter's outcomes, split by rows over the mesh.
    prior_sd : float
        The prior's standard deviation.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ gradient over sharded data: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When the gradient is wrong, or is not computed from the sharded rows.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, ``X`` not a ``jax.Array``, ``prior_sd`` not a number, or ``fn`` returns
        something other than an array of numbers (a (value, gradient) pair, ``None``).
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), f"Pass your function itself, `sharded_gradient`, not the gradient it returns (got a "
                              f"{type(fn).__name__}).")
    expect_type(is_number(prior_sd), f"prior_sd must be the prior's standard deviation, one number; got "
                                     f"{type(prior_sd).__name__}.")
    jax = jax_module()
    expect_type(isinstance(X, jax.Array),
                f"`X` should be the chapter's sharded jax.Array, got {type(X).__name__}. Make it with "
                "jax.device_put(X, NamedSharding(mesh, P('data'))).")
    mesh, axis = check_rows_sharded(X, "X")
    expect(float(prior_sd) > 0, f"prior_sd must be the prior's standard deviation (positive), got {prior_sd!r}.")
    program = traced_program(fn, (_BETAS[0], X, y), "sharded_gradient(beta, X, y)")
    expect(
        uses(program, "shard_map"),
        "`sharded_gradient` does not use jax.shard_map: the exercise is to write what each device computes "
        "on its own rows, and how the devices combine it.",
    )
    expect(
        uses(program, "psum"),
        f"`sharded_gradient` never adds across devices: combine the per-device gradients with jax.lax.psum(g, '{axis}').",
    )
    X_host, y_host = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
    for beta in _BETAS:
        got = call(fn, beta, X, y, what="sharded_gradient(beta, X, y)")
        _gradient_verdict(got, beta, X_host, y_host, float(prior_sd), mesh.size,
                          f"sharded_gradient(beta={beta.tolist()}, X, y)")
    for beta in cases or ():
        beta = np.asarray(beta, np.float32)
        got = call(fn, beta, X, y, what="sharded_gradient(beta, X, y)")
        _gradient_verdict(got, beta, X_host, y_host, float(prior_sd), mesh.size, f"sharded_gradient(beta={beta.round(3).tolist()}, X, y)")
    passed("gradient over sharded data")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = []
