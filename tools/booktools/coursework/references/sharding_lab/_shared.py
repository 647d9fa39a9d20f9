"""Unseen inputs that two or more twins of the part share."""

from __future__ import annotations

import numpy as np

from booktools.coursework.harness import Argument

__all__ = ["lab_betas", "lab_calls"]


def lab_betas(rng: np.random.Generator) -> dict:
    # coefficient vectors for the sharding lab's logistic regression (an intercept and 3 covariates)
    return {"cases": [rng.normal(scale=float(scale), size=4).astype(np.float32) for scale in (0.3, 1.0, 3.0)]}


def lab_calls(kw: dict) -> list[tuple]:
    # the learner's fn(beta, X, y) on the chapter's sharded X and y, the check's arguments 2 and 3
    return [(np.asarray(b, np.float32), Argument(2), Argument(3)) for b in kw["cases"]]
