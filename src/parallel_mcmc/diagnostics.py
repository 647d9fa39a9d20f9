"""Convergence diagnostics of many chains, through ArviZ.

ArviZ computes R-hat, the effective sample size and trace plots from an
``InferenceData`` whose variables have ``(chain, draw, ...)`` axes.
:func:`to_inference_data` builds one from the draws the chain runners return.
"""

from __future__ import annotations

from typing import Any, Mapping

import arviz as az
import numpy as np

__all__ = ["to_inference_data"]


def to_inference_data(positions: Mapping[str, Any]):
    """ArviZ ``InferenceData`` from a dict of ``(chain, draw)`` arrays, for R-hat and ESS."""
    if not isinstance(positions, Mapping) or not positions:
        raise TypeError("positions must be a non-empty dict of (chain, draw) arrays, like a runner's positions.")
    posterior = {name: np.asarray(value) for name, value in positions.items()}
    for name, value in posterior.items():
        if value.ndim < 2:
            raise ValueError(
                f"{name!r} has shape {value.shape}; ArviZ needs (chain, draw) axes. "
                "For one chain, add a leading axis: value[None]."
            )
    return az.from_dict(posterior=posterior)
