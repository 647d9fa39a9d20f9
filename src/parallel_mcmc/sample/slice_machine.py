"""Elliptical slice sampling (Murray, Adams & MacKay 2010) two ways: in lockstep, and as a state machine.

For a latent vector ``f`` with a Gaussian prior ``N(0, Sigma)`` and a likelihood ``L(f)``, a draw picks an ellipse
through ``f`` and a prior draw ``nu``, a level ``log L(f) + log u`` and an angle; it then evaluates the likelihood at
``f cos(theta) + nu sin(theta)`` and, until the point is above the level, shrinks the bracket of angles towards 0 and
draws a new angle. The shrink loop takes a random number of likelihood evaluations, so chains under ``vmap`` wait
for each other exactly as NUTS chains do. :meth:`EllipticalSlice.advance` makes one evaluation (one iteration of
the shrink loop); :meth:`EllipticalSlice.lockstep` and :meth:`EllipticalSlice.state_machine` are the two drivers of
:class:`parallel_mcmc.sample.NUTSMachine`, and give the same draws bit for bit (the prior draw is scaled inside
:meth:`~EllipticalSlice.advance`, the one place both drivers share, so that its sums round alike).

Example::

    ess = EllipticalSlice(loglikelihood, prior_covariance=K)
    out = jax.jit(ess.state_machine, static_argnums=2)(jax.random.split(key, 64), f0, 200)
    out.positions, out.num_evaluations, out.iterations
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from parallel_mcmc._validate import ArgumentError
from parallel_mcmc.sample.nuts_machine import _check_keys, _check_positions, _lockstep, _state_machine

__all__ = ["EllipticalSlice", "SliceState", "SliceDraws"]


class SliceState(NamedTuple):
    """One chain's elliptical slice draw in progress: what :meth:`EllipticalSlice.advance` reads and writes.

    Parameters
    ----------
    key : jax.Array
        The draw's key, ``fold_in(chain key, draw)``.
    f, loglik : jax.Array
        The current latent vector and its log-likelihood.
    nu : jax.Array
        The prior draw that sets the ellipse (a standard normal until the first step scales it).
    log_level : jax.Array
        The slice's level.
    theta : jax.Array
        The angle to try next.
    low, high : jax.Array
        The bracket of angles.
    proposal : tuple of jax.Array
        ``(f, loglik)``: the accepted point once the draw is done.
    steps : jax.Array
        The likelihood evaluations of this draw.
    done : jax.Array
        Whether the draw is finished.
    """

    key: jax.Array
    f: jax.Array
    loglik: jax.Array
    nu: jax.Array
    log_level: jax.Array
    theta: jax.Array
    low: jax.Array
    high: jax.Array
    proposal: tuple
    steps: jax.Array
    done: jax.Array


class SliceDraws(NamedTuple):
    """What the drivers of :class:`EllipticalSlice` return.

    Parameters
    ----------
    positions : jax.Array
        The draws, ``(chains, draws, dim)``.
    num_evaluations : jax.Array
        Likelihood evaluations of every draw, ``(chains, draws)``.
    iterations : jax.Array
        The driver's loop iterations, each one evaluation for every chain.
    """

    positions: jax.Array
    num_evaluations: jax.Array
    iterations: jax.Array


@dataclass(frozen=True)
class EllipticalSlice:
    """Elliptical slice sampling of ``loglikelihood`` under a zero-mean Gaussian prior.

    Parameters
    ----------
    loglikelihood : callable
        The log-likelihood of one latent vector of shape ``(dim,)``.
    prior_covariance : array_like
        The prior's covariance, ``(dim, dim)``, symmetric positive definite (add a small jitter to a kernel
        matrix). The prior mean is zero: sample ``f - mean`` for another mean.

    Raises
    ------
    TypeError
        If ``loglikelihood`` is not callable.
    ValueError
        If ``prior_covariance`` is not a square, symmetric positive-definite matrix.
    """

    loglikelihood: Callable[[Any], Any]
    prior_covariance: Any

    def __post_init__(self) -> None:
        if not callable(self.loglikelihood):
            raise TypeError(f"loglikelihood must be a function of one latent vector, "
                            f"not {type(self.loglikelihood).__name__}.")
        cov = np.asarray(self.prior_covariance, dtype=float)
        if cov.ndim != 2 or cov.shape[0] != cov.shape[1] or cov.shape[0] < 1 or not np.all(np.isfinite(cov)):
            raise ArgumentError(f"prior_covariance must be a square (dim, dim) matrix of numbers, got shape "
                                f"{cov.shape}.")
        try:
            chol = np.linalg.cholesky(0.5 * (cov + cov.T))
        except np.linalg.LinAlgError:
            raise ArgumentError("prior_covariance must be symmetric positive definite: add a small jitter to its "
                                "diagonal (1e-6 times its scale).") from None
        if not np.allclose(cov, cov.T, rtol=1e-6, atol=1e-9 * np.abs(cov).max()):
            raise ArgumentError("prior_covariance must be symmetric.")
        # stored as nested tuples so that the sampler stays hashable (a static argument of jit)
        object.__setattr__(self, "prior_covariance", tuple(map(tuple, cov.tolist())))
        object.__setattr__(self, "_cholesky", tuple(map(tuple, chol.tolist())))

    @property
    def dim(self) -> int:
        """The dimension of the latent vector."""
        return len(self.prior_covariance)

    def start(self, key, draw, f, loglik) -> SliceState:
        """The state of draw number ``draw`` of one chain at ``f`` (no likelihood evaluated).

        Parameters
        ----------
        key : jax.Array
            The chain's key.
        draw : int or jax.Array
            The draw's index.
        f, loglik : jax.Array
            The chain's latent vector and its log-likelihood.

        Returns
        -------
        SliceState
            A fresh ellipse, level and angle, ready for :meth:`advance`.
        """
        key = jax.random.fold_in(key, draw)
        nu = jax.random.normal(jax.random.fold_in(key, 0), (self.dim,))  # scaled by the prior in the first step
        log_level = loglik + jnp.log(jax.random.uniform(jax.random.fold_in(key, 1)))
        theta = 2 * math.pi * jax.random.uniform(jax.random.fold_in(key, 2))
        return SliceState(key=key, f=f, loglik=loglik, nu=nu, log_level=log_level, theta=theta,
                          low=theta - 2 * math.pi, high=theta, proposal=(f, loglik), steps=jnp.int32(0),
                          done=jnp.bool_(False))

    def advance(self, state: SliceState) -> SliceState:
        """One likelihood evaluation on the ellipse; above the level the draw is done, else the bracket shrinks.

        Parameters
        ----------
        state : SliceState
            A draw in progress (``done`` false).

        Returns
        -------
        SliceState
            The state after one evaluation.
        """
        s = state
        # the prior draw: made here, in the one place both drivers share, so that its rounding is the same in both
        nu = jnp.where(s.steps == 0, jnp.asarray(self._cholesky, s.f.dtype) @ s.nu, s.nu)
        s = s._replace(nu=nu)
        f_new = s.f * jnp.cos(s.theta) + s.nu * jnp.sin(s.theta)
        loglik = self.loglikelihood(f_new)  # the one evaluation of the iteration
        accept = loglik > s.log_level
        low = jnp.where(s.theta < 0, s.theta, s.low)
        high = jnp.where(s.theta < 0, s.high, s.theta)
        u = jax.random.uniform(jax.random.fold_in(jax.random.fold_in(s.key, 3), s.steps))
        return s._replace(theta=low + u * (high - low), low=low, high=high, steps=s.steps + 1, done=accept,
                          proposal=(jnp.where(accept, f_new, s.f), jnp.where(accept, loglik, s.loglik)))

    @staticmethod
    def result(state: SliceState):
        """The finished draw: ``((f, loglik), evaluations)``.

        Parameters
        ----------
        state : SliceState
            A finished draw.

        Returns
        -------
        tuple
            The accepted point and its log-likelihood, and the evaluations the draw took.
        """
        return state.proposal, state.steps

    def _begin(self, keys, positions):
        positions = _check_positions(positions, self.dim)
        _check_keys(keys, positions.shape[0])
        return positions, jax.vmap(self.loglikelihood)(positions)

    @staticmethod
    def _pack(positions, stats, iterations):
        return SliceDraws(positions, *stats, iterations)

    def lockstep(self, keys, positions, num_draws: int) -> SliceDraws:
        """The chains under ``vmap``: each draw's shrink loop runs until the slowest chain is above its level.

        Parameters
        ----------
        keys : jax.Array
            One PRNG key per chain, ``(chains,)``.
        positions : jax.Array
            The starting latent vectors, ``(chains, dim)``.
        num_draws : int
            Draws per chain (static under ``jit``).

        Returns
        -------
        SliceDraws
            The draws; ``iterations`` is the sum over draws of the slowest chain's evaluations.

        Raises
        ------
        ValueError
            If ``positions`` is not ``(chains, dim)``, ``keys`` not one per chain or ``num_draws`` not >= 1.
        """
        return _lockstep(self, keys, positions, num_draws)

    def state_machine(self, keys, positions, num_draws: int) -> SliceDraws:
        """The same draws, each chain one evaluation per iteration of one loop, starting its next draw at once.

        Parameters
        ----------
        keys, positions, num_draws
            As for :meth:`lockstep`.

        Returns
        -------
        SliceDraws
            The draws, equal to :meth:`lockstep`'s bit for bit; ``iterations`` is the largest total of
            evaluations of a chain.

        Raises
        ------
        ValueError
            As for :meth:`lockstep`.
        """
        return _state_machine(self, keys, positions, num_draws)
