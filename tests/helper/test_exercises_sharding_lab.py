"""Unit tests of the sharding lab's exercise checks: right answers pass, wrong ones are rejected."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding

from parallel_mcmc import measure
from parallel_mcmc.devices import physical_cores
from parallel_mcmc.exercises import sharding_lab as check
from parallel_mcmc.exercises.common import WrongType
from parallel_mcmc.models import regression
from parallel_mcmc.models.regression import logistic_log_likelihood as log_likelihood
from rejecting import rejects, require_eight_devices

P = jax.P
require_eight_devices()


def wrong_type(fn, *args, match: str, **kwargs) -> None:
    """``fn(*args, **kwargs)`` refuses an answer of the wrong type: a ``WrongType`` (a ``TypeError`` that the
    grader reports as a failed check) whose message matches ``match``, never a crash of the check's own code."""
    with pytest.raises(TypeError, match=match) as err:
        fn(*args, **kwargs)
    assert isinstance(err.value, WrongType)


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


def lab_arrays(mesh, num_rows=256):
    """The lab's logistic regression: data X, y split by rows over `mesh`, coefficients beta replicated."""
    data = regression.make_logistic_data(num_rows, 4, seed=3)
    beta = np.array([0.4, -0.8, 0.3, 1.1], np.float32)
    rows, rep = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
    return data.X, data.y, beta, jax.device_put(data.X, rows), jax.device_put(data.y, rows), jax.device_put(beta, rep)


value_and_grad = jax.jit(jax.value_and_grad(log_likelihood))


def formula(beta, X, y, out_sharding=None):
    """The log-likelihood and its gradient by the formula X.T (y - sigmoid(X beta))."""
    z = X @ beta
    grad = jnp.matmul(X.T, y - jax.nn.sigmoid(z), out_sharding=out_sharding)
    return jnp.sum(y * z - jax.nn.softplus(z)), grad


def on_rows(block, mesh, out_specs, check_vma=True):
    """`block(beta, X, y)` as a shard_map over `mesh`: beta replicated, the rows of X and y split."""
    return jax.jit(jax.shard_map(block, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=out_specs,
                                 check_vma=check_vma))


# ---------------------------------------------------------------- chapter 1


def test_place_on_mesh(xy, A):
    check.place_on_mesh(jax.device_put(A, NamedSharding(xy, P("x", "y"))), A, xy)
    rejects(check.place_on_mesh, jax.device_put(A, NamedSharding(xy, P())), A, xy, match="replicated")
    rejects(check.place_on_mesh, jax.device_put(A, NamedSharding(xy, P("y", "x"))), A, xy, match="'x'")
    rejects(check.place_on_mesh, jnp.asarray(A), A, xy, match="one device")
    rejects(check.place_on_mesh, jax.device_put(A + 1, NamedSharding(xy, P("x", "y"))), A, xy, match="values")


def test_place_on_mesh_more_wrong_answers_and_types(xy, A):
    # only the rows split: the columns left whole
    rejects(check.place_on_mesh, jax.device_put(A, NamedSharding(xy, P("x"))), A, xy, match="columns over 'y'")
    A_sh = jax.device_put(A, NamedSharding(xy, P("x", "y")))
    wrong_type(check.place_on_mesh, A, A, xy, match=r"jax.Array, got ndarray. A NumPy array lives on no device")
    wrong_type(check.place_on_mesh, None, A, xy, match="jax.Array, got NoneType")
    wrong_type(check.place_on_mesh, A_sh, A, dict(xy.shape), match="jax.sharding.Mesh.*dict")


def test_inspect_sharding(xy, A):
    A_sh = jax.device_put(A, NamedSharding(xy, P("x", "y")))
    check.inspect_sharding(A_sh, A_sh.devices(), (2, 4))
    check.inspect_sharding(A_sh, list(A_sh.devices()), A_sh.addressable_shards[0].data.shape)
    rejects(check.inspect_sharding, A_sh, A_sh.devices(), (4, 16), match="global shape")
    rejects(check.inspect_sharding, A_sh, A_sh.devices(), (4, 2), match="block")
    rejects(check.inspect_sharding, A_sh, {jax.devices()[0]}, (2, 4), match="devices")
    rejects(check.inspect_sharding, jax.device_put(A, NamedSharding(xy, P("x"))), A_sh.devices(), (2, 16), match="P\\('x', 'y'\\)")


def test_inspect_sharding_more_wrong_answers_and_types(xy, A):
    A_sh = jax.device_put(A, NamedSharding(xy, P("x", "y")))
    check.inspect_sharding(A_sh, A_sh.sharding.device_set, np.array([2, 4]))
    rejects(check.inspect_sharding, A_sh, A_sh.devices(), (4, 2), match="rows and the columns swapped")
    rejects(check.inspect_sharding, A_sh, {d.id for d in A_sh.devices()}, (2, 4), match="device ids")
    wrong_type(check.inspect_sharding, A_sh, len(A_sh.devices()), (2, 4), match=r"set of the devices.*\(int\)")
    wrong_type(check.inspect_sharding, A_sh, A_sh.devices, (2, 4), match="method not called")
    wrong_type(check.inspect_sharding, A_sh, A_sh.devices(), None, match="tuple of whole numbers.*NoneType")
    wrong_type(check.inspect_sharding, A_sh, A_sh.devices(), "2 x 4", match="tuple of whole numbers.*str")
    wrong_type(check.inspect_sharding, A_sh, A_sh.devices(), 8, match="tuple of whole numbers.*int")


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


def test_partition_specs_more_wrong_answers_and_types(xy):
    # copies counted as the number of distinct blocks
    rejects(check.partition_specs, {**RIGHT_SPECS, P("x", None): ((2, 16), 2)}, xy, (4, 16), match="P\\('x', None\\).*copies")
    # every device counted as holding a copy
    rejects(check.partition_specs, {**RIGHT_SPECS, P("x", "y"): ((2, 4), 8)}, xy, (4, 16), match="copies")
    wrong_type(check.partition_specs, list(RIGHT_SPECS.items()), xy, (4, 16), match="should be a dict.*list")
    wrong_type(check.partition_specs, {str(k): v for k, v in RIGHT_SPECS.items()}, xy, (4, 16),
               match=r"\(str\) of `predictions` should be the PartitionSpec itself")
    wrong_type(check.partition_specs, {**RIGHT_SPECS, P("x", "y"): (2, 4)}, xy, (4, 16),
               match="first item should be the block's shape.*int")
    wrong_type(check.partition_specs, {**RIGHT_SPECS, P("x", "y"): ((2, 4), None)}, xy, (4, 16),
               match="number of copies.*NoneType")
    wrong_type(check.partition_specs, {**RIGHT_SPECS, P("x", "y"): (2, 4, 1)}, xy, (4, 16), match="a pair")
    wrong_type(check.partition_specs, RIGHT_SPECS, xy, None, match="`shape` should be.*NoneType")


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


def test_auto_shardings_more_wrong_answers_and_types(xy, xy_explicit):
    B = jax.device_put(np.ones((4, 8), np.float32), NamedSharding(xy, P("x", None)))
    C = jax.device_put(np.ones((4, 8), np.float32), NamedSharding(xy, P(None, "y")))
    C_x = jax.device_put(np.ones((4, 8), np.float32), NamedSharding(xy, P(None, "x")))
    rejects(check.auto_shardings, B, C_x, xy, P("x", "y"), P(None, "y"), match="`C`.*mesh axis 'y'")
    # the matrix product predicted as the elementwise sum: rows over 'x' too
    rejects(check.auto_shardings, B, C, xy, P("x", "y"), P("x", None), match="B.T @ C")
    # C on a mesh with other axis types: the check's own computation cannot run, and says why
    C_explicit = jax.device_put(np.ones((4, 8), np.float32), NamedSharding(xy_explicit, P(None, "y")))
    rejects(check.auto_shardings, B, C_explicit, xy, P("x", "y"), P(None, "y"), match="cannot be added.*chapter's `mesh`")
    # a mesh axis the mesh does not have
    rejects(check.auto_shardings, B, C, xy, P("z"), P(None, "y"), match="not a valid PartitionSpec for the mesh: JAX says: .*z")
    wrong_type(check.auto_shardings, B, C, xy, "P('x', 'y')", P(None, "y"), match="PartitionSpec, P.*str")
    wrong_type(check.auto_shardings, B, C, xy, NamedSharding(xy, P("x", "y")), P(None, "y"), match=r"\.spec")
    wrong_type(check.auto_shardings, B, C, xy, P("x", "y"), None, match="B.T @ C.*NoneType")
    wrong_type(check.auto_shardings, np.ones((4, 8), np.float32), C, xy, P("x", "y"), P(None, "y"),
               match="`B` should be a jax.Array")


def test_data_parallel_log_likelihood(data_mesh):
    X, y, beta, Xs, ys, br = lab_arrays(data_mesh)
    value, grad = value_and_grad(br, Xs, ys)
    program = value_and_grad.lower(br, Xs, ys).compile().as_text()
    check.data_parallel_log_likelihood(value, grad, br, Xs, ys, program)
    # the data replicated where they should be split by rows
    X_rep = jax.device_put(X, NamedSharding(data_mesh, P()))
    rejects(check.data_parallel_log_likelihood, *value_and_grad(br, X_rep, ys), br, X_rep, ys, program,
            match="replicated")
    # the labels left whole on every device
    y_rep = jax.device_put(y, NamedSharding(data_mesh, P()))
    rejects(check.data_parallel_log_likelihood, value, grad, br, Xs, y_rep, program, match="split it by rows like `X`")
    # the coefficients left on one device
    rejects(check.data_parallel_log_likelihood, value, grad, jnp.asarray(beta), Xs, ys, program, match="one device")
    # the results of the unsharded call next to the sharded arguments
    one_value, one_grad = value_and_grad(beta, X, y)
    rejects(check.data_parallel_log_likelihood, one_value, one_grad, br, Xs, ys, program, match="on one device")
    # the program of the unsharded call: no all-reduce
    one_program = value_and_grad.lower(beta, X, y).compile().as_text()
    rejects(check.data_parallel_log_likelihood, value, grad, br, Xs, ys, one_program, match="no all-reduce")
    wrong_type(check.data_parallel_log_likelihood, value, grad, br, Xs, ys, value_and_grad, match="text of the compiled")
    wrong_type(check.data_parallel_log_likelihood, value, grad, br, Xs, ys, value_and_grad.lower(br, Xs, ys).compile(),
               match="compiled.*itself; give its text")
    wrong_type(check.data_parallel_log_likelihood, float(value), grad, br, Xs, ys, program,
               match="`value` should be a jax.Array, got float")
    wrong_type(check.data_parallel_log_likelihood, value, grad, br, X, ys, program, match="`X` should be a jax.Array")
    # a program that gathers the data first
    everywhere = jax.lax.with_sharding_constraint if data_mesh.axis_types[0] == AxisType.Auto else jax.reshard
    with jax.set_mesh(data_mesh):
        gathering = jax.jit(lambda b, X, y: value_and_grad(b, everywhere(X, P()), everywhere(y, P())))
        gather_program = gathering.lower(br, Xs, ys).compile().as_text()
    rejects(check.data_parallel_log_likelihood, value, grad, br, Xs, ys, gather_program, match="all-gather")
    # wrong values: a mean over rows, the negative log-likelihood, the two swapped
    rejects(check.data_parallel_log_likelihood, value / len(y), grad / len(y), br, Xs, ys, program, match="mean")
    rejects(check.data_parallel_log_likelihood, -value, -grad, br, Xs, ys, program, match="wrong sign")
    rejects(check.data_parallel_log_likelihood, grad, value, br, Xs, ys, program, match="other way round")


def test_data_parallel_log_likelihood_wrong_mesh(xy):
    data = regression.make_logistic_data(256, 4, seed=3)
    X, y, beta = data.X, data.y, data.beta_true
    Xs, ys = jax.device_put(X, NamedSharding(xy, P("x"))), jax.device_put(y, NamedSharding(xy, P("x")))
    br = jax.device_put(beta, NamedSharding(xy, P()))
    value, grad = value_and_grad(br, Xs, ys)
    rejects(check.data_parallel_log_likelihood, value, grad, br, Xs, ys, value_and_grad.lower(br, Xs, ys).compile().as_text(),
            match="one axis")


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


def test_explicit_product_more_wrong_answers_and_types(xy_explicit):
    a = jax.device_put(np.arange(4.0, dtype=np.float32).reshape(4, 1), NamedSharding(xy_explicit, P("x", None)))
    b = jax.device_put(np.arange(8.0, dtype=np.float32).reshape(1, 8), NamedSharding(xy_explicit, P(None, "y")))
    prod = a * b
    check.explicit_product(a, b, prod, "'float32[4@x,8@y]'")  # the quotes of its repr
    rejects(check.explicit_product, a, b, prod, "float32[4@y,8@x]", match="mesh axes swapped")
    rejects(check.explicit_product, a, b, prod, "float32[2,2]", match="one device's block")
    rejects(check.explicit_product, a, b, a + b, "float32[4@x,8@y]", match="elementwise product")
    wrong_type(check.explicit_product, a, b, prod, jax.typeof(prod), match="type object.*as a string")
    wrong_type(check.explicit_product, a, b, prod, None, match="should be a string.*NoneType")
    wrong_type(check.explicit_product, a, b, np.asarray(prod), "float32[4@x,8@y]", match="`prod` should be a jax.Array")


def printing(fn):
    """`fn` jitted, printing the types of its inputs while traced."""
    @jax.jit
    def traced(beta, X, y):
        print("beta:", jax.typeof(beta), " X:", jax.typeof(X), " y:", jax.typeof(y))
        return fn(beta, X, y)

    return traced


def compiled(fn, *args):
    return fn.lower(*args).compile().as_text()


def test_explicit_log_likelihood(explicit_data_mesh, data_mesh):
    X, y, beta, Xs, ys, br = lab_arrays(explicit_data_mesh)
    betas = [np.array([0.1, 0.2, -0.3, 0.0], np.float32), np.array([2.0, -1.0, 0.5, 3.0], np.float32)]
    with jax.set_mesh(explicit_data_mesh):
        right = printing(lambda b, X, y: formula(b, X, y, out_sharding=P()))
        check.explicit_log_likelihood(right, br, Xs, ys, compiled(right, br, Xs, ys), cases=betas)
        by_autodiff = printing(jax.value_and_grad(log_likelihood))
        check.explicit_log_likelihood(by_autodiff, br, Xs, ys, compiled(by_autodiff, br, Xs, ys), cases=betas)
        program = compiled(right, br, Xs, ys)
        # no types printed
        quiet = jax.jit(lambda b, X, y: formula(b, X, y, out_sharding=P()))
        rejects(check.explicit_log_likelihood, quiet, br, Xs, ys, program, match="print")
        # the data gathered on every device to make the product unambiguous: right values, a costly program
        gathers = printing(lambda b, X, y: formula(b, jax.reshard(X, P()), jax.reshard(y, P())))
        rejects(check.explicit_log_likelihood, gathers, br, Xs, ys, compiled(gathers, br, Xs, ys), match="all-gather")
        # the residuals gathered instead
        def residuals_gathered(b, X, y):
            z = X @ b
            return jnp.sum(y * z - jax.nn.softplus(z)), X.T @ jax.reshard(y - jax.nn.sigmoid(z), P())

        gathers_r = printing(residuals_gathered)
        rejects(check.explicit_log_likelihood, gathers_r, br, Xs, ys, compiled(gathers_r, br, Xs, ys), match="all-gather")
        # the gradient of the negative log-likelihood
        flipped = printing(lambda b, X, y: (lambda v, g: (v, -g))(*formula(b, X, y, out_sharding=P())))
        rejects(check.explicit_log_likelihood, flipped, br, Xs, ys, program, match="gradient has the wrong sign")
        # right on the chapter's beta only
        fixed = printing(lambda b, X, y: formula(br, X, y, out_sharding=P()))
        check.explicit_log_likelihood(fixed, br, Xs, ys, program)
        rejects(check.explicit_log_likelihood, fixed, br, Xs, ys, program, cases=betas, match=r"fn\(beta=\[0.1")
        # the function's output where the function belongs, a dict of the two, the compiled object as the program
        wrong_type(check.explicit_log_likelihood, right(br, Xs, ys), br, Xs, ys, program, match=r"\(tuple\), not a function: pass the function itself")
        as_dict = printing(lambda b, X, y: dict(zip(("value", "grad"), formula(b, X, y, out_sharding=P()))))
        wrong_type(check.explicit_log_likelihood, as_dict, br, Xs, ys, program, match="returned.*dict.*two values")
        wrong_type(check.explicit_log_likelihood, right, br, Xs, ys, right.lower(br, Xs, ys).compile(),
                   match="give its text")
    # the data replicated
    X_rep = jax.device_put(X, NamedSharding(explicit_data_mesh, P()))
    rejects(check.explicit_log_likelihood, right, br, X_rep, ys, program, match="replicated")
    if data_mesh.axis_types[0] == AxisType.Auto:
        *_, Xa, ya, ba = lab_arrays(data_mesh)
        rejects(check.explicit_log_likelihood, printing(value_and_grad), ba, Xa, ya, program, match="Explicit")


# ---------------------------------------------------------------- chapter 4


def row_terms(b, X, y):
    z = X @ b
    return y * z - jax.nn.softplus(z)


def test_shard_map_row_terms(data_mesh):
    X, y, beta, Xs, ys, br = lab_arrays(data_mesh)
    betas = [np.array([0.1, 0.2, -0.3, 0.0], np.float32)]
    right = on_rows(row_terms, data_mesh, P("data"))
    check.shard_map_row_terms(right, br, Xs, ys, cases=betas)
    rejects(check.shard_map_row_terms, jax.jit(row_terms), br, Xs, ys, match="shard_map")
    summed = on_rows(lambda b, X, y: jax.lax.psum(jnp.sum(row_terms(b, X, y)), "data"), data_mesh, P())
    rejects(check.shard_map_row_terms, summed, br, Xs, ys, match="returned the log-likelihood")
    local = on_rows(lambda b, X, y: jnp.sum(row_terms(b, X, y), keepdims=True), data_mesh, P("data"))
    rejects(check.shard_map_row_terms, local, br, Xs, ys, match="one sum per device")
    gathered = on_rows(lambda b, X, y: jax.lax.all_gather(row_terms(b, X, y), "data", tiled=True), data_mesh, P(),
                       check_vma=False)
    rejects(check.shard_map_row_terms, gathered, br, Xs, ys, match="laid out like the rows")
    negative = on_rows(lambda b, X, y: -row_terms(b, X, y), data_mesh, P("data"))
    rejects(check.shard_map_row_terms, negative, br, Xs, ys, match="wrong sign")
    fixed = on_rows(lambda b, X, y: row_terms(beta, X, y), data_mesh, P("data"), check_vma=False)
    check.shard_map_row_terms(fixed, br, Xs, ys)
    rejects(check.shard_map_row_terms, fixed, br, Xs, ys, cases=betas, match=r"fn\(beta=\[0.1")
    # wrong types: the terms themselves, the terms beside their sum, the terms in a dict
    wrong_type(check.shard_map_row_terms, right(br, Xs, ys), br, Xs, ys, match=r"\(ArrayImpl\), not a function")
    both = on_rows(lambda b, X, y: (row_terms(b, X, y), jax.lax.psum(jnp.sum(row_terms(b, X, y)), "data")), data_mesh,
                   (P("data"), P()))
    wrong_type(check.shard_map_row_terms, both, br, Xs, ys, match="returned.*tuple.*one array")
    wrong_type(check.shard_map_row_terms, lambda b, X, y: {"terms": right(b, X, y)}, br, Xs, ys,
               match=r"returned \{'terms': .*\(dict\); return one array")


def local_formula(b, X, y):
    """One device's rows: their log-likelihood and its gradient, by the formula."""
    return formula(b, X, y)


def test_shard_map_log_likelihood(data_mesh):
    X, y, beta, Xs, ys, br = lab_arrays(data_mesh)
    betas = [np.array([0.1, 0.2, -0.3, 0.0], np.float32), np.array([2.0, -1.0, 0.5, 3.0], np.float32)]
    right = on_rows(lambda b, X, y: jax.lax.psum(local_formula(b, X, y), "data"), data_mesh, (P(), P()))
    check.shard_map_log_likelihood(right, br, Xs, ys, cases=betas)
    grad_of_psum = on_rows(jax.value_and_grad(lambda b, X, y: jax.lax.psum(log_likelihood(b, X, y), "data")),
                           data_mesh, (P(), P()))
    check.shard_map_log_likelihood(grad_of_psum, br, Xs, ys, cases=betas)
    # no shard_map at all
    rejects(check.shard_map_log_likelihood, value_and_grad, br, Xs, ys, match="shard_map")
    # jax.value_and_grad of each device's rows, then a psum: the gradient is added twice
    twice = on_rows(lambda b, X, y: jax.lax.psum(jax.value_and_grad(log_likelihood)(b, X, y), "data"), data_mesh,
                    (P(), P()))
    rejects(check.shard_map_log_likelihood, twice, br, Xs, ys, match="8 times too large")
    # no collective: one sum per device, side by side
    side_by_side = on_rows(lambda b, X, y: jax.tree.map(lambda a: a[None], local_formula(b, X, y)), data_mesh,
                           (P("data"), P("data")))
    rejects(check.shard_map_log_likelihood, side_by_side, br, Xs, ys, match="8 log-likelihoods, one per device")
    # no collective and the replication check off: device 0's rows
    first = on_rows(local_formula, data_mesh, (P(), P()), check_vma=False)
    rejects(check.shard_map_log_likelihood, first, br, Xs, ys, match="one device's rows")
    # the mean over the devices
    mean = on_rows(lambda b, X, y: jax.lax.pmean(local_formula(b, X, y), "data"), data_mesh, (P(), P()))
    rejects(check.shard_map_log_likelihood, mean, br, Xs, ys, match="pmean")
    # the total, once per device
    per_device = on_rows(lambda b, X, y: jax.tree.map(lambda a: a[None], jax.lax.psum(local_formula(b, X, y), "data")),
                         data_mesh, (P("data"), P("data")), check_vma=False)
    rejects(check.shard_map_log_likelihood, per_device, br, Xs, ys, match="once per device")
    # right numbers without a psum
    def gathered(b, X, y):
        v, g = local_formula(b, X, y)
        return (jnp.sum(jax.lax.all_gather(v, "data")), jnp.sum(jax.lax.all_gather(g, "data"), axis=0))

    rejects(check.shard_map_log_likelihood, on_rows(gathered, data_mesh, (P(), P()), check_vma=False), br, Xs, ys,
            match="without a psum")
    # right on the chapter's beta only
    fixed = on_rows(lambda b, X, y: jax.lax.psum(local_formula(beta, X, y), "data"), data_mesh, (P(), P()),
                    check_vma=False)
    check.shard_map_log_likelihood(fixed, br, Xs, ys)
    rejects(check.shard_map_log_likelihood, fixed, br, Xs, ys, cases=betas, match=r"fn\(beta=\[0.1")
    # the data replicated
    X_rep = jax.device_put(X, NamedSharding(data_mesh, P()))
    rejects(check.shard_map_log_likelihood, right, br, X_rep, ys, match="replicated")
    # wrong types: the output where the function belongs, a dict, the log-likelihood alone
    wrong_type(check.shard_map_log_likelihood, right(br, Xs, ys), br, Xs, ys, match=r"\(tuple\), not a function: pass the function itself")
    as_dict = on_rows(lambda b, X, y: dict(zip(("value", "grad"), jax.lax.psum(local_formula(b, X, y), "data"))),
                      data_mesh, {"value": P(), "grad": P()})
    wrong_type(check.shard_map_log_likelihood, as_dict, br, Xs, ys, match="returned.*dict.*two values")
    alone = on_rows(lambda b, X, y: jax.lax.psum(local_formula(b, X, y)[0], "data"), data_mesh, P())
    wrong_type(check.shard_map_log_likelihood, alone, br, Xs, ys, match="returned.*ArrayImpl.*two values")


# ---------------------------------------------------------------- chapter 5: data-parallel log-posterior gradients


def log_posterior(beta, X, y):
    """The page's model: a linear regression with unit noise and a unit normal prior."""
    return -0.5 * jnp.sum((y - X @ beta) ** 2) - 0.5 * jnp.sum(beta**2)


@jax.jit
def hmc_chain(key, X, y):
    """The page's chain, shorter: BlackJAX HMC with a fixed step size and the mass matrix scaled to the rows."""
    import blackjax

    hmc = blackjax.hmc(lambda b: log_posterior(b, X, y), step_size=0.3, num_integration_steps=5,
                       inverse_mass_matrix=jnp.full(X.shape[1], 1.0 / X.shape[0]))

    def one_draw(state, k):
        state, info = hmc.step(k, state)
        return state, (state.position, info.is_accepted)

    return jax.lax.scan(one_draw, hmc.init(jnp.zeros(X.shape[1])), jax.random.split(key, 40))[1]


def auto_mesh(k):
    return jax.make_mesh((k,), ("data",), axis_types=(AxisType.Auto,), devices=jax.devices()[:k])


@pytest.fixture(scope="module")
def chains():
    """The rows on one device, split over 4 and over 8 devices; the draws and programs of the chain on them."""
    data = regression.make_linear_data(256, 5, seed=4)
    X, y = jnp.asarray(data.X), jnp.asarray(data.y)
    key = jax.random.key(0)
    placed = {k: jax.device_put((X, y), NamedSharding(auto_mesh(k), P("data"))) for k in (4, 8)}
    out = {"X": X, "y": y, "key": key, "placed": placed, "one": hmc_chain(key, X, y)[0],
           "four": hmc_chain(key, *placed[4])[0]}
    out["programs"] = {name: hmc_chain.lower(key, *args).compile().as_text()
                       for name, args in (("one", (X, y)), ("four", placed[4]), ("eight", placed[8]))}
    return out


def test_sharded_chain_accepts_the_chain_on_rows_split_over_four_devices(chains, capsys):
    X4, y4 = chains["placed"][4]
    check.sharded_chain(chains["four"], X4, y4, chains["programs"]["four"], chains["one"])
    assert "✔ sharded chain" in capsys.readouterr().out


def test_sharded_chain_rejects_wrong_layouts_draws_and_programs(chains):
    X4, y4 = chains["placed"][4]
    X, y, key, draws, one, programs = (chains[n] for n in ("X", "y", "key", "four", "one", "programs"))
    args = (X4, y4, programs["four"], one)
    # the rows replicated, or split over all 8 devices, or the responses left on one device
    rejects(check.sharded_chain, draws, jax.device_put(X, NamedSharding(auto_mesh(4), P())), y4, *args[2:],
            match="should be split by rows")
    rejects(check.sharded_chain, draws, *chains["placed"][8], *args[2:], match="has 8 device.*asks for 4")
    rejects(check.sharded_chain, draws, X4, y, *args[2:], match="`y_train` is on one device only.*split it by rows")
    # the one-device chain's draws (run on the unsharded data), another key's, a chain on a quarter of the rows
    rejects(check.sharded_chain, one, *args, match="on one device only.*chain ran on data on one device")
    rejects(check.sharded_chain, hmc_chain(jax.random.key(9), X4, y4)[0], *args,
            match="differ from the one-device chain's.*same `key`")
    quarter = jax.device_put((X[:64], y[:64]), NamedSharding(auto_mesh(4), P("data")))
    rejects(check.sharded_chain, hmc_chain(key, *quarter)[0], *args, match="as spread as.*about 1/4 of the rows")
    rejects(check.sharded_chain, draws.T, *args, match="transposed")
    # the program of the one-device chain, of one gradient, of the chain on 8 devices
    rejects(check.sharded_chain, draws, X4, y4, programs["one"], one, match="no all-reduce")
    gradient = jax.jit(jax.value_and_grad(log_posterior)).lower(
        jax.device_put(jnp.zeros(5), NamedSharding(auto_mesh(4), P())), X4, y4).compile().as_text()
    rejects(check.sharded_chain, draws, X4, y4, gradient, one, match="outside any loop.*one gradient")
    rejects(check.sharded_chain, draws, X4, y4, programs["eight"], one, match="runs on 8 devices, the data on 4")


def test_sharded_chain_refuses_answers_of_the_wrong_type(chains):
    X4, y4 = chains["placed"][4]
    draws, one, program = chains["four"], chains["one"], chains["programs"]["four"]
    wrong_type(check.sharded_chain, None, X4, y4, program, one, match="should be a jax.Array, got NoneType")
    wrong_type(check.sharded_chain, hmc_chain(chains["key"], X4, y4), X4, y4, program, one,
               match="tuple of 2.*keep the draws")
    wrong_type(check.sharded_chain, hmc_chain, X4, y4, program, one, match="not the chain")
    wrong_type(check.sharded_chain, np.asarray(draws), X4, y4, program, one, match="NumPy array lives on no device")
    wrong_type(check.sharded_chain, draws, np.asarray(X4), y4, program, one, match="`X_train` should be a jax.Array")
    compiled = hmc_chain.lower(chains["key"], X4, y4).compile()
    wrong_type(check.sharded_chain, draws, X4, y4, compiled, one, match="compiled .* program itself; give its text")
    wrong_type(check.sharded_chain, draws, X4, y4, None, one, match="text of the chain's compiled program")


def planted(label: str, times_ms, cores_busy: float = 1.0) -> measure.Timing:
    """A Timing of calls of ``times_ms`` milliseconds (one number: five calls 1% apart), during which the process
    kept ``cores_busy`` cores busy."""
    times = tuple(1e-3 * t for t in (times_ms if isinstance(times_ms, tuple) else
                                     [times_ms * (1 + 0.01 * i) for i in range(5)]))
    return measure.Timing(label, times, first_call=10 * times[0], cpu_times=tuple(t * cores_busy for t in times))


def timing_case():
    """One device, 8 devices and the model's pieces: a 0.6 ms fixed cost, a slice 0.45 ms of which 0.15 ms is a
    call's own; the baseline's repeats spread out, so that an ideal of medians differs from one of the fastest."""
    base, cand = planted("1 device", (2.0, 4.0, 4.0, 4.0, 4.0)), planted("8 devices", 2.6)
    pieces = {"slice": planted("slice", 0.45), "row": planted("row", 0.15), "fixed": planted("fixed", 0.6)}
    return base, cand, pieces


def split_8(work, fixed, cores, busy=1.0):
    return measure.split_call_time(work, 8, cores, fixed, cores_busy=busy)


def test_timing_comparison_takes_the_models_ideal_with_its_fixed_cost(data_mesh, capsys):
    _, _, _, xs, _, _ = lab_arrays(data_mesh)
    base, cand, pieces = timing_case()
    cores = physical_cores()
    work, fixed = 0.30e-3, pieces["fixed"].best
    right = base.best / split_8(work, fixed, cores)
    check.timing_comparison(measure.speedup(base, cand, right, "fixed cost, then 8 slices"), pieces, xs)
    check.timing_comparison(measure.speedup(base, cand, 1.02 * right), pieces, xs)  # rounding, a reading a bit off
    assert capsys.readouterr().out.count("✔ timing comparison with the model's ideal") == 2
    wrong = {  # ideal: the message that names the slip
        base.median / cand.median: "measured speedup",
        base.best / cand.best: "measured speedup",
        1 / right: "upside down",
        cand.best / split_8(work, fixed, cores): "baseline and the candidate are swapped",
        base.best / split_8(work, 0.0, cores): "leaves out the fixed cost",
        min(8, cores): "leaves out the fixed cost",
        8: "leaves out the fixed cost",
        base.best / split_8(pieces["slice"].best, fixed, cores): "slice's whole time.*less pieces\\['row'\\]",
        base.median / split_8(pieces["slice"].median - pieces["row"].median, pieces["fixed"].median, cores):
            "median repeats",
        3.3 * right: "but the model gives",
    }
    for ideal, message in wrong.items():
        # on some core counts two slips give nearly the same number: then either message is a fair diagnosis
        alike = any(abs(other - ideal) <= 0.06 * ideal for other, m in wrong.items() if m != message)
        rejects(check.timing_comparison, measure.speedup(base, cand, ideal), pieces, xs, match="." if alike else message)


def test_timing_comparison_rejects_bad_timings_and_wrong_types(data_mesh):
    X, _, _, xs, _, _ = lab_arrays(data_mesh)
    base, cand, pieces = timing_case()
    right = base.best / split_8(0.30e-3, pieces["fixed"].best, physical_cores())
    good = measure.speedup(base, cand, right)
    rejects(check.timing_comparison, measure.speedup(base, base, right), pieces, xs, match="same timing")
    few = measure.Timing("8 devices", cand.times[:1], cand.first_call, cand.cpu_times[:1])
    rejects(check.timing_comparison, measure.speedup(base, few, right), pieces, xs, match="at least 3")
    no_cpu = measure.Timing("slice", pieces["slice"].times, pieces["slice"].first_call)
    rejects(check.timing_comparison, good, {**pieces, "slice": no_cpu}, xs, match="no CPU times")
    rejects(check.timing_comparison, good, {**pieces, "row": pieces["slice"], "slice": pieces["row"]}, xs,
            match="took longer than.*swapped")
    x_rep = jax.device_put(X, NamedSharding(data_mesh, P()))
    rejects(check.timing_comparison, good, pieces, x_rep, match="replicated")
    wrong_type(check.timing_comparison, base, pieces, xs, match="one Timing; time the gradient on both")
    wrong_type(check.timing_comparison, 1.0, pieces, xs, match="measure.speedup.*float")
    wrong_type(check.timing_comparison, measure.Speedup(base, cand, None), pieces, xs,
               match="`grad_speedup.ideal` should be a number")
    wrong_type(check.timing_comparison, good, list(pieces.values()), xs, match="`pieces` should be a dict")
    wrong_type(check.timing_comparison, good, {"slice": pieces["slice"], "row": pieces["row"]}, xs,
               match="`pieces` has no 'fixed'")
    wrong_type(check.timing_comparison, good, {**pieces, "row": 0.15e-3}, xs,
               match=r"`pieces\['row'\]` should be a Timing")
    wrong_type(check.timing_comparison, good, pieces, np.asarray(X), match="`X_ex_sh` should be a jax.Array")


