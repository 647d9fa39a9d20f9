"""The MCMC moves inside tempered SMC: a step size from the particles, and how far a stage moved them.

In BlackJAX's tempered SMC a stage resamples the particles by their weights and moves them under the target those
weighted particles follow. So before each stage the weighted particles already show that target's spread, and the
moves' HMC step size can be set from it (:func:`step_size_from_particles`, for ``blackjax.inner_kernel_tuning``'s
``mcmc_parameter_update_fn``). :func:`move_distance` measures what a stage's moves did.

Example::

    def tuned_step(particles, weights):
        return {"step_size": jnp.array([step_size_from_particles(particles, weights, 10)]),
                "inverse_mass_matrix": jnp.ones((1, dim)), "num_integration_steps": jnp.array([10])}
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

__all__ = ["step_size_from_particles", "move_distance"]


def _weighted_sd(rows: jax.Array, weights: jax.Array) -> jax.Array:
    weights = weights / weights.sum()
    return jnp.sqrt(weights @ (rows - weights @ rows) ** 2)


def step_size_from_particles(particles: Any, weights: jax.Array, num_integration_steps: int,
                             trajectory: float = jnp.pi / 2) -> jax.Array:
    """HMC step size (identity mass matrix) for the target the weighted particles follow.

    The trajectory, ``num_integration_steps`` steps of the returned size, is ``trajectory`` times the particles'
    smallest weighted standard deviation: on a Gaussian target a trajectory of pi/2 standard deviations (a quarter
    turn) lands about as far as an independent draw, and with the default the step stays below the leapfrog's
    stability limit, twice that standard deviation, whatever the number of steps. A target correlated far more than
    its coordinates' spreads show needs a mass matrix from the particles as well
    (``blackjax.smc.tuning.from_particles.inverse_mass_matrix_from_particles``).

    Parameters
    ----------
    particles : pytree of jax.Array
        The particles, each leaf with the particles along its first axis.
    weights : jax.Array
        Their weights, shape ``(num_particles,)`` (normalized or not).
    num_integration_steps : int
        The leapfrog steps of a trajectory.
    trajectory : float
        The trajectory's length in units of the smallest standard deviation.

    Returns
    -------
    jax.Array
        The step size, a scalar.
    """
    from blackjax.smc.tuning.from_particles import particles_as_rows  # on first call: BlackJAX starts JAX

    rows = particles_as_rows(particles)  # a row per particle (a pytree's leaves side by side)
    narrowest_sd = _weighted_sd(rows, jnp.asarray(weights)).min()
    return trajectory * narrowest_sd / num_integration_steps


def move_distance(particles_before: Any, weights_before: jax.Array, particles_after: Any,
                  ancestors: jax.Array) -> jax.Array:
    """How far one SMC stage's moves took the particles, in standard deviations of the target they kept.

    Each particle after the stage is compared with the particle it was resampled from (``ancestors``, BlackJAX's
    ``SMCInfo.ancestors``); each coordinate's difference is divided by the weighted standard deviation of the
    particles before the stage, the spread of the target that the moves keep.

    Parameters
    ----------
    particles_before, weights_before
        The particles and weights the stage started from.
    particles_after : pytree of jax.Array
        The particles the stage returned.
    ancestors : jax.Array
        For each particle returned, the index of the particle it was resampled from.

    Returns
    -------
    jax.Array
        The root mean square of the scaled differences over particles and coordinates: 0 when nothing moved,
        about sqrt(2) when each particle landed as far as an independent draw from the target.
    """
    from blackjax.smc.tuning.from_particles import particles_as_rows

    before = particles_as_rows(particles_before)
    jumps = (particles_as_rows(particles_after) - before[ancestors]) / _weighted_sd(before, jnp.asarray(weights_before))
    return jnp.sqrt(jnp.mean(jumps**2))
