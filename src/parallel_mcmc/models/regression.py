"""Bayesian linear and logistic regression for NumPyro, with data from fixed seeds.

The logistic regression's log-likelihood is also here as a plain JAX function,
:func:`logistic_log_likelihood`: a sum over the rows of the data, the running
example of the sharding lab, whose chapters split those rows over devices.
NumPyro is imported by the two NumPyro models when they run: the data, the
log-likelihood and the exact posterior need only NumPy and JAX.

The linear model has a known noise scale and a Gaussian prior, so its posterior
is Gaussian and known in closed form (:func:`linear_posterior`): a sampler's
answer can be checked against it. Both models take ``prior_power``, the power
to which the prior is raised; consensus Monte Carlo on ``S`` shards samples each
shard with ``prior_power = 1 / S`` so that the product of the ``S``
sub-posteriors is the full posterior.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from parallel_mcmc._validate import real_number, whole_number

__all__ = [
    "RegressionData",
    "make_linear_data",
    "make_logistic_data",
    "linear_model",
    "logistic_model",
    "logistic_log_likelihood",
    "linear_posterior",
]


class RegressionData(NamedTuple):
    """Design matrix ``X`` (n, p), responses ``y`` (n,) and the coefficients that made them.

    Parameters
    ----------
    X : numpy.ndarray
        The design matrix, ``(n, p)``, its first column the intercept's.
    y : numpy.ndarray
        The responses, ``(n,)``.
    beta_true : numpy.ndarray
        The coefficients that made them, ``(p,)``.
    """

    X: np.ndarray
    y: np.ndarray
    beta_true: np.ndarray


def _check_sizes(n: int, p: int) -> None:
    for name, value in (("n", n), ("p", p)):
        whole_number(name, value, 1)


def _check_scales(**scales: float) -> None:
    """Standard deviations and the prior's power must be positive numbers (a 0 or a negative would give NaNs)."""
    for name, value in scales.items():
        real_number(name, value, above=0)


def _design(rng: np.random.Generator, n: int, p: int) -> np.ndarray:
    """An intercept column followed by p - 1 standard normal covariates."""
    X = rng.standard_normal((n, p))
    X[:, 0] = 1.0
    return X.astype(np.float32)


def make_linear_data(n: int, p: int = 4, *, seed: int = 0, noise_sd: float = 1.0) -> RegressionData:
    """``y = X beta + noise`` with an intercept column, ``beta`` drawn from N(0, 1), fixed seed.

    Parameters
    ----------
    n : int
        The number of rows.
    p : int, optional
        The number of coefficients, the intercept included.
    seed : int, optional
        The seed.
    noise_sd : float, optional
        The noise's standard deviation (positive).

    Returns
    -------
    parallel_mcmc.models.regression.RegressionData
        ``X``, ``y`` and ``beta_true``.

    Raises
    ------
    ValueError
        If ``n`` or ``p`` is not a whole number >= 1, or ``noise_sd`` is not a positive number.
    """
    _check_sizes(n, p)
    real_number("noise_sd", noise_sd, above=0)
    rng = np.random.default_rng(seed)
    beta = rng.standard_normal(p).astype(np.float32)
    X = _design(rng, n, p)
    y = (X @ beta + noise_sd * rng.standard_normal(n)).astype(np.float32)
    return RegressionData(X, y, beta)


def make_logistic_data(n: int, p: int = 3, *, seed: int = 0, beta: np.ndarray | None = None) -> RegressionData:
    """0/1 responses with ``P(y = 1) = sigmoid(X beta)``, an intercept column, fixed seed.

    Parameters
    ----------
    n, p, seed
        As for :func:`make_linear_data`.
    beta : numpy.ndarray or None, optional
        The coefficients, ``(p,)`` (default: drawn from N(0, 1)).

    Returns
    -------
    parallel_mcmc.models.regression.RegressionData
        ``X``, ``y`` and the coefficients as ``beta_true``.

    Raises
    ------
    ValueError
        If ``n`` or ``p`` is not a whole number >= 1, or ``beta`` does not have shape ``(p,)``.
    """
    _check_sizes(n, p)
    rng = np.random.default_rng(seed)
    beta = rng.standard_normal(p) if beta is None else np.asarray(beta, dtype=float)
    if beta.shape != (p,):
        raise ValueError(f"beta must have shape ({p},), got {beta.shape}.")
    X = _design(rng, n, p)
    y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-(X @ beta)))).astype(np.float32)
    return RegressionData(X, y, beta.astype(np.float32))


