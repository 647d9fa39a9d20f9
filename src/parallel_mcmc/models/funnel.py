"""Neal's funnel, centred or not: a scale ``v`` and ``DIM`` coordinates whose spread it sets.

.. math::

    v \\sim \\mathcal N(0, 3^2), \\qquad x_i \\mid v \\sim \\mathcal N(0, e^{v}), \\quad i = 1, \\dots, d.

The sampler's coordinates are ``v`` and :math:`y_i = x_i e^{-(1 - c) v / 2}`, with
:math:`y_i \\mid v \\sim \\mathcal N(0, e^{c v})`: the *centring* ``c = 1`` is the centred funnel, ``c = 0``
the non-centred one, a product of independent normal distributions. Whatever ``c``, the marginal of ``v`` is
exactly :math:`\\mathcal N(0, 3^2)` (``V_SCALE``), the answer a sampler's draws are checked against.

Importing it runs no JAX operation (the backend stays unstarted).
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp

from parallel_mcmc._validate import real_number, whole_number

__all__ = ["DIM", "V_SCALE", "make_logdensity", "bulk_starts"]

#: The number of coordinates ``x`` (or ``y``) beside ``v``.
DIM = 9
#: The standard deviation of ``v``.
V_SCALE = 3.0


def make_logdensity(centring: Any, dim: int = DIM) -> Callable[[dict], Any]:
    """The funnel's log-density (up to a constant) of ``{"v", "y"}``, for the centring ``c``.

    ``centring`` may be a traced value: a sampler compiled for the returned function's factory
    (``make_logdensity(c)`` with ``c`` an argument) serves every ``c`` with one program.

    Parameters
    ----------
    centring : float or jax.Array
        ``c``: 1 for the centred funnel, 0 for the non-centred one.
    dim : int, optional
        The number of coordinates ``y``.

    Returns
    -------
    callable
        ``logdensity(position) -> scalar`` of a position ``{"v": scalar, "y": (dim,)}``.

    Raises
    ------
    ValueError
        If ``dim`` is not a whole number >= 1.
    """
    whole_number("dim", dim, 1, of=" of coordinates y")

    def logdensity(position: dict):
        v, y = position["v"], position["y"]
        return -v**2 / (2 * V_SCALE**2) - 0.5 * jnp.sum(y**2) * jnp.exp(-centring * v) - 0.5 * dim * centring * v

    return logdensity


def bulk_starts(num_chains: int, centring: float = 0.0, seed: int = 0, dim: int = DIM) -> dict:
    """Starts in the funnel's bulk, none in its neck or deep in its mouth: ``v`` uniform on (-2, 2), ``y`` exact
    given ``v``.

    Parameters
    ----------
    num_chains : int
        The number of chains.
    centring : float, optional
        ``c``, as for :func:`make_logdensity`.
    seed : int, optional
        The seed of the JAX key the starts are drawn from.
    dim : int, optional
        The number of coordinates ``y``.

    Returns
    -------
    dict
        ``{"v": (num_chains,), "y": (num_chains, dim)}``.

    Raises
    ------
    ValueError
        If ``num_chains``, ``seed`` or ``dim`` is not a whole number in range, or ``centring`` not a real number.
    """
    whole_number("num_chains", num_chains, 1)
    whole_number("seed", seed, 0, of=" (the seed of jax.random.key)")
    whole_number("dim", dim, 1, of=" of coordinates y")
    centring = real_number("centring", centring)
    key_v, key_y = jax.random.split(jax.random.key(seed))
    v = jax.random.uniform(key_v, (num_chains,), minval=-2.0, maxval=2.0)
    return {"v": v, "y": jnp.exp(centring * v / 2)[:, None] * jax.random.normal(key_y, (num_chains, dim))}
