"""The grader's twin of ``parallel_mcmc.exercises.beyond_one_machine.ex_processes_combine``: its unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def _unseen(rng: np.random.Generator) -> dict:
    return {"cases": [[int(k) for k in rng.integers(1, 6, size=int(rng.integers(2, 5)))] for _ in range(3)],
            "seed": int(rng.integers(1, 2**31))}


def _combine_calls(kw: dict) -> list[tuple]:
    rng = np.random.default_rng(kw["seed"])  # as processes.combine_chains draws its parts
    calls = []
    for sizes in kw["cases"]:
        parts = [rng.normal(size=(int(k), 7, 3)) for k in sizes]
        calls.append(([p.copy() for p in parts],))
    return calls


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.beyond_one_machine.combine_chains"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = None

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (0, _combine_calls)
