"""The exercise ``ex-dptraining-sharded`` of the chapter ``chapters/sharding_lab/data_parallel_training.md``: its check, :func:`sharded_chain`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from parallel_mcmc.exercises.common import (WrongType, check_rows_sharded, describe, expect, expect_type, jax_module,
                                            passed)
from ._shared import numbers, program_collectives, require_array, same_layout, shown

__all__ = ["sharded_chain", "WRONG_ANSWERS"]


#: The devices the exercise splits the rows over.
NUM_DEVICES = 4

#: How far a draw may be from the one-device chain's, in the posterior standard deviations of its draws: float32
#: sums added in another order differ by about 1e-5 of them.
ROUNDING = 1e-3


def sharded_chain(draws: Any, X_train: Any, y_train: Any, program: Any, reference: Any) -> None:
    """An HMC chain run on rows split over the first ``NUM_DEVICES`` devices: its draws, replicated on those devices,
    equal ``reference`` (the one-device chain's, same key) to float32 rounding, and ``program``, the text of the
    chain's compiled program, adds the slices' sums with an all-reduce inside its loop.

    Parameters
    ----------
    draws, X_train, y_train, program
        The learner's answers, as the chapter's exercise asks for them.
    reference : jax.Array
        The one-device chain's draws, ``(draws, coefficients)``.

    Returns
    -------
    None
        Prints ``✔ sharded chain: rows split over 4 devices, the one-device draws, an all-reduce at every gradient: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When the data are not split by rows over 4 devices, the draws are not the one-device chain's or not
        replicated, or the program is not the sharded chain's; the message says which.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``draws`` is not a ``jax.Array`` (the chain itself, its whole output tuple, a NumPy copy) or
        ``program`` is not the program's text (the compiled object).
    """
    if isinstance(draws, (tuple, list)):
        raise WrongType(f"`draws_sharded` is a {type(draws).__name__} of {len(draws)}; `chain` returns (draws, "
                        "accepted): keep the draws, `draws_sharded, _ = chain(key, X_train, y_train)`.")
    expect_type(not callable(draws), f"`draws_sharded` is {shown(draws)}: pass the draws the chain returned, not "
                                     "the chain.")
    require_array(draws, "draws_sharded")
    mesh, axis = check_rows_sharded(X_train, "X_train", NUM_DEVICES)
    require_array(y_train, "y_train")
    expect(set(y_train.sharding.device_set) == set(X_train.sharding.device_set)
           and same_layout(y_train, mesh, jax_module().P(axis)),
           f"`y_train` is {describe(y_train)}; split it by rows like `X_train` (P('{axis}') on the same mesh), so "
           "that each device holds the responses of its own rows.")
    ref = numbers(reference, "`draws_one`")
    got_shape, want = tuple(draws.shape), tuple(ref.shape)
    expect(got_shape != want[::-1] or want[0] == want[1],
           f"`draws_sharded` has shape {got_shape}, the one-device draws' transposed: keep the chain's "
           f"(draws, coefficients) = {want}.")
    expect(got_shape == want, f"`draws_sharded` has shape {got_shape}; the chain's draws have shape {want}.")
    devices = set(X_train.sharding.device_set)
    expect(len(draws.sharding.device_set) > 1,
           f"`draws_sharded` is {describe(draws)}: the chain ran on data on one device. Run it on `X_train` and "
           "`y_train`, split by rows.")
    expect(draws.sharding.is_fully_replicated and set(draws.sharding.device_set) == devices,
           f"`draws_sharded` is {describe(draws)}; the draws of a chain on the split rows are the same on every "
           f"one of the data's {len(devices)} devices: run `chain` on `X_train` and `y_train` with `jax.jit`.")
    got = np.asarray(draws, dtype=np.float64)
    scale = ref[len(ref) // 2:].std(axis=0)  # the posterior sds, past the way in
    off = float((np.abs(got - ref) / scale).max())
    if off > ROUNDING:
        wider = float(np.median(got[len(got) // 2:].std(axis=0) / scale))
        if wider > 1.5:
            raise AssertionError(
                f"The draws are {wider:.1f} times as spread as the one-device chain's: the chain saw about 1/"
                f"{wider**2:.0f} of the rows (one device's slice?). Run it on all of `X_train` and `y_train`.")
        raise AssertionError(
            f"The draws differ from the one-device chain's by up to {off:.3g} posterior standard deviations, far more "
            "than float32 rounding: run the same `chain` with the same `key` on the same rows, only laid out "
            "differently.")
    _check_chain_program(program, len(devices))
    passed(f"sharded chain: rows split over {NUM_DEVICES} devices, the one-device draws, an all-reduce at every "
           "gradient")


def _check_chain_program(program: Any, num_devices: int) -> None:
    """``program`` is the text of the sharded chain's compiled program: an all-reduce inside its loop, no gather."""
    how = "chain.lower(key, X_train, y_train).compile().as_text()"
    found = program_collectives(program, how, what="the chain's compiled program")
    expect("all-gather" not in [c.kind for c in found],
           "The compiled program holds an all-gather: the rows went to every device, where only the sums need to "
           "travel. Keep `X_train` and `y_train` split by rows.")
    reduces = [c for c in found if c.kind == "all-reduce"]
    expect(reduces, f"The compiled program holds no all-reduce, so nothing in it adds the devices' sums: compile the "
                    f"chain from the split rows, {how}, not from arrays on one device.")
    expect(any(c.in_loop for c in reduces),
           "The program's all-reduce is outside any loop: this is the program of one gradient (`grad_fn`), not of "
           f"the chain, whose loop adds the slices' sums at every leapfrog step: {how}.")
    match = re.search(r"num_partitions=(\d+)", program)
    expect(match is None or int(match.group(1)) == num_devices,
           f"The program runs on {match.group(1) if match else '?'} devices, the data on {num_devices}: compile it "
           f"from the rows split over {num_devices} devices, {how}.")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = []
