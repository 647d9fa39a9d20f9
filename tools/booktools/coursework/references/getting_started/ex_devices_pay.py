"""The grader's twin of ``parallel_mcmc.exercises.getting_started.ex_devices_pay`` (exercise ``ex-devices-pay``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["steps_to_pay", "CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def steps_to_pay(work_per_step: float, fixed_seconds: float, num_devices: int, cores: float,
                 cores_busy: float = 1.0) -> int | None:
    """The smallest whole number of steps at which a split call beats one device, or None: the split saves
    ``n * work * (1 - share)``, ``share`` the larger of ``1 / num_devices`` and ``busy / cores``."""
    share = max(1.0 / num_devices, min(max(cores_busy, 1.0), cores) / cores)
    if share >= 1.0:
        return None
    return int(np.floor(fixed_seconds / (work_per_step * (1.0 - share)))) + 1


def _unseen(rng: np.random.Generator) -> dict:
    cases = []
    while len(cases) < 6:
        num_devices, cores = int(rng.integers(1, 9)), float(rng.choice([1.0, 2.0, 4.0, 8.0, 16.0]))
        busy = float(rng.choice([1.0, rng.uniform(1.0, cores)]))
        work, fixed = float(rng.uniform(1e-7, 1e-5)), float(rng.uniform(1e-6, 1e-3))
        share = max(1.0 / num_devices, min(max(busy, 1.0), cores) / cores)
        # thresholds that are whole numbers would make the two ways of rounding disagree: skip them
        if share < 1.0 and abs(fixed / (work * (1 - share)) % 1 - 0.5) > 0.45:
            continue
        cases.append((work, fixed, num_devices, cores, busy))
    return {"cases": cases + [(1e-6, 1e-4, 1, 4.0, 1.0), (1e-6, 1e-4, 3, 2.0, 2.0)]}  # two that never pay


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.getting_started.steps_to_pay"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = steps_to_pay

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (0, lambda kw: [tuple(c) for c in kw["cases"]])
