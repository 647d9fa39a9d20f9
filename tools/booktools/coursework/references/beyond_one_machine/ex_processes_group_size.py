"""The grader's twin of ``parallel_mcmc.exercises.beyond_one_machine.ex_processes_group_size`` (exercise ``ex-processes-group-size``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["best_group", "CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def best_group(num_draws: int, start_up_base: float, start_up_per_process: float, seconds_per_draw: float,
               cores: float, max_processes: int) -> int:
    """The group size with the shortest job: start-up grows with each process, sampling shrinks up to the cores."""
    return min(range(1, max_processes + 1), key=lambda p: start_up_base + p * start_up_per_process
               + num_draws * seconds_per_draw / min(p, cores))


def _unseen(rng: np.random.Generator) -> dict:
    cases = []
    while len(cases) < 5:
        case = (int(rng.integers(100, 10**7)), float(rng.uniform(0.5, 5)), float(rng.uniform(0.05, 3)),
                float(rng.uniform(1e-5, 1e-2)), int(rng.choice([2, 4, 8, 16, 64])), int(rng.integers(2, 65)))
        if best_group(*case) != best_group(case[0], case[1], 0.0, *case[3:]):  # start-up per process matters
            cases.append((case, best_group(*case)))
    while True:  # and one whose best group is the largest allowed: a search that stops one short misses it
        most = int(rng.integers(2, 17))
        case = (int(rng.integers(10**6, 10**7)), float(rng.uniform(0.5, 5)), float(rng.uniform(0.01, 0.5)),
                float(rng.uniform(1e-3, 1e-2)), 64, most)
        if best_group(*case) == most:
            return {"cases": cases + [(case, most)]}


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.beyond_one_machine.best_group"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = best_group

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (0, lambda kw: [tuple(a) for a, _ in kw["cases"]])
