"""Run many MCMC chains in JAX: one after another, in lockstep, or split over devices.

The runners take a BlackJAX-style ``step(key, state) -> (state, info)`` and a
number of draws, and return a compiled function of per-chain keys and states.
Every runner gives each chain the same random keys (draw ``i`` of a chain
uses ``jax.random.fold_in(key, i)`` of that chain's key, made when the draw
starts, so no array of keys grows with the draws), and all of them produce
the same draws from the same keys; they differ only in how the chains are
laid out:

================================  =============================================
:func:`sequential_runner`         chains one after another (``lax.map``), one device
:func:`vmap_runner`               all chains in lockstep (``vmap`` inside the step)
:func:`shard_map_runner`          chains split over a mesh axis, ``jax.shard_map``
:func:`summary_runner`            in lockstep, keeping each chain's running mean and variance, no draws
================================  =============================================

Multi-chain runners return ``(positions, info)`` with axes ``(chain, draw, ...)``,
except :func:`summary_runner`, whose memory does not grow with the draws.
What lockstep costs is counted in :mod:`parallel_mcmc.measure`; ArviZ's
diagnostics of the draws come through :mod:`parallel_mcmc.sample`.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

from parallel_mcmc._validate import whole_number

__all__ = ["sequential_runner", "vmap_runner", "shard_map_runner", "summary_runner"]

Step = Callable[[Any, Any], tuple[Any, Any]]


def _check_step(step: Any, num_draws: Any) -> None:
    if not callable(step):
        raise TypeError(
            f"step must be a transition function step(key, state) -> (state, info), such as "
            f"blackjax.nuts(...).step; got {type(step).__name__}."
        )
    whole_number("num_draws", num_draws, 1)


def _draw_keys(keys: Any, i: Any) -> Any:
    """Every chain's key for draw ``i``: ``fold_in`` of its own key, made when the draw starts."""
    return jax.vmap(jax.random.fold_in, in_axes=(0, None))(keys, i)


def _one_chain(step: Step, num_draws: int):
    """The plain, traceable loop of one chain: ``lax.scan`` over its draw keys."""
    def run(key, state):
        def one_draw(state, i):
            state, info = step(jax.random.fold_in(key, i), state)
            return state, (state.position, info)

        _, (positions, info) = jax.lax.scan(one_draw, state, jnp.arange(num_draws))
        return positions, info

    return run


def sequential_runner(step: Step, num_draws: int):
    """Compiled ``f(keys, states)``: the chains run one after another on one device (``lax.map``).

    Parameters
    ----------
    step : callable
        A BlackJAX-style ``step(key, state) -> (state, info)`` for one chain.
    num_draws : int
        The draws each chain makes (at least 1).

    Returns
    -------
    callable
        The compiled ``f(keys, states) -> (positions, info)``, axes ``(chain, draw, ...)``.

    Raises
    ------
    TypeError
        If ``step`` is not callable or ``num_draws`` not a whole number >= 1.
    """
    _check_step(step, num_draws)
    run = _one_chain(step, num_draws)
    return jax.jit(lambda keys, states: jax.lax.map(lambda ks: run(*ks), (keys, states)))


def vmap_runner(step: Step, num_draws: int):
    """Compiled ``f(keys, states)``: all chains advance together, ``vmap`` inside each draw.

    Every draw waits for the chain that needs the most integration steps.

    Parameters
    ----------
    step, num_draws
        As :func:`sequential_runner` takes them.

    Returns
    -------
    callable
        The same function of the same keys and states as :func:`sequential_runner` compiles.

    Raises
    ------
    TypeError
        Where :func:`sequential_runner` raises it.
    """
    _check_step(step, num_draws)

    def run(keys, states):
        def one_draw(states, i):
            states, info = jax.vmap(step)(_draw_keys(keys, i), states)
            return states, (states.position, info)

        _, out = jax.lax.scan(one_draw, states, jnp.arange(num_draws))
        return jax.tree.map(lambda x: x.swapaxes(0, 1), out)  # back to (chain, draw, ...)

    return jax.jit(run)


