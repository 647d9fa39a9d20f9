"""parallel_mcmc.sample: runners' draws to ArviZ, and nested R-hat (ArviZ's, and the helper's from summaries)
against values worked by hand, against each other, against ArviZ's classic R-hat, and in its properties (superchains
that agree, or do not)."""

from __future__ import annotations

import arviz as az
import numpy as np
import pytest

from parallel_mcmc import sample
from parallel_mcmc._validate import ArgumentError

# ---------------------------------------------------------------- to_inference_data


def test_to_inference_data_keeps_chain_and_draw_axes():
    rng = np.random.default_rng(0)
    positions = {"loc": rng.normal(size=(4, 30)), "beta": rng.normal(size=(4, 30, 3)).astype(np.float32)}
    idata = sample.to_inference_data(positions)
    posterior = idata.posterior
    assert posterior.sizes["chain"] == 4 and posterior.sizes["draw"] == 30
    assert posterior["beta"].shape == (4, 30, 3)
    np.testing.assert_array_equal(posterior["loc"].values, positions["loc"])
    np.testing.assert_array_equal(posterior["beta"].values, positions["beta"])
    rhat = az.rhat(idata)  # what the chapters do with it
    assert set(rhat.data_vars) == {"loc", "beta"} and float(rhat["loc"]) < 1.1


def test_to_inference_data_takes_jax_arrays():
    import jax.numpy as jnp

    idata = sample.to_inference_data({"x": jnp.arange(12.0).reshape(3, 4)})
    np.testing.assert_array_equal(idata.posterior["x"].values, np.arange(12.0).reshape(3, 4))


@pytest.mark.parametrize("bad", [{}, [np.zeros((2, 3))], np.zeros((2, 3)), None])
def test_to_inference_data_needs_a_non_empty_dict(bad):
    with pytest.raises(TypeError, match="non-empty dict of \\(chain, draw\\) arrays"):
        sample.to_inference_data(bad)


def test_to_inference_data_says_how_to_add_the_chain_axis():
    with pytest.raises(ValueError, match=r"'loc' has shape \(30,\); ArviZ needs \(chain, draw\) axes.*value\[None\]"):
        sample.to_inference_data({"scale": np.zeros((2, 30)), "loc": np.zeros(30)})


# ---------------------------------------------------------------- nested R-hat: ArviZ's, and from summaries


def arviz_nested(draws, num_superchains):
    """ArviZ's nested R-hat of (chain, draw) draws, the chains in consecutive superchains, as the chapters call it."""
    ids = sample.superchain_ids(len(draws), num_superchains)
    return float(az.rhat_nested(np.asarray(draws), method="identity", superchain_ids=ids))


def from_summaries(draws, num_superchains):
    draws = np.asarray(draws)
    variances = draws.var(axis=1, ddof=1) if draws.shape[1] > 1 else np.zeros(len(draws))
    return sample.nested_rhat_from_summaries(draws.mean(axis=1), variances, draws.shape[1], num_superchains)


def test_superchain_ids_are_consecutive_blocks():
    np.testing.assert_array_equal(sample.superchain_ids(6, 3), [0, 0, 1, 1, 2, 2])
    np.testing.assert_array_equal(sample.superchain_ids(4, 4), [0, 1, 2, 3])


def test_superchain_ids_refuse_unequal_superchains():
    with pytest.raises(ValueError, match="6 chains cannot be split into 4 superchains of equal size"):
        sample.superchain_ids(6, 4)
    with pytest.raises(ArgumentError, match="num_superchains must be a whole number >= 2"):
        sample.superchain_ids(6, 1)


def test_nested_rhat_worked_by_hand_arviz_and_from_summaries():
    # superchains {0, 1} and {2, 3}: chain means 1, 3 | 11, 13; superchain means 2 | 12, so B = var(2, 12) = 50;
    # W = var(1, 3) + the chains' variance var(0, 2, 0, 2) = 2 + 4/3 in both: sqrt(1 + 50 / (10/3)) = 4
    draws = np.array([[0.0, 2, 0, 2], [2, 4, 2, 4], [10, 12, 10, 12], [12, 14, 12, 14]])
    assert arviz_nested(draws, 2) == pytest.approx(4.0)
    assert from_summaries(draws, 2) == pytest.approx(4.0)


