"""The grader's twin of ``parallel_mcmc.exercises.ensemble.ex_dask_cost_for_speedup`` (exercise ``ex-dask-cost-for-speedup``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from parallel_mcmc.measure import pool_run_time
from ._shared import emcee_maps

__all__ = ["cost_for_speedup", "CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def cost_for_speedup(speedup: float, overhead_per_task: float, emcee_seconds: float, tasks_per_map: list[int],
                     workers: int, cores: float, master_cores: float) -> float | None:
    """The cheapest log-probability at which the one-task-at-a-time pool's model reaches ``speedup``: bisection
    in log cost on the book's model; None where even a very dear one does not."""
    def reaches(c: float) -> bool:
        pool = pool_run_time(tasks_per_map, c, workers, cores, overhead_per_task=overhead_per_task,
                             master_cores=master_cores)
        return emcee_seconds + sum(tasks_per_map) * c >= speedup * (emcee_seconds + pool)

    low, high = 1e-9, 1e3
    if not reaches(high):
        return None
    while high / low > 1 + 1e-6:
        mid = float(np.sqrt(low * high))
        low, high = (low, mid) if reaches(mid) else (mid, high)
    return high


def _unseen(rng: np.random.Generator) -> dict:
    cases = []
    while len(cases) < 5:
        workers, cores = int(rng.integers(2, 17)), float(rng.choice([2.0, 4.0, 8.0, 16.0]))
        master = float(rng.uniform(0.0, 1.0))
        case = (float(rng.uniform(1.1, max(1.2, 0.9 * min(workers, cores - master)))), float(rng.uniform(1e-4, 3e-3)),
                float(rng.uniform(0.0, 0.5)), emcee_maps(rng), workers, cores, master)
        if cost_for_speedup(*case) is not None:
            cases.append(case)
    workers = int(rng.integers(2, 9))
    return {"cases": cases + [(float(workers) + 0.5, 1e-3, 0.05, emcee_maps(rng), workers, 16.0, 0.5)]}  # out of reach


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.ensemble.cost_for_speedup"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = cost_for_speedup

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (
        0, lambda kw: [(s, o, e, list(m), k, c, mc) for s, o, e, m, k, c, mc in kw["cases"]])