def test_timing_comparison_on_real_timings(data_mesh):
    X, y, beta, Xs, ys, br = lab_arrays(data_mesh)
    f = jax.jit(jax.value_and_grad(log_likelihood))
    X1, y1, b1 = (jnp.asarray(a) for a in (X, y, beta))
    t_one, t_eight = (measure.time_call(f, *args, repeats=3) for args in ((b1, X1, y1), (br, Xs, ys)))
    pieces = {"slice": measure.time_call(f, b1, X1[:32], y1[:32], repeats=3),
              "row": measure.time_call(f, b1, X1[:1], y1[:1], repeats=3),
              "fixed": measure.time_call(f, br, *jax.device_put((X[:8], y[:8]), Xs.sharding), repeats=3)}
    if pieces["row"].best > pieces["slice"].best:  # a busy machine: the one-row call at most the slice's
        pieces["row"] = pieces["slice"]
    work = pieces["slice"].best - pieces["row"].best
    ideal = t_one.best / measure.split_call_time(work, 8, physical_cores(), pieces["fixed"].best,
                                                 cores_busy=pieces["slice"].cores_busy)
    check.timing_comparison(measure.speedup(t_one, t_eight, ideal, "the model"), pieces, Xs)


def test_log_likelihood_checks_name_tracing_failures_and_own_errors(data_mesh):
    *_, Xs, ys, br = lab_arrays(data_mesh)

    def python_if(b, X, y):  # a Python `if` on a traced value
        if jnp.sum(X) > 0:
            return row_terms(b, X, y)
        return row_terms(b, X, y)

    concrete = on_rows(python_if, data_mesh, P("data"))
    rejects(check.shard_map_row_terms, concrete, br, Xs, ys, match="failed while JAX traced it: TracerBoolConversionError")

    def own_bug(b, X, y):
        raise IndexError("row 99 of my batch")

    rejects(check.shard_map_row_terms, own_bug, br, Xs, ys, match="raised IndexError: row 99 of my batch")
    rejects(check.shard_map_log_likelihood, lambda b, X, y: X.no_such_method(), br, Xs, ys, match="raised AttributeError")


def test_log_likelihood_checks_enforce_every_device(data_mesh):
    X, y, beta, *_ = lab_arrays(data_mesh)
    half = jax.make_mesh((4,), ("data",), axis_types=data_mesh.axis_types, devices=jax.devices()[:4])
    rows, rep = NamedSharding(half, P("data")), NamedSharding(half, P())
    Xs, ys, br = jax.device_put(X, rows), jax.device_put(y, rows), jax.device_put(beta, rep)
    value, grad = value_and_grad(br, Xs, ys)
    rejects(check.data_parallel_log_likelihood, value, grad, br, Xs, ys, value_and_grad.lower(br, Xs, ys).compile().as_text(),
            match="has 4 device.*shows 8: use all of them")


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
    wrong_type(check.device_trips, _trips(np.ones((2, 2)), 2), match="not a function: pass the function itself")


@pytest.mark.parametrize("wrong, message", [
    (lambda s, d: None, "returned None.*two arrays"),
    (lambda s, d: {"jit": _trips(s, d)[0], "shard_map": _trips(s, d)[1]}, "returned.*dict.*two arrays"),
    (lambda s, d: ("jit", "shard_map"), "A count .* is 'jit' \\(str\\)"),
])
def test_device_trips_refuses_answers_of_the_wrong_type(wrong, message):
    wrong_type(check.device_trips, wrong, match=message)


def test_device_trips_names_a_split_that_puts_the_rest_on_the_last_device():
    def rest_last(s, d):
        k = len(s) // d
        return _trips(s, d)[0], [s[i * k:(i + 1) * k if i < d - 1 else len(s)].max(axis=0).sum() for i in range(d)]

    rejects(check.device_trips, rest_last, match="split otherwise.*first devices taking one more")


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
    ([("all-reduce", "model", 1024.5), ("all-reduce", "data", 4), ("reduce-scatter", "data", 256)], "whole number"),
])
def test_predicted_collectives_rejects_plausible_wrong_answers(program_4x2, wrong, message):
    program, shape = program_4x2
    rejects(check.predicted_collectives, wrong, program, shape, match=message)


@pytest.mark.parametrize("wrong, message", [
    ([("all-reduce", "model")], "triple"),
    ("all-reduce", "list of"),
    ({"all-reduce": 1028, "reduce-scatter": 256}, "list of.*dict"),
    ([("all-reduce", ("data", "model"), 1024), ("all-reduce", "data", 4), ("reduce-scatter", "data", 256)],
     "should be strings"),
    ([("all-reduce", "model", "1 KiB"), ("all-reduce", "data", 4), ("reduce-scatter", "data", 256)], "a number of bytes"),
])
def test_predicted_collectives_refuses_answers_of_the_wrong_type(program_4x2, wrong, message):
    program, shape = program_4x2
    wrong_type(check.predicted_collectives, wrong, program, shape, match=message)


def test_predicted_collectives_needs_a_compiled_program_and_distinct_axis_sizes(program_4x2):
    program, shape = program_4x2
    rejects(check.predicted_collectives, RIGHT_4X2, "f32[4] all-reduce", shape, match="compiled program's text")
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
    wrong_type(check.predicted_collectives, RIGHT_4X2, program, mesh, match=r"mesh itself.*dict\(mesh.shape\)")
    wrong_type(check.predicted_collectives, RIGHT_4X2, program, [4, 2], match=r"\{axis name: size\}.*list")
    wrong_type(check.predicted_collectives, RIGHT_4X2, None, shape, match="compiled program's text.*NoneType")
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
