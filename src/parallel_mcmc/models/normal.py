"""A normal model with unknown location and scale, the running example of the chains part.

``NUM_OBSERVATIONS`` observations are drawn once from a normal distribution
with mean ``TRUE_LOC`` and standard deviation ``TRUE_SCALE``, from the fixed
key ``DATA_KEY``. The parameters are ``{"loc", "log_scale"}`` (the scale on
the log scale, so that the sampler moves on an unconstrained space) with flat
priors, so the posterior mean of ``loc`` is close to the sample mean.

Importing it runs no JAX operation (the backend stays unstarted): the data are drawn on first use.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

import jax
import jax.numpy as jnp
import jax.scipy.stats as stats
import numpy as np

from parallel_mcmc._validate import whole_number

__all__ = [
    "TRUE_LOC",
    "TRUE_SCALE",
    "NUM_OBSERVATIONS",
    "DATA_KEY",
    "observed",
    "make_logdensity",
    "logdensity",
    "spread_positions",
    "constant_positions",
]

TRUE_LOC = 10.0
TRUE_SCALE = 20.0
NUM_OBSERVATIONS = 1_000
#: The integer seed of the JAX key the observations are drawn from.
DATA_KEY = 0


@lru_cache(maxsize=None)
def _observed(num: int, key: int):
    return TRUE_LOC + TRUE_SCALE * jax.random.normal(jax.random.key(key), (num,))


def observed(num: int = NUM_OBSERVATIONS, key: int = DATA_KEY):
    """The observations: ``num`` draws of N(TRUE_LOC, TRUE_SCALE²) from ``jax.random.key(key)``.

    Parameters
    ----------
    num : int, optional
        The number of observations (at least 2).
    key : int, optional
        The seed of the key.

    Returns
    -------
    jax.Array
        The observations, ``(num,)``.

    Raises
    ------
    ValueError
        If ``num`` is not a whole number >= 2, or ``key`` not one >= 0.
    """
    whole_number("num", num, 2, of=" of observations")
    whole_number("key", key, 0, of=" (the seed of jax.random.key)")
    return _observed(num, key)


def make_logdensity(data: Any) -> Callable[[dict], Any]:
    """Log-density (up to a constant) of ``{"loc", "log_scale"}`` given the observations ``data``.

    Flat priors on ``loc`` and ``log_scale``; the likelihood is the sum of
    normal log-densities of the observations.

    Parameters
    ----------
    data : array_like
        The observations, 1-D (at least 2).

    Returns
    -------
    callable
        ``logdensity(position) -> scalar`` of a position ``{"loc", "log_scale"}``.

    Raises
    ------
    ValueError
        If ``data`` is not a 1-D array of at least 2 observations.
    TypeError
        If ``data`` is not of a floating type.
    """
    data = jnp.asarray(data)
    if data.ndim != 1 or data.shape[0] < 2:
        raise ValueError(f"data must be a 1-D array of at least 2 observations, got shape {data.shape}.")

    def logdensity_fn(position: dict):
        if not isinstance(position, dict) or set(position) != {"loc", "log_scale"}:
            raise TypeError(
                "position must be a dict with exactly the keys 'loc' and 'log_scale', "
                f"got {type(position).__name__} {list(position) if isinstance(position, dict) else ''}."
            )
        scale = jnp.exp(position["log_scale"])
        return jnp.sum(stats.norm.logpdf(data, position["loc"], scale))

    return logdensity_fn


def logdensity(position: dict):
    """Log-density of the model on the default observations, :func:`observed`.

    Parameters
    ----------
    position : dict
        ``{"loc", "log_scale"}``, scalars.

    Returns
    -------
    jax.Array
        The log-density, a scalar.
    """
    return make_logdensity(observed())(position)


def constant_positions(num_chains: int, loc: float = 1.0, log_scale: float = 1.0) -> dict:
    """All chains start at the same point (the way the seed starts them).

    Parameters
    ----------
    num_chains : int
        The number of chains.
    loc : float, optional
        The start of ``loc``.
    log_scale : float, optional
        The start of ``log_scale``.

    Returns
    -------
    dict
        ``{"loc", "log_scale"}``, each ``(num_chains,)``.
    """
    _check_chains(num_chains)
    return {
        "loc": np.full(num_chains, loc, dtype=np.float32),
        "log_scale": np.full(num_chains, log_scale, dtype=np.float32),
    }


def spread_positions(num_chains: int, seed: int = 1, loc_range=(0.0, 20.0), log_scale_range=(2.0, 4.0)) -> dict:
    """Starting points spread uniformly over a box around the posterior, one per chain.

    Spread-out starts are what gives R-hat its power, and what ChEES and MEADS
    need to adapt; the default box covers the posterior many times over.

    Parameters
    ----------
    num_chains : int
        As for :func:`constant_positions`.
    seed : int, optional
        The seed of the key.
    loc_range : tuple of float, optional
        The range of ``loc``.
    log_scale_range : tuple of float, optional
        The range of ``log_scale``.

    Returns
    -------
    dict
        ``{"loc", "log_scale"}``, as :func:`constant_positions` returns them.
    """
    _check_chains(num_chains)
    rng = np.random.default_rng(seed)
    return {
        "loc": rng.uniform(*loc_range, size=num_chains).astype(np.float32),
        "log_scale": rng.uniform(*log_scale_range, size=num_chains).astype(np.float32),
    }


def _check_chains(num_chains: int) -> None:
    whole_number("num_chains", num_chains, 1)
