"""The exercise ``ex-arrays-place`` of the chapter ``chapters/sharding_lab/arrays_and_shardings.md``: its check, :func:`place_on_mesh`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable

import jax

from parallel_mcmc.exercises.common import expect, passed, describe, jax_module
from ._shared import same_layout, check_xy_mesh, close, require_array

__all__ = ["place_on_mesh", "WRONG_ANSWERS"]


def place_on_mesh(A_sharded: Any, A: Any, mesh: Any) -> None:
    """``A_sharded`` holds ``A`` split in both dimensions: ``P('x', 'y')`` on the 2 x 4 mesh.

    Parameters
    ----------
    A_sharded, A
        The learner's answers, as the chapter's exercise asks for them.
    mesh : jax.sharding.Mesh
        The chapter's 2 x 4 mesh, axes ``('x', 'y')``.

    Returns
    -------
    None
        Prints ``✔ A placed on the 2 x 4 mesh as P('x', 'y'): correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When ``A_sharded`` is not ``A`` split as ``P('x', 'y')`` over the mesh.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``A_sharded`` is not a ``jax.Array`` (a NumPy array, ``None``) or ``mesh`` is not a mesh.
    """
    jax = jax_module()
    check_xy_mesh(mesh)
    require_array(A_sharded, "A_sharded")
    expect(
        close(A_sharded, A, atol=0, rtol=0),
        "`A_sharded` does not hold the values of `A`; put `A` itself on the devices with jax.device_put.",
    )
    expect(
        len(A_sharded.sharding.device_set) == mesh.size,
        f"`A_sharded` is {describe(A_sharded)}; it should be spread over all {mesh.size} devices of the mesh.",
    )
    expect(
        not A_sharded.sharding.is_fully_replicated,
        f"`A_sharded` is {describe(A_sharded)}; it should be split into 8 blocks: rows over 'x', columns over 'y'.",
    )
    expect(
        same_layout(A_sharded, mesh, jax.P("x", "y")),
        f"`A_sharded` is {describe(A_sharded)}; the rows should be split over mesh axis 'x' and the "
        f"columns over 'y': NamedSharding(mesh, P('x', 'y')).",
    )
    passed("A placed on the 2 x 4 mesh as P('x', 'y')")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = []
