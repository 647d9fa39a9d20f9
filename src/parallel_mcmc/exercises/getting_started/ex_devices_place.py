"""The exercise ``ex-devices-place`` of the chapter ``chapters/getting_started/devices.md``: its check, :func:`placed_on_last_device`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable

import jax
import numpy as np

from parallel_mcmc.exercises.common import expect, expect_type, passed

__all__ = ["placed_on_last_device", "WRONG_ANSWERS"]


def placed_on_last_device(answer: Any, original: Any) -> None:
    """Check that ``answer`` holds ``original``'s values, committed to the last device alone.

    Parameters
    ----------
    answer, original
        The learner's answers, as the chapter's exercise asks for them.

    Returns
    -------
    None
        Prints ``✔ placed_on_last_device: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When ``answer`` holds other values, or lives elsewhere than on the last device alone.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``answer`` is not a ``jax.Array`` (a NumPy array, a list, the device, ``None``).
    """
    expect_type(isinstance(answer, jax.Array),
                f"Expected a jax.Array, got {type(answer).__name__}. Place the array itself with "
                "jax.device_put(x, jax.devices()[-1]) and pass what it returns.")
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


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = []
