"""The exercise ``ex-correctrunner-fit`` of the chapter ``chapters/numpyro/a_correct_runner.md``: its check, :func:`max_draws`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc.exercises.common import as_float, call, expect_type, passed

__all__ = ["max_draws", "WRONG_ANSWERS"]


# (memory of one device in bytes, chains, devices, latent variables, data bytes): uneven splits, data that matters,
# a budget that holds no draw at all.
CASES = [
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

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ max_draws: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When ``fn`` returns another number of draws than fits, naming the case and how it was missed.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, or returns something other than one number (``None``, a dict).
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), f"Pass your function itself, `max_draws`, not the number it returns (got "
                              f"{type(fn).__name__}).")
    for memory, num_chains, num_devices, num_latent, data_bytes in cases if cases is not None else CASES:
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
        if not np.isfinite(got):
            raise AssertionError(f"The answer is wrong here: {where} returned {got:g}; expected {want:,}, a whole "
                                 "number of draws.")
        if got < 0 and want == 0:
            raise AssertionError(f"{where} returned {got:g}: not even one draw fits (the data and the sampler state "
                                 "take more than the memory), so the answer is 0, not a negative number: clip at 0.")
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


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ('the data left out of the budget',
     lambda right: lambda m, c, d, l, b: right(m, c, d, l, 0),
     'leaving out the data|expected'),
    ('a negative number where no draw fits (not clipped at 0)',
     lambda right: lambda m, c, d, l, b: (m - b - -(-c // d) * 40 * l) // (-(-c // d) * 4 * l),
     'clip at 0'),
    ('one device holding all the chains',
     lambda right: lambda m, c, d, l, b: right(m, c, 1, l, b),
     'one device held all|expected'),
]
