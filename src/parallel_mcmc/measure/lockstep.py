"""Integration-step accounting: what running NUTS chains in lockstep costs.

NUTS takes a different number of integration steps (gradient evaluations)
for each chain and draw. BlackJAX reports it as ``info.num_integration_steps``.
Chains that advance together under ``vmap`` wait for the slowest of them at
every draw, so their cost is the sum over draws of the largest count, not the
average. These functions turn the counts into that cost and into the load
of each device when chains are split into blocks, and predict the lockstep
cost of any number of chains from one chain's steps
(:func:`expected_lockstep_steps`). (The share of the lockstep
work that is useful, the *lockstep efficiency*, is an exercise: the chapters
compute it in their own cells.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parallel_mcmc._validate import whole_number

__all__ = ["integration_steps", "lockstep_cost", "device_loads", "steps_2d", "expected_lockstep_steps"]


def integration_steps(info: Any) -> np.ndarray:
    """The number of integration steps of every draw, as an integer NumPy array.

    ``info`` is the info a runner returned (anything with a
    ``num_integration_steps`` field), or that field itself. The axes are
    kept: ``(chain, draw)`` for the multi-chain runners.

    Parameters
    ----------
    info : Any
        A runner's info, or its ``num_integration_steps`` field.

    Returns
    -------
    numpy.ndarray
        The step counts, ``int64``.

    Raises
    ------
    TypeError
        If ``info`` holds no step counts.
    """
    counts = getattr(info, "num_integration_steps", info)
    counts = np.asarray(counts)
    if counts.dtype == object or not np.issubdtype(counts.dtype, np.number):
        raise TypeError(
            "info has no num_integration_steps: pass the info returned by a NUTS or HMC "
            f"runner, or the step counts themselves (got {type(info).__name__})."
        )
    return counts.astype(np.int64)


def steps_2d(steps: Any) -> np.ndarray:
    """``steps`` as a checked ``(chain, draw)`` array of non-negative step counts.

    Parameters
    ----------
    steps : array_like
        Integration steps, ``(chain, draw)``.

    Returns
    -------
    numpy.ndarray
        ``steps``, ``(chain, draw)``.

    Raises
    ------
    ValueError
        If ``steps`` is empty, not 2-D, or holds negative counts.
    """
    steps = np.asarray(steps)
    if steps.ndim != 2 or steps.size == 0:
        raise ValueError(f"steps must be a non-empty (chain, draw) array of step counts, got shape {steps.shape}.")
    if not np.issubdtype(steps.dtype, np.number) or np.any(steps < 0):
        raise ValueError("steps must hold non-negative numbers of integration steps.")
    return steps


def lockstep_cost(steps: Any) -> int:
    """Integration steps the chains take in lockstep: the sum over draws of the slowest chain's steps.

    Parameters
    ----------
    steps : array_like
        Integration steps, ``(chain, draw)``, which :func:`steps_2d` checks.

    Returns
    -------
    int
        The steps in lockstep.

    Raises
    ------
    ValueError
        If ``steps`` is refused by :func:`steps_2d`.
    """
    return int(steps_2d(steps).max(axis=0).sum())


def device_loads(steps: Any, num_devices: int) -> np.ndarray:
    """Integration steps each device runs when the chains are split into equal consecutive blocks.

    Parameters
    ----------
    steps : array_like
        Integration steps, ``(chain, draw)``.
    num_devices : int
        The devices; it must divide the number of chains.

    Returns
    -------
    numpy.ndarray
        The steps of each device, ``(num_devices,)``.

    Raises
    ------
    ValueError
        If the chains cannot be split evenly over ``num_devices`` devices.
    """
    steps = steps_2d(steps)
    whole_number("num_devices", num_devices, 1)
    if steps.shape[0] % num_devices:
        raise ValueError(f"{steps.shape[0]} chains cannot be split evenly over {num_devices} devices.")
    return steps.reshape(num_devices, -1).sum(axis=1)


def expected_lockstep_steps(one_chain_steps: Any, num_chains: int) -> float:
    """The expected steps of one lockstep draw of ``num_chains`` chains: the expected maximum of that many
    independent draws from one chain's distribution of steps per draw.

    ``one_chain_steps`` are the integration steps of many draws of one chain (its empirical distribution
    stands for every chain's). With ``F`` its distribution function, the maximum of ``C`` draws exceeds
    ``k`` with probability ``1 - F(k)^C``, and its expectation is the sum of those over ``k >= 0``. One
    chain (``C = 1``) gives the mean; as ``C`` grows it climbs towards the largest count seen, and for
    NUTS never beyond ``2^max_depth - 1``, the tree-depth cap.

    Parameters
    ----------
    one_chain_steps : array_like
        Integration steps of many draws of one chain, 1-D.
    num_chains : int
        ``C``, the chains in lockstep.

    Returns
    -------
    float
        The expected steps of one lockstep draw.

    Raises
    ------
    ValueError
        If ``one_chain_steps`` is not a non-empty 1-D array of whole, non-negative counts, or ``num_chains`` is not a
        whole number >= 1.
    """
    steps = np.asarray(one_chain_steps)
    if steps.ndim != 1 or steps.size == 0:
        raise ValueError(f"one_chain_steps must be a non-empty 1-D array of one chain's steps per draw, "
                         f"got shape {steps.shape}.")
    if not np.issubdtype(steps.dtype, np.number) or np.any(steps < 0) or np.any(steps != np.round(steps)):
        raise ValueError("one_chain_steps must hold whole, non-negative numbers of integration steps.")
    whole_number("num_chains", num_chains, 1)
    levels = np.arange(int(steps.max()) + 1)
    below_or_at = np.searchsorted(np.sort(steps), levels, side="right") / steps.size  # F(k)
    return float(np.sum(1.0 - below_or_at ** num_chains))
