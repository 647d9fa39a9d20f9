"""Unit tests of the checks of the part *Other kinds of parallelism*: right answers pass, wrong ones are rejected."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding

from parallel_mcmc.exercises import other_parallelism as check
from rejecting import rejects, require_eight_devices

P = jax.P
PRIOR_SD = 2.5
require_eight_devices()


# ---------------------------------------------------------------- one chain over sharded data


@pytest.fixture(scope="module")
def mesh():
    return jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))


@pytest.fixture(scope="module")
def data(mesh):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(800, 5)).astype(np.float32)
    y = (rng.uniform(size=800) < 0.4).astype(np.float32)
    return jax.device_put((X, y), NamedSharding(mesh, P("data")))


def log_likelihood(beta, X, y):
    logits = X @ beta
    return jnp.sum(y * logits - jnp.logaddexp(0.0, logits))


def log_prior(beta):
    return -0.5 * jnp.sum(beta**2) / PRIOR_SD**2


def sharded(block, mesh, out=P(), **kw):
    return jax.jit(jax.shard_map(block, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=out, **kw))


def test_sharded_gradient_right_answers(mesh, data):
    X, y = data
    # the gradient of the psum-ed log-density, with the varying-axes check on
    density = sharded(jax.grad(lambda b, X, y: jax.lax.psum(log_likelihood(b, X, y), "data") + log_prior(b)), mesh)
    check.sharded_gradient(density, X, y, PRIOR_SD)
    # with the check on, the gradient of the local sum is already summed over the devices (psum_invariant)
    implicit = sharded(lambda b, X, y: jax.grad(log_likelihood)(b, X, y) + jax.grad(log_prior)(b), mesh)
    check.sharded_gradient(implicit, X, y, PRIOR_SD)
    # with the check off, local gradients and an explicit psum
    explicit = sharded(lambda b, X, y: jax.lax.psum(jax.grad(log_likelihood)(b, X, y), "data")
                       + jax.grad(log_prior)(b), mesh, check_vma=False)
    check.sharded_gradient(explicit, X, y, PRIOR_SD)


def test_sharded_gradient_wrong_answers(mesh, data):
    X, y = data
    whole = NamedSharding(mesh, P())
    gathered = jax.jit(jax.grad(lambda b, X, y: log_likelihood(b, jax.reshard(X, whole), jax.reshard(y, whole))
                                + log_prior(b)))
    rejects(check.sharded_gradient, gathered, X, y, PRIOR_SD, match="does not use jax.shard_map")
    per_device = sharded(lambda b, X, y: (jax.grad(log_likelihood)(b, X, y) + jax.grad(log_prior)(b))[None], mesh,
                         out=P("data"), check_vma=False)
    rejects(check.sharded_gradient, per_device, X, y, PRIOR_SD, match="psum")
    twice = sharded(lambda b, X, y: jax.lax.psum(jax.grad(log_likelihood)(b, X, y), "data") + jax.grad(log_prior)(b),
                    mesh)
    rejects(check.sharded_gradient, twice, X, y, PRIOR_SD, match="added twice")
    prior_each = sharded(lambda b, X, y: jax.lax.psum(jax.grad(log_likelihood)(b, X, y) + jax.grad(log_prior)(b),
                                                      "data"), mesh, check_vma=False)
    rejects(check.sharded_gradient, prior_each, X, y, PRIOR_SD, match="prior 8 times")
    no_prior = sharded(jax.grad(lambda b, X, y: jax.lax.psum(log_likelihood(b, X, y), "data")), mesh)
    rejects(check.sharded_gradient, no_prior, X, y, PRIOR_SD, match="add the prior")
    mean = sharded(jax.grad(lambda b, X, y: jax.lax.psum(log_likelihood(b, X, y), "data") / 800 + log_prior(b)), mesh)
    rejects(check.sharded_gradient, mean, X, y, PRIOR_SD, match="averages")
    # one device's rows, with a psum of something else to get past the program check
    one_block = sharded(lambda b, X, y: jax.grad(log_likelihood)(b, X, y) + jax.grad(log_prior)(b)
                        + 0 * jax.lax.psum(b, "data"), mesh, check_vma=False)
    rejects(check.sharded_gradient, one_block, X, y, PRIOR_SD, match="one device")
    replicated = jax.device_put(np.asarray(X), NamedSharding(mesh, P()))
    rejects(check.sharded_gradient, density_of(mesh), replicated, y, PRIOR_SD, match="replicated")


def density_of(mesh):
    return sharded(jax.grad(lambda b, X, y: jax.lax.psum(log_likelihood(b, X, y), "data") + log_prior(b)), mesh)


def test_sharded_gradient_names_the_learners_error(mesh, data):
    X, y = data

    def broken(b, X, y):
        raise ValueError("my own bug")

    rejects(check.sharded_gradient, broken, X, y, PRIOR_SD, match="ValueError: my own bug")


# ---------------------------------------------------------------- parallel tempering


def right_pairs(log_p, betas, parity):
    log_p, betas = jnp.asarray(log_p), jnp.asarray(betas)
    i = jnp.arange(betas.size)
    partner = jnp.where(i % 2 == parity, i + 1, i - 1)
    alone = (partner < 0) | (partner >= betas.size)
    partner = jnp.clip(partner, 0, betas.size - 1)
    ratio = jnp.exp(jnp.minimum(0.0, (betas - betas[partner]) * (log_p[partner] - log_p)))
    return jnp.where(alone, 0.0, ratio)


def test_pair_acceptance():
    check.pair_acceptance(right_pairs)
    rejects(check.pair_acceptance, lambda lp, b, parity: right_pairs(lp, b, 1 - parity), match="other parity")
    rejects(check.pair_acceptance, lambda lp, b, parity: jnp.log(right_pairs(lp, b, parity) + 1e-300),
            match="not every entry is finite|negative")

    def upside_down(lp, b, parity):
        return right_pairs(-np.asarray(lp), b, parity)

    rejects(check.pair_acceptance, upside_down, match="upside down")

    def no_min(lp, b, parity):
        lp, b = np.asarray(lp), np.asarray(b)
        out = np.zeros(b.size)
        for i in range(parity, b.size - 1, 2):
            out[i] = out[i + 1] = np.exp((b[i] - b[i + 1]) * (lp[i + 1] - lp[i]))
        return out

    rejects(check.pair_acceptance, no_min, match="above 1")

    def edges_swap(lp, b, parity):
        return right_pairs(lp, b, parity).at[-1].set(0.5)

    rejects(check.pair_acceptance, edges_swap, match="no partner|one pair")
    rejects(check.pair_acceptance, lambda lp, b, parity: right_pairs(lp, b, parity)[:-1], match="one probability per replica")


# ---------------------------------------------------------------- tempered SMC


def ess_fraction(values, increment):
    w = increment * values
    w = np.exp(w - w.max())
    return w.sum() ** 2 / (w**2).sum() / w.size


def bisect(values, lam):
    values = np.asarray(values, np.float64)
    if ess_fraction(values, 1.0 - lam) >= 0.5:
        return 1.0
    low, high = 0.0, 1.0 - lam
    for _ in range(60):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if ess_fraction(values, mid) >= 0.5 else (low, mid)
    return lam + low


@pytest.fixture(scope="module")
def log_likelihoods():
    rng = np.random.default_rng(2)
    return -50.0 * rng.chisquare(3, size=1024)


def test_next_temperature(log_likelihoods):
    check.next_temperature(bisect, log_likelihoods)
    check.next_temperature(bisect, jnp.asarray(log_likelihoods, jnp.float32))

    def naive(values, lam):  # exp of large log-likelihoods without the largest taken out: inf / inf
        with np.errstate(over="ignore", invalid="ignore"):
            w = np.exp(-np.asarray(values, np.float64))
            return lam + 0.5 * (1 - lam) * float(w.sum() ** 2 / (w**2).sum())

    rejects(check.next_temperature, naive, log_likelihoods, match="overflows or underflows")
    rejects(check.next_temperature, lambda v, lam: bisect(v, lam) - lam, log_likelihoods, match="lam \\+ increment")
    rejects(check.next_temperature, lambda v, lam: min(1.0, lam + 2 * (bisect(v, lam) - lam)), log_likelihoods,
            match="too far")
    rejects(check.next_temperature, lambda v, lam: lam + 0.5 * (bisect(v, lam) - lam), log_likelihoods,
            match="too cautious|return 1")
    rejects(check.next_temperature, lambda v, lam: 1.0, log_likelihoods, match="too far")
    rejects(check.next_temperature, lambda v, lam: np.array([bisect(v, lam)] * 2), log_likelihoods, match="one number")


# ---------------------------------------------------------------- answers of the wrong type: WrongType, a TypeError


def test_sharded_gradient_refuses_answers_of_the_wrong_type(mesh, data):
    X, y = data
    density = density_of(mesh)

    def log_density(b, X, y):
        return jax.lax.psum(log_likelihood(b, X, y), "data") + log_prior(b)

    value_and_grad = sharded(jax.value_and_grad(log_density), mesh, out=(P(), P()))
    with pytest.raises(TypeError, match=r"returned a pair.*jax.value_and_grad.*Return the gradient only"):
        check.sharded_gradient(value_and_grad, X, y, PRIOR_SD)

    def nothing(b, X, y):
        density(b, X, y)  # computed, then not returned

    with pytest.raises(TypeError, match="returned NoneType; return the gradient"):
        check.sharded_gradient(nothing, X, y, PRIOR_SD)
    with pytest.raises(TypeError, match="function itself.*got a ArrayImpl"):
        check.sharded_gradient(density(np.zeros(5, np.float32), X, y), X, y, PRIOR_SD)
    with pytest.raises(TypeError, match="prior_sd must be .* one number; got NoneType"):
        check.sharded_gradient(density, X, y, None)
    with pytest.raises(TypeError, match="`X` should be the chapter's sharded jax.Array, got ndarray"):
        check.sharded_gradient(density, np.asarray(X), y, PRIOR_SD)


@pytest.mark.parametrize("wrong, message", [
    (lambda lp, b, parity: None, r"returned NoneType; return an array of one probability per replica"),
    (lambda lp, b, parity: {"probabilities": right_pairs(lp, b, parity)}, r"returned dict"),
    (lambda lp, b, parity: float(right_pairs(lp, b, parity)[parity]),
     r"returned one number, .*; return one probability"),
    (lambda lp, b, parity: (right_pairs(lp, b, parity), parity), r"returned tuple .*not an array of numbers"),
])
def test_pair_acceptance_refuses_answers_of_the_wrong_type(wrong, message):
    with pytest.raises(TypeError, match=message):
        check.pair_acceptance(wrong)
    with pytest.raises(TypeError, match="function itself"):
        check.pair_acceptance(np.zeros(4))


def test_pair_acceptance_rejects_one_probability_per_pair():
    rejects(check.pair_acceptance, lambda lp, b, parity: right_pairs(lp, b, parity)[parity:len(b) - 1:2],
            match="one probability per replica")


@pytest.mark.parametrize("wrong, message", [
    (lambda v, lam: None, r"returned None \(NoneType\); it should return one number"),
    (lambda v, lam: (bisect(v, lam), 0.5), r"\(tuple\); it should return one number"),
    (lambda v, lam: str(bisect(v, lam)), r"\(str\); it should return one number"),
])
def test_next_temperature_refuses_answers_of_the_wrong_type(log_likelihoods, wrong, message):
    with pytest.raises(TypeError, match=message):
        check.next_temperature(wrong, log_likelihoods)


def test_next_temperature_refuses_arguments_of_the_wrong_type(log_likelihoods):
    with pytest.raises(TypeError, match="function itself.*got a float"):
        check.next_temperature(bisect(log_likelihoods, 0.0), log_likelihoods)
    with pytest.raises(TypeError, match="an array of numbers; got dict"):
        check.next_temperature(bisect, {"loglik": log_likelihoods})


def test_pair_acceptance_names_the_mistake_where_pairs_look_like_the_other_parity():
    """Every pair of this case swaps for sure: giving the replicas without a partner 1 as well makes [1, 1, 1, 1],
    the other parity's pairing too; the right pairs' values show the mistake is the lone replicas'."""
    case = ([-1.0, -1.0, -1.0, -1.0], [1.0, 0.5, 0.25, 0.125], 1, [0.0, 1.0, 1.0, 0.0])
    rejects(check.pair_acceptance, lambda lp, b, parity: np.ones(4), cases=[case],
            match=r"replica\(s\) \[0, 3\] have no partner")
    rejects(check.pair_acceptance, lambda lp, b, parity: np.log(np.maximum(right_pairs(lp, b, parity), 1e-300)),
            match="negative numbers that are the logarithms")
    rejects(check.pair_acceptance, lambda lp, b, parity: np.log(np.asarray(right_pairs(lp, b, parity), np.float64)),
            match="logarithms? of the (right )?probabilities")
