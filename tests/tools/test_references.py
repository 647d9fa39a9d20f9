"""The grader's reference answers and unseen inputs, where the parametrised test of every exercise
(tests/tools/test_exercise_units.py) cannot reach: the sinusoid's reference beside the model, and the checks of
functions on sharded data (the chapters' X and y) on the unseen coefficients.

``booktools.coursework.references`` holds the answers the grader compares with and draws, for each
check that takes ``cases``, inputs the chapters never show (:func:`references.unseen`). The checks in
``parallel_mcmc.exercises`` hold neither; tests/helper tests them with answers of their own. Here the
two meet: what the grader feeds the checks must let right answers (float32 ones included) through
and stop wrong ones.
"""

from __future__ import annotations

import functools
import importlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding

from booktools.coursework import references
from parallel_mcmc.exercises import other_parallelism
from parallel_mcmc.models import regression, sinusoid

P = jax.P
SEEDS = (1, 7, 2024)
PRIOR_SD = 2.5


def check_of(name: str):
    """The check a dotted name of ``references.UNSEEN`` names."""
    module, function = name.rsplit(".", 1)
    return getattr(importlib.import_module(module), function)


def test_reference_matches_model_at_true_sigma():
    thetas = sinusoid.initial_walkers(8)
    full = np.column_stack([thetas, np.full(8, np.log(sinusoid.NOISE_SCALE))])
    want = np.array([sinusoid.log_prob(th) for th in thetas]) - sinusoid.NUM_POINTS * np.log(sinusoid.NOISE_SCALE)
    np.testing.assert_allclose(references.log_prob_noise(full), want, rtol=1e-10)


# ---------------------------------------------------------------- checks without a reference answer


@pytest.fixture(scope="module")
def sharded_data():
    mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))
    rng = np.random.default_rng(4)
    X, y = rng.standard_normal((320, 5), dtype=np.float32), rng.integers(0, 2, 320).astype(np.float32)
    return (mesh, *jax.device_put((X, y), NamedSharding(mesh, P("data"))))


@pytest.mark.parametrize("check_vma", [True, False], ids=["grad-of-psum", "psum-of-grads"])
def test_sharded_gradient_passes_on_the_unseen_betas(sharded_data, check_vma, capsys):
    mesh, X, y = sharded_data
    unseen = references.unseen("parallel_mcmc.exercises.other_parallelism.sharded_gradient", 3)["cases"]
    assert len(unseen) == 3 and all(b.shape == (5,) for b in unseen)

    def log_likelihood(b, X, y):
        return jnp.sum(y * (X @ b) - jnp.logaddexp(0.0, X @ b))

    if check_vma:  # the gradient of the psum-ed log-density
        block = jax.grad(lambda b, X, y: jax.lax.psum(log_likelihood(b, X, y), "data") - 0.5 * b @ b / PRIOR_SD**2)
    else:  # local gradients and an explicit psum
        block = lambda b, X, y: jax.lax.psum(jax.grad(log_likelihood)(b, X, y), "data") - b / PRIOR_SD**2  # noqa: E731
    gradient = jax.jit(jax.shard_map(block, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P(),
                                     check_vma=check_vma))
    other_parallelism.sharded_gradient(gradient, X, y, PRIOR_SD, cases=unseen)
    assert "✔" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="add the prior"):
        other_parallelism.sharded_gradient(jax.jit(jax.shard_map(
            lambda b, X, y: jax.lax.psum(jax.grad(log_likelihood)(b, X, y), "data"), mesh=mesh,
            in_specs=(P(), P("data"), P("data")), out_specs=P(), check_vma=False)), X, y, PRIOR_SD, cases=unseen)


@pytest.fixture(scope="module")
def lab_data():
    """The sharding lab's data, split by rows over an Explicit mesh of 8 devices, and its coefficients, replicated."""
    mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))
    data = regression.make_logistic_data(1024, 4, seed=0)
    X, y = jax.device_put((data.X, data.y), NamedSharding(mesh, P("data")))
    return mesh, jax.device_put(data.beta_true, NamedSharding(mesh, P())), X, y


def _lab_answers(mesh):
    """Right answers to the lab's three exercises on functions, and answers right at the chapter's beta only."""
    def terms(b, X, y):
        z = X @ b
        return y * z - jax.nn.softplus(z)

    def value_and_grad(b, X, y):
        z = X @ b
        grad = jnp.matmul(X.T, y - jax.nn.sigmoid(z), out_sharding=NamedSharding(mesh, P()))
        return jnp.sum(terms(b, X, y)), grad

    @jax.jit
    def explicit(b, X, y):
        print(jax.typeof(X))
        return value_and_grad(b, X, y)

    on_rows = functools.partial(jax.shard_map, mesh=mesh, in_specs=(P(), P("data"), P("data")))
    rows = jax.jit(on_rows(terms, out_specs=P("data")))
    summed = jax.jit(on_rows(lambda b, X, y: jax.lax.psum(jax.value_and_grad(regression.logistic_log_likelihood)(
        b, X, y), "data"), out_specs=(P(), P()), check_vma=False))
    chapter_beta = np.asarray(regression.make_logistic_data(1024, 4, seed=0).beta_true)
    return {  # check -> (right answer, answer right at the chapter's beta only)
        "explicit_log_likelihood": (explicit, jax.jit(lambda b, X, y: explicit(chapter_beta, X, y))),
        "shard_map_row_terms": (rows, jax.jit(on_rows(lambda b, X, y: terms(chapter_beta, X, y), out_specs=P("data")))),
        "shard_map_log_likelihood": (summed, jax.jit(lambda b, X, y: summed(chapter_beta, X, y))),
    }


@pytest.mark.parametrize("check", ["explicit_log_likelihood", "shard_map_row_terms", "shard_map_log_likelihood"])
def test_the_labs_checks_on_the_unseen_betas(lab_data, check, capsys):
    mesh, beta, X, y = lab_data
    name = f"parallel_mcmc.exercises.sharding_lab.{check}"
    right, fixed = _lab_answers(mesh)[check]
    with jax.set_mesh(mesh):
        extra = (right.lower(beta, X, y).compile().as_text(),) if check == "explicit_log_likelihood" else ()
        for seed in SEEDS:
            unseen = references.unseen(name, seed)
            assert len(unseen["cases"]) == 3 and all(b.shape == beta.shape for b in unseen["cases"])
            calls = references.CALLS[name][1](unseen)
            assert [type(a) for a in calls[0][1:]] == [references.Argument] * 2  # the check's own X and y
            check_of(name)(right, beta, X, y, *extra, **unseen)
            assert "✔" in capsys.readouterr().out
            check_of(name)(fixed, beta, X, y, *extra)  # the chapter's beta alone does not tell
            with pytest.raises(AssertionError, match=r"fn\(beta=\["):
                check_of(name)(fixed, beta, X, y, *extra, **unseen)


def test_next_temperature_on_the_unseen_inputs(capsys):
    name = "parallel_mcmc.exercises.other_parallelism.next_temperature"
    chapters = -50.0 * np.random.default_rng(2).chisquare(3, size=1024)
    for seed in SEEDS:
        other_parallelism.next_temperature(references.next_temperature, jnp.asarray(chapters, jnp.float32),
                                           **references.unseen(name, seed))
    assert capsys.readouterr().out.count("✔") == len(SEEDS)

    def right_on_the_chapters_particles_only(values, lam):
        new = references.next_temperature(values, lam)
        return new if values.size == chapters.size else lam + 0.5 * (new - lam)

    other_parallelism.next_temperature(right_on_the_chapters_particles_only, chapters)
    for seed in SEEDS:
        with pytest.raises(AssertionError, match="too cautious|return 1"):
            other_parallelism.next_temperature(right_on_the_chapters_particles_only, chapters,
                                               **references.unseen(name, seed))
