"""The grader's twin of ``parallel_mcmc.exercises.other_parallelism.ex_pt_pair_acceptance`` (exercise ``ex-pt-pair-acceptance``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["pair_acceptance", "CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def pair_acceptance(log_p: np.ndarray, betas: np.ndarray, parity: int) -> np.ndarray:
    """Each replica's probability of swapping with its partner of this round (0 without one)."""
    i = np.arange(len(betas))
    partner = np.where(i % 2 == parity, i + 1, i - 1)
    has = (partner >= 0) & (partner < len(betas))
    partner = np.where(has, partner, i)
    log_ratio = (betas[i] - betas[partner]) * (log_p[partner] - log_p[i])
    return np.where(has, np.exp(np.minimum(0.0, log_ratio)), 0.0)


def _unseen(rng: np.random.Generator) -> dict:
    cases = []
    for _ in range(4):
        R = int(rng.integers(3, 10))
        betas = np.geomspace(1.0, float(rng.uniform(0.005, 0.5)), R)
        log_p = -np.abs(rng.normal(scale=float(rng.uniform(1, 30)), size=R))
        parity = int(rng.integers(0, 2))
        cases.append((log_p, betas, parity, pair_acceptance(log_p, betas, parity)))
    return {"cases": cases}


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.other_parallelism.pair_acceptance"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = pair_acceptance

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (
        0, lambda kw: [(np.asarray(lp, np.float64).copy(), np.asarray(b, np.float64).copy(), p) for lp, b, p, _ in kw["cases"]])
