"""The exercise ``ex-arrays-specs`` of the chapter ``chapters/sharding_lab/arrays_and_shardings.md``: its check, :func:`partition_specs`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Mapping

import jax
import numpy as np

from parallel_mcmc._validate import is_number
from parallel_mcmc.exercises.common import expect, expect_type, passed, jax_module, named
from ._shared import check_xy_mesh, shown

__all__ = ["partition_specs", "WRONG_ANSWERS"]


def _norm_spec(spec: Any) -> tuple:
    """A PartitionSpec as a tuple without trailing ``None`` entries."""
    entries = list(tuple(spec))
    while entries and entries[-1] is None:
        entries.pop()
    return tuple(entries)


def _whole_numbers(shape: Any) -> bool:
    """True for a shape: a tuple (list, array) of whole numbers."""
    return isinstance(shape, (tuple, list, np.ndarray)) and all(
        is_number(n) and float(n).is_integer() for n in np.ravel(np.asarray(shape, dtype=object)).tolist())


def partition_specs(predictions: Mapping[Any, Any], mesh: Any, shape: tuple[int, ...]) -> None:
    """For each PartitionSpec, the predicted (block shape, number of copies of each block).

    Parameters
    ----------
    predictions : mapping
        The learner's ``predictions``, as the chapter's exercise asks for it.
    mesh : jax.sharding.Mesh
        The chapter's mesh.
    shape : tuple[int, ...]
        The learner's ``shape``, as the chapter's exercise asks for it.

    Returns
    -------
    None
        Prints ``✔ block shapes and copies of the five PartitionSpecs: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When a prediction is missing or wrong, naming its spec.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``predictions`` is not a dict keyed by PartitionSpecs, an entry is not a pair (block shape, copies),
        or ``shape`` is not a tuple of whole numbers.
    """
    jax = jax_module()
    check_xy_mesh(mesh)
    P = jax.P
    wanted = [P("x", "y"), P("x", None), P(None, "y"), P(None, None), P(None, "x")]
    expect_type(isinstance(predictions, Mapping),
                f"`predictions` should be a dict {{P(...): (block_shape, copies)}}, got {shown(predictions)}.")
    for key in predictions:
        expect_type(isinstance(key, (jax.sharding.PartitionSpec, tuple)),
                    f"The key {shown(key)} of `predictions` should be the PartitionSpec itself, P('x', 'y') and not "
                    "its text.")
    expect_type(_whole_numbers(shape), f"`shape` should be the array's shape, a tuple of whole numbers, got "
                                       f"{shown(shape)}.")
    given = {_norm_spec(k): v for k, v in predictions.items()}
    dummy = np.zeros(shape, dtype=np.float32)
    for spec in wanted:
        key = _norm_spec(spec)
        expect(key in given, f"`predictions` has no entry for {spec}; predict all five specs.")
        value = given[key]
        expect_type(
            isinstance(value, (tuple, list)) and len(value) == 2,
            f"The entry for {spec} should be a pair (block_shape, copies), got {shown(value)}.",
        )
        block, copies = value
        expect_type(
            _whole_numbers(block),
            f"The entry for {spec} is {value!r}: its first item should be the block's shape, a tuple such as "
            f"(2, 4), got {shown(block)}. Write the entry as (block_shape, copies).",
        )
        expect_type(
            is_number(copies) and float(copies).is_integer(),
            f"The entry for {spec} is {value!r}: its second item should be the number of copies of each block, a "
            f"whole number, got {shown(copies)}.",
        )
        sharding = jax.NamedSharding(mesh, spec)
        true_block = tuple(sharding.shard_shape(dummy.shape))
        index_map = sharding.devices_indices_map(dummy.shape)
        first_index = next(iter(index_map.values()))
        true_copies = sum(1 for idx in index_map.values() if idx == first_index)
        expect(
            tuple(np.atleast_1d(block).tolist()) == true_block,
            f"For {spec} you predicted blocks of shape {tuple(np.atleast_1d(block).tolist())}; a dimension is "
            f"split by the size of the mesh axis named at its position, and None leaves it whole.",
        )
        expect(
            int(copies) == true_copies,
            f"For {spec} you predicted {copies} copies of each block; every mesh axis that the spec does not "
            f"name multiplies the number of copies by its size (8 devices / number of distinct blocks).",
        )
    passed("block shapes and copies of the five PartitionSpecs")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = []
