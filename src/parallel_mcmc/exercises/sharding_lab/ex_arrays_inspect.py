"""The exercise ``ex-arrays-inspect`` of the chapter ``chapters/sharding_lab/arrays_and_shardings.md``: its check, :func:`inspect_sharding`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable

import jax
import numpy as np

from parallel_mcmc.exercises.common import expect, passed, describe, jax_module, named, require_array, same_layout
from ._shared import check_xy_mesh

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
    try:
        given = set(devices_used)
    except TypeError:
        given = None
    expect(
        given == truth_devices,
        f"`devices_used` should be the set of the {len(truth_devices)} devices that hold a part of "
        f"`A_sharded` (A_sharded.devices()), got {devices_used!r}.",
    )
    truth_block = tuple(sharding.shard_shape(A_sharded.shape))
    expect(
        tuple(np.atleast_1d(block_shape).tolist()) != tuple(A_sharded.shape),
        f"{tuple(A_sharded.shape)} is the global shape of the array; each device holds only one block of it. "
        f"Ask A_sharded.sharding.shard_shape(A_sharded.shape) or look at A_sharded.addressable_shards.",
    )
    expect(
        tuple(np.atleast_1d(block_shape).tolist()) == truth_block,
        f"`block_shape` {block_shape!r} is not the shape of one device's block; rows are split in 2 ('x') "
        f"and columns in 4 ('y').",
    )
    passed("devices and block shape of A_sharded")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = []
