"""The grader's twin of ``parallel_mcmc.exercises.parallel_chains.ex_chains_time_to_target`` (exercise ``ex-chains-time-to-target``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["time_to_target", "CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def time_to_target(ess_per_chain_draw: float, num_chains: int, max_rhat: float, target_ess: float, margin: float,
                   warmup_seconds: float, seconds_per_draw: float) -> tuple[int, float] | None:
    """The whole draws per chain that give all the chains ``margin * target_ess`` at the pilot's rate, and the
    warm-up plus those draws at their time each (a draw of all chains at once); None where R-hat is 1.01 or more."""
    if max_rhat >= 1.01:
        return None
    draws = int(np.ceil(margin * target_ess / (ess_per_chain_draw * num_chains)))
    return draws, warmup_seconds + seconds_per_draw * draws


def _unseen(rng: np.random.Generator) -> dict:
    cases = []
    while len(cases) < 6:
        args = (float(rng.uniform(0.002, 1.5)), int(2 ** rng.integers(0, 10)), float(rng.uniform(1.0, 1.0099)),
                int(rng.choice([100, 400, 1000, 2000, 5000])), float(rng.uniform(1.05, 1.5)),
                float(rng.uniform(0.01, 30.0)), float(rng.uniform(1e-5, 1e-2)))
        exact = args[4] * args[3] / (args[0] * args[1])
        if exact > 10 and 0.05 < exact % 1 < 0.95:  # far from a whole number: the last bit decides no ceiling
            cases.append((args, time_to_target(*args)))
    for rhat in (1.01, float(rng.uniform(1.01, 1.5))):  # chains that disagree, at the threshold and above it
        args = (float(rng.uniform(0.002, 1.5)), int(2 ** rng.integers(0, 10)), rhat, 1000, 1.2,
                float(rng.uniform(0.01, 30.0)), float(rng.uniform(1e-5, 1e-2)))
        cases.append((args, time_to_target(*args)))
    return {"cases": cases}


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.parallel_chains.time_to_target"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = time_to_target

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (0, lambda kw: [tuple(args) for args, _ in kw["cases"]])
