"""The grader's twin of ``parallel_mcmc.exercises.other_parallelism.ex_sharded_gradient`` (exercise ``ex-sharded-gradient``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from booktools.coursework.harness import Argument

__all__ = ["CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def _unseen(rng: np.random.Generator) -> dict:
    return {"cases": [rng.normal(scale=float(scale), size=5).astype(np.float32) for scale in (0.3, 1.0, 3.0)]}


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.other_parallelism.sharded_gradient"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = None

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (
        0, lambda kw: [(np.asarray(b, np.float32), Argument(1), Argument(2)) for b in kw["cases"]])
