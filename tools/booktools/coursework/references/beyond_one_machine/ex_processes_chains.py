"""The grader's twin of ``parallel_mcmc.exercises.beyond_one_machine.ex_processes_chains`` (exercise ``ex-processes-chains``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["my_chains", "CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def my_chains(process_id: int, num_processes: int, num_chains: int) -> list[int]:
    """The contiguous block of chains a process holds."""
    if num_chains % num_processes:
        raise ValueError(f"{num_chains} chains cannot be split evenly over {num_processes} processes.")
    per = num_chains // num_processes
    return list(range(process_id * per, (process_id + 1) * per))


def _unseen(rng: np.random.Generator) -> dict:
    cases, uneven = [], []
    for num_processes in rng.choice(np.arange(2, 9), size=3, replace=False):
        num_processes = int(num_processes)
        num_chains = num_processes * int(rng.integers(1, 6))
        cases += [((p, num_processes, num_chains), my_chains(p, num_processes, num_chains)) for p in range(num_processes)]
        uneven.append((int(rng.integers(0, num_processes)), num_processes, num_chains + 1))
    return {"cases": cases, "uneven": uneven}


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.beyond_one_machine.my_chains"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = my_chains

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (0, lambda kw: [tuple(a) for a, _ in kw["cases"]] + [tuple(a) for a in kw["uneven"]])
