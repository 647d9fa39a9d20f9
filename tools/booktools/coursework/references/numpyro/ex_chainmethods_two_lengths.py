"""The grader's twin of ``parallel_mcmc.exercises.numpyro.ex_chainmethods_two_lengths`` (exercise ``ex-chainmethods-two-lengths``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def _unseen(rng: np.random.Generator) -> dict:
    cases = []
    for _ in range(4):
        n_short = int(rng.integers(50, 2000))
        cases.append((float(rng.uniform(0.5, 20)), float(rng.uniform(1e-4, 1e-2)), n_short, n_short + int(rng.integers(100, 5000))))
    return {"cases": cases}


# --------------------------------------------------------------------------- the calls the checks make


def _split_calls(kw: dict) -> list[tuple]:
    return [(c + p * ns, ns, c + p * nl, nl) for c, p, ns, nl in kw["cases"]]


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.numpyro.split_compile"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = None

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (0, _split_calls)
