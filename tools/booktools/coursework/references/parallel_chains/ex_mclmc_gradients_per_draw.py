"""The grader's twin of ``parallel_mcmc.exercises.parallel_chains.ex_mclmc_gradients_per_draw`` (exercise ``ex-mclmc-gradients-per-draw``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["gradients_per_draw", "CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def gradients_per_draw(steps: np.ndarray, ess: float, gradients_per_step: int) -> float:
    """All the chains' gradients paid in lockstep (each draw: the slowest chain's steps), over the effective draws."""
    steps = np.asarray(steps)
    return float(steps.shape[0] * steps.max(axis=0).sum() * gradients_per_step / ess)


def _unseen(rng: np.random.Generator) -> dict:
    cases = []
    for _ in range(4):
        shape = (int(rng.integers(2, 9)), int(rng.integers(2, 12)))
        steps = rng.geometric(1 / float(rng.uniform(1.5, 12)), size=shape)
        cases.append((steps, float(rng.uniform(0.5, 3) * steps.size), int(rng.integers(1, 4))))
    return {"cases": cases}


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.parallel_chains.gradients_per_draw"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = gradients_per_draw

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (
    0, lambda kw: [(np.asarray(s).copy(), e, g) for s, e, g in kw["cases"]])
