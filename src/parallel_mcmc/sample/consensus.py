"""Consensus Monte Carlo (Scott et al. 2016): sample data shards apart, then combine.

The data are split into ``S`` shards (:func:`split_data`). Each shard's
*sub-posterior* uses that shard's likelihood and the prior raised to ``1/S``,
so that the product of the ``S`` sub-posteriors is the full posterior.
:func:`sample_subposteriors` samples them all at once, the shards spread over
the devices, with two or more NUTS chains per shard so that R-hat can check
each sub-posterior (and its divergences are counted) before they are
combined; :func:`subposterior_sampler` builds the same program once, for runs
timed without their compilation. :func:`consensus_combine` turns the
``S`` sets of draws into draws of the full posterior by precision-weighted
averaging, draw by draw: exact when the sub-posteriors are Gaussian, an
approximation otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import arviz as az
import jax
import jax.numpy as jnp
import numpy as np
from numpyro.infer import MCMC, NUTS

from parallel_mcmc.sample.numpyro_runner import shard_chains
from parallel_mcmc.sample.numpyro_plan import plan_chains
from parallel_mcmc._validate import whole_number

__all__ = ["split_data", "consensus_combine", "Subposteriors", "sample_subposteriors", "subposterior_sampler"]


def split_data(X: Any, y: Any, num_shards: int) -> tuple[np.ndarray, np.ndarray]:
    """Split rows of ``X`` (n, p) and ``y`` (n,) into ``num_shards`` equal shards, in order.

    Parameters
    ----------
    X : array_like
        The rows, ``(n, p)``.
    y : array_like
        The responses, ``(n,)``.
    num_shards : int
        The number of shards ``S``; it must divide ``n``.

    Returns
    -------
    X_shards : numpy.ndarray
        Shape ``(S, n / S, p)``.
    y_shards : numpy.ndarray
        Shape ``(S, n / S)``.

    Raises
    ------
    ValueError
        If the shapes do not match, or ``n`` cannot be split into ``num_shards`` equal shards.
    """
    whole_number("num_shards", num_shards, 1)
    X, y = np.asarray(X), np.asarray(y)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"X must be (n, p) and y (n,) with the same n, got {X.shape} and {y.shape}.")
    n = X.shape[0]
    if n % num_shards:
        raise ValueError(
            f"{n} rows do not split into {num_shards} equal shards; choose a shard count that divides {n} "
            f"or drop {n % num_shards} row(s) first."
        )
    return X.reshape(num_shards, n // num_shards, X.shape[1]), y.reshape(num_shards, n // num_shards)


def consensus_combine(draws: Any) -> np.ndarray:
    """Combine sub-posterior draws by precision-weighted averaging.

    Shard ``s`` gets the weight ``W_s``, the inverse of its draws' covariance, and draw ``t`` of the
    consensus is ``(sum_s W_s)^-1 sum_s W_s theta_s,t``.

    Parameters
    ----------
    draws : array_like
        Shape ``(S, T, d)`` (``S`` shards, ``T`` draws each, ``d`` parameters; ``(S, T)`` for one parameter).

    Returns
    -------
    numpy.ndarray
        The consensus draws, ``(T, d)`` (or ``(T,)``).

    Raises
    ------
    ValueError
        If ``draws`` has another shape, or too few draws to estimate a covariance.
    """
    draws = np.asarray(draws, dtype=np.float64)
    scalar = draws.ndim == 2
    if scalar:
        draws = draws[..., None]
    if draws.ndim != 3:
        raise ValueError(f"draws must have shape (shards, draws, parameters), got {draws.shape}.")
    S, T, d = draws.shape
    if T < d + 1:
        raise ValueError(f"{T} draws per shard cannot estimate a {d} x {d} covariance; draw more (at least {d + 1}).")
    weights = np.stack([np.linalg.inv(np.atleast_2d(np.cov(draws[s], rowvar=False))) for s in range(S)])
    total = np.linalg.inv(weights.sum(axis=0))
    combined = np.einsum("ij,sjk,stk->ti", total, weights, draws)
    return combined[:, 0] if scalar else combined


def _subposterior_fn(model: Callable, num_warmup: int, num_samples: int, num_shards: int, model_kwargs: dict):
    def run_one(key, X_shard, y_shard):
        mcmc = MCMC(NUTS(model), num_warmup=num_warmup, num_samples=num_samples, progress_bar=False)
        kwargs = {"prior_power": 1.0 / num_shards, **model_kwargs}
        warmup_steps = jnp.zeros(0, jnp.int32)
        if num_warmup:
            # warm-up and sampling in two calls, to keep the warm-up's step counts; sampling goes on from the
            # warm-up's own key, so the draws are those of one run(key)
            mcmc.warmup(key, X_shard, y_shard, collect_warmup=True, extra_fields=("num_steps",), **kwargs)
            warmup_steps = mcmc.get_extra_fields()["num_steps"]
            key = mcmc.post_warmup_state.rng_key
        mcmc.run(key, X_shard, y_shard, extra_fields=("diverging", "num_steps"), **kwargs)
        extra = mcmc.get_extra_fields()
        steps = jnp.concatenate([warmup_steps.astype(jnp.int32), extra["num_steps"].astype(jnp.int32)])
        return mcmc.get_samples(), extra["diverging"], steps

    return run_one


@dataclass(frozen=True)
class Subposteriors:
    """Every shard's chains, from :func:`sample_subposteriors`.

    Parameters
    ----------
    samples : dict of str to numpy.ndarray
        Maps each site to an array ``(shards, chains, draws, *site_shape)``.
    diverging : numpy.ndarray
        ``(shards, chains, draws)``, True where NUTS diverged.
    num_steps : numpy.ndarray or None, optional
        ``(shards, chains, warm-up iterations + draws)``, the integration steps (gradients) of every iteration,
        warm-up first: the work each chain did, as the cost model counts it.
    """

    samples: dict[str, np.ndarray]
    diverging: np.ndarray
    num_steps: np.ndarray | None = None

    @property
    def num_shards(self) -> int:
        return int(self.diverging.shape[0])

    @property
    def num_chains(self) -> int:
        return int(self.diverging.shape[1])

    def draws(self, site: str) -> np.ndarray:
        """Each shard's chains pooled: ``(shards, chains * draws, *site_shape)``, as :func:`consensus_combine` takes.

        Parameters
        ----------
        site : str
            The site's name.

        Returns
        -------
        numpy.ndarray
            ``(shards, chains * draws, *site_shape)``.
        """
        x = self.samples[site]
        return x.reshape(x.shape[0], x.shape[1] * x.shape[2], *x.shape[3:])

    def rhat(self, site: str) -> np.ndarray:
        """Each shard's largest rank-normalised R-hat over the site's elements (ArviZ); needs two chains.

        Parameters
        ----------
        site : str
            The site, as :meth:`draws` takes it.

        Returns
        -------
        numpy.ndarray
            One R-hat a shard, ``(shards,)``.

        Raises
        ------
        ValueError
            With fewer than two chains a shard.
        """
        if self.num_chains < 2:
            raise ValueError("R-hat compares chains: sample at least 2 chains per shard (num_chains=2).")
        return np.array([float(np.max(az.rhat(az.convert_to_dataset({site: x}))[site])) for x in self.samples[site]])

    def divergences(self) -> np.ndarray:
        """Each shard's number of divergent transitions, over all its chains.

        Returns
        -------
        numpy.ndarray
            The count of each shard, ``(shards,)``.
        """
        return self.diverging.sum(axis=(1, 2))


def subposterior_sampler(
    model: Callable,
    X_shards: Any,
    y_shards: Any,
    *,
    num_warmup: int,
    num_samples: int,
    num_chains: int = 2,
    devices: Sequence | None = None,
    inner: str = "vmap",
    **model_kwargs: Any,
) -> Callable[[Any], Subposteriors]:
    """:func:`sample_subposteriors` as a function of the key alone: ``sampler(rng_key) -> Subposteriors``.

    The program is built once and compiled at the first call; later calls with
    other keys run it again without compiling, which is what a timing that
    leaves compilation out needs (:mod:`parallel_mcmc.measure`).

    Parameters
    ----------
    model, X_shards, y_shards, num_warmup, num_samples, num_chains, devices, inner, **model_kwargs
        As for :func:`sample_subposteriors`, whose ``rng_key`` the sampler takes instead.

    Returns
    -------
    callable
        ``sampler(rng_key) -> Subposteriors``.

    Raises
    ------
    ValueError
        Where :func:`sample_subposteriors` would raise it.
    """
    X_shards, y_shards = jnp.asarray(X_shards), jnp.asarray(y_shards)
    if X_shards.ndim != 3 or y_shards.shape != X_shards.shape[:2]:
        raise ValueError(
            f"X_shards must be (S, m, p) and y_shards (S, m), got {X_shards.shape} and {y_shards.shape}; "
            "make them with split_data."
        )
    num_warmup = whole_number("num_warmup", num_warmup, 0)
    num_samples = whole_number("num_samples", num_samples, 1)
    num_chains = whole_number("num_chains", num_chains, 1)
    S = X_shards.shape[0]
    plan = plan_chains(S * num_chains, devices)
    run_one = _subposterior_fn(model, num_warmup, num_samples, S, model_kwargs)
    mapped = shard_chains(plan, axis_name="shards", inner=inner)(lambda args: run_one(*args))
    # each chain's copy of its shard, made once: a call passes only the keys anew
    X_chains, y_chains = jnp.repeat(X_shards, num_chains, axis=0), jnp.repeat(y_shards, num_chains, axis=0)

    def sampler(rng_key: Any) -> Subposteriors:
        keys = jax.random.split(rng_key, S * num_chains)
        samples, diverging, steps = jax.block_until_ready(mapped((keys, X_chains, y_chains)))
        return Subposteriors(
            samples={k: np.asarray(v).reshape(S, num_chains, *v.shape[1:]) for k, v in samples.items()},
            diverging=np.asarray(diverging).reshape(S, num_chains, -1),
            num_steps=np.asarray(steps).reshape(S, num_chains, -1),
        )

    return sampler


def sample_subposteriors(
    model: Callable, X_shards: Any, y_shards: Any, *, rng_key: Any, num_warmup: int, num_samples: int,
    num_chains: int = 2, devices: Sequence | None = None, inner: str = "vmap", **model_kwargs: Any,
) -> Subposteriors:
    """Sample every shard's sub-posterior with ``num_chains`` NUTS chains, shards spread over ``devices``.

    ``model(X, y, prior_power=..., **model_kwargs)`` must accept
    ``prior_power``; it is given ``1 / S``. The ``S * num_chains`` chains are
    laid out like the chains of :func:`parallel_mcmc.sample.run_chains`
    (a ``shard_map`` over the devices, ``inner`` on each: ``"vmap"`` in
    lockstep, ``"map"`` one after another), each shard's chains next to each
    other, every chain from its own key. At least two chains a shard let R-hat
    check each sub-posterior before they are combined. To run it several
    times with one compilation, use :func:`subposterior_sampler`.

    Parameters
    ----------
    model : callable
        A NumPyro model ``model(X, y, prior_power=..., **model_kwargs)``.
    X_shards : array_like
        The shards' rows, ``(S, m, p)`` (from :func:`split_data`).
    y_shards : array_like
        The shards' responses, ``(S, m)``.
    rng_key : jax.Array
        The key the chains' keys are split from.
    num_warmup : int
        Warm-up iterations of each chain.
    num_samples : int
        Draws each chain keeps.
    num_chains : int, optional
        Chains per shard (two or more let R-hat check each sub-posterior).
    devices : sequence or None, optional
        The devices the shards are spread over (default: all).
    inner : str, optional
        How a device runs its chains: ``"vmap"`` in lockstep, ``"map"`` one after another.
    **model_kwargs : Any
        Further keyword arguments of ``model``.

    Returns
    -------
    Subposteriors
        Every shard's chains.

    Raises
    ------
    ValueError
        If ``X_shards`` is not ``(S, m, p)`` with ``y_shards`` ``(S, m)``, or a count is not a whole number.
    """
    return subposterior_sampler(model, X_shards, y_shards, num_warmup=num_warmup, num_samples=num_samples,
                                num_chains=num_chains, devices=devices, inner=inner, **model_kwargs)(rng_key)
