"""The exercise ``ex-two-axes-collectives`` of the chapter ``chapters/sharding_lab/two_axes.md``: its check, :func:`predicted_collectives`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping

import numpy as np

from parallel_mcmc._validate import is_number
from parallel_mcmc.exercises.common import WrongType, expect, expect_type, passed
from ._shared import shown

__all__ = ["predicted_collectives", "WRONG_ANSWERS"]


# --------------------------------------------------------------------------- chapter "Two axes"

_COLLECTIVE = re.compile(
    r"= (?P<result>.+?) (?P<kind>all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)"
    r"(?:-start)?\(.*?replica_groups=(?P<groups>\{\{.*?\}\}|\[[^ ]*|mesh\[[^\]]*\] \{[^}]*\})"
)


_DTYPE_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "s32": 4, "s64": 8, "u32": 4, "pred": 1}


def _group_size(groups: str) -> int:
    if groups.startswith("{{"):
        return len(groups[2:].split("}")[0].split(","))
    if groups.startswith("["):
        return int(groups[1:].split("]")[0].split(",")[-1])
    sizes = dict(re.findall(r"'(\w+)'=(\d+)", groups))
    return int(np.prod([int(sizes[a]) for a in re.findall(r"'(\w+)'", groups.split("{")[1])]))


def _collectives(program: str, mesh_shape: Mapping[str, int]) -> list[tuple[str, str, int]]:
    """(kind, mesh axis, bytes of the result on one device) of each collective of a compiled program's text."""
    total = int(np.prod(list(mesh_shape.values())))
    axis_of = {total: "+".join(mesh_shape)} | {int(n): a for a, n in mesh_shape.items()}
    found = []
    for m in _COLLECTIVE.finditer(program):
        nbytes = sum(_DTYPE_BYTES[t] * int(np.prod([int(d) for d in dims.split(",") if d]))
                     for t, dims in re.findall(r"(\w+)\[([\d,]*)\]", m["result"]))
        found.append((m["kind"], axis_of.get(_group_size(m["groups"]), "?"), nbytes))
    return sorted(found)


def predicted_collectives(predicted: Any, program: str, mesh_shape: Mapping[str, int]) -> None:
    """Check ``predicted``, a list of ``(kind, axis, bytes)``, against the collectives of a compiled program.

    ``program`` is the text of the compiled program (``jit(f).lower(...).compile().as_text()``) and
    ``mesh_shape`` its mesh's ``{axis name: size}``, whose sizes must differ so that a group's size names its
    axis (a group of every device is named ``"data+model"``, the axis names joined by ``+``). ``bytes`` is the
    size of a collective's result on one device.

    Parameters
    ----------
    predicted : object
        The learner's ``predicted``, as the chapter's exercise asks for it.
    program : str
        The text of the compiled program (``.lower(...).compile().as_text()``).
    mesh_shape : mapping
        The learner's ``mesh_shape``, as the chapter's exercise asks for it.

    Returns
    -------
    None
        Prints ``✔ the collectives, their mesh axes and their sizes: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When a predicted collective, its mesh axis or its size is wrong, naming it.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``predicted`` is not a list of ``(kind, axis, bytes)`` triples of a string, a string and a number,
        ``program`` is not the program's text (the compiled object) or ``mesh_shape`` not a mapping (the mesh).
    """
    how = "jax.jit(f).lower(*args).compile().as_text()"
    if callable(getattr(program, "as_text", None)):
        raise WrongType(f"`program` is {type(program).__name__}, the program itself; give its text: {how}.")
    expect_type(isinstance(program, str), f"`program` should be the compiled program's text, {how}, got "
                                          f"{shown(program)}.")
    expect("HloModule" in program, f"`program` should be the compiled program's text: {how}.")
    if isinstance(getattr(mesh_shape, "shape", None), Mapping):
        raise WrongType(f"`mesh_shape` is the mesh itself ({type(mesh_shape).__name__}); give its shape, "
                        "dict(mesh.shape).")
    expect_type(isinstance(mesh_shape, Mapping) and all(is_number(n) for n in mesh_shape.values()),
                f"`mesh_shape` should be the mesh's {{axis name: size}}, dict(mesh.shape), got {shown(mesh_shape)}.")
    sizes = {str(a): int(n) for a, n in dict(mesh_shape).items()}
    expect(len(set(sizes.values())) == len(sizes),
           f"The mesh {sizes} has two axes of one size; a group's size cannot tell them apart.")
    actual = _collectives(program, sizes)
    axes = set(sizes) | {"+".join(sizes)}
    expect_type(isinstance(predicted, (list, tuple)),
                f"`predicted` should be a list of (kind, axis, bytes) triples, one for each collective, got "
                f"{shown(predicted)}.")
    triples = []
    for item in predicted:
        expect_type(isinstance(item, (list, tuple)) and len(item) == 3,
                    f"{shown(item)} is not a (kind, axis, bytes) triple, such as ('all-reduce', 'model', 1024).")
        kind, axis, nbytes = item
        expect_type(isinstance(kind, str) and isinstance(axis, str) and is_number(nbytes),
                    f"In {item!r} the kind and the mesh axis should be strings and the size a number of bytes, such "
                    "as ('all-reduce', 'model', 1024).")
        expect(kind in {"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute"},
               f"{kind!r} is not a collective's name in a compiled program: 'all-reduce', 'all-gather', "
               f"'reduce-scatter', 'all-to-all' or 'collective-permute' (psum compiles to an all-reduce, "
               f"psum_scatter to a reduce-scatter).")
        expect(axis in axes, f"{axis!r} is not an axis of the mesh; use one of {sorted(axes)}.")
        expect(isinstance(nbytes, (int, np.integer)) and not isinstance(nbytes, bool) and nbytes > 0,
               f"The size in {item!r} should be a whole number of bytes.")
        triples.append((kind, axis, int(nbytes)))
    predicted_sorted = sorted(triples)
    if predicted_sorted == actual:
        passed("the collectives, their mesh axes and their sizes")
        return
    kinds_want = sorted(k for k, _, _ in actual)
    kinds_got = sorted(k for k, _, _ in predicted_sorted)
    if kinds_got != kinds_want:
        if kinds_got.count("all-reduce") > kinds_want.count("all-reduce") and "reduce-scatter" in kinds_want:
            raise AssertionError("You predicted an all-reduce where the program has a reduce-scatter: psum_scatter "
                                 "compiles to a reduce-scatter, each device keeping its slice of the sum.")
        raise AssertionError(f"You predicted {len(predicted_sorted)} collectives of kinds {kinds_got}; the "
                             f"compiled program has {len(actual)} of kinds {kinds_want}. Go through the device "
                             f"program one psum at a time.")
    if sorted((k, a) for k, a, _ in predicted_sorted) != sorted((k, a) for k, a, _ in actual):
        raise AssertionError(f"The kinds are right but not the mesh axes: you predicted "
                             f"{sorted((k, a) for k, a, _ in predicted_sorted)}. Each psum names the axis it sums over.")
    if sorted((k, b) for k, _, b in predicted_sorted) == sorted((k, b) for k, _, b in actual):
        raise AssertionError("The kinds, the mesh axes and the sizes all occur, but a size is paired with the wrong "
                             "mesh axis: which psum sums the partial products, and over which axis?")
    for (kind, axis, got), (_, _, want) in zip(predicted_sorted, actual):
        if got == want:
            continue
        where = f"your {kind} over '{axis}' has {got} bytes, but the compiled one has {want}"
        n = sizes.get(axis, int(np.prod(list(sizes.values()))))
        if kind == "reduce-scatter" and got == want * n:
            raise AssertionError(f"{where}: {got} bytes is the whole sum; after a reduce-scatter over {n} devices "
                                 f"each keeps 1/{n} of it.")
        if got * 4 == want:
            raise AssertionError(f"{where}: count bytes, not numbers; a float32 takes 4 bytes.")
        raise AssertionError(f"{where}. Work out the block of each array a device holds on the mesh {sizes}.")
    raise AssertionError(f"Your prediction {predicted_sorted} does not match the compiled program.")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = []
