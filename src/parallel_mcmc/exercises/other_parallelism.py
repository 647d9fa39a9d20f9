"""Checks for the exercises of the part *Other kinds of parallelism*.

Each function checks one exercise. It prints a one-line confirmation when the
answer is right and raises :class:`AssertionError` saying what is wrong (and
how to fix it) otherwise. The checks that take ``cases`` are also run by the
grader on inputs the chapter does not show.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from . import as_float, call, expect, passed, traced_program, uses
from .sharding_lab import _check_rows_sharded

__all__ = ["sharded_gradient", "pair_acceptance", "next_temperature"]


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
    got = np.asarray(got, dtype=np.float64)
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
    """
    expect(callable(fn), "Pass your function itself, `sharded_gradient`, not the gradient it returns.")
    mesh, axis = _check_rows_sharded(X, "X")
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


# --------------------------------------------------------------------------- parallel tempering

# (log p of each replica's state, inverse temperatures, parity, probability that each replica swaps)
_PAIR_CASES = (
    ([-1.0, -3.0, -2.0, -10.0], [1.0, 0.5, 0.25, 0.125], 0, [0.3678794412, 0.3678794412, 0.3678794412, 0.3678794412]),
    ([-1.0, -3.0, -2.0, -10.0], [1.0, 0.5, 0.25, 0.125], 1, [0.0, 1.0, 1.0, 0.0]),
    ([-4.0, -0.5, -7.0, -2.0, -30.0], [1.0, 0.6, 0.36, 0.216, 0.1296], 0, [1.0, 1.0, 1.0, 1.0, 0.0]),
    ([-4.0, -0.5, -7.0, -2.0, -30.0], [1.0, 0.6, 0.36, 0.216, 0.1296], 1,
     [0.0, 0.2101360712, 0.2101360712, 0.08899278322, 0.08899278322]),
)


def _pairs(num_replicas: int, parity: int) -> tuple[list[tuple[int, int]], list[int]]:
    """The neighbour pairs ``(i, i + 1)`` with ``i % 2 == parity``, and the replicas left without a partner."""
    pairs = [(i, i + 1) for i in range(parity, num_replicas - 1, 2)]
    return pairs, [i for i in range(num_replicas) if not any(i in p for p in pairs)]


def _paired_as(got: np.ndarray, pairs: list, alone: list) -> bool:
    """True if ``got`` gives both replicas of each pair one number and each replica without a partner 0."""
    return all(abs(got[i] - got[j]) < 1e-6 for i, j in pairs) and all(got[i] == 0 for i in alone)


def pair_acceptance(fn: Callable[..., Any], cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(log_p, betas, parity)``: for each replica, the probability that it swaps this round.

    Pairs ``(i, i + 1)`` with ``i % 2 == parity`` propose a swap, accepted with probability
    ``min(1, exp((betas[i] - betas[i+1]) * (log_p[i+1] - log_p[i])))``; both replicas of a pair get
    that probability, and a replica without a partner this round gets 0. ``cases`` (default: a fixed
    table) lists ``(log_p, betas, parity, probabilities)``.
    """
    expect(callable(fn), "Pass your function itself, `pair_acceptance`, not the probabilities it returns.")
    for log_p, betas, parity, want in cases if cases is not None else _PAIR_CASES:
        log_p, betas = np.asarray(log_p, np.float64), np.asarray(betas, np.float64)
        want = np.asarray(want, np.float64)
        R = betas.size
        where = f"pair_acceptance(log_p, betas, parity={parity}) with {R} replicas"
        got = np.asarray(call(fn, log_p.copy(), betas.copy(), parity, what=where), dtype=np.float64)
        expect(got.shape == (R,), f"{where} returned shape {got.shape}; return one probability per replica: ({R},).")
        expect(bool(np.all(np.isfinite(got))), f"{where} returned {got}: not every entry is finite.")
        pairs, alone = _pairs(R, int(parity))
        other, other_alone = _pairs(R, 1 - int(parity))
        if not _paired_as(got, pairs, alone) and _paired_as(got, other, other_alone) and np.any(got != 0):
            raise AssertionError(
                f"{where}: these are the pairs of the other parity. With parity {parity} the pairs are "
                f"{pairs}: (i, i + 1) for i % 2 == parity."
            )
        if any(got[i] != 0 for i in alone):
            raise AssertionError(
                f"{where}: replica(s) {[i for i in alone if got[i] != 0]} have no partner this round (pairs {pairs}), "
                "so their probability of swapping is 0."
            )
        if np.any(got > 1 + 1e-6):
            raise AssertionError(f"{where} returned {got.round(4)}: a probability above 1. Take min(1, ...) of the ratio.")
        if np.any(got < -1e-6):
            logs = np.all(got <= 1e-6) and np.allclose(np.exp(got[[i for p in pairs for i in p]]),
                                                       want[[i for p in pairs for i in p]], rtol=1e-4)
            raise AssertionError(
                f"{where} returned {got.round(4)}: negative numbers"
                + (" that are the logarithms of the right probabilities; return the probabilities." if logs else ".")
            )
        for i, j in pairs:
            expect(abs(got[i] - got[j]) < 1e-6 * max(1.0, abs(got[i])),
                   f"{where}: replicas {i} and {j} are one pair and swap together, but got {got[i]:.4g} and {got[j]:.4g}.")
        if np.allclose(got, want, rtol=1e-4, atol=1e-7):
            continue
        flipped = [(i, j) for i, j in pairs if want[i] < 1 - 1e-6 and abs(got[i] - 1) < 1e-6]
        if flipped:
            raise AssertionError(
                f"{where}: pair {flipped[0]} should swap with probability {want[flipped[0][0]]:.4g}, you return 1. "
                "The ratio is upside down: it is exp((beta_i - beta_j) * (log p(x_j) - log p(x_i))), which is "
                "below 1 when the colder replica i would receive the less probable state."
            )
        raise AssertionError(f"{where} returned {got.round(4)}; the swap probabilities are {want.round(4)}.")
    passed("swap probabilities of parallel tempering")


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
    """
    expect(callable(fn), "Pass your function itself, `next_temperature`, not the exponent it returns.")
    base = np.asarray(log_likelihoods, np.float64).ravel()
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
