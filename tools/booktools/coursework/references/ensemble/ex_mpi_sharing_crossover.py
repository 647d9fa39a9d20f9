"""The grader's twin of ``parallel_mcmc.exercises.ensemble.ex_mpi_sharing_crossover`` (exercise ``ex-mpi-sharing-crossover``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from ._shared import emcee_maps

__all__ = ["sharing_crossover", "CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def sharing_crossover(round_overhead: float, tasks_per_map: list[int], ranks: int, cores: float) -> float | None:
    """Where the sharing pool's run ties with the serial one: the maps' overheads over the task-times they save
    (each map's tasks less its longest share: ceil(n / ranks) tasks, or n / cores of work where ranks share cores)."""
    saved = sum(n - max(-(-n // ranks), n / cores) for n in tasks_per_map)
    return len(tasks_per_map) * round_overhead / saved if saved > 0 else None


def _unseen(rng: np.random.Generator) -> dict:
    cases = []
    while len(cases) < 5:
        maps, ranks = emcee_maps(rng), int(rng.integers(2, 17))
        cores = float(rng.choice([1.0, 2.0, 4.0, 8.0, 16.0]))
        cases.append((float(rng.uniform(1e-4, 5e-3)), maps, ranks, cores))
    return {"cases": cases + [(float(rng.uniform(1e-4, 5e-3)), emcee_maps(rng), 1, 4.0)]}  # one rank never pays


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.ensemble.sharing_crossover"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = sharing_crossover

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (0, lambda kw: [(o, list(m), k, c) for o, m, k, c in kw["cases"]])
