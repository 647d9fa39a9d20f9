"""The grader's twin of ``parallel_mcmc.exercises.getting_started.ex_profiling_bottleneck`` (exercise ``ex-profiling-bottleneck``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["bottleneck", "CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def bottleneck(events: list[dict]) -> str:
    """The operation whose trace events add up to the most time, over every thread."""
    totals: dict[str, float] = {}
    for e in events:
        totals[e["name"]] = totals.get(e["name"], 0.0) + float(e["dur"])
    return max(totals, key=totals.get)


def _unseen(rng: np.random.Generator) -> dict:
    cases = []
    names = ["fusion.1", "sort.2", "all-reduce.3", "dot.4", "Rendezvous", "exp.5"]
    for _ in range(4):
        chosen = list(rng.choice(names, size=int(rng.integers(2, 5)), replace=False))
        events = [{"name": str(rng.choice(chosen)), "dur": float(rng.uniform(1.0, 50.0)), "tid": int(rng.integers(1, 3))}
                  for _ in range(int(rng.integers(4, 12)))]
        totals = sorted((sum(e["dur"] for e in events if e["name"] == n) for n in {e["name"] for e in events}),
                        reverse=True)
        if len(totals) > 1 and totals[0] - totals[1] < 1.0:
            events.append({"name": events[0]["name"], "dur": 5.0, "tid": 1})  # a unique largest total
        cases.append(events)
    return {"cases": cases}


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.getting_started.bottleneck"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = bottleneck

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (0, lambda kw: [([dict(e) for e in c],) for c in kw["cases"]])
