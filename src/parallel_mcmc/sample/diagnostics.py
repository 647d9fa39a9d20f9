"""Convergence diagnostics of many chains, through ArviZ.

ArviZ computes R-hat, the effective sample size and trace plots from a
``DataTree`` (ArviZ 1; ArviZ 0.x called it ``InferenceData``) whose
variables have ``(chain, draw, ...)`` axes. :func:`to_inference_data` builds
one from the draws the chain runners return.
The nested R-hat of many short chains grouped into superchains (Margossian
et al.) is ArviZ's ``az.rhat_nested(draws, method="identity",
superchain_ids=...)`` (ArviZ 1; the default ``method="rank"`` splits and
rank-normalizes the chains first, a different number). What ArviZ cannot do
is compute it without the draws: :func:`nested_rhat_from_summaries` gives the
same number from each chain's mean and variance alone (what
:func:`parallel_mcmc.sample.summary_runner` keeps). :func:`superchain_ids`
numbers consecutive blocks of chains, and :func:`nested_rhat_threshold` is the
threshold the method's authors compare it with.
"""

from __future__ import annotations

from typing import Any, Mapping

import arviz as az
import numpy as np

from parallel_mcmc._validate import real_number, whole_number

__all__ = ["to_inference_data", "superchain_ids", "nested_rhat_from_summaries", "nested_rhat_threshold"]


def to_inference_data(positions: Mapping[str, Any]):
    """ArviZ ``DataTree`` with a ``posterior`` group from a dict of ``(chain, draw)`` arrays, for R-hat and ESS.

    Parameters
    ----------
    positions : mapping of str to array_like
        Each quantity's draws, with ``(chain, draw)`` leading axes (a runner's positions).

    Returns
    -------
    xarray.DataTree
        The draws as ArviZ's ``posterior`` group.

    Raises
    ------
    TypeError
        If ``positions`` is not a non-empty mapping.
    ValueError
        If an array has fewer than two axes.
    """
    if not isinstance(positions, Mapping) or not positions:
        raise TypeError("positions must be a non-empty dict of (chain, draw) arrays, like a runner's positions.")
    posterior = {name: np.asarray(value) for name, value in positions.items()}
    for name, value in posterior.items():
        if value.ndim < 2:
            raise ValueError(
                f"{name!r} has shape {value.shape}; ArviZ needs (chain, draw) axes. "
                "For one chain, add a leading axis: value[None]."
            )
    return az.from_dict({"posterior": posterior})


def _check_superchains(num_chains: int, num_superchains: Any) -> int:
    num_superchains = whole_number("num_superchains", num_superchains, 2)
    if num_chains % num_superchains:
        raise ValueError(
            f"{num_chains} chains cannot be split into {num_superchains} superchains of equal size: "
            "choose a divisor of the number of chains."
        )
    return num_superchains


def _refuse_non_finite(bad_chains: np.ndarray, what: str) -> None:
    bad = sorted(set(np.nonzero(bad_chains)[0].tolist()))
    if bad:
        raise ValueError(
            f"{what} of chain(s) {bad[:10]}{' ...' if len(bad) > 10 else ''} hold NaN or infinite values: such a "
            "chain diverged or its log-density returned NaN; find out why (or drop those chains) before diagnosing."
        )


