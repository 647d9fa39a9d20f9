"""Helpers that two or more checks of the part share; public names, private module."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
from jax.sharding import AxisType

from parallel_mcmc.exercises import common
from parallel_mcmc.exercises.common import (WrongType, expect, expect_type, check_rows_sharded, describe, jax_module,
                                            named, require_array)

__all__ = [
    "check_lab_inputs", "check_program", "check_replicated_like", "check_replicated_outputs", "check_xy_mesh",
    "close", "explicit", "log_likelihood64", "near", "numbers", "program_collectives", "require_array",
    "require_function", "require_mesh",
    "same_layout", "shown", "sum_verdict", "value_and_grad",
]


# --------------------------------------------------------------------------- answers of the wrong type


def shown(value: Any, limit: int = 80) -> str:
    """``value``'s type and a short ``repr``, for a message about an answer of the wrong type."""
    text = " ".join(repr(value).split())
    return f"{text[:limit]}{' ...' if len(text) > limit else ''} ({type(value).__name__})"


def require_mesh(mesh: Any, name: str = "mesh") -> None:
    """:class:`~parallel_mcmc.exercises.common.WrongType` unless ``mesh`` is a ``jax.sharding.Mesh``."""
    expect_type(isinstance(mesh, jax.sharding.Mesh),
                f"`{name}` should be the chapter's jax.sharding.Mesh (made with jax.make_mesh), got {shown(mesh)}.")


def require_function(fn: Any, name: str, what: str) -> None:
    """:class:`~parallel_mcmc.exercises.common.WrongType` unless ``fn`` is callable: the function, not its result."""
    expect_type(callable(fn), f"`{name}` is {shown(fn)}, not a function: pass the function itself ({what}), not "
                              "what calling it returns.")


def numbers(value: Any, what: str) -> np.ndarray:
    """``value`` as a float64 array; :class:`~parallel_mcmc.exercises.common.WrongType` where it holds no numbers
    (``None``, a dict, a string)."""
    try:
        array = None if value is None or isinstance(value, (str, bytes, dict)) else np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        array = None
    expect_type(array is not None, f"{what} is {shown(value)}; it should be numbers (an array or a number).")
    return array


def same_layout(a: Any, mesh: Any, spec: Any) -> bool:
    """:func:`~parallel_mcmc.exercises.common.same_layout`, False (not an error) where ``spec`` names more
    dimensions than ``a`` has."""
    return len(spec) <= a.ndim and common.same_layout(a, mesh, spec)


# --------------------------------------------------------------------------- values


def close(a: Any, b: Any, atol: float = 1e-5, rtol: float = 1e-4) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.allclose(a, b, atol=atol, rtol=rtol))


def check_replicated_like(p: Any, name: str, devices: set, mesh_shape: dict) -> None:
    require_array(p, name)
    expect(
        len(p.sharding.device_set) > 1 or len(devices) == 1,
        f"`{name}` is {describe(p)}; parameters should be replicated on all {len(devices)} devices of "
        f"the data's mesh: jax.device_put({name}, NamedSharding(mesh, P())).",
    )
    expect(
        p.sharding.is_fully_replicated,
        f"`{name}` is {describe(p)}: the parameters are sharded, but in data parallelism every "
        f"device needs all of them. Replicate them with NamedSharding(mesh, P()).",
    )
    expect(
        set(p.sharding.device_set) == devices,
        f"`{name}` is replicated on other devices than the data ({len(p.sharding.device_set)} vs "
        f"{len(devices)}); use the same mesh {mesh_shape} for parameters and data.",
    )


# --------------------------------------------------------------------------- the lab's log-likelihood


def log_likelihood64(beta: Any, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    """The logistic log-likelihood in float64, row by row: each row's term ``(rows,)`` and its gradient
    ``(rows, coefficients)``. The log-likelihood and its gradient are their sums over the rows."""
    beta, X, y = (np.asarray(a, dtype=np.float64) for a in (beta, X, y))
    z = X @ beta
    terms = y * z - np.logaddexp(0.0, z)
    return terms, X * (y - 0.5 * (1.0 + np.tanh(0.5 * z)))[:, None]


def near(got: Any, want: Any) -> bool:
    """Equal up to float32 sums over many rows: about 1e-4 of the largest entry."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=1e-4, atol=1e-4 * scale))


def check_lab_inputs(beta: Any, X: Any, y: Any) -> tuple[Any, str, set]:
    """``X`` and ``y`` split by rows over every device of a one-axis mesh, ``beta`` replicated on those devices."""
    jax = jax_module()
    require_array(X, "X")
    mesh, axis = check_rows_sharded(X, "X")
    expect(X.ndim == 2, f"`X` should be the data matrix, shape (rows, coefficients), got shape {tuple(X.shape)}.")
    require_array(y, "y")
    expect(tuple(y.shape) == tuple(X.shape[:1]),
           f"`y` should hold one label for each row of `X`: shape ({X.shape[0]},), got {tuple(y.shape)}.")
    expect(
        set(y.sharding.device_set) == set(X.sharding.device_set) and same_layout(y, mesh, jax.P(axis)),
        f"`y` is {describe(y)}; split it by rows like `X` (P('{axis}') on the same mesh), so that each device "
        f"holds the labels of its own rows.",
    )
    devices = set(X.sharding.device_set)
    check_replicated_like(beta, "beta", devices, dict(mesh.shape))
    expect(tuple(beta.shape) == tuple(X.shape[1:]),
           f"`beta` should hold one coefficient for each column of `X`: shape ({X.shape[1]},), got {tuple(beta.shape)}.")
    return mesh, axis, devices


def sum_verdict(got: Any, parts: np.ndarray, num_devices: int, what: str, where: str) -> None:
    """``got`` should be ``parts.sum(axis=0)``, a sum over the rows of the data split over ``num_devices``;
    the usual slips (local sums, a mean, a sign, a sum counted once per device) are named."""
    want = parts.sum(axis=0)
    got = np.asarray(got, dtype=np.float64)
    if near(got, want):
        return
    local = np.array([block.sum(axis=0) for block in np.array_split(parts, num_devices)])
    if num_devices > 1 and got.size == local.size and got.shape != want.shape:
        if near(got.reshape(local.shape), local):
            raise AssertionError(
                f"{where} returned {num_devices} {what}s, one per device (shape {got.shape}): each covers its own "
                "rows only. Add them across devices with jax.lax.psum(..., axis) and return one, replicated "
                "(out_specs=P())."
            )
        if near(got.reshape(local.shape), np.broadcast_to(want, local.shape)):
            raise AssertionError(
                f"{where} returned the {what} once per device (shape {got.shape}): after the psum it is the same "
                "on every device, so declare it replicated with out_specs=P() and get it once."
            )
    expect(got.shape == want.shape, f"{where}: the {what} has shape {got.shape}, expected {want.shape}.")
    expect(bool(np.all(np.isfinite(got))), f"{where}: the {what} is {got}, which is not finite.")
    num_rows = parts.shape[0]
    if near(got, -want):
        raise AssertionError(f"{where}: the {what} has the wrong sign; it is that of the negative log-likelihood.")
    if near(got, want / num_rows):
        raise AssertionError(f"{where}: the {what} is a mean over the rows; the log-likelihood is their sum.")
    if num_devices > 1 and near(got, want / num_devices):
        raise AssertionError(
            f"{where}: the {what} is the mean of the devices' sums (pmean): add them with jax.lax.psum instead."
        )
    if num_devices > 1 and near(got, num_devices * want):
        raise AssertionError(
            f"{where}: the {what} is {num_devices} times too large: the devices' contributions were added twice. "
            "Inside shard_map, jax.grad with respect to a replicated argument already adds them (its program holds "
            f"a psum_invariant), and a psum on top adds {num_devices} copies of that sum. Compute the gradient of "
            "each device's rows by its formula and psum it, or take jax.grad of the psum-ed log-likelihood."
        )
    if num_devices > 1 and any(near(got, block) for block in local):
        raise AssertionError(
            f"{where}: the {what} covers one device's rows only: add the devices' sums with jax.lax.psum."
        )
    raise AssertionError(f"{where}: the {what} is {np.round(got, 4)}, but it should be {np.round(want, 4)}.")


def value_and_grad(out: Any, beta: Any, X: Any, y: Any, num_devices: int, where: str) -> tuple[Any, Any]:
    """``out`` should be ``(log-likelihood, gradient)`` at ``beta``; returns the pair after checking the values."""
    expect_type(isinstance(out, (tuple, list)) and len(out) == 2,
                f"{where} returned {shown(out)}; return two values, a tuple (log-likelihood, gradient).")
    value, grad = out
    numbers(value, f"The log-likelihood {where} returned")
    numbers(grad, f"The gradient {where} returned")
    p = np.shape(beta)[0]
    if np.shape(value) == (p,) and np.size(grad) == 1:
        raise AssertionError(f"{where} returned (gradient, log-likelihood); return them the other way round.")
    terms, pieces = log_likelihood64(beta, X, y)
    sum_verdict(value, terms, num_devices, "log-likelihood", where)
    sum_verdict(grad, pieces, num_devices, "gradient", where)
    return value, grad


def check_replicated_outputs(outputs: tuple, devices: set, hint: str) -> None:
    """Each named output is on every one of ``devices``, whole: sums over the rows are the same everywhere."""
    for name, got in outputs:
        require_array(got, name)
        expect(
            len(got.sharding.device_set) > 1 or len(devices) == 1,
            f"The {name} is {describe(got)}: it was computed from arrays on one device. Call the function on `X` "
            f"and `y` split by rows and `beta` replicated.",
        )
        expect(
            got.sharding.is_fully_replicated and set(got.sharding.device_set) == devices,
            f"The {name} has the right value but is {describe(got)}; a sum over all the rows is the same on "
            f"every device: it should be replicated on the data's {len(devices)} devices ({hint}).",
        )


def program_collectives(program: Any, how: str, what: str = "the compiled program") -> list:
    """The collectives (:func:`parallel_mcmc.measure.hlo.collectives`) of ``program``, which must be the text of
    a compiled program; ``how`` says how to get it. :class:`~parallel_mcmc.exercises.common.WrongType` for the
    compiled object itself or anything but a string."""
    from parallel_mcmc.measure import hlo

    if callable(getattr(program, "as_text", None)):
        raise WrongType(f"`program` is {type(program).__name__}, the compiled (or lowered) program itself; give "
                        f"its text: {how}.")
    expect_type(isinstance(program, str), f"`program` should be the text of {what} ({how}), got {shown(program)}.")
    expect("HloModule" in program, f"`program` is a string but not the text of a compiled program: {how}.")
    return hlo.collectives(program)


def check_program(program: Any, name: str, gathered: str) -> None:
    """``program``, the compiled program of the sharded log-likelihood, adds the devices' sums with an all-reduce
    and gathers nothing."""
    how = f"{name}.lower(beta, X, y).compile().as_text(), with the sharded arguments"
    kinds = [c.kind for c in program_collectives(program, how)]
    expect("all-gather" not in kinds, f"The compiled program holds an all-gather: {gathered}")
    expect(
        "all-reduce" in kinds,
        f"The compiled program holds no all-reduce, so nothing in it adds the devices' partial sums: compile "
        f"{name} from the sharded arguments, {name}.lower(beta, X, y) with `X` and `y` split by rows, not from "
        "arrays on one device.",
    )


# --------------------------------------------------------------------------- chapter 1


def check_xy_mesh(mesh: Any) -> None:
    require_mesh(mesh)
    expect(
        dict(mesh.shape) == {"x": 2, "y": 4},
        f"`mesh` has shape {dict(mesh.shape)}; make it 2 x 4 with axes ('x', 'y'): jax.make_mesh((2, 4), ('x', 'y'), ...).",
    )


# --------------------------------------------------------------------------- chapter 3


def explicit(arr: Any, name: str) -> None:
    sharding = named(arr, name)
    expect(
        all(t == AxisType.Explicit for t in sharding.mesh.axis_types),
        f"The mesh of `{name}` has axis types {sharding.mesh.axis_types}; this exercise needs Explicit "
        f"axes: jax.make_mesh(..., axis_types=(AxisType.Explicit,) * k).",
    )
