"""Checks for the exercises of the part *Sharding lab*.

Each function checks one exercise. It prints a one-line confirmation when the
answer is right and raises :class:`AssertionError` saying what is wrong (and
how to fix it) otherwise. Layouts are compared with
``Sharding.is_equivalent_to(other, ndim)``, never with ``==``: two shardings
can describe the same layout and still compare unequal (``P('data')`` and
``P('data', None)``).
"""

from __future__ import annotations

import contextlib
import io
import re
from typing import Any, Callable, Mapping, Sequence

import jax
import numpy as np
from jax.sharding import AxisType

from parallel_mcmc.devices import physical_cores
from parallel_mcmc.measure.timing import Speedup
from . import call, expect, passed, traced_program, uses

__all__ = [
    "place_on_mesh",
    "inspect_sharding",
    "partition_specs",
    "auto_shardings",
    "data_parallel_log_likelihood",
    "explicit_product",
    "explicit_log_likelihood",
    "shard_map_row_terms",
    "shard_map_log_likelihood",
    "sharded_training",
    "timing_comparison",
    "device_trips",
    "predicted_collectives",
]


# --------------------------------------------------------------------------- helpers


def _jax():
    return jax


def _require_array(value: Any, name: str) -> None:
    jax = _jax()
    expect(
        isinstance(value, jax.Array),
        f"`{name}` should be a jax.Array, got {type(value).__name__}. "
        f"Make it with jax.device_put(..., sharding) or as the output of a JAX function.",
    )


def _describe(a: Any) -> str:
    """A short human description of where an array's pieces live."""
    jax = _jax()
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


def _named(a: Any, name: str):
    jax = _jax()
    expect(
        isinstance(a.sharding, jax.sharding.NamedSharding),
        f"`{name}` is {_describe(a)}; it should carry a NamedSharding on a mesh. "
        f"Place it with jax.device_put({name}, jax.NamedSharding(mesh, P(...))).",
    )
    return a.sharding


def _same_layout(a: Any, mesh: Any, spec: Any) -> bool:
    jax = _jax()
    return a.sharding.is_equivalent_to(jax.NamedSharding(mesh, spec), a.ndim)


def _close(a: Any, b: Any, atol: float = 1e-5, rtol: float = 1e-4) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.allclose(a, b, atol=atol, rtol=rtol))


def _norm_spec(spec: Any) -> tuple:
    """A PartitionSpec as a tuple without trailing ``None`` entries."""
    entries = list(tuple(spec))
    while entries and entries[-1] is None:
        entries.pop()
    return tuple(entries)


def _check_rows_sharded(a: Any, name: str):
    """``a`` must be split by rows over every device of a one-axis mesh."""
    jax = _jax()
    _require_array(a, name)
    sharding = _named(a, name)
    mesh = sharding.mesh
    expect(
        len(mesh.axis_names) == 1,
        f"`{name}` lives on a mesh with axes {mesh.axis_names}; use a mesh with one axis, "
        f"for example jax.make_mesh((8,), ('data',), axis_types=...).",
    )
    (axis,) = mesh.axis_names
    expect(
        mesh.size == jax.device_count(),
        f"The mesh of `{name}` has {mesh.size} device(s), but this machine shows {jax.device_count()}: "
        f"use all of them, a mesh of shape ({jax.device_count()},).",
    )
    expect(
        not sharding.is_fully_replicated,
        f"`{name}` is {_describe(a)}; it should be split by rows over the mesh axis "
        f"'{axis}': NamedSharding(mesh, P('{axis}')).",
    )
    expect(
        _same_layout(a, mesh, jax.P(axis)),
        f"`{name}` is {_describe(a)}; the data should be split along its first axis (rows, the "
        f"examples), with P('{axis}'), and not along another one.",
    )
    return mesh, axis


def _check_replicated_like(p: Any, name: str, devices: set, mesh_shape: dict) -> None:
    _require_array(p, name)
    expect(
        len(p.sharding.device_set) > 1 or len(devices) == 1,
        f"`{name}` is {_describe(p)}; parameters should be replicated on all {len(devices)} devices of "
        f"the data's mesh: jax.device_put({name}, NamedSharding(mesh, P())).",
    )
    expect(
        p.sharding.is_fully_replicated,
        f"`{name}` is {_describe(p)}: the parameters are sharded, but in data parallelism every "
        f"device needs all of them. Replicate them with NamedSharding(mesh, P()).",
    )
    expect(
        set(p.sharding.device_set) == devices,
        f"`{name}` is replicated on other devices than the data ({len(p.sharding.device_set)} vs "
        f"{len(devices)}); use the same mesh {mesh_shape} for parameters and data.",
    )


# --------------------------------------------------------------------------- the lab's log-likelihood


def _log_likelihood64(beta: Any, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    """The logistic log-likelihood in float64, row by row: each row's term ``(rows,)`` and its gradient
    ``(rows, coefficients)``. The log-likelihood and its gradient are their sums over the rows."""
    beta, X, y = (np.asarray(a, dtype=np.float64) for a in (beta, X, y))
    z = X @ beta
    terms = y * z - np.logaddexp(0.0, z)
    return terms, X * (y - 0.5 * (1.0 + np.tanh(0.5 * z)))[:, None]


def _near(got: Any, want: Any) -> bool:
    """Equal up to float32 sums over many rows: about 1e-4 of the largest entry."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=1e-4, atol=1e-4 * scale))


def _check_lab_inputs(beta: Any, X: Any, y: Any) -> tuple[Any, str, set]:
    """``X`` and ``y`` split by rows over every device of a one-axis mesh, ``beta`` replicated on those devices."""
    jax = _jax()
    mesh, axis = _check_rows_sharded(X, "X")
    expect(X.ndim == 2, f"`X` should be the data matrix, shape (rows, coefficients), got shape {tuple(X.shape)}.")
    _require_array(y, "y")
    expect(tuple(y.shape) == tuple(X.shape[:1]),
           f"`y` should hold one label for each row of `X`: shape ({X.shape[0]},), got {tuple(y.shape)}.")
    expect(
        set(y.sharding.device_set) == set(X.sharding.device_set) and _same_layout(y, mesh, jax.P(axis)),
        f"`y` is {_describe(y)}; split it by rows like `X` (P('{axis}') on the same mesh), so that each device "
        f"holds the labels of its own rows.",
    )
    devices = set(X.sharding.device_set)
    _check_replicated_like(beta, "beta", devices, dict(mesh.shape))
    expect(tuple(beta.shape) == tuple(X.shape[1:]),
           f"`beta` should hold one coefficient for each column of `X`: shape ({X.shape[1]},), got {tuple(beta.shape)}.")
    return mesh, axis, devices


def _sum_verdict(got: Any, parts: np.ndarray, num_devices: int, what: str, where: str) -> None:
    """``got`` should be ``parts.sum(axis=0)``, a sum over the rows of the data split over ``num_devices``;
    the usual slips (local sums, a mean, a sign, a sum counted once per device) are named."""
    want = parts.sum(axis=0)
    got = np.asarray(got, dtype=np.float64)
    if _near(got, want):
        return
    local = np.array([block.sum(axis=0) for block in np.array_split(parts, num_devices)])
    if num_devices > 1 and got.size == local.size and got.shape != want.shape:
        if _near(got.reshape(local.shape), local):
            raise AssertionError(
                f"{where} returned {num_devices} {what}s, one per device (shape {got.shape}): each covers its own "
                "rows only. Add them across devices with jax.lax.psum(..., axis) and return one, replicated "
                "(out_specs=P())."
            )
        if _near(got.reshape(local.shape), np.broadcast_to(want, local.shape)):
            raise AssertionError(
                f"{where} returned the {what} once per device (shape {got.shape}): after the psum it is the same "
                "on every device, so declare it replicated with out_specs=P() and get it once."
            )
    expect(got.shape == want.shape, f"{where}: the {what} has shape {got.shape}, expected {want.shape}.")
    expect(bool(np.all(np.isfinite(got))), f"{where}: the {what} is {got}, which is not finite.")
    num_rows = parts.shape[0]
    if _near(got, -want):
        raise AssertionError(f"{where}: the {what} has the wrong sign; it is that of the negative log-likelihood.")
    if _near(got, want / num_rows):
        raise AssertionError(f"{where}: the {what} is a mean over the rows; the log-likelihood is their sum.")
    if num_devices > 1 and _near(got, want / num_devices):
        raise AssertionError(
            f"{where}: the {what} is the mean of the devices' sums (pmean): add them with jax.lax.psum instead."
        )
    if num_devices > 1 and _near(got, num_devices * want):
        raise AssertionError(
            f"{where}: the {what} is {num_devices} times too large: the devices' contributions were added twice. "
            "Inside shard_map, jax.grad with respect to a replicated argument already adds them (its program holds "
            f"a psum_invariant), and a psum on top adds {num_devices} copies of that sum. Compute the gradient of "
            "each device's rows by its formula and psum it, or take jax.grad of the psum-ed log-likelihood."
        )
    if num_devices > 1 and any(_near(got, block) for block in local):
        raise AssertionError(
            f"{where}: the {what} covers one device's rows only: add the devices' sums with jax.lax.psum."
        )
    raise AssertionError(f"{where}: the {what} is {np.round(got, 4)}, but it should be {np.round(want, 4)}.")


def _value_and_grad(out: Any, beta: Any, X: Any, y: Any, num_devices: int, where: str) -> tuple[Any, Any]:
    """``out`` should be ``(log-likelihood, gradient)`` at ``beta``; returns the pair after checking the values."""
    expect(isinstance(out, (tuple, list)) and len(out) == 2,
           f"{where} returned {type(out).__name__}; return two values: (log-likelihood, gradient).")
    value, grad = out
    p = np.shape(beta)[0]
    if np.shape(value) == (p,) and np.size(grad) == 1:
        raise AssertionError(f"{where} returned (gradient, log-likelihood); return them the other way round.")
    terms, pieces = _log_likelihood64(beta, X, y)
    _sum_verdict(value, terms, num_devices, "log-likelihood", where)
    _sum_verdict(grad, pieces, num_devices, "gradient", where)
    return value, grad


def _check_replicated_outputs(outputs: tuple, devices: set, hint: str) -> None:
    """Each named output is on every one of ``devices``, whole: sums over the rows are the same everywhere."""
    for name, got in outputs:
        _require_array(got, name)
        expect(
            len(got.sharding.device_set) > 1 or len(devices) == 1,
            f"The {name} is {_describe(got)}: it was computed from arrays on one device. Call the function on `X` "
            f"and `y` split by rows and `beta` replicated.",
        )
        expect(
            got.sharding.is_fully_replicated and set(got.sharding.device_set) == devices,
            f"The {name} has the right value but is {_describe(got)}; a sum over all the rows is the same on "
            f"every device: it should be replicated on the data's {len(devices)} devices ({hint}).",
        )


def _check_program(program: Any, name: str, gathered: str) -> None:
    """``program``, the compiled program of the sharded log-likelihood, adds the devices' sums with an all-reduce
    and gathers nothing."""
    from parallel_mcmc.measure import hlo

    expect(
        isinstance(program, str) and "HloModule" in program,
        f"`program` should be the text of the compiled program: {name}.lower(beta, X, y).compile().as_text(), "
        "with the sharded arguments.",
    )
    kinds = [c.kind for c in hlo.collectives(program)]
    expect("all-gather" not in kinds, f"The compiled program holds an all-gather: {gathered}")
    expect(
        "all-reduce" in kinds,
        f"The compiled program holds no all-reduce, so nothing in it adds the devices' partial sums: compile "
        f"{name} from the sharded arguments, {name}.lower(beta, X, y) with `X` and `y` split by rows, not from "
        "arrays on one device.",
    )


# --------------------------------------------------------------------------- chapter 1


def _check_xy_mesh(mesh: Any) -> None:
    expect(
        dict(mesh.shape) == {"x": 2, "y": 4},
        f"`mesh` has shape {dict(mesh.shape)}; make it 2 x 4 with axes ('x', 'y'): jax.make_mesh((2, 4), ('x', 'y'), ...).",
    )


def place_on_mesh(A_sharded: Any, A: Any, mesh: Any) -> None:
    """``A_sharded`` holds ``A`` split in both dimensions: ``P('x', 'y')`` on the 2 x 4 mesh."""
    jax = _jax()
    _check_xy_mesh(mesh)
    _require_array(A_sharded, "A_sharded")
    expect(
        _close(A_sharded, A, atol=0, rtol=0),
        "`A_sharded` does not hold the values of `A`; put `A` itself on the devices with jax.device_put.",
    )
    expect(
        len(A_sharded.sharding.device_set) == mesh.size,
        f"`A_sharded` is {_describe(A_sharded)}; it should be spread over all {mesh.size} devices of the mesh.",
    )
    expect(
        not A_sharded.sharding.is_fully_replicated,
        f"`A_sharded` is {_describe(A_sharded)}; it should be split into 8 blocks: rows over 'x', columns over 'y'.",
    )
    expect(
        _same_layout(A_sharded, mesh, jax.P("x", "y")),
        f"`A_sharded` is {_describe(A_sharded)}; the rows should be split over mesh axis 'x' and the "
        f"columns over 'y': NamedSharding(mesh, P('x', 'y')).",
    )
    passed("A placed on the 2 x 4 mesh as P('x', 'y')")


def inspect_sharding(A_sharded: Any, devices_used: Any, block_shape: Any) -> None:
    """The set of devices holding ``A_sharded`` and the shape of one device's block."""
    jax = _jax()
    _require_array(A_sharded, "A_sharded")
    sharding = _named(A_sharded, "A_sharded")
    _check_xy_mesh(sharding.mesh)
    expect(
        _same_layout(A_sharded, sharding.mesh, jax.P("x", "y")),
        f"`A_sharded` is {_describe(A_sharded)}; do the previous exercise first (P('x', 'y')).",
    )
    truth_devices = set(A_sharded.devices())
    try:
        given = set(devices_used)
    except TypeError:
        given = None
    expect(
        given == truth_devices,
        f"`devices_used` should be the set of the {len(truth_devices)} devices that hold a part of "
        f"`A_sharded` (A_sharded.devices()), got {devices_used!r}.",
    )
    truth_block = tuple(sharding.shard_shape(A_sharded.shape))
    expect(
        tuple(np.atleast_1d(block_shape).tolist()) != tuple(A_sharded.shape),
        f"{tuple(A_sharded.shape)} is the global shape of the array; each device holds only one block of it. "
        f"Ask A_sharded.sharding.shard_shape(A_sharded.shape) or look at A_sharded.addressable_shards.",
    )
    expect(
        tuple(np.atleast_1d(block_shape).tolist()) == truth_block,
        f"`block_shape` {block_shape!r} is not the shape of one device's block; rows are split in 2 ('x') "
        f"and columns in 4 ('y').",
    )
    passed("devices and block shape of A_sharded")


def partition_specs(predictions: Mapping[Any, Any], mesh: Any, shape: tuple[int, ...]) -> None:
    """For each PartitionSpec, the predicted (block shape, number of copies of each block)."""
    jax = _jax()
    _check_xy_mesh(mesh)
    P = jax.P
    wanted = [P("x", "y"), P("x", None), P(None, "y"), P(None, None), P(None, "x")]
    expect(isinstance(predictions, Mapping), "`predictions` should be a dict {P(...): (block_shape, copies)}.")
    given = {_norm_spec(k): v for k, v in predictions.items()}
    dummy = np.zeros(shape, dtype=np.float32)
    for spec in wanted:
        key = _norm_spec(spec)
        expect(key in given, f"`predictions` has no entry for {spec}; predict all five specs.")
        value = given[key]
        expect(
            isinstance(value, (tuple, list)) and len(value) == 2,
            f"The entry for {spec} should be a pair (block_shape, copies), got {value!r}.",
        )
        block, copies = value
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


# --------------------------------------------------------------------------- chapter 2


def auto_shardings(B: Any, C: Any, mesh: Any, sum_spec: Any, matmul_spec: Any) -> None:
    """``B`` split along ``x``, ``C`` along ``y``; predicted specs of ``B + C`` and ``B.T @ C``."""
    jax = _jax()
    _check_xy_mesh(mesh)
    P = jax.P
    for name, arr, spec, axis, other in (("B", B, P("x", None), "x", "y"), ("C", C, P(None, "y"), "y", "x")):
        _require_array(arr, name)
        expect(tuple(arr.shape) == (4, 8), f"`{name}` should have shape (4, 8), got {tuple(arr.shape)}.")
        expect(
            not arr.sharding.is_fully_replicated,
            f"`{name}` is {_describe(arr)}; it should be split along mesh axis '{axis}' and replicated along '{other}'.",
        )
        expect(
            _same_layout(arr, mesh, spec),
            f"`{name}` is {_describe(arr)}; it should be split along mesh axis '{axis}' (and replicated "
            f"along '{other}'): NamedSharding(mesh, {spec}).",
        )
    got_sum = jax.jit(lambda u, v: u + v)(B, C)
    got_mm = jax.jit(lambda u, v: u.T @ v)(B, C)
    for label, got, spec in (("B + C", got_sum, sum_spec), ("B.T @ C", got_mm, matmul_spec)):
        try:
            predicted = jax.NamedSharding(mesh, spec)
        except Exception as exc:  # not a valid spec for this mesh
            raise AssertionError(f"Your prediction {spec!r} for {label} is not a valid PartitionSpec: {exc}") from None
        expect(
            got.sharding.is_equivalent_to(predicted, got.ndim),
            f"Your prediction {spec} for {label} is not what jit produced. Compute it and print its "
            f".sharding, then explain the difference.",
        )
    passed("shardings of B + C and B.T @ C")


def data_parallel_log_likelihood(value: Any, grad: Any, beta: Any, X: Any, y: Any, program: str) -> None:
    """The log-likelihood and its gradient from ``X`` and ``y`` split by rows, ``beta`` replicated; ``program`` the
    compiled program of the jitted function on those arguments.

    Both results should be replicated on the data's devices, equal the log-likelihood and gradient at ``beta``,
    and the program should add the devices' sums with an all-reduce.
    """
    mesh, _, devices = _check_lab_inputs(beta, X, y)
    for name, got in (("value", value), ("grad", grad)):
        _require_array(got, name)
    _value_and_grad((value, grad), beta, X, y, mesh.size, "(value, grad)")
    _check_replicated_outputs((("log-likelihood `value`", value), ("gradient `grad`", grad)), devices,
                              "a jitted call on the sharded arguments gives that")
    _check_program(program, "value_and_grad", "the data (or the residuals of every row) went to every device, where "
                   "only the partial sums need to travel. Keep `X` and `y` split by rows.")
    passed("data-parallel log-likelihood: rows split, beta replicated, the sums all-reduced onto every device")


# --------------------------------------------------------------------------- chapter 3


def _explicit(arr: Any, name: str) -> None:
    sharding = _named(arr, name)
    expect(
        all(t == AxisType.Explicit for t in sharding.mesh.axis_types),
        f"The mesh of `{name}` has axis types {sharding.mesh.axis_types}; this exercise needs Explicit "
        f"axes: jax.make_mesh(..., axis_types=(AxisType.Explicit,) * k).",
    )


def explicit_product(a: Any, b: Any, prod: Any, predicted_type: str) -> None:
    """``a`` (4, 1) split on ``x``, ``b`` (1, 8) split on ``y``, their product and its type as a string."""
    jax = _jax()
    P = jax.P
    for name, arr, shape, spec, axis in (("a", a, (4, 1), P("x", None), "x"), ("b", b, (1, 8), P(None, "y"), "y")):
        _require_array(arr, name)
        _explicit(arr, name)
        _check_xy_mesh(arr.sharding.mesh)
        expect(tuple(arr.shape) == shape, f"`{name}` should have shape {shape}, got {tuple(arr.shape)}.")
        expect(
            _same_layout(arr, arr.sharding.mesh, spec),
            f"`{name}` is {_describe(arr)}; it should be split along mesh axis '{axis}': {spec}.",
        )
    _require_array(prod, "prod")
    expect(_close(prod, np.asarray(a) * np.asarray(b)), "`prod` is not the elementwise product a * b.")
    expect(
        _same_layout(prod, a.sharding.mesh, P("x", "y")),
        f"`prod` has the right values but is {_describe(prod)}; the product of an x-split column and a "
        f"y-split row should be split along both axes. Compute it as a * b from the sharded inputs.",
    )
    truth = str(jax.typeof(prod)).replace(" ", "")
    expect(
        isinstance(predicted_type, str) and predicted_type.replace(" ", "") == truth,
        f"`predicted_type` {predicted_type!r} is not the type of the product; write it as jax.typeof "
        f"prints it, for example 'float32[4@x,1]' for a.",
    )
    passed("explicit product and its type")


def explicit_log_likelihood(fn: Callable[..., Any], beta: Any, X: Any, y: Any, program: str,
                            cases: Sequence[Any] | None = None) -> None:
    """``fn(beta, X, y)`` returns the log-likelihood and its gradient on ``Explicit`` axes and prints the types
    of its inputs while it is traced; ``program`` is its compiled program on the chapter's arguments.

    ``X`` and ``y`` are split by rows, ``beta`` replicated. The results should be replicated, and the program
    should add the devices' sums with an all-reduce without gathering the data. ``cases`` (the grader's) lists
    more coefficient vectors ``beta`` to try on the same data.
    """
    jax = _jax()
    expect(callable(fn), "`fn` should be the function itself, not its result.")
    mesh, axis, devices = _check_lab_inputs(beta, X, y)
    _explicit(X, "X")
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
    _value_and_grad(small, beta, X_half, y_half, mesh.size, where)
    with contextlib.redirect_stdout(io.StringIO()):  # its prints were read above
        out = call(fn, beta, X, y, what="fn(beta, X, y)")
    value, grad = _value_and_grad(out, beta, X, y, mesh.size, "fn(beta, X, y)")
    for name, got in (("log-likelihood", value), ("gradient", grad)):
        _require_array(got, f"the {name}")
        expect("@" not in str(jax.typeof(got)),
               f"The {name} has the type {jax.typeof(got)}; a sum over all the rows is whole on every device, "
               f"with no @ in its type.")
    _check_replicated_outputs((("log-likelihood", value), ("gradient", grad)), devices,
                              "out_sharding=P() on the product that sums over the rows")
    _check_program(program, "fn", "to make the product over the rows unambiguous, a whole array (the data, or the "
                   "residuals of every row) was resharded onto every device. Give the product out_sharding=P() "
                   "instead: each device sums its own rows, and an all-reduce adds the sums.")
    for b in cases or ():
        b = np.asarray(b, np.float32)
        where = f"fn(beta={np.round(b, 3).tolist()}, X, y)"
        with contextlib.redirect_stdout(io.StringIO()):
            out = call(fn, b, X, y, what=where)
        _value_and_grad(out, b, X, y, mesh.size, where)
    passed("explicit data-parallel log-likelihood and gradient, with their types")


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
    """
    jax = _jax()
    expect(callable(fn), "`fn` should be the shard_mapped function itself, not its output.")
    mesh, axis, devices = _check_lab_inputs(beta, X, y)
    expect(
        _uses(fn, (beta, X, y), "shard_map", "fn(beta, X, y)"),
        "`fn` does not use jax.shard_map; wrap the per-device computation with "
        "jax.shard_map(f, mesh=mesh, in_specs=..., out_specs=...).",
    )

    def verdict(out: Any, b: Any, where: str) -> None:
        terms, _ = _log_likelihood64(b, X, y)
        got = np.asarray(out, dtype=np.float64)
        if got.size == 1 and _near(got.reshape(()), terms.sum()):
            raise AssertionError(f"{where} returned the log-likelihood, the sum of the rows' terms; return each "
                                 f"row's term, laid out like the rows (out_specs=P('{axis}')).")
        local = np.array([block.sum() for block in np.array_split(terms, mesh.size)])
        if got.size == mesh.size and got.size != terms.size and _near(got.ravel(), local):
            raise AssertionError(f"{where} returned one sum per device; return every row's term instead, no sum.")
        expect(got.shape == terms.shape,
               f"{where} returned shape {got.shape}; there is one term for each row: ({terms.size},).")
        if _near(got, -terms):
            raise AssertionError(f"{where} has the wrong sign: these are the terms of the negative log-likelihood.")
        expect(_near(got, terms), f"{where} returned {np.round(got[:4], 4).tolist()}...; the first rows' terms "
                                  f"y z - log(1 + exp(z)) are {np.round(terms[:4], 4).tolist()}...")

    out = call(fn, beta, X, y, what="fn(beta, X, y)")
    _require_array(out, "the output of fn")
    verdict(out, beta, "fn(beta, X, y)")
    expect(
        out.sharding.is_equivalent_to(jax.NamedSharding(mesh, jax.P(axis)), 1)
        and set(out.sharding.device_set) == devices,
        f"The terms are right but {_describe(out)}; each device's terms should stay on it, laid out like the rows: "
        f"out_specs=P('{axis}'). No row needs another device's data, so nothing has to move.",
    )
    for b in cases or ():
        b = np.asarray(b, np.float32)
        where = f"fn(beta={np.round(b, 3).tolist()}, X, y)"
        verdict(call(fn, b, X, y, what=where), b, where)
    passed("each row's term with shard_map, laid out like the rows")


def shard_map_log_likelihood(fn: Callable[..., Any], beta: Any, X: Any, y: Any,
                             cases: Sequence[Any] | None = None) -> None:
    """``fn(beta, X, y)``, written with ``jax.shard_map``, returns the log-likelihood and its gradient, each
    device working on its own rows and ``psum`` adding their sums, both results replicated.

    ``cases`` (the grader's) lists more coefficient vectors ``beta`` to try on the same data.
    """
    expect(callable(fn), "`fn` should be the shard_mapped function itself, not its output.")
    mesh, axis, devices = _check_lab_inputs(beta, X, y)
    program = traced_program(fn, (beta, X, y), "fn(beta, X, y)")
    expect(
        uses(program, "shard_map"),
        "`fn` does not use jax.shard_map; the exercise is to write what each device computes on its own rows.",
    )
    value, grad = _value_and_grad(call(fn, beta, X, y, what="fn(beta, X, y)"), beta, X, y, mesh.size,
                                  "fn(beta, X, y)")
    expect(
        uses(program, "psum"),
        "`fn` gets the right numbers without a psum; make the devices add their partial sums with "
        f"jax.lax.psum(..., '{axis}').",
    )
    _check_replicated_outputs((("log-likelihood", value), ("gradient", grad)), devices, "out_specs=(P(), P())")
    for b in cases or ():
        b = np.asarray(b, np.float32)
        where = f"fn(beta={np.round(b, 3).tolist()}, X, y)"
        _value_and_grad(call(fn, b, X, y, what=where), b, X, y, mesh.size, where)
    passed("log-likelihood and gradient with shard_map and psum")


# --------------------------------------------------------------------------- chapter 5


def sharded_training(x_sh: Any, y_sh: Any, params_rep: Any, losses: Any) -> None:
    """Training data split by rows, parameters replicated, and a training loss that went down."""
    jax = _jax()
    mesh, _ = _check_rows_sharded(x_sh, "x_sh")
    _check_rows_sharded(y_sh, "y_sh")
    expect(
        y_sh.sharding.is_equivalent_to(x_sh.sharding, x_sh.ndim),
        f"`y_sh` is {_describe(y_sh)} but `x_sh` is {_describe(x_sh)}; split both the same way, so each "
        f"device holds matching inputs and targets.",
    )
    devices = set(x_sh.sharding.device_set)
    leaves = jax.tree_util.tree_leaves(params_rep)
    expect(len(leaves) > 0, "`params_rep` holds no arrays; pass the replicated parameter list.")
    for i, leaf in enumerate(leaves):
        _check_replicated_like(leaf, f"params_rep (leaf {i})", devices, dict(mesh.shape))
    curve = np.asarray(losses, dtype=np.float64).ravel()
    expect(curve.size >= 2, "`losses` should hold the training loss of every step (at least two values).")
    expect(bool(np.all(np.isfinite(curve))), "`losses` contains NaN or inf: lower the step size.")
    expect(
        curve[-1] < 0.5 * curve[0],
        f"The loss went from {curve[0]:.4g} to {curve[-1]:.4g}; it should at least halve. Train longer or "
        f"check the update step.",
    )
    passed("sharded training: data split, parameters replicated, loss decreasing")


#: How far an ideal may be from the one the check derives: a separate reading of the cores busy, or the
#: gradient's reading in place of the whole step's, differs from the baseline's own by some percent.
IDEAL_TOLERANCE = 0.15


def timing_comparison(result: Any, x_sh: Any) -> None:
    """A :class:`~parallel_mcmc.measure.Speedup` of the sharded training step, with the ideal of this machine.

    The forced CPU devices share the machine's physical cores, and one device
    already keeps ``result.baseline.cores_busy`` of them busy with XLA's
    threads. The cost model's best case for ``num_devices`` devices is then
    the whole step's work spread over all the cores: an ideal of
    ``min(num_devices, cores / max(busy, 1))``. ``min(num_devices, cores)``,
    which counts one core per device, is right only where one device keeps a
    single core busy; it is refused where the two differ by more than
    :data:`IDEAL_TOLERANCE`.
    """
    expect(
        isinstance(result, Speedup),
        f"`result` should be made with parallel_mcmc.measure.speedup(baseline, candidate, ideal, reason), got {type(result).__name__}.",
    )
    _check_rows_sharded(x_sh, "x_sh")
    expect(
        result.baseline is not result.candidate and result.baseline.times != result.candidate.times,
        "The baseline and the candidate are the same timing; time the step once on unsharded and once on "
        "sharded data.",
    )
    expect(
        len(result.baseline.times) >= 3 and len(result.candidate.times) >= 3,
        "Time at least 3 repeats of each (time_call(..., repeats=5)) so that the median means something.",
    )
    expect(
        len(result.baseline.cpu_times) == len(result.baseline.times),
        "The baseline holds no CPU times, so nobody can tell how many cores one device kept busy: make it "
        "with time_call, whose Timing records them (its .cores_busy).",
    )
    num_devices = len(x_sh.sharding.device_set)
    cores = physical_cores()
    busy = result.baseline.cores_busy
    # The cost model's best case: the one-device step's work, busy x its time in core-seconds, over all the
    # cores at once, and never more than one device's share of the work per device.
    ideal = min(num_devices, cores / max(busy, 1.0))
    if abs(result.ideal - ideal) <= IDEAL_TOLERANCE * ideal:
        passed(f"timing comparison with ideal {result.ideal:.2f}x (one device kept {busy:.2f} of {cores} cores busy)")
        return
    one_core_each = min(num_devices, cores)
    if abs(result.ideal - one_core_each) < 1e-6:
        raise AssertionError(
            f"The ideal {result.ideal:g} = min(devices, cores) counts one core for each device, but the one-device "
            f"step already kept {busy:.2f} of the {cores} cores busy (result.baseline.cores_busy): XLA's threads "
            f"used them. {num_devices} devices share the same {cores} cores, so at best they spread the same "
            f"work over all of them: cores / busy = {cores / max(busy, 1.0):.2f}, capped at the device count."
        )
    if abs(result.ideal - num_devices) < 1e-6:
        raise AssertionError(
            f"The ideal {result.ideal:g} is the device count, but {num_devices} forced CPU devices share {cores} "
            "physical core(s), and one device already keeps some of them busy (result.baseline.cores_busy): "
            "work out how many cores the devices can add."
        )
    raise AssertionError(
        f"The ideal speedup is {result.ideal:.3g}, but on this machine it is about {ideal:.2f}: one device kept "
        f"{busy:.2f} of the {cores} cores busy (result.baseline.cores_busy), and {num_devices} devices share "
        "the same cores."
    )


# (steps with axes (chain, draw), number of devices): inputs that tell the plausible wrong answers apart,
# uneven splits among them (the answer is computed by the rule in the docstring, in the check).
_TRIP_CASES = [
    (np.array([[1, 3, 7], [7, 3, 1], [2, 2, 2], [5, 1, 9]]), 2),
    (np.array([[4, 4], [1, 9], [6, 2], [3, 3], [8, 1]]), 2),
    (np.array([[2, 11, 3, 1], [9, 1, 1, 4], [1, 1, 12, 2], [3, 5, 2, 6], [7, 2, 2, 2], [1, 8, 1, 1], [2, 2, 9, 3]]), 3),
    (np.array([[5, 5, 5], [1, 1, 1], [2, 9, 2]]), 3),
]


def _trips(steps: np.ndarray, num_devices: int) -> tuple[np.ndarray, np.ndarray]:
    blocks = np.array_split(steps, num_devices)
    return (np.full(num_devices, steps.max(axis=0).sum()), np.array([b.max(axis=0).sum() for b in blocks]))


def device_trips(fn: Callable[..., Any], cases: Any = None) -> None:
    """Check ``fn(steps, num_devices)``: each device's loop trips under ``jit(vmap)`` and under ``shard_map``.

    ``steps`` are every chain's trips at every draw, axes ``(chain, draw)``; chains are split over the devices
    in contiguous blocks, the first ``num_chains % num_devices`` devices taking one more. A ``vmap``ped loop
    runs, at each draw, as long as the longest chain it holds: all chains under ``jit``, the device's own
    under ``shard_map``. ``cases`` (default: a fixed table) lists ``(steps, num_devices)``.
    """
    expect(callable(fn), "Pass your function itself, `device_trips`, not the counts it returns.")
    for steps, num_devices in cases if cases is not None else _TRIP_CASES:
        steps = np.asarray(steps)
        want_jit, want_map = _trips(steps, num_devices)
        where = f"device_trips(steps, {num_devices}) for steps={steps.tolist()}"
        out = call(fn, steps.copy(), num_devices, what=where)
        expect(isinstance(out, (tuple, list)) and len(out) == 2,
               f"{where} returned {type(out).__name__}; return two arrays: (trips under jit, trips under shard_map).")
        got_jit, got_map = (np.asarray(o, dtype=float).reshape(-1) for o in out)
        expect(got_jit.shape == (num_devices,) and got_map.shape == (num_devices,),
               f"{where} returned arrays of shapes {got_jit.shape} and {got_map.shape}; each needs one count per "
               f"device: ({num_devices},).")
        if np.allclose(got_jit, want_jit) and np.allclose(got_map, want_map):
            continue
        if np.allclose(got_jit, want_map) and np.allclose(got_map, want_jit):
            raise AssertionError(f"{where}: the two arrays are swapped. Return (under jit, under shard_map).")
        if np.allclose(got_jit, want_map):
            raise AssertionError(f"{where}: under jit you gave each device its own slowest chain. Under jit the "
                                 "vmap holds every chain, split over the devices, and its loop runs until the "
                                 "slowest chain on any device is done: one global count for every device.")
        blocks = np.array_split(steps, num_devices)
        if np.allclose(got_map, [b.max(axis=1).sum() for b in blocks]):
            raise AssertionError(f"{where}: the maximum was taken over draws. The axes are (chain, draw): at each "
                                 "draw the loop waits for the slowest chain, the maximum over axis 0 of a block.")
        if np.allclose(got_map, [b.sum() for b in blocks]):
            raise AssertionError(f"{where}: that is every chain's trips added up, as if a device ran its chains one "
                                 "after another. Under vmap they run together: at each draw, the longest of them.")
        if np.allclose(got_jit, want_jit):
            raise AssertionError(f"{where}: under jit right; under shard_map you returned {got_map.tolist()}, "
                                 f"expected {want_map.tolist()}. Split the chains as evenly as they go, the first "
                                 "devices taking one more.")
        raise AssertionError(f"{where} returned {got_jit.tolist()} and {got_map.tolist()}; expected "
                             f"{want_jit.tolist()} and {want_map.tolist()}.")
    passed("loop trips per device")


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
    """
    expect(isinstance(program, str) and "HloModule" in program,
           "`program` should be the compiled program's text: jax.jit(f).lower(*args).compile().as_text().")
    sizes = {str(a): int(n) for a, n in dict(mesh_shape).items()}
    expect(len(set(sizes.values())) == len(sizes),
           f"The mesh {sizes} has two axes of one size; a group's size cannot tell them apart.")
    actual = _collectives(program, sizes)
    axes = set(sizes) | {"+".join(sizes)}
    expect(isinstance(predicted, (list, tuple)) and not isinstance(predicted, str),
           "`predicted` should be a list of (kind, axis, bytes) triples, one for each collective.")
    triples = []
    for item in predicted:
        expect(isinstance(item, (list, tuple)) and len(item) == 3,
               f"{item!r} is not a (kind, axis, bytes) triple, such as ('all-reduce', 'model', 1024).")
        kind, axis, nbytes = item
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
