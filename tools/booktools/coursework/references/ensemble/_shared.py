"""Unseen inputs that two or more twins of the part share."""

from __future__ import annotations

import numpy as np

__all__ = ["emcee_maps"]


def emcee_maps(rng: np.random.Generator) -> list[int]:
    """emcee's maps: every walker first, then half of them twice a step."""
    walkers = 2 * int(rng.integers(4, 65))
    return [walkers] + [walkers // 2] * (2 * int(rng.integers(1, 8)))
