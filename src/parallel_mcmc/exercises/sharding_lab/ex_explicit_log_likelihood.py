"""The exercise ``ex-explicit-log-likelihood`` of the chapter ``chapters/sharding_lab/explicit_sharding.md``: its check, :func:`explicit_log_likelihood`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

import contextlib
import io
from typing import Any, Callable, Sequence

import jax
import numpy as np

from parallel_mcmc.exercises.common import call, expect, passed, jax_module
from ._shared import (check_lab_inputs, check_program, check_replicated_outputs, explicit, require_array,
                      require_function, value_and_grad)

__all__ = ["explicit_log_likelihood", "WRONG_ANSWERS"]


def explicit_log_likelihood(fn: Callable[..., Any], beta: Any, X: Any, y: Any, program: str,
                            cases: Sequence[Any] | None = None) -> None:
    """``fn(beta, X, y)`` returns the log-likelihood and its gradient on ``Explicit`` axes and prints the types
    of its inputs while it is traced; ``program`` is its compiled program on the chapter's arguments.

    ``X`` and ``y`` are split by rows, ``beta`` replicated. The results should be replicated, and the program
    should add the devices' sums with an all-reduce without gathering the data. ``cases`` (the grader's) lists
    more coefficient vectors ``beta`` to try on the same data.

    Parameters
    ----------
    fn, beta, X, y, cases
        The learner's function and the chapter's data, as :func:`shard_map_row_terms` takes them.
    program : str
        The text of the compiled program (``.lower(...).compile().as_text()``).

    Returns
    -------
    None
        Prints ``✔ explicit data-parallel log-likelihood and gradient, with their types: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When the results, their types, the prints or the compiled program are wrong.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function (its result), returns something other than a pair of arrays (a dict, one
        number), or ``program`` is not the program's text (the compiled object).
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    jax = jax_module()
    require_function(fn, "fn", "the jitted function")
    mesh, axis, devices = check_lab_inputs(beta, X, y)
    explicit(X, "X")
    # A new batch size, in caches emptied, makes a jitted function trace again (also when the check runs twice),
    # so its prints show up here.
    half = X.shape[0] // 2
    half = half - half % mesh.size or mesh.size
    X_half = jax.device_put(np.asarray(X)[:half], X.sharding)
    y_half = jax.device_put(np.asarray(y)[:half], y.sharding)
    where = f"fn(beta, X, y) on the first {half} rows"
    jax.clear_caches()
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        small = call(fn, beta, X_half, y_half, what=where)
    printed = buffer.getvalue()
    expect(
        f"{half}@{axis}" in printed.replace(" ", ""),
        f"`fn` printed {printed.strip()[:200]!r} while tracing a batch of {half} rows; it should print "
        f"jax.typeof of its inputs, which read like float32[{half}@{axis},...].",
    )
    value_and_grad(small, beta, X_half, y_half, mesh.size, where)
    with contextlib.redirect_stdout(io.StringIO()):  # its prints were read above
        out = call(fn, beta, X, y, what="fn(beta, X, y)")
    value, grad = value_and_grad(out, beta, X, y, mesh.size, "fn(beta, X, y)")
    for name, got in (("log-likelihood", value), ("gradient", grad)):
        require_array(got, f"the {name}")
        expect("@" not in str(jax.typeof(got)),
               f"The {name} has the type {jax.typeof(got)}; a sum over all the rows is whole on every device, "
               f"with no @ in its type.")
    check_replicated_outputs((("log-likelihood", value), ("gradient", grad)), devices,
                              "out_sharding=P() on the product that sums over the rows")
    check_program(program, "fn", "to make the product over the rows unambiguous, a whole array (the data, or the "
                   "residuals of every row) was resharded onto every device. Give the product out_sharding=P() "
                   "instead: each device sums its own rows, and an all-reduce adds the sums.")
    for b in cases or ():
        b = np.asarray(b, np.float32)
        where = f"fn(beta={np.round(b, 3).tolist()}, X, y)"
        with contextlib.redirect_stdout(io.StringIO()):
            out = call(fn, b, X, y, what=where)
        value_and_grad(out, b, X, y, mesh.size, where)
    passed("explicit data-parallel log-likelihood and gradient, with their types")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = []
