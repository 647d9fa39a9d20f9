"""The exercise ``ex-arrays-inspect`` of the chapter ``chapters/sharding_lab/arrays_and_shardings.md``: its check, :func:`inspect_sharding`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable

import jax
import numpy as np

from parallel_mcmc.exercises.common import expect, expect_type, passed, describe, jax_module, named
from parallel_mcmc._validate import is_number
from ._shared import check_xy_mesh, require_array, same_layout, shown

__all__ = ["inspect_sharding", "WRONG_ANSWERS"]


def inspect_sharding(A_sharded: Any, devices_used: Any, block_shape: Any) -> None:
    """The set of devices holding ``A_sharded`` and the shape of one device's block.

    Parameters
    ----------
    A_sharded, devices_used, block_shape
        The learner's answers, as the chapter's exercise asks for them.

    Returns
    -------
    None
        Prints ``✔ devices and block shape of A_sharded: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When the devices or the block shape are wrong; the message says how to find them.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``devices_used`` is not a collection of devices (a count, the method ``A_sharded.devices`` uncalled)
        or ``block_shape`` is not a tuple of whole numbers (``None``, a string, one number).
    """
    jax = jax_module()
    require_array(A_sharded, "A_sharded")
    sharding = named(A_sharded, "A_sharded")
    check_xy_mesh(sharding.mesh)
    expect(
        same_layout(A_sharded, sharding.mesh, jax.P("x", "y")),
        f"`A_sharded` is {describe(A_sharded)}; do the previous exercise first (P('x', 'y')).",
    )
    truth_devices = set(A_sharded.devices())
    expect_type(
        not callable(devices_used),
        f"`devices_used` is {shown(devices_used)}, a method not called: A_sharded.devices() (with the parentheses) "
        "gives the set of devices.",
    )
    try:
        given = None if isinstance(devices_used, (str, bytes)) else set(devices_used)
    except TypeError:
        given = None
    expect_type(
        given is not None,
        f"`devices_used` should be the set of the devices that hold a part of `A_sharded` (A_sharded.devices()), "
        f"got {shown(devices_used)}.",
    )
    if given and all(isinstance(d, (int, np.integer)) for d in given):
        raise AssertionError(f"`devices_used` holds the numbers {sorted(given)}: those are device ids; give the "
                             "devices themselves, A_sharded.devices().")
    expect(
        given == truth_devices,
        f"`devices_used` should be the set of the {len(truth_devices)} devices that hold a part of "
        f"`A_sharded` (A_sharded.devices()), got {devices_used!r}.",
    )
    truth_block = tuple(sharding.shard_shape(A_sharded.shape))
    expect_type(
        isinstance(block_shape, (tuple, list, np.ndarray))
        and all(is_number(n) and float(n).is_integer() for n in np.ravel(block_shape).tolist()),
        f"`block_shape` should be a tuple of whole numbers, (rows, columns) of one device's block, got "
        f"{shown(block_shape)}.",
    )
    expect(
        tuple(np.atleast_1d(block_shape).tolist()) != tuple(A_sharded.shape),
        f"{tuple(A_sharded.shape)} is the global shape of the array; each device holds only one block of it. "
        f"Ask A_sharded.sharding.shard_shape(A_sharded.shape) or look at A_sharded.addressable_shards.",
    )
    if tuple(np.atleast_1d(block_shape).tolist())[::-1] == truth_block and truth_block[::-1] != truth_block:
        raise AssertionError(f"`block_shape` {block_shape!r} has the rows and the columns swapped: a shape is "
                             "(rows, columns), and the rows are split in 2 ('x'), the columns in 4 ('y').")
    expect(
        tuple(np.atleast_1d(block_shape).tolist()) == truth_block,
        f"`block_shape` {block_shape!r} is not the shape of one device's block; rows are split in 2 ('x') "
        f"and columns in 4 ('y').",
    )
    passed("devices and block shape of A_sharded")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = []
