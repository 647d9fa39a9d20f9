"""The grader's twin of ``parallel_mcmc.exercises.other_parallelism.ex_smc_next_temperature`` (exercise ``ex-smc-next-temperature``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["next_temperature", "CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def next_temperature(log_likelihoods: np.ndarray, lam: float) -> float:
    """The largest exponent in ``(lam, 1]`` whose incremental weights keep half the particles effective: 1 where
    even it keeps more, else the root of ESS(increment) = 1/2, by bisection (the ESS falls as the step grows)."""
    values = np.asarray(log_likelihoods, np.float64)

    def ess_fraction(increment: float) -> float:
        w = np.exp(increment * (values - values.max()))
        return float(w.sum() ** 2 / (w**2).sum() / w.size)

    if ess_fraction(1.0 - lam) >= 0.5:
        return 1.0
    low, high = 0.0, 1.0 - lam
    for _ in range(200):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if ess_fraction(mid) >= 0.5 else (low, mid)
    return lam + low


def _unseen(rng: np.random.Generator) -> dict:
    cases = []
    for scale in (10.0, 1e3, 1e5):
        n = int(rng.integers(50, 600))
        cases.append((-scale * rng.chisquare(int(rng.integers(1, 6)), size=n), float(rng.uniform(0.0, 0.9))))
    cases.append((-1e-3 * rng.uniform(size=int(rng.integers(50, 200))), float(rng.uniform(0.0, 0.5))))  # one step to 1
    return {"cases": cases}


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.other_parallelism.next_temperature"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = next_temperature

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (
        0, lambda kw: [(np.asarray(v, np.float64).copy(), float(lam)) for v, lam in kw["cases"]])