def _nested_rhat(chain_means: np.ndarray, chain_variances: np.ndarray, num_draws: int, num_superchains: int) -> float:
    """Nested R-hat from every chain's mean and variance (divisor ``num_draws - 1``), chains in superchain order."""
    num_chains = chain_means.shape[0]
    means = chain_means.reshape(num_superchains, num_chains // num_superchains)  # (superchain, chain)
    variances = chain_variances.reshape(means.shape)
    between = means.mean(axis=1).var(ddof=1)
    between_chains = means.var(axis=1, ddof=1) if means.shape[1] > 1 else np.zeros(num_superchains)
    within_chains = variances.mean(axis=1) if num_draws > 1 else np.zeros(num_superchains)
    within = float((between_chains + within_chains).mean())
    if within == 0.0:
        raise ValueError(
            "no spread within any superchain (W = 0): every chain is constant"
            + (", and with one chain a superchain and one draw a chain nothing can vary; use several chains per "
               "superchain or more draws." if num_draws == 1 or num_chains == num_superchains else
               "; the chains did not move (a step size of 0, or every proposal rejected?).")
        )
    return float(np.sqrt(1.0 + between / within))


def superchain_ids(num_chains: int, num_superchains: int) -> np.ndarray:
    """Which superchain each chain belongs to: consecutive blocks of ``num_chains // num_superchains`` chains.

    The ``superchain_ids`` that ArviZ's ``az.rhat_nested`` takes, for chains laid out as
    :func:`nested_rhat_from_summaries` groups them, e.g. ``[0, 0, 1, 1]`` for 4 chains in 2 superchains.

    Parameters
    ----------
    num_chains : int
        The number of chains.
    num_superchains : int
        The number of superchains (at least 2, a divisor of ``num_chains``).

    Returns
    -------
    numpy.ndarray
        The superchain of each chain, ``(num_chains,)``.

    Raises
    ------
    ValueError
        If ``num_superchains`` is not a whole number >= 2 dividing ``num_chains``.
    """
    num_chains = whole_number("num_chains", num_chains, 2)
    num_superchains = _check_superchains(num_chains, num_superchains)
    return np.repeat(np.arange(num_superchains), num_chains // num_superchains)


def nested_rhat_from_summaries(means: Any, variances: Any, num_draws: int, num_superchains: int) -> float:
    """Nested R-hat of one quantity from each chain's mean and variance, no draws kept.

    ``means`` and ``variances`` have one entry per chain; consecutive blocks of
    ``chains // num_superchains`` chains form one superchain each (chains that
    started from the same point, or from points drawn alike). The variances
    divide by ``num_draws - 1``, as :func:`parallel_mcmc.sample.summary_runner`
    returns them (with one draw a chain they are not used). With ``K``
    superchains of ``M`` chains of ``N`` draws,

    - ``B``: the variance of the ``K`` superchain means (divisor ``K - 1``);
    - ``W``: the average over superchains of the variance of their chains' means
      (divisor ``M - 1``; 0 when ``M = 1``) plus their chains' average variance
      (0 when ``N = 1``);

    and nested R-hat is ``sqrt(1 + B / W)``. That needs no more than these
    summaries, so this equals ArviZ's ``az.rhat_nested(draws, method="identity",
    superchain_ids=superchain_ids(chains, num_superchains))`` of the draws they
    summarize (which needs 4 draws a chain or more). Compare it with
    :func:`nested_rhat_threshold`.

    Parameters
    ----------
    means : array_like
        Each chain's mean of the quantity.
    variances : array_like
        Each chain's variance of the quantity (divisor ``num_draws - 1``).
    num_draws : int
        The draws of each chain.
    num_superchains : int
        The number of superchains ``K``.

    Returns
    -------
    float
        Nested R-hat.

    Raises
    ------
    ValueError
        If ``means`` and ``variances`` are not both ``(chain,)``, a variance is negative, the chains cannot be split
        into ``num_superchains`` equal superchains, or a chain's summaries hold NaN or infinite values.
    """
    m = np.asarray(means, dtype=float)
    v = np.asarray(variances, dtype=float)
    if m.ndim != 1 or v.shape != m.shape:
        raise ValueError(
            f"means and variances must both have shape (chain,), got {m.shape} and {v.shape}: pass one quantity "
            "at a time, e.g. mean['loc'] and variance['loc'] from summary_runner."
        )
    num_draws = whole_number("num_draws", num_draws, 1)
    num_superchains = _check_superchains(m.shape[0], num_superchains)
    _refuse_non_finite(~(np.isfinite(m) & np.isfinite(v)), "means or variances")
    if (v < 0).any():
        raise ValueError(
            f"variances of chain(s) {np.nonzero(v < 0)[0][:10].tolist()} are negative: pass each chain's variance "
            "(divisor num_draws - 1), not a difference or a log-variance."
        )
    return _nested_rhat(m, v, num_draws, num_superchains)


def nested_rhat_threshold(chains_per_superchain: int, tolerance: float = 1e-4) -> float:
    """The threshold ``1 + delta`` below which nested R-hat says the chains have converged.

    ``sqrt(1 + 1 / M + tolerance)`` for ``M = chains_per_superchain``, as in the
    experiments of Margossian et al. (2024), whose published analysis
    (``analyze_results.ipynb`` in github.com/charlesm93/nested-rhat) takes
    ``tolerance = 1e-4``. Why ``1 / M``: even with every chain stationary, a
    superchain's mean averages only its ``M`` chains, so the variance of the
    superchain means ``B`` is still about ``W / M`` (exactly so with one draw a
    chain, less with more draws), and nested R-hat stays near
    ``sqrt(1 + 1 / M)``. ``tolerance`` is how much more ``B / W`` may be, the
    squared bias of the superchain means left by warm-up, in units of ``W``,
    that one accepts. Compare nested R-hat, never the classic one, with it.

    Parameters
    ----------
    chains_per_superchain : int
        ``M``, the chains of each superchain (at least 2).
    tolerance : float, optional
        The squared bias of the superchain means one accepts, in units of ``W``.

    Returns
    -------
    float
        The threshold ``sqrt(1 + 1 / M + tolerance)``.

    Raises
    ------
    ValueError
        If ``chains_per_superchain`` is not a whole number >= 2, or ``tolerance`` is not in (0, 1).
    """
    chains_per_superchain = whole_number("chains_per_superchain", chains_per_superchain, 2)
    tolerance = real_number("tolerance", tolerance, above=0)
    if tolerance >= 1:
        raise ValueError(
            f"tolerance is the accepted excess of B / W over 1 / M and must be small (1e-4 in the paper's "
            f"experiments, at most 0.01 or so); {tolerance!r} would accept superchains a posterior sd apart."
        )
    return float(np.sqrt(1.0 + 1.0 / chains_per_superchain + tolerance))
