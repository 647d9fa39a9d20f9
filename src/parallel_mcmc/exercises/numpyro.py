"""Checks for the exercises of the part "Chains across devices with NumPyro"."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc._validate import is_number
from . import as_float, call, expect, passed

__all__ = ["split_compile", "max_draws", "gaussian_consensus"]


# (compile seconds, seconds per iteration, short length, long length)
_RUNS = [(3.0, 0.002, 1000, 3000), (7.5, 0.0005, 500, 2000), (0.8, 0.01, 200, 250), (12.0, 0.0001, 1500, 6000)]


def _pair(got: Any, where: str, what: str) -> tuple[float, float]:
    """A pair of numbers from a tuple, list or 1-d array of two (NumPy or JAX, any float width)."""
    try:
        items = list(got) if not isinstance(got, (str, bytes, dict)) else None
    except TypeError:
        items = None
    expect(
        items is not None and len(items) == 2 and all(is_number(v) for v in items),
        f"{where} returned {got!r}; return a pair of numbers ({what}).",
    )
    return float(items[0]), float(items[1])


def split_compile(fn: Callable[[float, int, float, int], Any],
                  cases: Sequence[tuple[float, float, int, int]] | None = None) -> None:
    """Check ``fn(wall_short, n_short, wall_long, n_long) -> (compile_seconds, seconds_per_iteration)``.

    ``cases`` (default: a fixed list) gives ``(compile seconds, seconds per iteration, short length, long length)``;
    the walls are made from them.
    """
    expect(callable(fn), "Pass your function itself, `split_compile`, not the result of calling it.")
    for compile_s, per_it, n_short, n_long in cases if cases is not None else _RUNS:
        wall_short, wall_long = compile_s + per_it * n_short, compile_s + per_it * n_long
        where = f"split_compile({wall_short:.4f}, {n_short}, {wall_long:.4f}, {n_long})"
        got = call(fn, wall_short, n_short, wall_long, n_long, what=where)
        c, p = _pair(got, where, "compile_seconds, seconds_per_iteration")
        if np.isclose(c, per_it, rtol=1e-4) and np.isclose(p, compile_s, rtol=1e-4):
            raise AssertionError("The pair is the wrong way round: return (compile_seconds, seconds_per_iteration).")
        if np.isclose(p, wall_long / n_long, rtol=1e-4) or np.isclose(p, wall_short / n_short, rtol=1e-4):
            raise AssertionError(
                f"For runs of {wall_short:.2f} s ({n_short} iterations) and {wall_long:.2f} s ({n_long}) your time per "
                f"iteration is a wall time divided by its length, which still contains the compilation. Use the "
                f"difference of the two runs: compilation is the same in both and cancels."
            )
        swapped = (n_long - n_short) / (wall_long - wall_short)
        if np.isclose(p, swapped, rtol=1e-4) or np.isclose(p, -swapped, rtol=1e-4):
            raise AssertionError(
                f"For runs of {wall_short:.2f} s ({n_short} iterations) and {wall_long:.2f} s ({n_long}) you returned "
                f"{p:g} iterations per second, not seconds per iteration: the arguments are "
                "(wall_short, n_short, wall_long, n_long), times and lengths in that order."
            )
        # float32 (jnp) arithmetic on walls of a few seconds is good to about 1e-4 relative
        expect(
            np.isclose(p, per_it, rtol=1e-3, atol=1e-9),
            f"For runs of {wall_short:.4f} s ({n_short} iterations) and {wall_long:.4f} s ({n_long}) the time per "
            f"iteration is {per_it:g} s; you returned {p:g}.",
        )
        expect(
            np.isclose(c, compile_s, rtol=1e-3, atol=1e-6),
            f"For runs of {wall_short:.4f} s ({n_short} iterations) and {wall_long:.4f} s ({n_long}) the compilation "
            f"is {compile_s:g} s; you returned {c:g}. It is what is left of a run once its iterations are paid for.",
        )
    passed("split_compile")


# (memory of one device in bytes, chains, devices, latent variables, data bytes): uneven splits, data that matters,
# a budget that holds no draw at all.
_FITS = [
    (2**20, 3, 2, 4, 32_000),
    (16 * 2**30, 512, 8, 2_000, 2**30),
    (64 * 2**20, 10, 4, 100, 8 * 2**20),
    (2**20, 2, 8, 10, 0),
    (10_000, 4, 1, 50, 9_000),
    (2**24, 7, 3, 25, 2**23),
]


def _fit(memory: int, num_chains: int, num_devices: int, num_latent: int, data_bytes: int) -> int:
    per_device = -(-num_chains // num_devices)  # the fullest device, padding copies included
    spare = memory - data_bytes - per_device * 10 * num_latent * 4
    return max(spare // (per_device * num_latent * 4), 0)


def max_draws(fn: Callable[..., Any], cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(memory_bytes, num_chains, num_devices, num_latent, data_bytes)``: the most draws that fit.

    The memory is that of :func:`parallel_mcmc.sample.estimate_memory` (float32, diagonal mass matrix):
    on the fullest device, ``ceil(num_chains / num_devices)`` chains (padding copies are stored too), each with
    ``num_samples * num_latent`` draws and a state of ``10 * num_latent`` numbers, 4 bytes each, plus a copy of
    the data. The answer is the largest whole ``num_samples`` that fits, 0 if none does. ``cases`` (default: a
    fixed table) lists the arguments.
    """
    expect(callable(fn), "Pass your function itself, `max_draws`, not the number it returns.")
    for memory, num_chains, num_devices, num_latent, data_bytes in cases if cases is not None else _FITS:
        want = _fit(memory, num_chains, num_devices, num_latent, data_bytes)
        where = f"max_draws({memory}, {num_chains}, {num_devices}, {num_latent}, {data_bytes})"
        got = as_float(call(fn, memory, num_chains, num_devices, num_latent, data_bytes, what=where), where)
        if got == want:
            continue
        even = (memory - data_bytes - num_chains / num_devices * 40 * num_latent) / (num_chains / num_devices * 4 * num_latent)
        uneven = num_chains % num_devices != 0
        if uneven and (np.isclose(got, max(even, 0), rtol=1e-9) or np.isclose(got, max(np.floor(even), 0))):
            raise AssertionError(f"{where} returned {got:g}: that shares the chains out evenly, "
                                 f"{num_chains / num_devices:g} a device. The fullest device holds "
                                 f"ceil({num_chains} / {num_devices}) = {-(-num_chains // num_devices)} chains "
                                 "(the others store padding copies), and it decides.")
        if got != int(got):
            raise AssertionError(f"{where} returned {got:g}; a chain has a whole number of draws: round down.")
        if got == _fit(memory, num_chains, num_devices, num_latent, 0) and data_bytes:
            raise AssertionError(f"{where} returned {got:g}, leaving out the data: every device keeps a copy of "
                                 f"all of it ({data_bytes} bytes).")
        if got == max((memory - data_bytes) // (-(-num_chains // num_devices) * num_latent * 4), 0):
            raise AssertionError(f"{where} returned {got:g}, leaving out the sampler state: 10 numbers per latent "
                                 "variable per chain.")
        if got == _fit(memory, num_chains, 1, num_latent, data_bytes):
            raise AssertionError(f"{where} returned {got:g}, as if one device held all {num_chains} chains.")
        raise AssertionError(f"{where} returned {got:g}; expected {want:,}.")
    passed("max_draws")


# (means, covariances, mean of the product, covariance of the product), worked out by hand.
_CONSENSUS = [
    ([[0.0], [3.0]], [[[1.0]], [[2.0]]], [1.0], [[2 / 3]]),
    ([[1.0, 0.0], [3.0, 3.0], [2.0, 6.0]],
     [[[1.0, 0.0], [0.0, 4.0]], [[1.0, 0.0], [0.0, 4.0]], [[2.0, 0.0], [0.0, 4.0]]],
     [2.0, 3.0], [[0.4, 0.0], [0.0, 4 / 3]]),
    ([[3.0, 0.0], [0.0, 3.0]], [[[2.0, 1.0], [1.0, 2.0]], [[1.0, 0.0], [0.0, 1.0]]],
     [1.5, 1.5], [[5 / 8, 1 / 8], [1 / 8, 5 / 8]]),
]


def gaussian_consensus(fn: Callable[[np.ndarray, np.ndarray], Any], cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(means, covs) -> (mean, cov)``: the product of S Gaussian sub-posteriors.

    ``cases`` (default: a fixed table) lists ``(means, covs, mean, cov)``: shards' means ``(S, d)``
    and covariances ``(S, d, d)``, and the mean and covariance of their product.
    """
    expect(callable(fn), "Pass your function itself, `gaussian_consensus`, not the result of calling it.")
    for means, covs, want_mean, want_cov in cases if cases is not None else _CONSENSUS:
        means, covs = np.asarray(means, dtype=float), np.asarray(covs, dtype=float)
        want_mean, want_cov = np.asarray(want_mean, dtype=float), np.asarray(want_cov, dtype=float)
        S, d = means.shape
        where = f"gaussian_consensus(means, covs) for {S} shards of {d} parameter(s)"
        got = call(fn, means.copy(), covs.copy(), what=where)
        expect(
            isinstance(got, (tuple, list)) and len(got) == 2,
            f"gaussian_consensus returned {type(got).__name__}; return a pair (mean, cov).",
        )
        expect(
            np.shape(got[0]) != (d, d) or np.shape(got[1]) != (d,),
            "The pair is the wrong way round: return (mean, cov), the mean first.",
        )
        mean, cov = np.asarray(got[0], dtype=float), np.asarray(got[1], dtype=float)
        expect(mean.shape == (d,), f"With {S} shards of {d} parameter(s) the mean must have shape ({d},), got {mean.shape}.")
        expect(cov.shape == (d, d), f"With {d} parameter(s) the covariance must have shape ({d}, {d}), got {cov.shape}.")
        # float32 (jnp) linear algebra is good to about 1e-5 relative
        close = {"rtol": 1e-4, "atol": 1e-6}
        if np.allclose(mean, means.mean(axis=0)) and not np.allclose(want_mean, means.mean(axis=0)):
            raise AssertionError(
                "Your mean is the plain average of the shards' means. A shard whose sub-posterior is narrow knows "
                "more and must weigh more: weight each mean by its precision, the inverse covariance."
            )
        if np.allclose(cov, covs.mean(axis=0)) or np.allclose(cov, covs.mean(axis=0) / S):
            raise AssertionError(
                "Your covariance averages the shards' covariances. The product of Gaussians adds precisions: "
                "cov = inverse(sum of the inverse covariances)."
            )
        expect(
            np.allclose(cov, want_cov, **close),
            "The covariance is wrong: the product of the sub-posteriors has precision equal to the sum of their "
            "precisions (inverse covariances).",
        )
        expect(
            np.allclose(mean, want_mean, **close),
            "The covariance is right but the mean is not: it is cov @ sum_s (precision_s @ mean_s).",
        )
    passed("gaussian_consensus")
