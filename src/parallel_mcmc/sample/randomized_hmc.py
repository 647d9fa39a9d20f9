"""Randomized HMC two ways: chains in lockstep under ``vmap``, and the same chains as a state machine.

Each draw of randomized HMC integrates a trajectory of random length (geometric, mean ``mean_length``). Every
random number a chain uses (momentum, length, acceptance uniform) is drawn in advance from that chain's key by
:meth:`RandomizedHMC.randoms`, so the two implementations, which consume them in the same order, make the same
draws bit for bit:

- :meth:`RandomizedHMC.lockstep`: each draw is a ``while_loop`` over the chain's steps; under ``vmap`` it runs until
  the draw's longest trajectory is done, the finished chains' steps computed and thrown away. Its cost is
  ``sum over draws of max over chains`` of the lengths.
- :meth:`RandomizedHMC.state_machine`: one loop whose every iteration does one leapfrog step for every chain; a chain
  whose trajectory ends accepts or rejects, records its draw and starts its next trajectory in the same iteration.
  Its cost is ``max over chains of sum over draws``, at a dearer iteration (the finish's bookkeeping, under
  ``vmap`` a ``jnp.where`` that every chain computes).

Example::

    hmc = RandomizedHMC(logdensity, dim=4, step_size=0.02, mean_length=10)
    momenta, lengths, uniforms = hmc.randoms(jax.random.split(key, 64), 100)
    draws, iterations = jax.jit(hmc.state_machine)(momenta, lengths, uniforms, q0)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable

import jax
import jax.numpy as jnp

from parallel_mcmc._validate import real_number, whole_number

__all__ = ["RandomizedHMC"]


@dataclass(frozen=True)
class RandomizedHMC:
    """Randomized HMC on ``logdensity`` (a function of a position of shape ``(dim,)``), identity mass matrix.

    Parameters
    ----------
    logdensity : callable
        The log-density of one position, differentiable with JAX.
    dim : int
        The dimension of a position.
    step_size : float
        The leapfrog step size.
    mean_length : float
        The mean number of leapfrog steps of a trajectory (its length is geometric).
    """

    logdensity: Callable[[Any], Any]
    dim: int
    step_size: float
    mean_length: float = 10.0

    def __post_init__(self) -> None:
        if not callable(self.logdensity):
            raise TypeError(f"logdensity must be a function of one position, not {type(self.logdensity).__name__}.")
        whole_number("dim", self.dim, 1)
        real_number("step_size", self.step_size, above=0)
        real_number("mean_length", self.mean_length, above=1, of=" (the mean number of steps of a trajectory)")

    def _value_and_grad(self, q):
        return jax.value_and_grad(self.logdensity)(q)

    def _leapfrog(self, q, p, grad):
        p = p + 0.5 * self.step_size * grad
        q = q + self.step_size * p
        log_p, grad = self._value_and_grad(q)
        return q, p + 0.5 * self.step_size * grad, log_p, grad

    @partial(jax.jit, static_argnums=(0, 2))  # compiled once for each sampler and shape
    def randoms(self, keys, num_draws: int):
        """Every chain's momentum, trajectory length and acceptance uniform for draws ``0..num_draws`` (one spare).

        Parameters
        ----------
        keys : jax.Array
            One key per chain, shape ``(chains,)``.
        num_draws : int
            The draws per chain.

        Returns
        -------
        momenta, lengths, uniforms : jax.Array
            Shapes ``(chains, num_draws + 1, dim)``, ``(chains, num_draws + 1)`` and ``(chains, num_draws + 1)``.
        """
        num_draws = whole_number("num_draws", num_draws, 1)

        def one_draw(key, d):
            k_momentum, k_length, k_accept = jax.random.split(jax.random.fold_in(key, d), 3)
            return (jax.random.normal(k_momentum, (self.dim,)), jax.random.geometric(k_length, 1 / self.mean_length),
                    jax.random.uniform(k_accept))

        draws = jnp.arange(num_draws + 1)
        return jax.vmap(lambda key: jax.vmap(lambda d: one_draw(key, d))(draws))(keys)

    def _draw(self, momentum, length, u, q, log_p, grad):
        """One HMC draw of ``length`` leapfrog steps from ``(q, momentum)``, accepted or rejected with ``u``."""
        def step(carry):
            i, q, p, log_p, grad = carry
            return (i + 1, *self._leapfrog(q, p, grad))

        _, q_end, p_end, log_p_end, grad_end = jax.lax.while_loop(lambda carry: carry[0] < length, step,
                                                                  (0, q, momentum, log_p, grad))
        accept = jnp.log(u) < (log_p_end - 0.5 * p_end @ p_end) - (log_p - 0.5 * momentum @ momentum)
        return (jnp.where(accept, q_end, q), jnp.where(accept, log_p_end, log_p), jnp.where(accept, grad_end, grad))

    def lockstep(self, momenta, lengths, uniforms, q0):
        """The chains under ``vmap``: each draw waits for the longest trajectory.

        Parameters
        ----------
        momenta, lengths, uniforms : jax.Array
            What :meth:`randoms` gives.
        q0 : jax.Array
            The chains' starting positions, ``(chains, dim)``.

        Returns
        -------
        jax.Array
            The draws, ``(chains, draws, dim)``.
        """
        log_p0, grad0 = jax.vmap(self._value_and_grad)(q0)

        def one_draw(state, d):
            state = jax.vmap(self._draw)(momenta[:, d], lengths[:, d], uniforms[:, d], *state)
            return state, state[0]

        draws = jax.lax.scan(one_draw, (q0, log_p0, grad0), jnp.arange(lengths.shape[1] - 1))[1]
        return jnp.swapaxes(draws, 0, 1)

    def state_machine(self, momenta, lengths, uniforms, q0):
        """The same draws, each chain one leapfrog step per iteration of one loop.

        Parameters
        ----------
        momenta, lengths, uniforms, q0
            As for :meth:`lockstep`.

        Returns
        -------
        draws : jax.Array
            The draws, ``(chains, draws, dim)``, equal to :meth:`lockstep`'s.
        iterations : jax.Array
            The loop's iterations: the longest chain's total steps.
        """
        num_chains, num_draws = q0.shape[0], lengths.shape[1] - 1
        log_p0, grad0 = jax.vmap(self._value_and_grad)(q0)
        p0 = momenta[:, 0]

        def chain_step(momenta, lengths, uniforms, q, p, log_p, grad, start, left, d, draws):
            q1, p1, log_p1, grad1 = self._leapfrog(q, p, grad)
            q_start, log_p_start, grad_start, energy_start = start
            left = left - 1
            done = (left == 0) & (d < num_draws)
            accept = jnp.log(uniforms[d]) < energy_start - (-log_p1 + 0.5 * p1 @ p1)
            q_new = jnp.where(accept, q1, q_start)
            log_p_new, grad_new = jnp.where(accept, log_p1, log_p_start), jnp.where(accept, grad1, grad_start)
            draws = draws.at[d].set(jnp.where(done, q_new, draws[jnp.minimum(d, num_draws - 1)]), mode="drop")
            d = jnp.where(done, d + 1, d)
            p_next = momenta[d]
            q, log_p, grad = (jnp.where(done, q_new, q1), jnp.where(done, log_p_new, log_p1),
                              jnp.where(done, grad_new, grad1))
            start = (jnp.where(done, q_new, q_start), jnp.where(done, log_p_new, log_p_start),
                     jnp.where(done, grad_new, grad_start),
                     jnp.where(done, -log_p_new + 0.5 * p_next @ p_next, energy_start))
            return q, jnp.where(done, p_next, p1), log_p, grad, start, jnp.where(done, lengths[d], left), d, draws

        def body(carry):
            iterations, *chains = carry
            return (iterations + 1, *jax.vmap(chain_step)(momenta, lengths, uniforms, *chains))

        energy0 = -log_p0 + 0.5 * jnp.sum(p0 ** 2, axis=1)
        carry = (0, q0, p0, log_p0, grad0, (q0, log_p0, grad0, energy0), lengths[:, 0],
                 jnp.zeros_like(lengths[:, 0]), jnp.zeros_like(q0, shape=(num_chains, num_draws, self.dim)))
        carry = jax.lax.while_loop(lambda carry: jnp.any(carry[7] < num_draws), body, carry)
        return carry[8], carry[0]

