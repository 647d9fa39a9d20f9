"""The exercise ``ex-explicit-multiply`` of the chapter ``chapters/sharding_lab/explicit_sharding.md``: its check, :func:`explicit_product`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable

import jax
import numpy as np

from parallel_mcmc.exercises.common import WrongType, expect, expect_type, passed, describe, jax_module
from ._shared import same_layout, check_xy_mesh, close, explicit, require_array, shown

__all__ = ["explicit_product", "WRONG_ANSWERS"]


def explicit_product(a: Any, b: Any, prod: Any, predicted_type: str) -> None:
    """``a`` (4, 1) split on ``x``, ``b`` (1, 8) split on ``y``, their product and its type as a string.

    Parameters
    ----------
    a, b, prod, predicted_type
        The learner's two inputs, their product and the type they predicted for it.

    Returns
    -------
    None
        Prints ``✔ explicit product and its type: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When an input's layout, the product or its type is wrong; the message names which, and how to fix it.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When an input or the product is not a ``jax.Array`` (a NumPy array), or ``predicted_type`` is not a
        string (the type object itself, ``None``).
    """
    jax = jax_module()
    P = jax.P
    for name, arr, shape, spec, axis in (("a", a, (4, 1), P("x", None), "x"), ("b", b, (1, 8), P(None, "y"), "y")):
        require_array(arr, name)
        explicit(arr, name)
        check_xy_mesh(arr.sharding.mesh)
        expect(tuple(arr.shape) == shape, f"`{name}` should have shape {shape}, got {tuple(arr.shape)}.")
        expect(
            same_layout(arr, arr.sharding.mesh, spec),
            f"`{name}` is {describe(arr)}; it should be split along mesh axis '{axis}': {spec}.",
        )
    require_array(prod, "prod")
    expect(close(prod, np.asarray(a) * np.asarray(b)), "`prod` is not the elementwise product a * b.")
    expect(
        same_layout(prod, a.sharding.mesh, P("x", "y")),
        f"`prod` has the right values but is {describe(prod)}; the product of an x-split column and a "
        f"y-split row should be split along both axes. Compute it as a * b from the sharded inputs.",
    )
    truth = str(jax.typeof(prod)).replace(" ", "")
    if isinstance(predicted_type, type(jax.typeof(prod))):
        raise WrongType(f"`predicted_type` is the type object jax.typeof returns ({predicted_type}); the exercise "
                        "asks you to predict it before you print it, as a string such as 'float32[4@x,1]'.")
    expect_type(isinstance(predicted_type, str),
                f"`predicted_type` should be a string, the type as jax.typeof prints it, got {shown(predicted_type)}.")
    given = predicted_type.replace(" ", "").replace('"', "").replace("'", "")
    if given == truth.replace("@x", "@_").replace("@y", "@x").replace("@_", "@y"):
        raise AssertionError(f"`predicted_type` {predicted_type!r} has the mesh axes swapped: the rows of the "
                             "product come from `a`, the columns from `b`.")
    if given == f"{prod.dtype}{list(prod.sharding.shard_shape(prod.shape))}".replace(" ", ""):
        raise AssertionError(f"`predicted_type` {predicted_type!r} gives one device's block; jax.typeof gives the "
                             "global shape, with each dimension's mesh axis after an @.")
    expect(
        given == truth,
        f"`predicted_type` {predicted_type!r} is not the type of the product; write it as jax.typeof "
        f"prints it, for example 'float32[4@x,1]' for a.",
    )
    passed("explicit product and its type")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = []
