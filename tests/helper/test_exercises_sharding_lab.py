"""Unit tests of the sharding lab's exercise checks: right answers pass, wrong ones are rejected."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding

from parallel_mcmc import timing
from parallel_mcmc.devices import physical_cores
from parallel_mcmc.exercises import sharding_lab as check

P = jax.P
# tests/conftest.py gives every in-process test 8 CPU devices.
assert jax.device_count() == 8, "run these tests with pytest from the repository, which sets up 8 CPU devices"


def rejects(fn, *args, match: str):
    with pytest.raises(AssertionError, match=match):
        fn(*args)


# ---------------------------------------------------------------- meshes and data


@pytest.fixture(scope="module")
def xy():
    return jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)


@pytest.fixture(scope="module")
def xy_explicit():
    return jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)


@pytest.fixture(scope="module", params=[AxisType.Auto, AxisType.Explicit], ids=["auto", "explicit"])
def data_mesh(request):
    return jax.make_mesh((8,), ("data",), axis_types=(request.param,))


@pytest.fixture(scope="module")
def explicit_data_mesh():
    return jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))


@pytest.fixture(scope="module")
def A():
    return np.arange(64.0, dtype=np.float32).reshape(4, 16)


def layer(x, W, b):
    return jax.nn.softmax(x @ W + b)


def layer_arrays(mesh, n_features=16):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(128, n_features)).astype(np.float32)
    W = rng.normal(size=(n_features, 2)).astype(np.float32)
    b = rng.normal(size=2).astype(np.float32)
    rows, rep = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
    return x, W, b, jax.device_put(x, rows), jax.device_put(W, rep), jax.device_put(b, rep)


# ---------------------------------------------------------------- chapter 1


def test_place_on_mesh(xy, A):
    check.place_on_mesh(jax.device_put(A, NamedSharding(xy, P("x", "y"))), A, xy)
    rejects(check.place_on_mesh, jax.device_put(A, NamedSharding(xy, P())), A, xy, match="replicated")
    rejects(check.place_on_mesh, jax.device_put(A, NamedSharding(xy, P("y", "x"))), A, xy, match="'x'")
    rejects(check.place_on_mesh, jnp.asarray(A), A, xy, match="one device")
    rejects(check.place_on_mesh, jax.device_put(A + 1, NamedSharding(xy, P("x", "y"))), A, xy, match="values")


def test_inspect_sharding(xy, A):
    A_sh = jax.device_put(A, NamedSharding(xy, P("x", "y")))
    check.inspect_sharding(A_sh, A_sh.devices(), (2, 4))
    check.inspect_sharding(A_sh, list(A_sh.devices()), A_sh.addressable_shards[0].data.shape)
    rejects(check.inspect_sharding, A_sh, A_sh.devices(), (4, 16), match="global shape")
    rejects(check.inspect_sharding, A_sh, A_sh.devices(), (4, 2), match="block")
    rejects(check.inspect_sharding, A_sh, {jax.devices()[0]}, (2, 4), match="devices")
    rejects(check.inspect_sharding, jax.device_put(A, NamedSharding(xy, P("x"))), A_sh.devices(), (2, 16), match="P\\('x', 'y'\\)")


RIGHT_SPECS = {
    P("x", "y"): ((2, 4), 1),
    P("x", None): ((2, 16), 4),
    P(None, "y"): ((4, 4), 2),
    P(None, None): ((4, 16), 8),
    P(None, "x"): ((4, 8), 4),
}


def test_partition_specs(xy):
    check.partition_specs(RIGHT_SPECS, xy, (4, 16))
    check.partition_specs({**RIGHT_SPECS, P("x"): ((2, 16), 4)}, xy, (4, 16))  # P('x') names the same layout
    wrong_axis = {**RIGHT_SPECS, P(None, "x"): ((4, 4), 2)}  # read as if it were 'y'
    rejects(check.partition_specs, wrong_axis, xy, (4, 16), match="shape")
    wrong_copies = {**RIGHT_SPECS, P(None, None): ((4, 16), 1)}
    rejects(check.partition_specs, wrong_copies, xy, (4, 16), match="copies")
    missing = {k: v for k, v in RIGHT_SPECS.items() if k != P(None, "y")}
    rejects(check.partition_specs, missing, xy, (4, 16), match="no entry")


# ---------------------------------------------------------------- chapter 2


def test_auto_shardings(xy):
    B = jax.device_put(np.ones((4, 8), np.float32), NamedSharding(xy, P("x", None)))
    C = jax.device_put(np.ones((4, 8), np.float32), NamedSharding(xy, P(None, "y")))
    check.auto_shardings(B, C, xy, P("x", "y"), P(None, "y"))
    rejects(check.auto_shardings, B, C, xy, P("x", "y"), P("x", "y"), match="B.T @ C")
    rejects(check.auto_shardings, B, C, xy, P("x"), P(None, "y"), match="B \\+ C")
    B_rep = jax.device_put(np.ones((4, 8), np.float32), NamedSharding(xy, P()))
    rejects(check.auto_shardings, B_rep, C, xy, P("x", "y"), P(None, "y"), match="replicated")
    B_y = jax.device_put(np.ones((4, 8), np.float32), NamedSharding(xy, P(None, "y")))
    rejects(check.auto_shardings, B_y, C, xy, P("x", "y"), P(None, "y"), match="mesh axis 'x'")


def test_data_parallel_layer(data_mesh):
    x, W, b, xs, Wr, br = layer_arrays(data_mesh)
    out = jax.jit(layer)(xs, Wr, br)
    check.data_parallel_layer(out, xs, Wr, br)
    # a replicated array where a sharded one is asked for
    x_rep = jax.device_put(x, NamedSharding(data_mesh, P()))
    rejects(check.data_parallel_layer, jax.jit(layer)(x_rep, Wr, br), x_rep, Wr, br, match="replicated")
    # the wrong axis of the data (columns instead of rows)
    x_cols = jax.device_put(x, NamedSharding(data_mesh, P(None, "data")))
    rejects(check.data_parallel_layer, out, x_cols, Wr, br, match="first axis")
    # parameters sharded instead of replicated
    W_sh = jax.device_put(W, NamedSharding(data_mesh, P("data")))
    rejects(check.data_parallel_layer, out, xs, W_sh, br, match="sharded")
    # parameters left on one device
    rejects(check.data_parallel_layer, out, xs, jnp.asarray(W), br, match="one device")
    # right values, wrong sharding
    out_rep = jax.device_put(np.asarray(out), NamedSharding(data_mesh, P()))
    rejects(check.data_parallel_layer, out_rep, xs, Wr, br, match="right values")
    # wrong values
    rejects(check.data_parallel_layer, jax.jit(lambda x, W, b: x @ W + b)(xs, Wr, br), xs, Wr, br, match="softmax")


def test_data_parallel_layer_wrong_mesh(xy):
    x = np.ones((128, 16), np.float32)
    xs = jax.device_put(x, NamedSharding(xy, P("x")))
    Wr = jax.device_put(np.ones((16, 2), np.float32), NamedSharding(xy, P()))
    br = jax.device_put(np.ones(2, np.float32), NamedSharding(xy, P()))
    rejects(check.data_parallel_layer, jax.jit(layer)(xs, Wr, br), xs, Wr, br, match="one axis")


# ---------------------------------------------------------------- chapter 3


def test_explicit_product(xy_explicit, xy):
    a = jax.device_put(np.arange(4.0, dtype=np.float32).reshape(4, 1), NamedSharding(xy_explicit, P("x", None)))
    b = jax.device_put(np.arange(8.0, dtype=np.float32).reshape(1, 8), NamedSharding(xy_explicit, P(None, "y")))
    prod = a * b
    check.explicit_product(a, b, prod, "float32[4@x,8@y]")
    check.explicit_product(a, b, prod, "float32[4@x, 8@y]")
    rejects(check.explicit_product, a, b, prod, "float32[4,8]", match="predicted_type")
    prod_rep = jax.device_put(np.asarray(prod), NamedSharding(xy_explicit, P()))
    rejects(check.explicit_product, a, b, prod_rep, "float32[4@x,8@y]", match="right values")
    b_x = jax.device_put(np.arange(8.0, dtype=np.float32).reshape(1, 8), NamedSharding(xy_explicit, P(None, "x")))
    rejects(check.explicit_product, a, b_x, prod, "float32[4@x,8@x]", match="mesh axis 'y'")
    a_auto = jax.device_put(np.arange(4.0, dtype=np.float32).reshape(4, 1), NamedSharding(xy, P("x", None)))
    rejects(check.explicit_product, a_auto, b, prod, "float32[4@x,8@y]", match="Explicit")


def make_traced_layer():
    @jax.jit
    def traced(x, W, b):
        out = layer(x, W, b)
        print("x:", jax.typeof(x), "W:", jax.typeof(W), "out:", jax.typeof(out))
        return out

    return traced


def test_explicit_layer(explicit_data_mesh, data_mesh):
    x, W, b, xs, Wr, br = layer_arrays(explicit_data_mesh)
    check.explicit_layer(make_traced_layer(), xs, Wr, br)
    rejects(check.explicit_layer, jax.jit(layer), xs, Wr, br, match="print")
    W_sh = jax.device_put(W, NamedSharding(explicit_data_mesh, P("data")))
    rejects(check.explicit_layer, make_traced_layer(), xs, W_sh, br, match="sharded")
    x_rep = jax.device_put(x, NamedSharding(explicit_data_mesh, P()))
    rejects(check.explicit_layer, make_traced_layer(), x_rep, Wr, br, match="replicated")
    if data_mesh.axis_types[0] == AxisType.Auto:
        _, _, _, xa, Wa, ba = layer_arrays(data_mesh)
        rejects(check.explicit_layer, make_traced_layer(), xa, Wa, ba, match="Explicit")

    @jax.jit
    def gathers(x, W, b):  # right values, output replicated
        print(jax.typeof(x))
        return jax.reshard(layer(x, W, b), P())

    with jax.set_mesh(explicit_data_mesh):
        rejects(check.explicit_layer, gathers, xs, Wr, br, match="right values")


# ---------------------------------------------------------------- chapter 4


def test_shard_map_layer(data_mesh):
    x, W, b, xs, Wr, br = layer_arrays(data_mesh)
    right = jax.shard_map(layer, mesh=data_mesh, in_specs=(P("data"), P(), P()), out_specs=P("data"))
    check.shard_map_layer(right, xs, Wr, br)
    rejects(check.shard_map_layer, jax.jit(layer), xs, Wr, br, match="shard_map")
    W_sh = jax.device_put(W, NamedSharding(data_mesh, P("data")))
    rejects(check.shard_map_layer, right, xs, W_sh, br, match="sharded")

    def gathered(x, W, b):  # right values, but every device returns the whole output
        return jax.lax.all_gather(layer(x, W, b), "data", tiled=True)

    replicated = jax.shard_map(gathered, mesh=data_mesh, in_specs=(P("data"), P(), P()), out_specs=P(), check_vma=False)
    rejects(check.shard_map_layer, replicated, xs, Wr, br, match="right values")


def test_global_reduction(data_mesh):
    xs = jax.device_put(np.arange(64.0, dtype=np.float32).reshape(32, 2) / 10, NamedSharding(data_mesh, P("data")))

    def right_block(blk):
        return jax.lax.psum(jnp.sum(blk**2), "data")

    right = jax.shard_map(right_block, mesh=data_mesh, in_specs=P("data"), out_specs=P())
    check.global_reduction(right, xs)
    # shard_map without the collective: one local sum per device
    local = jax.shard_map(lambda blk: jnp.sum(blk**2, keepdims=True)[None, 0], mesh=data_mesh,
                          in_specs=P("data"), out_specs=P("data"))
    rejects(check.global_reduction, local, xs, match="local sum is not a global")
    # without the collective and with the replication check switched off: device 0's sum only
    first = jax.shard_map(lambda blk: jnp.sum(blk**2), mesh=data_mesh, in_specs=P("data"), out_specs=P(),
                          check_vma=False)
    rejects(check.global_reduction, first, xs, match="one device")
    # no shard_map at all
    rejects(check.global_reduction, jax.jit(lambda v: jnp.sum(v**2)), xs, match="shard_map")
    # wrong quantity
    wrong = jax.shard_map(lambda blk: jax.lax.psum(jnp.sum(blk), "data"), mesh=data_mesh, in_specs=P("data"),
                          out_specs=P())
    rejects(check.global_reduction, wrong, xs, match="sum of squares")
    # replicated data
    x_rep = jax.device_put(np.asarray(xs), NamedSharding(data_mesh, P()))
    rejects(check.global_reduction, right, x_rep, match="replicated")


# ---------------------------------------------------------------- chapter 5


def training_inputs(mesh):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(64, 1)).astype(np.float32)
    y = rng.normal(size=(64, 1)).astype(np.float32)
    params = [(np.ones((1, 8), np.float32), np.zeros(8, np.float32)), (np.ones((8, 1), np.float32), np.zeros(1, np.float32))]
    rows, rep = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
    return x, y, params, jax.device_put(x, rows), jax.device_put(y, rows), jax.device_put(params, rep)


def test_sharded_training(data_mesh):
    x, y, params, xs, ys, ps = training_inputs(data_mesh)
    good = [1.0, 0.6, 0.3, 0.2]
    check.sharded_training(xs, ys, ps, good)
    rejects(check.sharded_training, xs, ys, ps, [1.0, 0.9, 0.8], match="halve")
    rejects(check.sharded_training, xs, ys, ps, [1.0, float("nan")], match="NaN")
    p_sh = jax.tree_util.tree_map(  # weights with 8 rows get split over the devices
        lambda a: jax.device_put(a, NamedSharding(data_mesh, P("data") if a.shape[0] % 8 == 0 else P())), params)
    rejects(check.sharded_training, xs, ys, p_sh, good, match="sharded")
    x_rep = jax.device_put(x, NamedSharding(data_mesh, P()))
    rejects(check.sharded_training, x_rep, ys, ps, good, match="replicated")
    rejects(check.sharded_training, xs, ys, params, good, match="jax.Array")
    rejects(check.sharded_training, xs, ys, jax.tree_util.tree_map(jnp.asarray, params), good, match="one device")


def planted(label: str, seconds: float, cores_busy: float, repeats: int = 5) -> timing.Timing:
    """A Timing of `repeats` calls of `seconds` each, during which the process kept `cores_busy` cores busy."""
    times = tuple(seconds * (1 + 0.01 * i) for i in range(repeats))
    return timing.Timing(label, times, first_call=10 * seconds, cpu_times=tuple(t * cores_busy for t in times))


def test_timing_comparison_takes_the_ideal_from_the_cores_one_device_keeps_busy(data_mesh):
    _, _, _, xs, _, _ = training_inputs(data_mesh)
    cores = physical_cores()
    busy = 1.63 * cores / 2  # as the page measured: 1.63 of 2 cores busy on one device
    base, cand = planted("1 device", 0.010, busy), planted("8 devices", 0.012, cores)
    right = min(8, cores / max(busy, 1.0))
    check.timing_comparison(timing.speedup(base, cand, right, "the cores one device leaves idle"), xs)
    # a separate reading of the cores busy, a few percent off the baseline's own
    check.timing_comparison(timing.speedup(base, cand, min(8, cores / (1.05 * busy))), xs)
    if cores > 1:  # on one core the naive answer is the right one
        rejects(check.timing_comparison, timing.speedup(base, cand, min(8, cores)), xs,
                match=rf"one core for each device.*kept {busy:.2f} of the {cores} cores")
        rejects(check.timing_comparison, timing.speedup(base, cand, 1 / right), xs, match="on this machine it is about")
    rejects(check.timing_comparison, timing.speedup(base, cand, 8), xs, match="device count|one core for each device")
    # where one device keeps a single core busy, one core per device is the right count
    single = planted("1 device", 0.010, 1.0)
    check.timing_comparison(timing.speedup(single, cand, min(8, cores)), xs)
    no_cpu = timing.Timing("1 device", base.times, base.first_call)
    rejects(check.timing_comparison, timing.speedup(no_cpu, cand, right), xs, match="no CPU times")


def test_timing_comparison_rejects_bad_timings(data_mesh):
    _, _, _, xs, _, _ = training_inputs(data_mesh)
    f = jax.jit(lambda v: jnp.sum(v**2))
    base = timing.time_call(f, np.asarray(xs), repeats=3, label="unsharded")
    cand = timing.time_call(f, xs, repeats=3, label="sharded")
    ideal = min(8, physical_cores() / max(base.cores_busy, 1.0))
    check.timing_comparison(timing.speedup(base, cand, ideal, "cores"), xs)
    rejects(check.timing_comparison, timing.speedup(base, base, ideal), xs, match="same timing")
    few = timing.time_call(f, xs, repeats=1)
    rejects(check.timing_comparison, timing.speedup(base, few, ideal), xs, match="at least 3")
    rejects(check.timing_comparison, 1.0, xs, match="timing.speedup")
    x_rep = jax.device_put(np.asarray(xs), NamedSharding(data_mesh, P()))
    rejects(check.timing_comparison, timing.speedup(base, cand, ideal), x_rep, match="replicated")


def test_layer_checks_name_tracing_failures_and_own_errors(data_mesh):
    *_, xs, Wr, br = layer_arrays(data_mesh)

    def python_if(x, W, b):  # a Python `if` on a traced value
        if jnp.sum(x) > 0:
            return layer(x, W, b)
        return layer(x, W, b)

    concrete = jax.shard_map(python_if, mesh=data_mesh, in_specs=(P("data"), P(), P()), out_specs=P("data"))
    rejects(check.shard_map_layer, concrete, xs, Wr, br, match="failed while JAX traced it: TracerBoolConversionError")

    def own_bug(x, W, b):
        raise IndexError("row 99 of my batch")

    rejects(check.shard_map_layer, own_bug, xs, Wr, br, match="raised IndexError: row 99 of my batch")
    rejects(check.global_reduction, lambda v: v.no_such_method(), xs, match="raised AttributeError")


def test_layer_checks_enforce_every_device(data_mesh):
    x, W, b, *_ = layer_arrays(data_mesh)
    half = jax.make_mesh((4,), ("data",), axis_types=data_mesh.axis_types, devices=jax.devices()[:4])
    rows, rep = NamedSharding(half, P("data")), NamedSharding(half, P())
    xs, Wr, br = jax.device_put(x, rows), jax.device_put(W, rep), jax.device_put(b, rep)
    out = jax.jit(layer)(xs, Wr, br)
    rejects(check.data_parallel_layer, out, xs, Wr, br, match="has 4 device.*shows 8: use all of them")


def _trips(steps, num_devices):
    steps = np.asarray(steps)
    return (np.full(num_devices, steps.max(axis=0).sum()),
            np.array([b.max(axis=0).sum() for b in np.array_split(steps, num_devices)]))


def test_device_trips_accepts_the_solution_in_numpy_and_jnp(capsys):
    check.device_trips(_trips)
    check.device_trips(lambda s, d: (jnp.full(d, jnp.max(s, axis=0).sum()),
                                     jnp.stack([jnp.max(b, axis=0).sum() for b in jnp.array_split(s, d)])))
    assert capsys.readouterr().out.count("✔") == 2


def test_device_trips_on_a_given_case():
    steps = np.array([[3, 1], [1, 3], [2, 2]])
    check.device_trips(_trips, cases=[(steps, 2)])  # device 0: chains 0, 1 (3 + 3); device 1: chain 2 (2 + 2)
    with pytest.raises(AssertionError, match=r"expected \[6, 4\]"):
        check.device_trips(lambda s, d: (_trips(s, d)[0], np.array([6, 5])), cases=[(steps, 2)])


@pytest.mark.parametrize("wrong, message", [
    (lambda s, d: _trips(s, d)[::-1], "swapped"),
    (lambda s, d: (_trips(s, d)[1], _trips(s, d)[1]), "one global count"),
    (lambda s, d: (_trips(s, d)[0], [b.max(axis=1).sum() for b in np.array_split(s, d)]), "over draws"),
    (lambda s, d: (_trips(s, d)[0], [b.sum() for b in np.array_split(s, d)]), "added up"),
    (lambda s, d: (_trips(s, d)[0], np.asarray(s).reshape(d, -1, np.shape(s)[1]).max(axis=1).sum(axis=1)),
     "cannot reshape|expected|under jit right"),  # equal blocks only: fails on an uneven split
    (lambda s, d: _trips(s, d)[0], "two arrays|shapes"),
])
def test_device_trips_rejects_plausible_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check.device_trips(wrong)
    with pytest.raises(AssertionError, match="function itself"):
        check.device_trips(_trips(np.ones((2, 2)), 2))


# ---------------------------------------------------------------- two axes: predicted collectives


@pytest.fixture(scope="module")
def program_4x2():
    """The page's manual log-likelihood and gradient (psum_scatter) compiled on a 4 x 2 data x model mesh."""
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1024, 512)).astype(np.float32)
    y = (rng.random(1024) < 0.5).astype(np.float32)
    beta = rng.normal(size=512).astype(np.float32)

    def program(X_block, y_block, beta_block):
        z = jax.lax.psum(X_block @ beta_block, "model")
        total = jax.lax.psum(jnp.sum(y_block * z - jax.nn.softplus(z)), "data")
        grad = jax.lax.psum_scatter(X_block.T @ (y_block - jax.nn.sigmoid(z)), "data", tiled=True)
        return total, grad

    f = jax.jit(jax.shard_map(program, mesh=mesh, in_specs=(P("data", "model"), P("data"), P("model")),
                              out_specs=(P(), P(("model", "data")))))
    args = (jax.device_put(X, NamedSharding(mesh, P("data", "model"))),
            jax.device_put(y, NamedSharding(mesh, P("data"))),
            jax.device_put(beta, NamedSharding(mesh, P("model"))))
    return f.lower(*args).compile().as_text(), dict(mesh.shape)


RIGHT_4X2 = [("all-reduce", "model", 1024), ("all-reduce", "data", 4), ("reduce-scatter", "data", 256)]


def test_predicted_collectives_accepts_the_solution_in_any_order(program_4x2, capsys):
    program, shape = program_4x2
    check.predicted_collectives(RIGHT_4X2, program, shape)
    check.predicted_collectives([list(t) for t in reversed(RIGHT_4X2)], program, shape)
    check.predicted_collectives([(k, a, np.int64(b)) for k, a, b in RIGHT_4X2], program, shape)
    assert capsys.readouterr().out.count("✔") == 3


@pytest.mark.parametrize("wrong, message", [
    ([("all-reduce", "model", 1024), ("all-reduce", "data", 4), ("all-reduce", "data", 256)], "psum_scatter compiles"),
    ([("all-reduce", "model", 1024), ("reduce-scatter", "data", 256)], "2 collectives"),
    ([("all-reduce", "data", 1024), ("all-reduce", "model", 4), ("reduce-scatter", "data", 256)], "wrong mesh axis"),
    ([("all-reduce", "model", 1024), ("all-reduce", "data", 4), ("reduce-scatter", "model", 256)], "not the mesh axes"),
    ([("all-reduce", "model", 1024), ("all-reduce", "data", 4), ("reduce-scatter", "data", 1024)], "whole sum"),
    ([("all-reduce", "model", 256), ("all-reduce", "data", 1), ("reduce-scatter", "data", 64)], "not numbers"),
    ([("all-reduce", "model", 2048), ("all-reduce", "data", 4), ("reduce-scatter", "data", 256)], "2048 bytes"),
    ([("psum", "model", 1024), ("psum", "data", 4), ("psum_scatter", "data", 256)], "not a collective's name"),
    ([("all-reduce", "x", 1024), ("all-reduce", "data", 4), ("reduce-scatter", "data", 256)], "not an axis"),
    ([("all-reduce", "model")], "triple"),
    ("all-reduce", "list of"),
    ([("all-reduce", "model", 1024.5), ("all-reduce", "data", 4), ("reduce-scatter", "data", 256)], "whole number"),
])
def test_predicted_collectives_rejects_plausible_wrong_answers(program_4x2, wrong, message):
    program, shape = program_4x2
    rejects(check.predicted_collectives, wrong, program, shape, match=message)


def test_predicted_collectives_needs_a_compiled_program_and_distinct_axis_sizes(program_4x2):
    program, shape = program_4x2
    rejects(check.predicted_collectives, RIGHT_4X2, "f32[4] all-reduce", shape, match="compiled program's text")
    rejects(check.predicted_collectives, RIGHT_4X2, program, {"data": 2, "model": 2}, match="one size")


def test_predicted_collectives_reads_each_form_of_replica_groups():
    """Written-out groups, the compact iota form (transposed too) and the named-mesh form, tuple results."""
    program = "\n".join([
        "HloModule m",
        "  %a = f32[512]{0} all-reduce(%p), channel_id=1, replica_groups={{0,1,2,3},{4,5,6,7}}, to_apply=%add",
        "  %b = f32[64]{0} reduce-scatter(%q), channel_id=2, replica_groups=[4,2]<=[2,4]T(1,0), dimensions={0}",
        "  ROOT %c = (f32[], f32[128]{0}) all-reduce(%r, %s), replica_groups=mesh['axis_0'=2,'axis_1'=4] {'axis_0'}, x",
        "  %d = f32[1024,128]{1,0} all-gather-start(%t), replica_groups=mesh['axis_0'=8] {'axis_0'}, dimensions={0}",
    ])
    shape = {"data": 2, "model": 4}
    check.predicted_collectives([("all-reduce", "model", 2048), ("reduce-scatter", "data", 256),
                                 ("all-reduce", "data", 516), ("all-gather", "data+model", 1024 * 128 * 4)],
                                program, shape)
