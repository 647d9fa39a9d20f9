"""The grader's twin of ``parallel_mcmc.exercises.numpyro.ex_consensus_gaussian`` (exercise ``ex-consensus-gaussian``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["gaussian_consensus", "CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def gaussian_consensus(means: np.ndarray, covs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The product of Gaussian sub-posteriors: precisions add, means weigh by precision."""
    precisions = np.linalg.inv(covs)
    cov = np.linalg.inv(precisions.sum(axis=0))
    return cov @ np.einsum("sij,sj->i", precisions, means), cov


def _unseen(rng: np.random.Generator) -> dict:
    cases = []
    for S, d in ((int(rng.integers(2, 9)), int(rng.integers(1, 5))) for _ in range(3)):
        means = rng.normal(size=(S, d))
        A = rng.normal(size=(S, d, d))
        covs = A @ np.swapaxes(A, 1, 2) + np.eye(d) * rng.uniform(0.1, 3.0, size=(S, 1, 1))
        mean, cov = gaussian_consensus(means, covs)
        cases.append((means, covs, mean, cov))
    return {"cases": cases}


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.numpyro.gaussian_consensus"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = gaussian_consensus

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (
        0, lambda kw: [(np.asarray(m, dtype=float).copy(), np.asarray(c, dtype=float).copy()) for m, c, _, _ in kw["cases"]])
