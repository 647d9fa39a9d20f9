"""Checks for the exercises of the chapter "Devices: where JAX runs"."""

from __future__ import annotations

from typing import Any, Callable

import jax
import numpy as np

from ..validate import is_number
from . import expect, passed

__all__ = ["ideal_speedup", "placed_on_last_device"]

# (devices, cores) pairs that tell the plausible wrong answers apart.
_CASES = [(1, 1), (1, 8), (2, 2), (8, 2), (4, 16), (16, 4), (3, 5), (6, 6)]


def ideal_speedup(fn: Callable[[int, int], Any]) -> None:
    """Check ``fn(num_devices, num_cores)``: the best speedup n forced CPU devices can give."""
    expect(callable(fn), "Pass your function itself, `ideal_speedup`, not the result of calling it.")
    for devices, cores in _CASES:
        got = fn(devices, cores)
        expect(
            is_number(got),
            f"ideal_speedup({devices}, {cores}) returned {got!r}; it should return a number.",
        )
        want = min(devices, cores)
        if float(got) == want:
            continue
        if float(got) == devices:
            raise AssertionError(
                f"ideal_speedup({devices}, {cores}) returned {got}, the device count. Forced CPU devices "
                f"share the machine's {cores} cores: more devices than cores cannot run faster than the cores allow."
            )
        if float(got) == cores:
            raise AssertionError(
                f"ideal_speedup({devices}, {cores}) returned {got}, the core count. {devices} device(s) each running "
                f"one sequential program keep at most {devices} core(s) busy."
            )
        raise AssertionError(f"ideal_speedup({devices}, {cores}) returned {got}; expected {want}.")
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
