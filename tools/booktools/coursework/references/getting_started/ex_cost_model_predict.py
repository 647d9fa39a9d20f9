"""The grader's twin of ``parallel_mcmc.exercises.getting_started.ex_cost_model_predict`` (exercise ``ex-cost-model-predict``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["predict_sharded", "CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def predict_sharded(steps: np.ndarray, step_seconds: np.ndarray, num_devices: int, cores: float, inner: str) -> float:
    """The three rules: each device's block sequentially or in lockstep at its width, the devices concurrent."""
    blocks = np.split(np.asarray(steps), num_devices)
    times = ([b.sum() * step_seconds[0] for b in blocks] if inner == "map"
             else [b.max(axis=0).sum() * step_seconds[len(b) - 1] for b in blocks])
    return float(max(max(times), sum(times) / cores))


def _unseen(rng: np.random.Generator) -> dict:
    cases = []
    for inner in ("map", "vmap", "map", "vmap"):
        num_devices = int(rng.integers(1, 5))
        num_chains = num_devices * int(rng.integers(1, 4))
        steps = rng.geometric(1 / float(rng.uniform(2, 20)), size=(num_chains, int(rng.integers(2, 9))))
        first = float(rng.uniform(1e-6, 1e-4))  # a step of one chain; wider steps cost more, less than in proportion
        step_seconds = first * (1 + float(rng.uniform(0.05, 0.9)) * np.arange(num_chains))
        cases.append((steps, step_seconds, num_devices, float(rng.choice([1.0, 2.0, 4.0, 8.0])), inner))
    return {"cases": cases}


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.getting_started.predict_sharded"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = predict_sharded

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (
        0, lambda kw: [(np.asarray(st).copy(), np.asarray(ss, float).copy(), d, c, i) for st, ss, d, c, i in kw["cases"]])
