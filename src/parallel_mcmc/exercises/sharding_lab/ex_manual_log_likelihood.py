"""The exercise ``ex-manual-log-likelihood`` of the chapter ``chapters/sharding_lab/manual_parallelism.md``: its check, :func:`shard_map_log_likelihood`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc.exercises.common import call, expect, passed, traced_program, uses
from ._shared import check_lab_inputs, check_replicated_outputs, require_function, value_and_grad

__all__ = ["shard_map_log_likelihood", "WRONG_ANSWERS"]


def shard_map_log_likelihood(fn: Callable[..., Any], beta: Any, X: Any, y: Any,
                             cases: Sequence[Any] | None = None) -> None:
    """``fn(beta, X, y)``, written with ``jax.shard_map``, returns the log-likelihood and its gradient, each
    device working on its own rows and ``psum`` adding their sums, both results replicated.

    ``cases`` (the grader's) lists more coefficient vectors ``beta`` to try on the same data.

    Parameters
    ----------
    fn, beta, X, y, cases
        As for :func:`shard_map_row_terms`.

    Returns
    -------
    None
        Prints ``✔ log-likelihood and gradient with shard_map and psum: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When ``fn`` lacks ``shard_map`` or ``psum``, or a result is wrong or is not replicated.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function (its output) or returns something other than a pair of arrays (a dict,
        the log-likelihood alone).
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    require_function(fn, "fn", "the shard_mapped function")
    mesh, axis, devices = check_lab_inputs(beta, X, y)
    program = traced_program(fn, (beta, X, y), "fn(beta, X, y)")
    expect(
        uses(program, "shard_map"),
        "`fn` does not use jax.shard_map; the exercise is to write what each device computes on its own rows.",
    )
    value, grad = value_and_grad(call(fn, beta, X, y, what="fn(beta, X, y)"), beta, X, y, mesh.size,
                                  "fn(beta, X, y)")
    expect(
        uses(program, "psum"),
        "`fn` gets the right numbers without a psum; make the devices add their partial sums with "
        f"jax.lax.psum(..., '{axis}').",
    )
    check_replicated_outputs((("log-likelihood", value), ("gradient", grad)), devices, "out_specs=(P(), P())")
    for b in cases or ():
        b = np.asarray(b, np.float32)
        where = f"fn(beta={np.round(b, 3).tolist()}, X, y)"
        value_and_grad(call(fn, b, X, y, what=where), b, X, y, mesh.size, where)
    passed("log-likelihood and gradient with shard_map and psum")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = []
