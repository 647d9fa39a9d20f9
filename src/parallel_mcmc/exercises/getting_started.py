"""Checks for the exercises of the chapter "Devices: where JAX runs"."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import jax
import numpy as np

from . import as_float, call, expect, passed

__all__ = ["ideal_speedup", "placed_on_last_device"]

# ((devices, cores), ideal speedup) for inputs that tell the plausible wrong answers apart.
_CASES = [((1, 1), 1), ((1, 8), 1), ((2, 2), 2), ((8, 2), 2), ((4, 16), 4), ((16, 4), 4), ((3, 5), 3), ((6, 6), 6)]


def ideal_speedup(fn: Callable[[int, int], Any], cases: Sequence[tuple[tuple[int, int], float]] | None = None) -> None:
    """Check ``fn(num_devices, num_cores)``: the best speedup n forced CPU devices can give.

    ``cases`` (default: a fixed table) lists ``((num_devices, num_cores), ideal)`` pairs.
    """
    expect(callable(fn), "Pass your function itself, `ideal_speedup`, not the result of calling it.")
    for (devices, cores), want in cases if cases is not None else _CASES:
        where = f"ideal_speedup({devices}, {cores})"
        got = as_float(call(fn, devices, cores, what=where), where)
        if got == want:
            continue
        if got == devices:
            raise AssertionError(
                f"{where} returned {got:g}, the device count. Forced CPU devices share the machine's "
                f"{cores} cores: more devices than cores cannot run faster than the cores allow."
            )
        if got == cores:
            raise AssertionError(
                f"{where} returned {got:g}, the core count. {devices} device(s) each running "
                f"one sequential program keep at most {devices} core(s) busy."
            )
        raise AssertionError(f"{where} returned {got:g}; expected {want:g}.")
    passed("ideal_speedup")


def placed_on_last_device(answer: Any, original: Any) -> None:
    """Check that ``answer`` holds ``original``'s values, committed to the last device alone."""
    expect(isinstance(answer, jax.Array), f"Expected a jax.Array, got {type(answer).__name__}. Use jax.device_put.")
    expect(
        answer.shape == np.shape(original) and np.array_equal(np.asarray(answer), np.asarray(original)),
        "The array's values or shape changed: place the same array, do not compute a new one.",
    )
    last = jax.devices()[-1]
    devices = answer.devices()
    expect(
        len(devices) == 1,
        f"The array is spread over {len(devices)} devices; put it whole on the last device, {last}.",
    )
    (device,) = devices
    expect(
        device == last,
        f"The array is on {device}, not on the last device {last}. Use jax.devices()[-1].",
    )
    expect(
        answer.committed,
        "The array is on the right device but not committed to it; place it with jax.device_put(x, device).",
    )
    passed("placed_on_last_device")
