"""A tiny regression problem and the parameters of a small tanh network.

The data-parallel training chapter of the sharding lab trains a fully
connected network ``1 -> hidden -> ... -> 1`` with tanh activations on noisy
samples of ``sin(6 x) - x**2 / 2``. This module makes the data and the
initial parameters; the network itself, its loss and its training step are
written out in the chapter.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from parallel_mcmc._validate import real_number, whole_number

__all__ = ["target_curve", "make_regression_data", "init_mlp_params"]

Params = list[tuple[np.ndarray, np.ndarray]]


def target_curve(x: np.ndarray) -> np.ndarray:
    """The noise-free curve the network learns: ``sin(6 x) - x**2 / 2``.

    Parameters
    ----------
    x : numpy.ndarray
        The inputs.

    Returns
    -------
    numpy.ndarray
        The curve at ``x``, of ``x``'s shape.
    """
    x = np.asarray(x)
    return np.sin(6.0 * x) - 0.5 * x**2


def make_regression_data(
    n: int, seed: int = 0, noise: float = 0.1, low: float = 0.0, high: float = 2.0
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points ``x ~ U(low, high)`` and ``y = target_curve(x) + noise * N(0, 1)``.

    NumPy arrays, so the chapter decides where they are placed.

    Parameters
    ----------
    n : int
        The number of points.
    seed : int, optional
        The seed.
    noise : float, optional
        The noise's standard deviation.
    low : float, optional
        The lower end of ``x``'s range.
    high : float, optional
        The upper end of ``x``'s range (larger than ``low``).

    Returns
    -------
    x : numpy.ndarray
        float32, ``(n, 1)``.
    y : numpy.ndarray
        float32, ``(n, 1)``.

    Raises
    ------
    ValueError
        If an argument is out of range, or ``high`` is not larger than ``low``.
    """
    whole_number("n", n, 1, of=" of data points")
    real_number("noise", noise, least=0, of=" (a standard deviation)")
    if not high > low:
        raise ValueError(f"high must be larger than low, got low={low!r}, high={high!r}.")
    rng = np.random.default_rng(seed)
    x = rng.uniform(low, high, size=(n, 1))
    y = target_curve(x) + noise * rng.standard_normal((n, 1))
    return x.astype(np.float32), y.astype(np.float32)


def init_mlp_params(sizes: Sequence[int], seed: int = 0) -> Params:
    """Weights and biases ``[(W, b), ...]`` for layer widths ``sizes``.

    Weights are drawn from ``N(0, 1 / fan_in)`` (so the tanh units start in
    their sensitive range), biases from ``N(0, 0.1**2)``; float32 NumPy arrays.

    Parameters
    ----------
    sizes : sequence of int
        The layer widths, the input's first and the output's last.
    seed : int, optional
        The seed.

    Returns
    -------
    list of tuple of numpy.ndarray
        ``[(W, b), ...]``, one pair a layer.

    Raises
    ------
    ValueError
        If ``sizes`` has fewer than two widths, or one is not a whole number >= 1.
    """
    sizes = list(sizes)
    if len(sizes) < 2:
        raise ValueError(f"sizes needs at least an input and an output width, got {sizes!r}.")
    for i, s in enumerate(sizes):
        whole_number(f"sizes[{i}]", s, 1, of=" of units")
    rng = np.random.default_rng(seed)
    params: Params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        W = rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)
        b = 0.1 * rng.standard_normal(fan_out)
        params.append((W.astype(np.float32), b.astype(np.float32)))
    return params
