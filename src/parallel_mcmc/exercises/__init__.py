"""Checks for the book's exercises, one module per part of the book.

A chapter imports its part's module as ``check`` and calls one function per
exercise, for example ``check.steps_to_pay(steps_to_pay)``. A check prints a
one-line confirmation when the answer is right and raises
:class:`AssertionError` with a message that says what is wrong otherwise.

The checks hold no reference answer: they test properties of the answer, or
compare it with expected values for a few fixed inputs, written out as data.
Grading does not rely on them running in the learner's kernel: the book's
grader (a build tool, outside this package) runs the same checks in a
separate process, on the values the learner's code produced, for inputs of
its own as well (the ``cases`` argument of the checks that take one). It
tells :func:`traced_program` about its records of a learner's function with
:func:`record_type`.

Helpers the checks share: :func:`passed`, :func:`expect`, :func:`call`
(run a learner's function and name its own exception), :func:`traced_program`
(the program JAX traces from a learner's function) and :func:`as_float`.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any, Callable

from parallel_mcmc._validate import is_number

__all__ = ["passed", "expect", "call", "importable", "program_structure", "uses", "traced_program", "record_type",
           "as_float"]

#: Types whose instances stand for a learner's function and know the program it traces (see :func:`record_type`).
_RECORD_TYPES: list[type] = []


def passed(what: str) -> None:
    """Print the one-line confirmation of a passed check."""
    print(f"✔ {what}: correct.")


def expect(condition: bool, message: str) -> None:
    """Raise ``AssertionError(message)`` unless ``condition`` holds.

    Unlike a bare ``assert`` this also runs under ``python -O``.
    """
    if not condition:
        raise AssertionError(message)


def _is_tracing_error(err: BaseException) -> bool:
    """True for the errors JAX raises when traced values are used as concrete ones."""
    module = type(err).__module__ or ""
    return module.startswith("jax") and type(err).__name__ in {
        "ConcretizationTypeError", "TracerBoolConversionError", "TracerIntegerConversionError",
        "TracerArrayConversionError", "UnexpectedTracerError", "NonConcreteBooleanIndexError",
    }


def _describe_error(err: BaseException) -> tuple[str, str]:
    """(type name, first lines of the message) of an exception, as the learner would read them."""
    name = getattr(err, "ename", None) or type(err).__name__
    text = str(getattr(err, "evalue", None) if getattr(err, "ename", None) else err).strip()
    lines = text.splitlines()
    short = "\n".join(lines[:6]) + (" ..." if len(lines) > 6 else "")
    return name, short or "(no message)"


def call(fn: Callable[..., Any], *args: Any, what: str, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``; an exception of the learner's function becomes an ``AssertionError`` naming it.

    ``what`` names the call in the message (``"efficiency(steps)"``). A stub left
    unanswered (``NotImplementedError``) is passed on as it is, so the grader can
    say that the exercise was not answered.
    """
    try:
        return fn(*args, **kwargs)
    except NotImplementedError:
        raise
    except Exception as err:  # noqa: BLE001 - every error of the learner's code is reported, with its type
        name, message = _describe_error(err)
        if _is_tracing_error(err):
            raise AssertionError(
                f"{what} failed while JAX traced it: {name}: {message}\nInside jit, vmap or shard_map the "
                "arguments are tracers: use jnp functions and lax control flow instead of Python `if`, "
                "`float()` or NumPy on them."
            ) from None
        raise AssertionError(f"{what} raised {name}: {message}") from None


def importable(obj: Any) -> bool:
    """True if a fresh Python (a spawned worker, say) could import ``obj`` by its module and name."""
    if isinstance(obj, functools.partial):
        return importable(obj.func)
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None)
    if not module or not name or module == "__main__" or "<" in name:
        return False
    try:
        found = importlib.import_module(module)
        for part in name.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return False
    return found is obj


def program_structure(jaxpr: Any) -> list[dict]:
    """The structure of a traced program as plain data: one dict per operation, in order,
    ``{"primitive": name, "length": n (loops), "axes": [...] (collectives), "inner": [sub-programs]}``.
    """
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    out: list[dict] = []
    for eqn in jaxpr.eqns:
        node: dict = {"primitive": eqn.primitive.name}
        length = eqn.params.get("length")
        if isinstance(length, int):
            node["length"] = length
        axes = eqn.params.get("axes", eqn.params.get("axis_name"))
        if axes is not None:
            node["axes"] = [str(a) for a in (axes if isinstance(axes, (tuple, list)) else (axes,))]
        inner = []
        for value in eqn.params.values():
            for item in value if isinstance(value, (tuple, list)) else (value,):
                if hasattr(item, "eqns") or hasattr(getattr(item, "jaxpr", None), "eqns"):
                    inner.append(program_structure(item))
        if inner:
            node["inner"] = inner
        out.append(node)
    return out


def uses(program: list[dict], word: str) -> bool:
    """True if an operation whose primitive's name contains ``word`` occurs anywhere in ``program``."""
    return any(word in node["primitive"] or any(uses(inner, word) for inner in node.get("inner", []))
               for node in program)


def traced_program(fn: Callable[..., Any], args: tuple, what: str) -> list[dict]:
    """The structure (:func:`program_structure`) of the program JAX traces from ``fn(*args)``.

    A learner's exception while tracing is reported with its type and message,
    never read as "the function does not use ...". The grader's record of a
    learner's function gives the structure it recorded, through its
    ``traced_program`` method (see :func:`record_type`).
    """
    if isinstance(fn, tuple(_RECORD_TYPES)):
        return call(lambda *a: fn.traced_program(*a), *args, what=what)
    import jax

    return program_structure(call(lambda *a: jax.make_jaxpr(fn)(*a), *args, what=what))


def record_type(cls: type) -> type:
    """Register ``cls`` as a record of a learner's function, whose ``traced_program(*args)`` gives the
    structure (:func:`program_structure`) of the program the function traces; return ``cls``.

    The grader records a learner's functions in the learner's kernel and replays
    them in its judge, where JAX cannot trace them again: both records register
    here, so that :func:`traced_program` asks them instead of tracing.
    """
    if not callable(getattr(cls, "traced_program", None)):
        raise TypeError(f"{cls.__qualname__} has no traced_program method; a record of a learner's function needs one.")
    if cls not in _RECORD_TYPES:
        _RECORD_TYPES.append(cls)
    return cls


def as_float(value: Any, what: str) -> float:
    """``value`` as a ``float`` if it is one number (Python, NumPy or a 0-d JAX array, any float width)."""
    expect(is_number(value), f"{what} returned {value!r}; it should return one number.")
    return float(value)
