"""The grader's twin of ``parallel_mcmc.exercises.sharding_lab.ex_choosing_loop_trips`` (exercise ``ex-choosing-loop-trips``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["device_trips", "CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def device_trips(steps: np.ndarray, num_devices: int) -> tuple[np.ndarray, np.ndarray]:
    """Each device's loop trips: under jit(vmap) the slowest chain anywhere, under shard_map its own, per draw."""
    steps = np.asarray(steps)
    return (np.full(num_devices, steps.max(axis=0).sum()),
            np.array([block.max(axis=0).sum() for block in np.array_split(steps, num_devices)]))


def _unseen(rng: np.random.Generator) -> dict:
    cases = []
    for _ in range(4):
        num_devices = int(rng.integers(2, 6))
        num_chains = num_devices * int(rng.integers(1, 4)) + int(rng.integers(0, num_devices))  # uneven ones too
        cases.append((rng.geometric(1 / float(rng.uniform(2, 20)), size=(num_chains, int(rng.integers(2, 9)))),
                      num_devices))
    return {"cases": cases}


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.sharding_lab.device_trips"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = device_trips

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (0, lambda kw: [(np.asarray(s).copy(), d) for s, d in kw["cases"]])