def shard_map_runner(step: Step, num_draws: int, mesh: Any, axis_name: str = "chains", inner: str = "map"):
    """Compiled ``f(keys, states)`` with the chains split over ``mesh``'s axis ``axis_name``.

    Each device runs its block of chains with ``lax.map`` (``inner="map"``: they
    do not wait for each other) or ``vmap`` (``inner="vmap"``: they run in
    lockstep). The number of chains must be a multiple of the axis size. On an
    Explicit mesh, place ``keys`` and ``states`` with
    ``NamedSharding(mesh, P(axis_name))`` first. BlackJAX's NUTS needs
    ``check_vma=False``, which this sets.

    Parameters
    ----------
    step, num_draws
        As for :func:`sequential_runner`.
    mesh : jax.sharding.Mesh
        The mesh whose axis ``axis_name`` the chains are split over.
    axis_name : str, optional
        The mesh axis of the chains.
    inner : str, optional
        ``"map"`` (chains independent) or ``"vmap"`` (lockstep) on each device.

    Returns
    -------
    callable
        What :func:`sequential_runner` compiles, split over the mesh.

    Raises
    ------
    TypeError
        If ``mesh`` is not a ``jax.sharding.Mesh`` (or ``step`` or ``num_draws`` is wrong).
    ValueError
        If ``axis_name`` is not an axis of the mesh, or ``inner`` is neither ``"map"`` nor ``"vmap"``.
    """
    _check_step(step, num_draws)
    if not hasattr(mesh, "axis_names"):
        raise TypeError(f"mesh must be a jax.sharding.Mesh (e.g. from jax.make_mesh), got {type(mesh).__name__}.")
    if axis_name not in mesh.axis_names:
        raise ValueError(f"axis_name {axis_name!r} is not an axis of the mesh; its axes are {mesh.axis_names}.")
    if inner == "map":
        per_device = sequential_runner(step, num_draws)
    elif inner == "vmap":
        per_device = vmap_runner(step, num_draws)
    else:
        raise ValueError(f"inner must be 'map' (chains independent) or 'vmap' (lockstep), got {inner!r}.")
    spec = P(axis_name)
    return jax.jit(
        jax.shard_map(per_device, mesh=mesh, in_specs=(spec, spec), out_specs=spec, check_vma=False)
    )



def summary_runner(step: Step, num_draws: int):
    """Compiled ``f(keys, states) -> (mean, variance)``: chains in lockstep that keep no draws.

    Like :func:`vmap_runner` (the same keys give the same chains), but instead of
    every draw it carries each chain's running mean and variance of the
    positions (Welford's update), so its memory does not grow with
    ``num_draws``.

    Parameters
    ----------
    step : callable
        The one-chain ``step(key, state) -> (state, info)`` of :func:`sequential_runner`.
    num_draws : int
        The draws each chain makes (at least 1), none of them kept.

    Returns
    -------
    callable
        The compiled ``f(keys, states) -> (mean, variance)``: two pytrees shaped like the positions, with a leading
        chain axis; the variance divides by ``num_draws - 1`` (0 for one draw).

    Raises
    ------
    TypeError
        As for :func:`sequential_runner`.
    """
    _check_step(step, num_draws)

    def run(keys, states):
        def one_draw(carry, _):
            states, count, mean, m2 = carry
            states, _ = jax.vmap(step)(_draw_keys(keys, count), states)  # count: the draws so far, this draw's i
            count = count + 1
            delta = jax.tree.map(lambda x, m: x - m, states.position, mean)
            mean = jax.tree.map(lambda m, d: m + d / count, mean, delta)
            m2 = jax.tree.map(lambda s, d, x, m: s + d * (x - m), m2, delta, states.position, mean)
            return (states, count, mean, m2), None

        zeros = jax.tree.map(jnp.zeros_like, states.position)
        # no array over the draws at all, not even their numbers: the count in the carry numbers them
        (_, count, mean, m2), _ = jax.lax.scan(one_draw, (states, 0, zeros, zeros), None, length=num_draws)
        return mean, jax.tree.map(lambda s: s / jnp.maximum(count - 1, 1), m2)

    return jax.jit(run)
