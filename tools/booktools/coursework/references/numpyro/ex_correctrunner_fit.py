"""The grader's twin of ``parallel_mcmc.exercises.numpyro.ex_correctrunner_fit`` (exercise ``ex-correctrunner-fit``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["max_draws", "CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def max_draws(memory_bytes: int, num_chains: int, num_devices: int, num_latent: int, data_bytes: int) -> int:
    """The most draws per chain that fit on the fullest device, as estimate_memory counts them."""
    per_device = -(-num_chains // num_devices)
    return max((memory_bytes - data_bytes - per_device * 40 * num_latent) // (per_device * 4 * num_latent), 0)


def _unseen(rng: np.random.Generator) -> dict:
    cases = []
    for _ in range(5):
        num_devices = int(rng.integers(1, 9))
        num_chains = int(rng.integers(1, 65))
        num_latent = int(rng.integers(1, 5000))
        data_bytes = int(rng.integers(0, 2**26))
        cases.append((int(data_bytes + rng.integers(2**16, 2**31)), num_chains, num_devices, num_latent, data_bytes))
    return {"cases": cases + [(10_000, 4, 1, 50, 9_000)]}  # a budget that holds no draw


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.numpyro.max_draws"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = max_draws

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (0, lambda kw: [tuple(c) for c in kw["cases"]])
