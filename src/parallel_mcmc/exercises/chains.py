"""Checks for the exercises of the part "Parallel chains"."""

from __future__ import annotations

from typing import Any, Callable, Mapping

import jax
import numpy as np

from ..timing import Timing
from ..validate import is_number
from . import expect, passed

__all__ = ["lockstep_efficiency", "spread_chains", "faster_method"]

# Step-count arrays (chain, draw) that tell the plausible wrong formulas apart.
_STEP_CASES = [
    np.array([[1, 3, 7], [7, 3, 1]]),
    np.array([[15, 15, 15, 15]]),
    np.array([[1, 1023, 3], [3, 1, 3], [7, 7, 7]]),
    np.array([[31, 63], [63, 31], [127, 1], [1, 127]]),
    np.array([[5, 9, 2, 8, 1], [3, 3, 3, 3, 3]]),
]


def _want_efficiency(steps: np.ndarray) -> float:
    return float(steps.sum() / (steps.shape[0] * steps.max(axis=0).sum()))


def lockstep_efficiency(fn: Callable[[np.ndarray], Any]) -> None:
    """Check ``fn(steps)``: all chains' steps over (chains x sum over draws of the slowest chain)."""
    expect(callable(fn), "Pass your function itself, `efficiency`, not the result of calling it.")
    for steps in _STEP_CASES:
        got = fn(steps.copy())
        expect(
            is_number(got),
            f"efficiency(...) returned {got!r}; it should return one number.",
        )
        got = float(got)
        want = _want_efficiency(steps)
        if np.isclose(got, want, rtol=1e-6):
            continue
        if np.isclose(got, 1 / want, rtol=1e-6):
            raise AssertionError(
                f"For steps={steps.tolist()} you returned {got:.4f}, the inverse of the efficiency. "
                "Efficiency is useful work over lockstep work, at most 1."
            )
        transposed = float(steps.sum() / (steps.shape[1] * steps.max(axis=1).sum()))
        if np.isclose(got, transposed, rtol=1e-6):
            raise AssertionError(
                f"For steps={steps.tolist()} you returned {got:.4f}: the maximum was taken over draws. "
                "The axes are (chain, draw); a draw waits for the slowest *chain*, the maximum over axis 0."
            )
        per_draw_mean = float(np.mean(steps.mean(axis=0) / steps.max(axis=0)))
        if np.isclose(got, per_draw_mean, rtol=1e-6):
            raise AssertionError(
                f"For steps={steps.tolist()} you returned {got:.4f}, the average of per-draw ratios. "
                "Sum the steps over all draws first, then divide: long draws weigh more than short ones."
            )
        raise AssertionError(f"For steps={steps.tolist()} you returned {got:.4f}; expected {want:.4f}.")
    passed("lockstep efficiency")


def spread_chains(positions: Any, reference: Mapping[str, Any], num_devices: int = 2) -> None:
    """Check draws of 8 chains run with ``shard_map``: same values as ``reference``, split over devices.

    ``positions`` is the dict of ``(chain, draw)`` arrays the answer produced;
    ``reference`` the same chains run one after another.
    """
    expect(
        isinstance(positions, Mapping) and set(positions) == set(reference),
        f"Expected the positions dict of the run, with keys {sorted(reference)}; got {type(positions).__name__}"
        + (f" with keys {sorted(positions)}" if isinstance(positions, Mapping) else "")
        + ". Return the draws (the first item a runner returns), not the states or the info.",
    )
    for name, ref in reference.items():
        got = positions[name]
        ref = np.asarray(ref)
        expect(isinstance(got, jax.Array), f"positions[{name!r}] is a {type(got).__name__}, not a jax.Array straight from the run.")
        if got.shape == ref.shape[::-1]:
            raise AssertionError(
                f"positions[{name!r}] has shape {got.shape}: (draw, chain). Return (chain, draw), "
                f"{ref.shape}, like the reference (swap the axes of a scan over draws)."
            )
        expect(got.shape == ref.shape, f"positions[{name!r}] has shape {got.shape}; expected {ref.shape} (chain, draw).")
        expect(
            len(got.devices()) == num_devices,
            f"positions[{name!r}] lives on {len(got.devices())} device(s); the chains should be split over "
            f"{num_devices}. Use jax.shard_map over a mesh of {num_devices} devices.",
        )
        shard_shapes = {s.data.shape for s in got.addressable_shards}
        expect(
            shard_shapes == {(ref.shape[0] // num_devices,) + ref.shape[1:]},
            f"Each device holds a block of shape {sorted(shard_shapes)}; with the chains split over the mesh it "
            f"should hold {ref.shape[0] // num_devices} chains, shape {(ref.shape[0] // num_devices,) + ref.shape[1:]}. "
            "Use in_specs/out_specs P('chains').",
        )
        if not np.allclose(np.asarray(got), ref, rtol=1e-5, atol=1e-6):
            raise AssertionError(
                f"positions[{name!r}] differ from the chains run one after another. Give chain c the key "
                "keys[c] and its state states[c], and inside each device run the chain loop on each chain."
            )
    passed("8 chains over 2 devices")


def faster_method(choice: Any, timings: Mapping[str, Any]) -> None:
    """Check ``choice`` against ``timings``: a dict of two :class:`~parallel_mcmc.timing.Timing` by method name."""
    expect(
        isinstance(timings, Mapping) and len(timings) == 2,
        "timings must be a dict with exactly two entries, one Timing per method you compared.",
    )
    for name, t in timings.items():
        expect(
            isinstance(t, Timing),
            f"timings[{name!r}] is a {type(t).__name__}; measure it with time_call (or timed) so compilation is left out.",
        )
        expect(len(t.times) >= 3, f"timings[{name!r}] has {len(t.times)} repeat(s); take at least 3 and compare medians.")
    expect(
        isinstance(choice, str) and choice in timings,
        f"choice must be one of the names in timings, {sorted(timings)}; got {choice!r}.",
    )
    fastest = min(timings, key=lambda n: timings[n].median)
    expect(
        choice == fastest,
        f"You chose {choice!r}, but your own measurements say {fastest!r} is faster "
        f"({timings[fastest].median:.3f} s against {timings[choice].median:.3f} s, medians).",
    )
    passed(f"faster method ({choice})")
