"""The grader's twin of ``parallel_mcmc.exercises.parallel_chains.ex_machine_speedup`` (exercise ``ex-machine-speedup``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["machine_speedup", "CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def machine_speedup(lengths: np.ndarray, step_cost: float, iteration_cost: float) -> float:
    """Lockstep's time over the state machine's: the sum over draws of the slowest chain, against the
    largest total of one chain, each at its cost per step."""
    lengths = np.asarray(lengths)
    return float(lengths.max(axis=0).sum() * step_cost / (lengths.sum(axis=1).max() * iteration_cost))


def _unseen(rng: np.random.Generator) -> dict:
    cases = []
    for _ in range(4):
        lengths = rng.geometric(1 / float(rng.uniform(2, 20)), size=(int(rng.integers(2, 9)), int(rng.integers(2, 9))))
        step = float(rng.uniform(1e-6, 1e-4))
        cases.append((lengths, step, step * float(rng.uniform(1.05, 2.0))))
    return {"cases": cases}


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.parallel_chains.machine_speedup"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = machine_speedup

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (
        0, lambda kw: [(np.asarray(lengths).copy(), step, iteration) for lengths, step, iteration in kw["cases"]])