def linear_model(X, y=None, *, prior_sd: float = 1.0, noise_sd: float = 1.0, prior_power: float = 1.0):
    """NumPyro model: ``beta ~ N(0, prior_sd^2 I)`` raised to ``prior_power``, ``y ~ N(X beta, noise_sd^2)``.

    Parameters
    ----------
    X : array_like
        The design matrix, ``(n, p)``.
    y : array_like or None, optional
        The responses, ``(n,)``; ``None`` to predict.
    prior_sd : float, optional
        The prior's standard deviation.
    noise_sd : float, optional
        The noise's standard deviation.
    prior_power : float, optional
        The power the prior is raised to (``1 / S`` for a shard of ``S``).

    Returns
    -------
    None
        A NumPyro model records its sites; it returns nothing.
    """
    import numpyro
    import numpyro.distributions as dist

    _check_scales(prior_sd=prior_sd, noise_sd=noise_sd, prior_power=prior_power)
    p = X.shape[-1]
    with numpyro.handlers.scale(scale=prior_power):
        beta = numpyro.sample("beta", dist.Normal(0.0, prior_sd).expand([p]).to_event(1))
    numpyro.sample("y", dist.Normal(X @ beta, noise_sd), obs=y)


def logistic_model(X, y=None, *, prior_sd: float = 2.5, prior_power: float = 1.0):
    """NumPyro model: ``beta ~ N(0, prior_sd^2 I)`` raised to ``prior_power``, ``y ~ Bernoulli(sigmoid(X beta))``.

    Parameters
    ----------
    X, prior_sd, prior_power
        As for :func:`linear_model`.
    y : array_like or None, optional
        The 0/1 responses, ``(n,)``; ``None`` to predict.

    Returns
    -------
    None
        Like :func:`linear_model`, it only records its sites.
    """
    import numpyro
    import numpyro.distributions as dist

    _check_scales(prior_sd=prior_sd, prior_power=prior_power)
    p = X.shape[-1]
    with numpyro.handlers.scale(scale=prior_power):
        beta = numpyro.sample("beta", dist.Normal(0.0, prior_sd).expand([p]).to_event(1))
    numpyro.sample("y", dist.Bernoulli(logits=X @ beta), obs=y)


def logistic_log_likelihood(beta: jax.Array, X: jax.Array, y: jax.Array) -> jax.Array:
    """``sum_i (y_i z_i - log(1 + exp(z_i)))`` with ``z = X @ beta``: the log-likelihood of
    :func:`logistic_model`, a sum over the rows of ``X`` and ``y``.

    Parameters
    ----------
    beta : jax.Array
        The coefficients, ``(p,)``.
    X : jax.Array
        The design matrix, ``(n, p)``.
    y : jax.Array
        The 0/1 responses, ``(n,)``.

    Returns
    -------
    jax.Array
        The log-likelihood, a scalar.
    """
    z = X @ beta
    return jnp.sum(y * z - jax.nn.softplus(z))


def linear_posterior(X, y, *, prior_sd: float = 1.0, noise_sd: float = 1.0, prior_power: float = 1.0):
    """Exact posterior of :func:`linear_model`.

    The prior N(0, prior_sd^2 I) raised to ``prior_power`` is N(0, prior_sd^2 / prior_power I).

    Parameters
    ----------
    X, y, prior_sd, noise_sd, prior_power
        The data and the model's scales, as :func:`linear_model` takes them (``y`` is required here).

    Returns
    -------
    mean : numpy.ndarray
        The posterior mean of ``beta``, ``(p,)``.
    covariance : numpy.ndarray
        Its covariance, ``(p, p)``.

    Raises
    ------
    ValueError
        If ``X`` is not ``(n, p)`` and ``y`` ``(n,)``.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"X must be (n, p) and y (n,), got {X.shape} and {y.shape}.")
    _check_scales(prior_sd=prior_sd, noise_sd=noise_sd, prior_power=prior_power)
    precision = X.T @ X / noise_sd**2 + np.eye(X.shape[1]) * prior_power / prior_sd**2
    cov = np.linalg.inv(precision)
    mean = cov @ (X.T @ y) / noise_sd**2
    return mean, cov
