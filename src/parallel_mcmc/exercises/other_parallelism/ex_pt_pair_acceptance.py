"""The exercise ``ex-pt-pair-acceptance`` of the chapter ``chapters/other_parallelism/parallel_tempering.md``: its check, :func:`pair_acceptance`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc.exercises.common import WrongType, call, expect, expect_type, passed

__all__ = ["pair_acceptance", "WRONG_ANSWERS"]


# --------------------------------------------------------------------------- parallel tempering

# (log p of each replica's state, inverse temperatures, parity, probability that each replica swaps)
CASES = (
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


def _probabilities(answer: Any, num_replicas: int, where: str) -> np.ndarray:
    """``answer`` as a float64 array if it is an array (or list) of numbers; :class:`WrongType` otherwise."""
    expect_type(answer is not None and not isinstance(answer, (str, bytes, dict)),
                f"{where} returned {type(answer).__name__}; return an array of one probability per replica, "
                f"shape ({num_replicas},).")
    try:
        got = np.asarray(answer, dtype=np.float64)
    except (TypeError, ValueError):
        raise WrongType(f"{where} returned {type(answer).__name__} {answer!r:.80}, which is not an array of numbers; "
                        f"return one probability per replica, shape ({num_replicas},).") from None
    if got.ndim == 0:
        raise WrongType(f"{where} returned one number, {got.item():.4g}; return one probability per replica, "
                        f"shape ({num_replicas},), 0 for a replica without a partner this round.")
    return got


def pair_acceptance(fn: Callable[..., Any], cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(log_p, betas, parity)``: for each replica, the probability that it swaps this round.

    Pairs ``(i, i + 1)`` with ``i % 2 == parity`` propose a swap, accepted with probability
    ``min(1, exp((betas[i] - betas[i+1]) * (log_p[i+1] - log_p[i])))``; both replicas of a pair get
    that probability, and a replica without a partner this round gets 0. ``cases`` (default: a fixed
    table) lists ``(log_p, betas, parity, probabilities)``.

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ swap probabilities of parallel tempering: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When a swap probability is wrong: the message names the pair and the case.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, or returns something other than an array of numbers (``None``, a dict,
        one number for all the replicas).
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), f"Pass your function itself, `pair_acceptance`, not the probabilities it returns "
                              f"(got a {type(fn).__name__}).")
    for log_p, betas, parity, want in cases if cases is not None else CASES:
        log_p, betas = np.asarray(log_p, np.float64), np.asarray(betas, np.float64)
        want = np.asarray(want, np.float64)
        R = betas.size
        where = f"pair_acceptance(log_p, betas, parity={parity}) with {R} replicas"
        got = _probabilities(call(fn, log_p.copy(), betas.copy(), parity, what=where), R, where)
        expect(got.shape == (R,), f"{where} returned shape {got.shape}; return one probability per replica: ({R},).")
        pairs, alone = _pairs(R, int(parity))
        paired = [i for p in pairs for i in p]
        if not np.all(np.isfinite(got)):
            logs = bool(np.all(np.isneginf(got[alone]))) and bool(np.all(got[np.isfinite(got)] <= 1e-6))
            raise AssertionError(
                f"{where} returned {got.round(4)}: not every entry is finite"
                + (": -inf where the probability is 0, as the logarithm of the probabilities gives it. Return the "
                   "probabilities themselves (exp of the log-ratio, capped at 1)." if logs and alone else "."))
        if np.any(got < -1e-6):
            logs = np.all(got <= 1e-6) and np.allclose(np.exp(got[paired]), want[paired], rtol=1e-4)
            raise AssertionError(
                f"{where} returned {got.round(4)}: negative numbers"
                + (" that are the logarithms of the right probabilities; return the probabilities." if logs else ".")
            )
        other, other_alone = _pairs(R, 1 - int(parity))
        right_pairs = bool(paired) and np.allclose(got[paired], want[paired], rtol=1e-4, atol=1e-7)
        if (not _paired_as(got, pairs, alone) and _paired_as(got, other, other_alone) and np.any(got != 0)
                and not right_pairs):
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


def _without_min(log_p: np.ndarray, betas: np.ndarray, parity: int) -> np.ndarray:
    """The swap ratios of the pairs of ``parity``, not capped at 1 (the wrong answer the cap is for)."""
    log_p, betas = np.asarray(log_p, np.float64), np.asarray(betas, np.float64)
    out = np.zeros(betas.size)
    for i in range(parity, betas.size - 1, 2):
        out[i] = out[i + 1] = np.exp((betas[i] - betas[i + 1]) * (log_p[i + 1] - log_p[i]))
    return out


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ('the pairs of the other parity',
     lambda right: lambda lp, b, parity: right(lp, b, 1 - parity),
     'other parity'),
    ('the ratio upside down',
     lambda right: lambda lp, b, parity: right(-lp, b, parity),
     'upside down|the swap probabilities are'),
    ('the ratio without min(1, ...)',
     lambda right: lambda lp, b, parity: _without_min(lp, b, parity),
     'above 1'),
    ('the logarithms of the probabilities',
     lambda right: lambda lp, b, parity: np.log(np.maximum(right(lp, b, parity), 1e-300)),
     'negative|not every entry is finite'),
    ('a replica without a partner given 1, not 0',
     lambda right: lambda lp, b, parity: np.where(right(lp, b, parity) == 0, 1.0, right(lp, b, parity)),
     'no partner'),
    ('one probability per pair, not per replica',
     lambda right: lambda lp, b, parity: right(lp, b, parity)[parity:len(b) - 1:2],
     'one probability per replica'),
]
