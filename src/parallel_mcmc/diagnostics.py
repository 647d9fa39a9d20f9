"""Convergence diagnostics of many chains, through ArviZ.

ArviZ computes R-hat, the effective sample size and trace plots from an
``InferenceData`` whose variables have ``(chain, draw, ...)`` axes.
:func:`to_inference_data` builds one from the draws the chain runners return.
:func:`nested_rhat` is the nested R-hat of many short chains grouped into
superchains (Margossian et al.), which ArviZ does not provide.
"""

from __future__ import annotations

from typing import Any, Mapping

import arviz as az
import numpy as np

from .validate import whole_number

__all__ = ["to_inference_data", "nested_rhat"]


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


def nested_rhat(draws: Any, num_superchains: int) -> float:
    """Nested R-hat of one quantity's ``(chain, draw)`` draws, chains grouped into ``num_superchains``.

    Consecutive blocks of ``chains // num_superchains`` chains form one
    superchain each (chains that started from the same point, or from points
    drawn alike). With ``K`` superchains of ``M`` chains of ``N`` draws,

    - ``B``: the variance of the ``K`` superchain means (divisor ``K - 1``);
    - ``W``: the average over superchains of the variance of their chains' means
      (divisor ``M - 1``; 0 when ``M = 1``) plus their chains' average variance
      (divisor ``N - 1``; 0 when ``N = 1``);

    and nested R-hat is ``sqrt(1 + B / W)``. Unlike the classic R-hat, it needs
    no long chains: many chains in each superchain stand in for the draws of a
    long one. Values near 1 say that the superchains agree.
    """
    x = np.asarray(draws, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"draws must have shape (chain, draw), got {x.shape}: pass one quantity at a time.")
    num_superchains = whole_number("num_superchains", num_superchains, 2)
    num_chains, num_draws = x.shape
    if num_chains % num_superchains:
        raise ValueError(
            f"{num_chains} chains cannot be split into {num_superchains} superchains of equal size: "
            "choose a divisor of the number of chains."
        )
    if not np.isfinite(x).all():
        bad = sorted(set(np.nonzero(~np.isfinite(x))[0].tolist()))
        raise ValueError(
            f"draws of chain(s) {bad[:10]}{' ...' if len(bad) > 10 else ''} hold NaN or infinite values: such a "
            "chain diverged or its log-density returned NaN; find out why (or drop those chains) before diagnosing."
        )
    x = x.reshape(num_superchains, num_chains // num_superchains, num_draws)
    chain_means = x.mean(axis=2)  # (superchain, chain)
    between = chain_means.mean(axis=1).var(ddof=1)
    between_chains = chain_means.var(axis=1, ddof=1) if x.shape[1] > 1 else np.zeros(num_superchains)
    within_chains = x.var(axis=2, ddof=1).mean(axis=1) if num_draws > 1 else np.zeros(num_superchains)
    within = float((between_chains + within_chains).mean())
    if within == 0.0:
        raise ValueError(
            "no spread within any superchain (W = 0): every chain is constant"
            + (", and with one chain a superchain and one draw a chain nothing can vary; use several chains per "
               "superchain or more draws." if num_draws == 1 or num_chains == num_superchains else
               "; the chains did not move (a step size of 0, or every proposal rejected?).")
        )
    return float(np.sqrt(1.0 + between / within))
