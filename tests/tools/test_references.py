"""The grader's reference answers pass the book's checks, on its unseen inputs too, and the checks reject
wrong answers on them.

``booktools.coursework.references`` holds the answers the grader compares with and draws, for each
check that takes ``cases``, inputs the chapters never show (:func:`references.unseen`). The checks in
``parallel_mcmc.exercises`` hold neither; tests/helper tests them with answers of their own. Here the
two meet: what the grader feeds the checks must let right answers (float32 ones included) through
and stop wrong ones.
"""

from __future__ import annotations

import functools
import importlib
import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize
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


def in_float32(reference):
    """``reference`` fed and answering float32 arrays, as a learner's jnp answer would (JAX's default)."""
    def answer(*args):
        out = reference(*(np.asarray(a, np.float32) if isinstance(a, np.ndarray) else a for a in args))
        return tuple(np.asarray(o, np.float32) for o in out) if isinstance(out, tuple) else np.asarray(out, np.float32)

    return answer


def _strided(pid, num_processes, num_chains):
    return list(range(pid, num_chains, num_processes))


def _never_refuses(pid, num_processes, num_chains):
    per = num_chains // num_processes
    return list(range(pid * per, (pid + 1) * per))


# check -> (the grader's reference answer, whether it computes in floats, [(a wrong answer, what rejects it)])
REFERENCES = {
    "parallel_mcmc.exercises.getting_started.steps_to_pay": (references.steps_to_pay, False, [
        (lambda w, f, d, c, b: references.steps_to_pay(w, f, d, 1e12, 1.0), "core of its own|kept one core|never faster|expected"),
        (lambda w, f, d, c, b: references.steps_to_pay(w, f, d, c, b) or 0, "return None"),
    ]),
    "parallel_mcmc.exercises.parallel_chains.costliest_chain": (references.costliest_chain, False, [
        (lambda s: (int(np.argmax(np.asarray(s).sum(axis=1))), 0.5), "most steps in all|saves the most|single longest|should be"),
        (lambda s: (references.costliest_chain(s)[0], 2 * references.costliest_chain(s)[1]), "should be|steps saved"),
    ]),
    "parallel_mcmc.exercises.parallel_chains.grouped_efficiency": (references.grouped_efficiency, True, [
        (lambda s, g: 1 / references.grouped_efficiency(s, g), "inverse"),
        (lambda s, g: references.grouped_efficiency(s, 1), "one lockstep group|expected"),
        (lambda s, g: s.mean() / s.max(), "single longest trajectory|expected"),
    ]),
    "parallel_mcmc.exercises.parallel_chains.time_to_target": (references.time_to_target, False, [
        (lambda e, c, r, t, m, w, s: references.time_to_target(e, 1, r, t, m, w, s),
         "chains together|the chains need"),
        (lambda e, c, r, t, m, w, s: references.time_to_target(e, c, r, t, m, 0.0, s), "warm-up|should be"),
        (lambda e, c, r, t, m, w, s: references.time_to_target(e, c, r, t, 1.0, w, s),
         "without the margin|the chains need"),
        (lambda e, c, r, t, m, w, s: references.time_to_target(e, c, 1.0, t, m, w, s), "Return None"),
        (lambda e, c, r, t, m, w, s: None if r >= 1.01 else (m * t / (e * c), w + s * m * t / (e * c)),
         "not rounded"),
    ]),
    "parallel_mcmc.exercises.parallel_chains.machine_speedup": (references.machine_speedup, True, [
        (lambda L, s, i: 1 / references.machine_speedup(L, s, i), "inverse"),
        (lambda L, s, i: L.max(axis=0).sum() * s / (L.sum(axis=1).mean() * i), "average total|expected"),
        (lambda L, s, i: references.machine_speedup(L, 1.0, 1.0), "steps alone|expected"),
    ]),
    "parallel_mcmc.exercises.getting_started.predict_sharded": (references.predict_sharded, True, [
        (lambda st, ss, d, c, i: references.predict_sharded(st, ss, d, 1e9, i), "longest device alone|expected"),
        (lambda st, ss, d, c, i: 2 * references.predict_sharded(st, ss, d, c, i), "expected"),
    ]),
    "parallel_mcmc.exercises.getting_started.bottleneck": (references.bottleneck, False, [
        (lambda ev: max(ev, key=lambda e: e["dur"])["name"] if references.bottleneck(ev) != max(
            ev, key=lambda e: e["dur"])["name"] else "no such op", "longest single|no event's name"),
        (lambda ev: "no such op", "no event's name"),
    ]),
    "parallel_mcmc.exercises.sharding_lab.device_trips": (references.device_trips, False, [
        (lambda s, d: references.device_trips(s, d)[::-1], "swapped"),
        (lambda s, d: (references.device_trips(s, d)[1], references.device_trips(s, d)[1]), "one global count"),
        (lambda s, d: (references.device_trips(s, d)[0], [b.sum() for b in np.array_split(s, d)]), "added up"),
    ]),
    "parallel_mcmc.exercises.numpyro.max_draws": (references.max_draws, False, [
        (lambda m, c, d, l, b: references.max_draws(m, c, d, l, 0), "leaving out the data|expected"),
        (lambda m, c, d, l, b: references.max_draws(m, c, 1, l, b), "one device held all|expected"),
    ]),
    "parallel_mcmc.exercises.beyond_one_machine.best_group": (references.best_group, False, [
        (lambda d, b, pp, pd, c, m: references.best_group(d, b, 0.0, pd, c, m), "no slower|processes take|more processes"),
    ]),
    "parallel_mcmc.exercises.beyond_one_machine.my_chains": (references.my_chains, False, [
        (_strided, "every"),
        (_never_refuses, "cannot be split evenly"),
    ]),
    "parallel_mcmc.exercises.beyond_one_machine.job_header": (references.job_header, False, [
        (lambda n, g, c, d, pd, s, m: references.job_header(n, g, c, d, pd, s, 0.0), "without the margin|less than"),
        (lambda n, g, c, d, pd, s, m: references.job_header(n, g, c, d, pd, s, m).replace("gpus-per-node", "gpus-per-task"),
         "gpus-per-task"),
        (lambda n, g, c, d, pd, s, m: references.job_header(n, g, g * c, d, pd, s, m), "would never start"),
    ]),
    "parallel_mcmc.exercises.numpyro.gaussian_consensus": (references.gaussian_consensus, True, [
        (lambda m, c: (m.mean(0), np.linalg.inv(np.linalg.inv(c).sum(0)) * 2), "precision"),
        (lambda m, c: (references.gaussian_consensus(m, c)[0], c.mean(0)), "averages the shards' covariances"),
    ]),
    "parallel_mcmc.exercises.ensemble.vectorized_log_prob": (references.log_prob_noise, True, [
        (lambda th: references.log_prob_noise(th) + 3.0, "differ from the expected"),
        (lambda th: references.log_prob_noise(th) + sinusoid.NUM_POINTS * th[:, 4], r"n\*log\(sigma\)"),
    ]),
    "parallel_mcmc.exercises.ensemble.sharing_crossover": (references.sharing_crossover, False, [
        (lambda r, m, k, c: r, "round overhead itself|breaks even"),
        (lambda r, m, k, c: references.sharing_crossover(r, m, k, 1e12), "core of its own|split evenly|saved all their work|breaks even"),
        (lambda r, m, k, c: references.sharing_crossover(r, m, k, c) or float("inf"), "return None"),
    ]),
    "parallel_mcmc.exercises.ensemble.cost_for_speedup": (references.cost_for_speedup, False, [
        (lambda s, o, e, m, k, c, mc: references.cost_for_speedup(s, o, 0.0, m, k, c, mc) or 1.0,
         "emcee's own work|reaches|return None"),
        (lambda s, o, e, m, k, c, mc: references.cost_for_speedup(1.0, o, e, m, k, c, mc), "break-even|reaches|return None"),
    ]),
    "parallel_mcmc.exercises.other_parallelism.pair_acceptance": (references.pair_acceptance, True, [
        (lambda lp, b, parity: references.pair_acceptance(lp, b, 1 - parity), "other parity"),
        # named "upside down" only where a pair that should swap rarely always swaps, not the other way round
        (lambda lp, b, parity: references.pair_acceptance(-lp, b, parity), "upside down|the swap probabilities are"),
    ]),
}
WRONG = [pytest.param(name, wrong, message, id=f"{name.rsplit('.', 1)[1]}-{i}")
         for name, (_, _, wrongs) in REFERENCES.items() for i, (wrong, message) in enumerate(wrongs)]


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_reference_passes_the_check_on_its_own_and_the_unseen_inputs(name, capsys):
    check, (reference, _, _) = check_of(name), REFERENCES[name]
    check(reference)  # the check's fixed inputs
    for seed in SEEDS:
        check(reference, **references.unseen(name, seed))
    assert capsys.readouterr().out.count("✔") == 1 + len(SEEDS)


