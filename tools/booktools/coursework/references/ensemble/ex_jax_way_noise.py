"""The grader's twin of ``parallel_mcmc.exercises.ensemble.ex_jax_way_noise`` (exercise ``ex-jax-way-noise``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from parallel_mcmc.models import sinusoid

__all__ = ["log_prob_noise", "CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def log_prob_noise(thetas: np.ndarray) -> np.ndarray:
    """The vectorised log-density of the sinusoid with unknown noise, in NumPy (float64)."""
    t, y = sinusoid.data()
    thetas = np.asarray(thetas, dtype=float)
    amplitude, frequency, phase, offset, log_sigma = (thetas[:, i, None] for i in range(5))
    resid = y - (amplitude * np.sin(2 * np.pi * frequency * t + phase) + offset)
    sigma2 = np.exp(2 * log_sigma)
    loglik = -0.5 * np.sum(resid**2, axis=1) / sigma2[:, 0] - t.size * log_sigma[:, 0]
    low = np.append(sinusoid.PRIOR_LOW, -5.0)
    high = np.append(sinusoid.PRIOR_HIGH, 5.0)
    inside = np.all((thetas > low) & (thetas < high), axis=1)
    return np.where(inside, loglik, -np.inf)


def _unseen(rng: np.random.Generator) -> dict:
    truth = np.append(sinusoid.TRUE_PARAMS, np.log(sinusoid.NOISE_SCALE))
    cases = []
    for n in (int(rng.integers(4, 40)), int(rng.integers(4, 40))):
        thetas = truth + 1e-3 * rng.normal(size=(n, 5))
        thetas[int(rng.integers(0, n)), 0] = -1.0
        cases.append((thetas, log_prob_noise(thetas)))
    return {"cases": cases}


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.ensemble.vectorized_log_prob"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = log_prob_noise

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (0, lambda kw: [(np.array(t, dtype=float),) for t, _ in kw["cases"]])
