"""The grader's twin of ``parallel_mcmc.exercises.parallel_chains.ex_chains_grouped_efficiency`` (exercise ``ex-chains-grouped-efficiency``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["grouped_efficiency", "CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def grouped_efficiency(steps: np.ndarray, num_groups: int) -> float:
    """All the chains' steps over those paid for when equal consecutive blocks of chains each run in lockstep."""
    steps = np.asarray(steps)
    return float(steps.sum() / sum(b.shape[0] * b.max(axis=0).sum() for b in np.split(steps, num_groups)))


def _unseen(rng: np.random.Generator) -> dict:
    cases = []
    for _ in range(4):
        num_groups = int(rng.integers(2, 5))
        steps = rng.geometric(1 / float(rng.uniform(2, 30)),
                              size=(num_groups * int(rng.integers(2, 5)), num_groups * int(rng.integers(1, 4))))
        cases.append((steps, num_groups))
    return {"cases": cases}


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.parallel_chains.grouped_efficiency"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = grouped_efficiency

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (
        0, lambda kw: [(np.asarray(steps).copy(), groups) for steps, groups in kw["cases"]])