@pytest.mark.parametrize("name", sorted(n for n, (_, floats, _) in REFERENCES.items() if floats))
def test_a_float32_answer_passes_on_the_unseen_inputs(name, capsys):
    check, (reference, _, _) = check_of(name), REFERENCES[name]
    for seed in SEEDS:
        check(in_float32(reference), **references.unseen(name, seed))
    assert capsys.readouterr().out.count("✔") == len(SEEDS)


@pytest.mark.parametrize("name, wrong, message", WRONG)
def test_the_check_rejects_a_wrong_answer_on_the_unseen_inputs(name, wrong, message):
    for seed in SEEDS:
        with pytest.raises(AssertionError, match=message):
            check_of(name)(wrong, **references.unseen(name, seed))


def test_reference_matches_model_at_true_sigma():
    thetas = sinusoid.initial_walkers(8)
    full = np.column_stack([thetas, np.full(8, np.log(sinusoid.NOISE_SCALE))])
    want = np.array([sinusoid.log_prob(th) for th in thetas]) - sinusoid.NUM_POINTS * np.log(sinusoid.NOISE_SCALE)
    np.testing.assert_allclose(references.log_prob_noise(full), want, rtol=1e-10)


@pytest.mark.parametrize("name", sorted(references.UNSEEN))
def test_unseen_inputs_fit_their_check_and_change_with_the_seed(name):
    made = references.unseen(name, 5)
    assert made and set(made) <= set(inspect.signature(check_of(name)).parameters)
    assert name in references.CALLS
    np.testing.assert_equal(made, references.unseen(name, 5))  # one seed, one draw
    with pytest.raises(AssertionError):
        np.testing.assert_equal(made, references.unseen(name, 6))
    assert references.unseen(name.replace("exercises", "nowhere"), 5) == {}


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


