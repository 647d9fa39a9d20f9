"""The exercise ``ex-manual-row-terms`` of the chapter ``chapters/sharding_lab/manual_parallelism.md``: its check, :func:`shard_map_row_terms`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import jax
import numpy as np

from parallel_mcmc.exercises.common import call, expect, expect_type, passed, traced_program, uses, describe, jax_module
from ._shared import check_lab_inputs, log_likelihood64, near, numbers, require_array, require_function, shown

__all__ = ["shard_map_row_terms", "WRONG_ANSWERS"]


# --------------------------------------------------------------------------- chapter 4


def _uses(fn: Callable[..., Any], args: tuple, word: str, what: str) -> bool:
    """True if the program JAX traces from ``fn(*args)`` has an operation named like ``word``.

    A failure while tracing is reported as what it is (see :func:`~parallel_mcmc.exercises.call`).
    """
    return uses(traced_program(fn, args, what), word)


def shard_map_row_terms(fn: Callable[..., Any], beta: Any, X: Any, y: Any, cases: Sequence[Any] | None = None) -> None:
    """``fn(beta, X, y)``, written with ``jax.shard_map``, returns each row's term of the log-likelihood,
    ``y_i z_i - log(1 + exp(z_i))``, split over the devices like the rows.

    ``cases`` (the grader's) lists more coefficient vectors ``beta`` to try on the same data.

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    beta : jax.Array
        The chapter's coefficients, replicated.
    X : jax.Array
        The chapter's covariates, split by rows over the mesh.
    y : jax.Array
        The chapter's outcomes, split by rows over the mesh.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ each row's term with shard_map, laid out like the rows: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When ``fn`` does not use ``shard_map``, or its terms or their layout are wrong.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function (its output) or returns something other than one array (a tuple, ``None``).
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    jax = jax_module()
    require_function(fn, "fn", "the shard_mapped function")
    mesh, axis, devices = check_lab_inputs(beta, X, y)
    expect(
        _uses(fn, (beta, X, y), "shard_map", "fn(beta, X, y)"),
        "`fn` does not use jax.shard_map; wrap the per-device computation with "
        "jax.shard_map(f, mesh=mesh, in_specs=..., out_specs=...).",
    )

    def verdict(out: Any, b: Any, where: str) -> None:
        terms, _ = log_likelihood64(b, X, y)
        expect_type(not isinstance(out, (tuple, list, dict)),
                    f"{where} returned {shown(out)}; return one array, each row's term.")
        got = numbers(out, f"What {where} returned")
        if got.size == 1 and near(got.reshape(()), terms.sum()):
            raise AssertionError(f"{where} returned the log-likelihood, the sum of the rows' terms; return each "
                                 f"row's term, laid out like the rows (out_specs=P('{axis}')).")
        local = np.array([block.sum() for block in np.array_split(terms, mesh.size)])
        if got.size == mesh.size and got.size != terms.size and near(got.ravel(), local):
            raise AssertionError(f"{where} returned one sum per device; return every row's term instead, no sum.")
        expect(got.shape == terms.shape,
               f"{where} returned shape {got.shape}; there is one term for each row: ({terms.size},).")
        if near(got, -terms):
            raise AssertionError(f"{where} has the wrong sign: these are the terms of the negative log-likelihood.")
        expect(near(got, terms), f"{where} returned {np.round(got[:4], 4).tolist()}...; the first rows' terms "
                                  f"y z - log(1 + exp(z)) are {np.round(terms[:4], 4).tolist()}...")

    out = call(fn, beta, X, y, what="fn(beta, X, y)")
    expect_type(not isinstance(out, (tuple, list, dict)),
                f"fn(beta, X, y) returned {shown(out)}; return one array, each row's term.")
    require_array(out, "the output of fn")
    verdict(out, beta, "fn(beta, X, y)")
    expect(
        out.sharding.is_equivalent_to(jax.NamedSharding(mesh, jax.P(axis)), 1)
        and set(out.sharding.device_set) == devices,
        f"The terms are right but {describe(out)}; each device's terms should stay on it, laid out like the rows: "
        f"out_specs=P('{axis}'). No row needs another device's data, so nothing has to move.",
    )
    for b in cases or ():
        b = np.asarray(b, np.float32)
        where = f"fn(beta={np.round(b, 3).tolist()}, X, y)"
        verdict(call(fn, b, X, y, what=where), b, where)
    passed("each row's term with shard_map, laid out like the rows")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = []
