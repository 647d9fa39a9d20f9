"""A sinusoid observed with Gaussian noise at many points: a likelihood that costs real work.

``NUM_POINTS`` times are spread over ``[0, DURATION]`` and the signal

    y = amplitude * sin(2 pi frequency t + phase) + offset + noise,  noise ~ N(0, NOISE_SCALE^2)

is drawn once from the fixed seed ``DATA_SEED``. The parameters, in the
order of ``PARAM_NAMES``, are ``(amplitude, frequency, phase, offset)``; the
noise scale is known. The prior is uniform on the box ``PRIOR_LOW`` ..
``PRIOR_HIGH`` (the log-density is ``-inf`` outside it).

Two versions of the same log-density:

- :func:`log_prob` (NumPy, one walker): what emcee calls once per walker,
  serially or through a process pool. It reads the data from this module, so
  a pool worker builds its own copy once (under any start method) and nothing
  large is pickled with the tasks.
- :func:`make_log_prob_batch` (JAX): one jitted, vmapped call for a whole
  batch of walkers, returning a NumPy array, for ``EnsembleSampler(...,
  vectorize=True)``.

Importing this module does not import JAX.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

import numpy as np

from parallel_mcmc._validate import whole_number

__all__ = [
    "PARAM_NAMES",
    "TRUE_PARAMS",
    "NOISE_SCALE",
    "NUM_POINTS",
    "DURATION",
    "DATA_SEED",
    "PRIOR_LOW",
    "PRIOR_HIGH",
    "make_data",
    "data",
    "log_prob",
    "make_log_prob_batch",
    "initial_walkers",
]

PARAM_NAMES = ("amplitude", "frequency", "phase", "offset")
TRUE_PARAMS = np.array([1.5, 0.7, 0.4, 0.3])
NOISE_SCALE = 0.5
NUM_POINTS = 100_000
DURATION = 10.0
DATA_SEED = 20240611
PRIOR_LOW = np.array([0.0, 0.1, -np.pi, -5.0])
PRIOR_HIGH = np.array([10.0, 2.0, np.pi, 5.0])


def make_data(num_points: int = NUM_POINTS, seed: int = DATA_SEED) -> tuple[np.ndarray, np.ndarray]:
    """Draw the times ``t`` and observations ``y`` (float64 arrays) from a fixed seed.

    Parameters
    ----------
    num_points : int, optional
        The number of points.
    seed : int, optional
        The seed.

    Returns
    -------
    t : numpy.ndarray
        The times, ``(num_points,)``.
    y : numpy.ndarray
        The observations, ``(num_points,)``.

    Raises
    ------
    ValueError
        If ``num_points`` is not a whole number >= 2.
    """
    whole_number("num_points", num_points, 2)
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0.0, DURATION, size=int(num_points)))
    amplitude, frequency, phase, offset = TRUE_PARAMS
    y = amplitude * np.sin(2 * np.pi * frequency * t + phase) + offset
    y = y + NOISE_SCALE * rng.normal(size=t.shape)
    return t, y


@lru_cache(maxsize=1)
def data() -> tuple[np.ndarray, np.ndarray]:
    """The book's data set (``NUM_POINTS`` points), made once per process and cached.

    Returns
    -------
    t : numpy.ndarray
        The times.
    y : numpy.ndarray
        The observations.
    """
    t, y = make_data()
    t.setflags(write=False)
    y.setflags(write=False)
    return t, y


def _check_theta(theta: Any) -> np.ndarray:
    theta = np.asarray(theta, dtype=float)
    if theta.shape != (4,):
        raise ValueError(
            f"theta must hold the 4 parameters {PARAM_NAMES} of one walker, got shape {theta.shape}."
        )
    return theta


def log_prob(theta: Any) -> float:
    """Log-posterior (up to a constant) of one walker's ``theta``, in NumPy.

    ``-inf`` outside the prior box; otherwise the Gaussian log-likelihood of
    the cached data, without its constant term.

    Parameters
    ----------
    theta : array_like
        One walker's parameters, ``(4,)``.

    Returns
    -------
    float
        The log-posterior.
    """
    theta = _check_theta(theta)
    if np.any(theta <= PRIOR_LOW) or np.any(theta >= PRIOR_HIGH):
        return -np.inf
    t, y = data()
    amplitude, frequency, phase, offset = theta
    resid = y - (amplitude * np.sin(2 * np.pi * frequency * t + phase) + offset)
    return float(-0.5 * np.sum(resid * resid) / NOISE_SCALE**2)  # not np.dot: no BLAS threads


def make_log_prob_batch(t: Any = None, y: Any = None) -> Callable[[np.ndarray], np.ndarray]:
    """A log-posterior for a batch of walkers: ``(n, 4)`` NumPy in, ``(n,)`` NumPy out.

    One jitted, vmapped JAX function evaluates all ``n`` walkers in one call;
    the result is converted to a NumPy array, which is what emcee's
    ``vectorize=True`` expects. The data default to :func:`data`. The arithmetic
    runs in JAX's default float type: float64 only if ``jax_enable_x64`` is on.

    Parameters
    ----------
    t : array_like or None, optional
        The times, 1-D.
    y : array_like or None, optional
        The observations, 1-D, as long as ``t``.

    Returns
    -------
    callable
        ``log_prob_batch(thetas) -> log_probs``, ``(n, 4)`` in, ``(n,)`` out.

    Raises
    ------
    ValueError
        If only one of ``t`` and ``y`` is given, or they are not 1-D of equal length (and, at a call, if
        ``thetas`` is not ``(n, 4)``).
    """
    # JAX is imported here, not at the top: pool workers import this module to
    # unpickle log_prob, and importing JAX would add about 0.6 s to each worker's start.
    import jax
    import jax.numpy as jnp

    if (t is None) != (y is None):
        raise ValueError("Pass both t and y, or neither (to use the book's data).")
    if t is None:
        t, y = data()
    t, y = jnp.asarray(t), jnp.asarray(y)
    if t.shape != y.shape or t.ndim != 1:
        raise ValueError(f"t and y must be 1-d arrays of equal length, got shapes {t.shape} and {y.shape}.")
    low, high = jnp.asarray(PRIOR_LOW), jnp.asarray(PRIOR_HIGH)

    def one(theta):
        amplitude, frequency, phase, offset = theta
        resid = y - (amplitude * jnp.sin(2 * jnp.pi * frequency * t + phase) + offset)
        loglik = -0.5 * jnp.dot(resid, resid) / NOISE_SCALE**2
        inside = jnp.all((theta > low) & (theta < high))
        return jnp.where(inside, loglik, -jnp.inf)

    batched = jax.jit(jax.vmap(one))

    def log_prob_batch(thetas: np.ndarray) -> np.ndarray:
        thetas = np.asarray(thetas)
        if thetas.ndim != 2 or thetas.shape[1] != 4:
            raise ValueError(f"thetas must have shape (num_walkers, 4), got {thetas.shape}.")
        return np.asarray(batched(thetas), dtype=np.float64)

    return log_prob_batch


def initial_walkers(num_walkers: int, seed: int = 0, scale: float = 1e-3) -> np.ndarray:
    """Starting points: a small Gaussian ball around the true parameters.

    The frequency's posterior is sharp and has many far-away local modes, so
    ensemble samplers are started near the optimum (as one would start them
    near a least-squares fit in practice).

    Parameters
    ----------
    num_walkers : int
        The number of walkers (at least 8).
    seed : int, optional
        The seed.
    scale : float, optional
        The standard deviation of the ball.

    Returns
    -------
    numpy.ndarray
        The starting points, ``(num_walkers, 4)``.

    Raises
    ------
    ValueError
        If ``num_walkers`` is not a whole number >= 8 (twice the dimension).
    """
    whole_number("num_walkers", num_walkers, 8, of=" (twice the dimension at least)")
    rng = np.random.default_rng(seed)
    return TRUE_PARAMS + scale * rng.normal(size=(int(num_walkers), 4))
