"""Consensus Monte Carlo helpers: shards, precision-weighted combination, sub-posterior sampling."""

import jax
import numpy as np
import pytest

from parallel_mcmc.sample.consensus import consensus_combine, sample_subposteriors, split_data
from parallel_mcmc.models.regression import (
    linear_model,
    linear_posterior,
    logistic_model,
    make_linear_data,
    make_logistic_data,
)


def test_split_data_keeps_rows_in_order():
    X = np.arange(24.0).reshape(12, 2)
    y = np.arange(12.0)
    Xs, ys = split_data(X, y, 3)
    assert Xs.shape == (3, 4, 2) and ys.shape == (3, 4)
    np.testing.assert_array_equal(Xs.reshape(12, 2), X)
    np.testing.assert_array_equal(ys[1], [4, 5, 6, 7])


def test_split_data_refuses_bad_input():
    X, y = np.zeros((10, 2)), np.zeros(10)
    with pytest.raises(ValueError, match="do not split into 3 equal shards"):
        split_data(X, y, 3)
    with pytest.raises(ValueError, match="num_shards must be"):
        split_data(X, y, 0)
    with pytest.raises(ValueError, match="same n"):
        split_data(X, np.zeros(9), 2)


def test_combination_is_exact_for_gaussian_draws():
    """Draws built as mean_s + L_s z_t combine to the product of the Gaussians, draw by draw."""
    rng = np.random.default_rng(0)
    S, T, d = 4, 20000, 2
    means = rng.normal(size=(S, d))
    A = rng.normal(size=(S, d, d))
    covs = A @ np.swapaxes(A, 1, 2) + 0.5 * np.eye(d)
    draws = np.stack([rng.multivariate_normal(means[s], covs[s], size=T) for s in range(S)])
    combined = consensus_combine(draws)
    prec = np.linalg.inv(covs)
    cov = np.linalg.inv(prec.sum(0))
    mean = cov @ np.einsum("sij,sj->i", prec, means)
    assert combined.shape == (T, d)
    np.testing.assert_allclose(combined.mean(0), mean, atol=0.03)
    np.testing.assert_allclose(np.cov(combined, rowvar=False), cov, rtol=0.05, atol=0.005)


def test_combination_weights_the_precise_shard_more():
    rng = np.random.default_rng(1)
    precise = 1.0 + 0.1 * rng.standard_normal(5000)
    vague = -1.0 + 1.0 * rng.standard_normal(5000)
    combined = consensus_combine(np.stack([precise, vague]))
    assert combined.shape == (5000,)
    assert 0.9 < combined.mean() < 1.0  # weights 100 : 1, far from the plain average 0


def test_combination_refuses_bad_shapes():
    with pytest.raises(ValueError, match="shards, draws, parameters"):
        consensus_combine(np.zeros(5))
    with pytest.raises(ValueError, match="cannot estimate"):
        consensus_combine(np.zeros((2, 3, 4)))


def test_linear_subposteriors_combine_to_the_exact_posterior():
    data = make_linear_data(400, 3, seed=3)
    Xs, ys = split_data(data.X, data.y, 4)
    sub = sample_subposteriors(linear_model, Xs, ys, rng_key=jax.random.key(0), num_warmup=300, num_samples=750,
                               num_chains=2, devices=jax.devices()[:2])
    assert sub.samples["beta"].shape == (4, 2, 750, 3) and sub.diverging.shape == (4, 2, 750)
    assert (sub.num_shards, sub.num_chains) == (4, 2)
    draws = {"beta": sub.draws("beta")}
    assert draws["beta"].shape == (4, 1500, 3)
    np.testing.assert_array_equal(draws["beta"][1, 750:], sub.samples["beta"][1, 1])  # chains pooled in order
    assert sub.rhat("beta").shape == (4,) and np.all(sub.rhat("beta") < 1.05)
    assert sub.divergences().shape == (4,) and np.all(sub.divergences() == 0)
    assert not np.array_equal(sub.samples["beta"][0, 0], sub.samples["beta"][0, 1])  # chains have their own keys
    combined = consensus_combine(draws["beta"])
    mean, cov = linear_posterior(data.X, data.y)
    sd = np.sqrt(np.diag(cov))
    assert np.all(np.abs(combined.mean(0) - mean) < 0.15 * sd)
    np.testing.assert_allclose(combined.std(0), sd, rtol=0.15)
    # each shard alone has the prior raised to 1/4: its exact sub-posterior
    sub_mean, _ = linear_posterior(Xs[0], ys[0], prior_power=0.25)
    sub_sd = np.sqrt(np.diag(linear_posterior(Xs[0], ys[0], prior_power=0.25)[1]))
    assert np.all(np.abs(draws["beta"][0].mean(0) - sub_mean) < 0.2 * sub_sd)


def test_sample_subposteriors_refuses_unsplit_data():
    data = make_logistic_data(40, 2, seed=0)
    with pytest.raises(ValueError, match="make them with split_data"):
        sample_subposteriors(logistic_model, data.X, data.y, rng_key=jax.random.key(0), num_warmup=10, num_samples=10)


def test_models_data_are_fixed_and_checked():
    a, b = make_linear_data(50, 3, seed=5), make_linear_data(50, 3, seed=5)
    np.testing.assert_array_equal(a.X, b.X)
    assert np.all(a.X[:, 0] == 1.0)
    logit = make_logistic_data(100, 3, seed=2, beta=[0.0, 1.0, -1.0])
    assert set(np.unique(logit.y)) <= {0.0, 1.0}
    with pytest.raises(ValueError, match="beta must have shape"):
        make_logistic_data(10, 3, beta=[1.0, 2.0])
    with pytest.raises(ValueError, match="n must be"):
        make_linear_data(0)
    with pytest.raises(ValueError, match="prior_power must be a positive number"):
        linear_posterior(a.X, a.y, prior_power=0)


def test_rhat_needs_two_chains_a_shard():
    from parallel_mcmc.sample.consensus import Subposteriors

    one = Subposteriors(samples={"beta": np.zeros((2, 1, 10, 3))}, diverging=np.zeros((2, 1, 10), bool))
    with pytest.raises(ValueError, match="at least 2 chains"):
        one.rhat("beta")
    two = Subposteriors(samples={"beta": np.random.default_rng(0).normal(size=(2, 2, 50, 3))},
                        diverging=np.zeros((2, 2, 50), bool))
    assert two.rhat("beta").shape == (2,) and np.all(two.rhat("beta") < 1.2)


def test_a_sampler_compiles_once_and_counts_every_step():
    from parallel_mcmc.sample.consensus import subposterior_sampler
    from parallel_mcmc.measure.cores import CompileLog

    data = make_logistic_data(200, 2, seed=4)
    Xs, ys = split_data(data.X, data.y, 2)
    sampler = subposterior_sampler(logistic_model, Xs, ys, num_warmup=30, num_samples=20, num_chains=2,
                                   devices=jax.devices()[:2], inner="map")
    first = sampler(jax.random.key(3))
    with CompileLog() as log:
        again = sampler(jax.random.key(3))
        other = sampler(jax.random.key(4))
    assert log.compiles == 0, log.compiled  # later calls run the compiled program
    np.testing.assert_array_equal(again.samples["beta"], first.samples["beta"])
    assert not np.array_equal(other.samples["beta"], first.samples["beta"])
    # every iteration's integration steps, warm-up first: (shards, chains, warm-up + draws), at least one each
    assert first.num_steps.shape == (2, 2, 50) and first.num_steps.min() >= 1
    assert first.samples["beta"].shape == (2, 2, 20, 2) and first.diverging.shape == (2, 2, 20)
    same = sample_subposteriors(logistic_model, Xs, ys, rng_key=jax.random.key(3), num_warmup=30, num_samples=20,
                                num_chains=2, devices=jax.devices()[:2], inner="map")
    np.testing.assert_array_equal(same.samples["beta"], first.samples["beta"])
    np.testing.assert_array_equal(same.num_steps, first.num_steps)


def test_a_sampler_without_warmup():
    from parallel_mcmc.sample.consensus import subposterior_sampler

    data = make_logistic_data(100, 2, seed=5)
    Xs, ys = split_data(data.X, data.y, 2)
    sub = subposterior_sampler(logistic_model, Xs, ys, num_warmup=0, num_samples=20, num_chains=1,
                               devices=jax.devices()[:2])(jax.random.key(0))
    assert sub.num_steps.shape == (2, 1, 20) and sub.samples["beta"].shape == (2, 1, 20, 2)
