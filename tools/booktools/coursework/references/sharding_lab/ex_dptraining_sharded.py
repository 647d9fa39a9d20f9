"""The grader's twin of ``parallel_mcmc.exercises.sharding_lab.ex_dptraining_sharded`` (exercise ``ex-dptraining-sharded``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["CHECK", "REFERENCE", "UNSEEN", "CALLS"]


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.sharding_lab.sharded_chain"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = None

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = None

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = None
