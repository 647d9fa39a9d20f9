"""The grader's twin of ``parallel_mcmc.exercises.parallel_chains.ex_chains_costliest_chain`` (exercise ``ex-chains-costliest-chain``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["costliest_chain", "CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def costliest_chain(steps: np.ndarray) -> tuple[int, float]:
    """The chain whose removal saves the most lockstep steps, and that saving over the lockstep total."""
    steps = np.asarray(steps)
    full = steps.max(axis=0).sum()
    saved = [full - np.delete(steps, c, axis=0).max(axis=0).sum() for c in range(steps.shape[0])]
    c = int(np.argmax(saved))
    return c, float(saved[c] / full)


def _unseen(rng: np.random.Generator) -> dict:
    cases = []
    while len(cases) < 4:
        steps = rng.geometric(1 / float(rng.uniform(2, 12)), size=(int(rng.integers(3, 9)), int(rng.integers(3, 12))))
        full = steps.max(axis=0).sum()
        saved = sorted(full - np.delete(steps, c, axis=0).max(axis=0).sum() for c in range(steps.shape[0]))
        if saved[-1] > saved[-2]:  # one answer only
            cases.append(steps)
    return {"cases": cases}


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.parallel_chains.costliest_chain"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = costliest_chain

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (0, lambda kw: [(np.asarray(s).copy(),) for s in kw["cases"]])
