"""parallel_mcmc.models.regression: the data sets, the models' log-densities against the densities written out,
and the exact posterior of the linear model: against least squares on prior pseudo-observations, as the mode of
the model's log-density, and as the product of tempered sub-posteriors (consensus Monte Carlo)."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from numpyro import handlers
from numpyro.infer.util import log_density

from parallel_mcmc.models import regression
from parallel_mcmc._validate import ArgumentError

# ---------------------------------------------------------------- the data


def test_linear_data_from_a_fixed_seed():
    data = regression.make_linear_data(2000, 4, seed=3, noise_sd=0.5)
    assert data.X.shape == (2000, 4) and data.y.shape == (2000,) and data.beta_true.shape == (4,)
    assert data.X.dtype == data.y.dtype == data.beta_true.dtype == np.float32
    np.testing.assert_array_equal(data.X[:, 0], 1.0)  # the intercept column
    assert abs(data.X[:, 1:].mean()) < 0.1 and abs(data.X[:, 1:].std() - 1) < 0.05
    residuals = data.y - data.X @ data.beta_true
    assert abs(residuals.mean()) < 0.05 and abs(residuals.std() - 0.5) < 0.03
    again = regression.make_linear_data(2000, 4, seed=3, noise_sd=0.5)
    for a, b in zip(data, again):
        np.testing.assert_array_equal(a, b)
    assert not np.allclose(regression.make_linear_data(2000, 4, seed=4).beta_true, data.beta_true)


def test_logistic_data_follow_the_sigmoid():
    beta = np.array([0.5, -1.0, 2.0])
    data = regression.make_logistic_data(4000, 3, seed=1, beta=beta)
    assert data.X.shape == (4000, 3) and set(np.unique(data.y)) == {0.0, 1.0}
    assert data.y.dtype == data.beta_true.dtype == np.float32
    np.testing.assert_array_equal(data.beta_true, beta.astype(np.float32))
    np.testing.assert_array_equal(data.X[:, 0], 1.0)
    p = 1 / (1 + np.exp(-(data.X.astype(np.float64) @ beta)))
    assert abs(data.y.mean() - p.mean()) < 4 * np.sqrt(p.mean() * (1 - p.mean()) / 4000)
    # responses are more often 1 where the sigmoid is high
    assert data.y[p > 0.8].mean() > 0.75 and data.y[p < 0.2].mean() < 0.25
    drawn = regression.make_logistic_data(100, 5, seed=2)
    assert drawn.beta_true.shape == (5,)
    np.testing.assert_array_equal(drawn.beta_true, regression.make_logistic_data(100, 5, seed=2).beta_true)


@pytest.mark.parametrize("make", [regression.make_linear_data, regression.make_logistic_data])
@pytest.mark.parametrize("name, args", [("n", (0, 3)), ("n", (2.0, 3)), ("p", (10, 0)), ("p", (10, True))])
def test_data_need_whole_sizes(make, name, args):
    with pytest.raises(ArgumentError, match=f"^{name} must be a whole number >= 1"):
        make(*args)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), "1"])
def test_linear_data_need_a_positive_noise_sd(bad):
    with pytest.raises(ArgumentError, match="noise_sd must be a positive number"):
        regression.make_linear_data(10, noise_sd=bad)


def test_logistic_data_check_the_shape_of_beta():
    with pytest.raises(ValueError, match=r"beta must have shape \(3,\), got \(2,\)"):
        regression.make_logistic_data(10, 3, beta=[1.0, 2.0])


# ---------------------------------------------------------------- the models


def normal_logpdf(x, mean, sd):
    return -0.5 * ((x - mean) / sd) ** 2 - np.log(sd * np.sqrt(2 * np.pi))


@pytest.fixture(scope="module")
def linear():
    return regression.make_linear_data(60, 3, seed=0)


@pytest.mark.parametrize("prior_power", [1.0, 0.25])
def test_linear_model_log_density_written_out(linear, prior_power):
    X, y = linear.X.astype(np.float64), linear.y.astype(np.float64)
    beta = np.array([0.3, -0.2, 1.1])
    kwargs = {"prior_sd": 2.0, "noise_sd": 0.7, "prior_power": prior_power}
    got, _ = log_density(regression.linear_model, (linear.X, linear.y), kwargs, {"beta": beta})
    want = prior_power * normal_logpdf(beta, 0.0, 2.0).sum() + normal_logpdf(y, X @ beta, 0.7).sum()
    assert float(got) == pytest.approx(want, rel=1e-5)


@pytest.mark.parametrize("prior_power", [1.0, 0.5])
def test_logistic_model_log_density_written_out(prior_power):
    data = regression.make_logistic_data(80, 3, seed=4)
    beta = np.array([-0.4, 0.8, 0.1])
    got, _ = log_density(regression.logistic_model, (data.X, data.y), {"prior_power": prior_power}, {"beta": beta})
    logits = data.X.astype(np.float64) @ beta
    likelihood = np.sum(data.y * logits - np.logaddexp(0.0, logits))
    assert float(got) == pytest.approx(prior_power * normal_logpdf(beta, 0.0, 2.5).sum() + likelihood, rel=1e-5)


def test_logistic_log_likelihood_is_the_models_likelihood_summed_over_rows():
    data = regression.make_logistic_data(200, 4, seed=5)
    beta = np.array([0.3, -0.7, 1.2, 0.05], np.float32)
    got = jax.jit(regression.logistic_log_likelihood)(beta, data.X, data.y)
    model, _ = log_density(regression.logistic_model, (data.X, data.y), {}, {"beta": beta})
    prior = normal_logpdf(beta.astype(np.float64), 0.0, 2.5).sum()
    assert float(got) == pytest.approx(float(model) - prior, rel=1e-5)
    halves = [regression.logistic_log_likelihood(beta, data.X[s], data.y[s]) for s in (slice(0, 100), slice(100, 200))]
    assert float(got) == pytest.approx(float(sum(halves)), rel=1e-5)  # a sum over rows: shards add up
    grad = jax.grad(regression.logistic_log_likelihood)(beta, data.X, data.y)
    X64, y64 = data.X.astype(np.float64), data.y.astype(np.float64)
    np.testing.assert_allclose(grad, X64.T @ (y64 - 1 / (1 + np.exp(-(X64 @ beta)))), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("model", [regression.linear_model, regression.logistic_model])
def test_models_sample_one_coefficient_per_column_and_predict_without_y(model):
    X = regression.make_linear_data(7, 4, seed=0).X
    trace = handlers.trace(handlers.seed(model, jax.random.key(0))).get_trace(X)
    assert trace["beta"]["value"].shape == (4,) and not trace["beta"]["is_observed"]
    assert trace["y"]["value"].shape == (7,) and not trace["y"]["is_observed"]  # y=None: drawn, a prediction


# ---------------------------------------------------------------- the exact posterior of the linear model


def test_linear_posterior_is_least_squares_with_prior_pseudo_observations(linear):
    # the posterior mean is the least-squares fit of [X / noise_sd; sqrt(power) / prior_sd * I] to [y / noise_sd; 0]
    prior_sd, noise_sd, power = 1.5, 0.8, 0.3
    X, y = linear.X.astype(np.float64), linear.y.astype(np.float64)
    A = np.vstack([X / noise_sd, np.sqrt(power) / prior_sd * np.eye(3)])
    b = np.concatenate([y / noise_sd, np.zeros(3)])
    mean, cov = regression.linear_posterior(linear.X, linear.y, prior_sd=prior_sd, noise_sd=noise_sd, prior_power=power)
    np.testing.assert_allclose(mean, np.linalg.lstsq(A, b, rcond=None)[0], rtol=1e-10)
    np.testing.assert_allclose(cov, np.linalg.inv(A.T @ A), rtol=1e-10)
    assert mean.shape == (3,) and cov.shape == (3, 3)
    np.testing.assert_allclose(cov, cov.T)
    assert np.all(np.linalg.eigvalsh(cov) > 0)


def test_linear_posterior_mean_is_the_mode_of_the_model(linear):
    mean, _ = regression.linear_posterior(linear.X, linear.y, prior_power=0.5)

    def log_joint(beta):
        return log_density(regression.linear_model, (linear.X, linear.y), {"prior_power": 0.5}, {"beta": beta})[0]

    gradient = jax.grad(log_joint)(mean.astype(np.float32))
    assert np.abs(np.asarray(gradient)).max() < 1e-3


def test_linear_posterior_is_near_the_truth_with_much_data():
    data = regression.make_linear_data(5000, 4, seed=7)
    mean, cov = regression.linear_posterior(data.X, data.y)
    assert np.all(np.abs(mean - data.beta_true) < 4 * np.sqrt(np.diag(cov)))
    assert np.sqrt(np.diag(cov)).max() < 0.03  # about noise_sd / sqrt(n)


def test_tempered_sub_posteriors_multiply_to_the_full_posterior():
    # consensus Monte Carlo: S shards, each with the prior to the power 1/S; precisions add, means weigh by them
    data = regression.make_linear_data(300, 3, seed=2)
    shards = 3
    parts = [regression.linear_posterior(X, y, prior_power=1 / shards)
             for X, y in zip(np.array_split(data.X, shards), np.array_split(data.y, shards))]
    precision = sum(np.linalg.inv(cov) for _, cov in parts)
    combined = np.linalg.solve(precision, sum(np.linalg.inv(cov) @ mean for mean, cov in parts))
    mean, cov = regression.linear_posterior(data.X, data.y)
    np.testing.assert_allclose(combined, mean, rtol=1e-8)
    np.testing.assert_allclose(np.linalg.inv(precision), cov, rtol=1e-8)


@pytest.mark.parametrize("X, y", [(np.zeros(5), np.zeros(5)), (np.zeros((5, 2)), np.zeros(4)),
                                  (np.zeros((5, 2)), np.zeros((5, 1)))])
def test_linear_posterior_checks_the_shapes(X, y):
    with pytest.raises(ValueError, match=r"X must be \(n, p\) and y \(n,\)"):
        regression.linear_posterior(X, y)


@pytest.mark.parametrize("bad", [0.0, -0.5, float("inf")])
def test_linear_posterior_needs_a_positive_prior_power(linear, bad):
    with pytest.raises(ArgumentError, match="prior_power must be a positive number"):
        regression.linear_posterior(linear.X, linear.y, prior_power=bad)


@pytest.mark.parametrize("bad", [{"prior_sd": 0.0}, {"noise_sd": -1.0}, {"prior_power": 0.0}, {"prior_sd": float("nan")}])
def test_models_and_posterior_refuse_scales_that_are_not_positive(bad):
    import jax
    from numpyro import handlers

    data = regression.make_linear_data(20, 2, seed=0)
    with pytest.raises(ValueError, match=next(iter(bad))):
        regression.linear_posterior(data.X, data.y, **bad)
    with pytest.raises(ValueError, match=next(iter(bad))):
        handlers.seed(regression.linear_model, jax.random.key(0))(data.X, data.y, **bad)
    if "noise_sd" not in bad:
        with pytest.raises(ValueError, match=next(iter(bad))):
            handlers.seed(regression.logistic_model, jax.random.key(0))(data.X, data.y, **bad)