def next_temperature(values, lam):
    """The largest exponent in (lam, 1] whose weights keep half the particles effective (root-finding)."""
    values = np.asarray(values, np.float64)

    def ess_above_half(increment):
        w = np.exp(increment * (values - values.max()))
        return w.sum() ** 2 / (w**2).sum() / w.size - 0.5

    if ess_above_half(1.0 - lam) >= 0:
        return 1.0
    return lam + scipy.optimize.brentq(ess_above_half, 0.0, 1.0 - lam, xtol=1e-14)


def test_next_temperature_on_the_unseen_inputs(capsys):
    name = "parallel_mcmc.exercises.other_parallelism.next_temperature"
    chapters = -50.0 * np.random.default_rng(2).chisquare(3, size=1024)
    for seed in SEEDS:
        other_parallelism.next_temperature(next_temperature, jnp.asarray(chapters, jnp.float32),
                                           **references.unseen(name, seed))
    assert capsys.readouterr().out.count("✔") == len(SEEDS)

    def right_on_the_chapters_particles_only(values, lam):
        new = next_temperature(values, lam)
        return new if values.size == chapters.size else lam + 0.5 * (new - lam)

    other_parallelism.next_temperature(right_on_the_chapters_particles_only, chapters)
    for seed in SEEDS:
        with pytest.raises(AssertionError, match="too cautious|return 1"):
            other_parallelism.next_temperature(right_on_the_chapters_particles_only, chapters,
                                               **references.unseen(name, seed))