@pytest.mark.parametrize("num_chains, num_draws, num_superchains", [(12, 7, 3), (16, 4, 4), (6, 5, 6), (64, 9, 8)])
def test_nested_rhat_from_summaries_equals_arviz_of_the_draws(num_chains, num_draws, num_superchains):
    rng = np.random.default_rng(num_chains + num_draws)
    draws = rng.normal(size=(num_chains, num_draws)) + rng.normal(size=(num_chains, 1))  # chains that disagree
    assert from_summaries(draws, num_superchains) == pytest.approx(arviz_nested(draws, num_superchains), rel=1e-12)
    assert arviz_nested(draws, num_superchains) > 1.0


def test_nested_rhat_with_one_chain_per_superchain_is_the_classic_rhat():
    # M = 1: B is the variance of the chains' means, W their average variance, so
    # nested R-hat^2 = classic (non-split) R-hat^2 + 1/N, the classic one being (N-1)/N + B/W
    rng = np.random.default_rng(1)
    draws = rng.normal(size=(4, 50)) + np.array([[0.0], [0.3], [0.0], [0.5]])
    classic = float(az.rhat(sample.to_inference_data({"x": draws}), method="identity")["x"])
    assert from_summaries(draws, 4) ** 2 == pytest.approx(classic**2 + 1 / 50)
    assert arviz_nested(draws, 4) ** 2 == pytest.approx(classic**2 + 1 / 50)


def test_nested_rhat_near_one_when_superchains_agree_and_large_when_not():
    rng = np.random.default_rng(2)
    draws = rng.normal(size=(64, 10))
    assert 1.0 <= from_summaries(draws, 4) < 1.05
    stuck = draws.copy()
    stuck[:16] += 3.0  # one superchain in another mode
    assert from_summaries(stuck, 4) > 1.5


def test_nested_rhat_ignores_units_and_the_order_within_superchains():
    rng = np.random.default_rng(3)
    draws = rng.normal(size=(12, 5)) + np.repeat([0.0, 0.4, -0.2], 4)[:, None]
    value = from_summaries(draws, 3)
    assert from_summaries(7.0 * draws - 3.0, 3) == pytest.approx(value)
    shuffled = draws.reshape(3, 4, 5)[:, [2, 0, 3, 1]].reshape(12, 5)  # chains swapped within their superchain
    assert from_summaries(shuffled, 3) == pytest.approx(value)
    regrouped = draws[[0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]]  # the same chains, grouped otherwise
    assert from_summaries(regrouped, 3) != pytest.approx(value)


def test_nested_rhat_from_summaries_of_one_draw_per_chain():
    # N = 1 (where ArviZ, which needs 4 draws a chain, returns NaN): no within-chain variance; W is the spread of
    # the chains' means in a superchain alone; the variances are not used (summary_runner returns 0 for them)
    means = np.array([0.0, 2.0, 10.0, 12.0])
    assert sample.nested_rhat_from_summaries(means, np.zeros(4), 1, 2) == pytest.approx(np.sqrt(1 + 50 / 2))
    assert np.isnan(arviz_nested(means[:, None], 2))


def test_nested_rhat_from_summaries_refuses_bad_input():
    means, variances = np.arange(4.0), np.ones(4)
    with pytest.raises(ValueError, match=r"shape \(chain,\).*one quantity at a time"):
        sample.nested_rhat_from_summaries(means[:, None], variances[:, None], 5, 2)
    with pytest.raises(ValueError, match=r"got \(4,\) and \(3,\)"):
        sample.nested_rhat_from_summaries(means, variances[:3], 5, 2)
    with pytest.raises(ArgumentError, match="num_draws must be a whole number >= 1"):
        sample.nested_rhat_from_summaries(means, variances, 0, 2)
    with pytest.raises(ValueError, match="4 chains cannot be split into 3 superchains"):
        sample.nested_rhat_from_summaries(means, variances, 5, 3)
    with pytest.raises(ValueError, match=r"chain\(s\) \[2\] hold NaN"):
        sample.nested_rhat_from_summaries(means, np.array([1.0, 1.0, np.nan, 1.0]), 5, 2)
    with pytest.raises(ValueError, match=r"variances of chain\(s\) \[1\] are negative"):
        sample.nested_rhat_from_summaries(means, np.array([1.0, -1.0, 1.0, 1.0]), 5, 2)
    with pytest.raises(ValueError, match="every chain is constant; the chains did not move"):
        sample.nested_rhat_from_summaries(np.array([1.0, 1.0, 2.0, 2.0]), np.zeros(4), 5, 2)


# ---------------------------------------------------------------- nested_rhat_threshold


def test_nested_rhat_threshold_of_the_papers_experiments():
    # Margossian et al.'s published analysis (charlesm93/nested-rhat, analyze_results.ipynb): K = 16 superchains of
    # M = 2048 / 16 = 128 chains, tau = 1e-4, threshold sqrt(1 + 1/M + tau); the nested R-hats that its adaptive
    # warm-up cell compared with it (M = 128, tau = 1e-4), 1.0095 the smallest, were all printed "acceptable = False"
    threshold = sample.nested_rhat_threshold(128)
    assert threshold == pytest.approx(np.sqrt(1 + 1 / 128 + 1e-4)) and threshold == pytest.approx(1.003948, abs=1e-6)
    assert all(value > threshold for value in (1.1742830, 1.0388356, 1.0251961, 1.0094726, 1.0101491))


def test_nested_rhat_threshold_follows_chains_per_superchain_and_tolerance():
    assert sample.nested_rhat_threshold(16) == pytest.approx(np.sqrt(1 + 1 / 16 + 1e-4))
    assert sample.nested_rhat_threshold(4, tolerance=0.01) == pytest.approx(np.sqrt(1.26))
    # fewer chains a superchain: its mean is noisier even at stationarity, so the threshold is higher
    thresholds = [sample.nested_rhat_threshold(m) for m in (2, 8, 32, 512)]
    assert thresholds == sorted(thresholds, reverse=True) and thresholds[-1] > 1.0


def test_nested_rhat_threshold_is_what_stationary_chains_reach():
    # independent draws (stationary, mixed chains) of 16 superchains of M chains, one draw each: B / W is about
    # 1 / M, so nested R-hat lands near sqrt(1 + 1/M), around the threshold, not near 1.01
    rng = np.random.default_rng(4)
    for m in (4, 32):
        values = [from_summaries(rng.normal(size=(16 * m, 1)), 16) for _ in range(200)]
        assert np.median(values) == pytest.approx(np.sqrt(1 + 1 / m), abs=0.3 / m)
        assert 0.3 < np.mean(np.array(values) < sample.nested_rhat_threshold(m)) < 0.8


@pytest.mark.parametrize("bad", [1, 0, 2.5, True, "16"])
def test_nested_rhat_threshold_needs_two_chains_a_superchain(bad):
    with pytest.raises(ArgumentError, match="chains_per_superchain must be a whole number >= 2"):
        sample.nested_rhat_threshold(bad)


@pytest.mark.parametrize("bad", [0.0, -1e-4, np.nan, np.inf, "1e-4", None])
def test_nested_rhat_threshold_needs_a_positive_tolerance(bad):
    with pytest.raises(ArgumentError, match="tolerance must be a positive number"):
        sample.nested_rhat_threshold(16, tolerance=bad)


def test_nested_rhat_threshold_refuses_a_tolerance_that_accepts_anything():
    with pytest.raises(ValueError, match="must be small .*1e-4"):
        sample.nested_rhat_threshold(16, tolerance=1.0)
