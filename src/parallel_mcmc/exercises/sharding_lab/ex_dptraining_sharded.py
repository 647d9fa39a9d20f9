"""The exercise ``ex-dptraining-sharded`` of the chapter ``chapters/sharding_lab/data_parallel_training.md``: its check, :func:`sharded_training`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable

import jax
import numpy as np

from parallel_mcmc.exercises.common import expect, expect_type, passed, check_rows_sharded, describe, jax_module
from ._shared import check_replicated_like, numbers, require_array, shown

__all__ = ["sharded_training", "WRONG_ANSWERS"]


# --------------------------------------------------------------------------- chapter 5


def sharded_training(x_sh: Any, y_sh: Any, params_rep: Any, losses: Any) -> None:
    """Training data split by rows, parameters replicated, and a training loss that went down.

    Parameters
    ----------
    x_sh, y_sh, params_rep, losses
        The learner's answers, as the chapter's exercise asks for them.

    Returns
    -------
    None
        Prints ``✔ sharded training: data split, parameters replicated, loss decreasing: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When the data are not split by rows, a parameter is not replicated, or the loss did not halve.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When the data or a parameter is not a ``jax.Array`` (a NumPy array), or ``losses`` holds no numbers
        (``None``, a dict, the training function).
    """
    jax = jax_module()
    require_array(x_sh, "x_sh")
    require_array(y_sh, "y_sh")
    mesh, _ = check_rows_sharded(x_sh, "x_sh")
    check_rows_sharded(y_sh, "y_sh")
    expect(
        y_sh.sharding.is_equivalent_to(x_sh.sharding, x_sh.ndim),
        f"`y_sh` is {describe(y_sh)} but `x_sh` is {describe(x_sh)}; split both the same way, so each "
        f"device holds matching inputs and targets.",
    )
    devices = set(x_sh.sharding.device_set)
    leaves = jax.tree_util.tree_leaves(params_rep)
    expect_type(len(leaves) > 0, f"`params_rep` is {shown(params_rep)} and holds no arrays; pass the replicated "
                                 "parameters.")
    for i, leaf in enumerate(leaves):
        check_replicated_like(leaf, f"params_rep (leaf {i})", devices, dict(mesh.shape))
    expect_type(not callable(losses), f"`losses` is {shown(losses)}; pass the losses the training returned, one "
                                      "number for each step.")
    curve = numbers(losses, "`losses`").ravel()
    expect(curve.size >= 2, "`losses` should hold the training loss of every step (at least two values).")
    expect(bool(np.all(np.isfinite(curve))), "`losses` contains NaN or inf: lower the step size.")
    if curve[-1] > curve[0]:
        raise AssertionError(
            f"The loss went up, from {curve[0]:.4g} to {curve[-1]:.4g}: the update climbs the loss. Subtract the "
            "gradient (params - step * grad), or pass the losses in the order of the steps.")
    expect(
        curve[-1] < 0.5 * curve[0],
        f"The loss went from {curve[0]:.4g} to {curve[-1]:.4g}; it should at least halve. Train longer or "
        f"check the update step.",
    )
    passed("sharded training: data split, parameters replicated, loss decreasing")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = []
