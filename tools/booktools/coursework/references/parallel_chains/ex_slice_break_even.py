"""The grader's twin of ``parallel_mcmc.exercises.parallel_chains.ex_slice_break_even`` (exercise ``ex-slice-break-even``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["break_even_chains", "CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def _expected_max(evaluations: np.ndarray, num_chains: int) -> float:
    levels = np.arange(int(evaluations.max()) + 1)
    below = np.searchsorted(np.sort(evaluations), levels, side="right") / evaluations.size  # F(k) = P(X <= k)
    return float(np.sum(1.0 - below ** num_chains))


def break_even_chains(evaluations: np.ndarray, cost_ratio: float) -> int | None:
    """The fewest chains whose expected lockstep evaluations per draw exceed ``cost_ratio`` times one chain's mean;
    None where that is at least the largest count (never)."""
    evaluations = np.asarray(evaluations)
    target = cost_ratio * evaluations.mean()
    if target >= evaluations.max():
        return None
    c = 1
    while _expected_max(evaluations, c) <= target:
        c += 1
    return c


def _unseen(rng: np.random.Generator) -> dict:
    """Three cases that break even within a few thousand chains, and one, at a random place, that never does."""
    cases = []
    while len(cases) < 3:
        evaluations = 1 + rng.geometric(1 / float(rng.uniform(1.5, 6)), size=int(rng.integers(8, 40)))
        ratio = float(rng.uniform(0.8, 0.9 * evaluations.max() / evaluations.mean()))
        cases.append((evaluations, ratio))
    evaluations = 1 + rng.geometric(0.3, size=int(rng.integers(8, 40)))
    never = (evaluations, float(rng.uniform(1.0, 1.5) * evaluations.max() / evaluations.mean()))
    cases.insert(int(rng.integers(0, 4)), never)
    return {"cases": cases}


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.parallel_chains.break_even_chains"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = break_even_chains

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (
    0, lambda kw: [(np.asarray(e).copy(), r) for e, r in kw["cases"]])
