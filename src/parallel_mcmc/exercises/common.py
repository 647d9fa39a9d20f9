"""What the checks of the exercises share (re-exported by :mod:`parallel_mcmc.exercises`).

- :func:`passed` (the one-line confirmation), :func:`expect` (a failure whose message says what is wrong) and
  :func:`expect_type` (an answer of the wrong type: :class:`WrongType`, a ``TypeError`` that says what was expected);
- :func:`call` (run a learner's function and name its own exception), :func:`as_float`, :func:`importable`;
- :func:`traced_program`, :func:`program_structure`, :func:`uses`: the program JAX traces from a learner's
  function, as plain data, and :func:`record_type`, through which the grader's records of a learner's
  function give theirs;
- for the checks of sharded arrays (the sharding lab's and one chain over sharded data): :func:`jax_module`,
  :func:`require_array`, :func:`describe`, :func:`named`, :func:`same_layout`, :func:`check_rows_sharded`.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any, Callable

from parallel_mcmc._validate import is_number

__all__ = ["passed", "expect", "expect_type", "WrongType", "call", "error_text", "importable", "program_structure", "uses", "traced_program", "record_type",
           "as_float", "jax_module", "require_array", "describe", "named", "same_layout", "check_rows_sharded"]

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


class WrongType(AssertionError, TypeError):
    """An answer of the wrong type (a value where a function belongs, ``None`` or a dict where a number does).

    It is a ``TypeError``, so code that catches one catches it, and an ``AssertionError``, so the grader reports
    the check as failed with this message, as it does every wrong answer.
    """


def expect_type(condition: bool, message: str) -> None:
    """Raise :class:`WrongType` (``message``: what was expected, what was given) unless ``condition`` holds."""
    if not condition:
        raise WrongType(message)


def _is_tracing_error(err: BaseException) -> bool:
    """True for the errors JAX raises when traced values are used as concrete ones."""
    module = type(err).__module__ or ""
    return module.startswith("jax") and type(err).__name__ in {
        "ConcretizationTypeError", "TracerBoolConversionError", "TracerIntegerConversionError",
        "TracerArrayConversionError", "UnexpectedTracerError", "NonConcreteBooleanIndexError",
    }


def _raising_line(err: BaseException) -> str:
    """Where ``err`` was raised, as ``line N: <source>`` of the innermost frame that has source text, or ''."""
    import linecache
    import traceback

    for frame in reversed(traceback.extract_tb(err.__traceback__)):
        text = (frame.line or linecache.getline(frame.filename, frame.lineno or 0)).strip()
        if text:
            return f"line {frame.lineno}: {text}"
    return ""


def _describe_error(err: BaseException) -> tuple[str, str]:
    """(type name, first lines of the message) of an exception, as the learner would read them.

    An exception without a message (a bare ``assert``, JAX's own empty ``AssertionError``) is described by the
    line that raised it, so that the message never ends in nothing.
    """
    name = getattr(err, "ename", None) or type(err).__name__
    text = str(getattr(err, "evalue", None) if getattr(err, "ename", None) else err).strip()
    lines = text.splitlines()
    short = "\n".join(lines[:6]) + (" ..." if len(lines) > 6 else "")
    if short:
        return name, short
    where = _raising_line(err)
    return name, ("with no message, at " + where if where else "with no message") + (
        "; an assert without a message in your code? give it one, or raise an error that says what is wrong")


def error_text(err: BaseException, first_line: bool = False) -> str:
    """``Type: message`` of an exception, as a check quotes it to the learner.

    An exception without a message is described by the line that raised it (as :func:`call` does); with
    ``first_line``, only the first line of the message (JAX's errors run to many).

    Parameters
    ----------
    err : BaseException
        The exception.
    first_line : bool, optional
        Keep only the first line of the message (at most 300 characters).

    Returns
    -------
    str
        The exception's type and message.
    """
    name, message = _describe_error(err)
    if first_line:
        message = message.splitlines()[0][:300]
    return f"{name}: {message}"


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
    expect_type(is_number(value), f"{what} returned {value!r} ({type(value).__name__}); it should return one number.")
    return float(value)


# --------------------------------------------------------------------------- sharded arrays


def jax_module():
    """JAX, imported when a check first needs it (importing the checks does not import JAX)."""
    import jax

    return jax


def require_array(value: Any, name: str) -> None:
    """Fail (:class:`WrongType`) unless ``value`` is a ``jax.Array``, saying how to make one."""
    jax = jax_module()
    import numpy as np

    hint = (" A NumPy array lives on no device: place it" if isinstance(value, np.ndarray) else " Make it") + \
        " with jax.device_put(..., sharding) or as the output of a JAX function."
    expect_type(isinstance(value, jax.Array), f"`{name}` should be a jax.Array, got {type(value).__name__}.{hint}")


def describe(a: Any) -> str:
    """A short human description of where an array's pieces live."""
    jax = jax_module()
    sharding = a.sharding
    n = len(sharding.device_set)
    if n == 1:
        (device,) = tuple(sharding.device_set)
        return f"on one device only ({device})"
    if sharding.is_fully_replicated:
        return f"replicated: each of its {n} devices holds the whole array"
    if isinstance(sharding, jax.sharding.NamedSharding):
        return f"laid out as {sharding.spec} over the mesh {dict(sharding.mesh.shape)}"
    return f"split over {n} devices ({type(sharding).__name__})"


def named(a: Any, name: str):
    """``a``'s sharding, which must be a ``NamedSharding`` on a mesh."""
    jax = jax_module()
    expect(
        isinstance(a.sharding, jax.sharding.NamedSharding),
        f"`{name}` is {describe(a)}; it should carry a NamedSharding on a mesh. "
        f"Place it with jax.device_put({name}, jax.NamedSharding(mesh, P(...))).",
    )
    return a.sharding


def same_layout(a: Any, mesh: Any, spec: Any) -> bool:
    """True if ``a`` is laid out as ``NamedSharding(mesh, spec)`` (compared by layout, not by ``==``)."""
    jax = jax_module()
    return a.sharding.is_equivalent_to(jax.NamedSharding(mesh, spec), a.ndim)


def check_rows_sharded(a: Any, name: str, num_devices: int | None = None):
    """``a`` must be split by rows over a one-axis mesh of ``num_devices`` devices (every device when ``None``)."""
    jax = jax_module()
    require_array(a, name)
    sharding = named(a, name)
    mesh = sharding.mesh
    expect(
        len(mesh.axis_names) == 1,
        f"`{name}` lives on a mesh with axes {mesh.axis_names}; use a mesh with one axis, "
        f"for example jax.make_mesh((8,), ('data',), axis_types=...).",
    )
    (axis,) = mesh.axis_names
    if num_devices is None:
        expect(
            mesh.size == jax.device_count(),
            f"The mesh of `{name}` has {mesh.size} device(s), but this machine shows {jax.device_count()}: "
            f"use all of them, a mesh of shape ({jax.device_count()},).",
        )
    else:
        expect(
            mesh.size == num_devices,
            f"The mesh of `{name}` has {mesh.size} device(s); this exercise asks for {num_devices}: "
            f"jax.make_mesh(({num_devices},), ('{axis}',), devices=jax.devices()[:{num_devices}], axis_types=...).",
        )
    expect(
        not sharding.is_fully_replicated,
        f"`{name}` is {describe(a)}; it should be split by rows over the mesh axis "
        f"'{axis}': NamedSharding(mesh, P('{axis}')).",
    )
    expect(
        same_layout(a, mesh, jax.P(axis)),
        f"`{name}` is {describe(a)}; the data should be split along its first axis (rows, the "
        f"examples), with P('{axis}'), and not along another one.",
    )
    return mesh, axis
