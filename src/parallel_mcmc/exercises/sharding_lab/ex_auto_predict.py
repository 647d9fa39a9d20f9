"""The exercise ``ex-auto-predict`` of the chapter ``chapters/sharding_lab/automatic_parallelism.md``: its check, :func:`auto_shardings`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable

import jax

from parallel_mcmc.exercises.common import WrongType, describe, error_text, expect, expect_type, jax_module, passed

from ._shared import check_xy_mesh, require_array, same_layout, shown

__all__ = ["auto_shardings", "WRONG_ANSWERS"]


# --------------------------------------------------------------------------- chapter 2


def auto_shardings(B: Any, C: Any, mesh: Any, sum_spec: Any, matmul_spec: Any) -> None:
    """``B`` split along ``x``, ``C`` along ``y``; predicted specs of ``B + C`` and ``B.T @ C``.

    Parameters
    ----------
    B, C
        The learner's answers, as the chapter's exercise asks for them.
    mesh : jax.sharding.Mesh
        The chapter's mesh.
    sum_spec, matmul_spec
        The learner's answers, as the chapter's exercise asks for them.

    Returns
    -------
    None
        Prints ``✔ shardings of B + C and B.T @ C: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When ``B`` or ``C`` is laid out otherwise, or a predicted spec is not what ``jit`` made.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``B`` or ``C`` is not a ``jax.Array``, or a prediction is not a ``PartitionSpec`` (a string, a
        ``NamedSharding``, ``None``).
    """
    jax = jax_module()
    check_xy_mesh(mesh)
    P = jax.P
    for name, arr, spec, axis, other in (("B", B, P("x", None), "x", "y"), ("C", C, P(None, "y"), "y", "x")):
        require_array(arr, name)
        expect(tuple(arr.shape) == (4, 8), f"`{name}` should have shape (4, 8), got {tuple(arr.shape)}.")
        expect(
            not arr.sharding.is_fully_replicated,
            f"`{name}` is {describe(arr)}; it should be split along mesh axis '{axis}' and replicated along '{other}'.",
        )
        expect(
            same_layout(arr, mesh, spec),
            f"`{name}` is {describe(arr)}; it should be split along mesh axis '{axis}' (and replicated "
            f"along '{other}'): NamedSharding(mesh, {spec}).",
        )
    try:
        got_sum = jax.jit(lambda u, v: u + v)(B, C)
        got_mm = jax.jit(lambda u, v: u.T @ v)(B, C)
    except ValueError as err:  # two meshes that differ (in their axis types, say) cannot meet in one computation
        raise AssertionError(
            f"`B` and `C` cannot be added: JAX says: {error_text(err, first_line=True)}. Place both on the "
            f"chapter's `mesh` (its axis types {tuple(str(t) for t in mesh.axis_types)}), with "
            "jax.device_put(..., NamedSharding(mesh, spec))."
        ) from None
    for label, got, spec in (("B + C", got_sum, sum_spec), ("B.T @ C", got_mm, matmul_spec)):
        if isinstance(spec, jax.sharding.Sharding):
            raise WrongType(f"Your prediction for {label} is a whole sharding, {type(spec).__name__}; give its "
                            "PartitionSpec, P(...) (a NamedSharding's .spec).")
        expect_type(isinstance(spec, jax.sharding.PartitionSpec),
                    f"Your prediction for {label} should be a PartitionSpec, P(...), got {shown(spec)}.")
        try:
            predicted = jax.NamedSharding(mesh, spec)
        except Exception as exc:  # not a valid spec for this mesh
            raise AssertionError(f"Your prediction {spec!r} for {label} is not a valid PartitionSpec for the mesh: JAX "
                                 f"says: {error_text(exc, first_line=True)}.") from None
        expect(
            got.sharding.is_equivalent_to(predicted, got.ndim),
            f"Your prediction {spec} for {label} is not what jit produced. Compute it and print its "
            f".sharding, then explain the difference.",
        )
    passed("shardings of B + C and B.T @ C")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = []
