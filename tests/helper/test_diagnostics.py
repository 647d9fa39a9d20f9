"""parallel_mcmc.diagnostics: runners' draws to ArviZ, and nested R-hat against values worked by hand, against
ArviZ's classic R-hat, and in its properties (superchains that agree, or do not)."""

from __future__ import annotations

import arviz as az
import numpy as np
import pytest

from parallel_mcmc import diagnostics
from parallel_mcmc.validate import ArgumentError

# ---------------------------------------------------------------- to_inference_data


def test_to_inference_data_keeps_chain_and_draw_axes():
    rng = np.random.default_rng(0)
    positions = {"loc": rng.normal(size=(4, 30)), "beta": rng.normal(size=(4, 30, 3)).astype(np.float32)}
    idata = diagnostics.to_inference_data(positions)
    posterior = idata.posterior
    assert posterior.sizes["chain"] == 4 and posterior.sizes["draw"] == 30
    assert posterior["beta"].shape == (4, 30, 3)
    np.testing.assert_array_equal(posterior["loc"].values, positions["loc"])
    np.testing.assert_array_equal(posterior["beta"].values, positions["beta"])
    rhat = az.rhat(idata)  # what the chapters do with it
    assert set(rhat.data_vars) == {"loc", "beta"} and float(rhat["loc"]) < 1.1


def test_to_inference_data_takes_jax_arrays():
    import jax.numpy as jnp

    idata = diagnostics.to_inference_data({"x": jnp.arange(12.0).reshape(3, 4)})
    np.testing.assert_array_equal(idata.posterior["x"].values, np.arange(12.0).reshape(3, 4))


@pytest.mark.parametrize("bad", [{}, [np.zeros((2, 3))], np.zeros((2, 3)), None])
def test_to_inference_data_needs_a_non_empty_dict(bad):
    with pytest.raises(TypeError, match="non-empty dict of \\(chain, draw\\) arrays"):
        diagnostics.to_inference_data(bad)


def test_to_inference_data_says_how_to_add_the_chain_axis():
    with pytest.raises(ValueError, match=r"'loc' has shape \(30,\); ArviZ needs \(chain, draw\) axes.*value\[None\]"):
        diagnostics.to_inference_data({"scale": np.zeros((2, 30)), "loc": np.zeros(30)})


# ---------------------------------------------------------------- nested_rhat


def test_nested_rhat_worked_by_hand():
    # superchains {0, 1} and {2, 3}: chain means 1, 3 | 11, 13; superchain means 2 | 12, so B = var(2, 12) = 50;
    # W = var(1, 3) + mean of the chains' variances var(0, 2) = 2 + 2 = 4 in both: sqrt(1 + 50 / 4)
    draws = np.array([[0.0, 2.0], [2.0, 4.0], [10.0, 12.0], [12.0, 14.0]])
    assert diagnostics.nested_rhat(draws, 2) == pytest.approx(np.sqrt(13.5))


def test_nested_rhat_of_one_draw_per_chain():
    # N = 1: no within-chain variance; W is the spread of the chains' means in a superchain alone
    draws = np.array([[0.0], [2.0], [10.0], [12.0]])
    assert diagnostics.nested_rhat(draws, 2) == pytest.approx(np.sqrt(1 + 50 / 2))


def test_nested_rhat_with_one_chain_per_superchain_is_the_classic_rhat():
    # M = 1: B is the variance of the chains' means, W their average variance, so
    # nested R-hat^2 = classic (non-split) R-hat^2 + 1/N, the classic one being (N-1)/N + B/W
    rng = np.random.default_rng(1)
    draws = rng.normal(size=(4, 50)) + np.array([[0.0], [0.3], [0.0], [0.5]])
    classic = float(az.rhat(diagnostics.to_inference_data({"x": draws}), method="identity")["x"])
    assert diagnostics.nested_rhat(draws, 4) ** 2 == pytest.approx(classic**2 + 1 / 50)


def test_nested_rhat_near_one_when_superchains_agree_and_large_when_not():
    rng = np.random.default_rng(2)
    draws = rng.normal(size=(64, 10))
    assert 1.0 <= diagnostics.nested_rhat(draws, 4) < 1.05
    stuck = draws.copy()
    stuck[:16] += 3.0  # one superchain in another mode
    assert diagnostics.nested_rhat(stuck, 4) > 1.5


def test_nested_rhat_ignores_units_and_the_order_within_superchains():
    rng = np.random.default_rng(3)
    draws = rng.normal(size=(12, 5)) + np.repeat([0.0, 0.4, -0.2], 4)[:, None]
    value = diagnostics.nested_rhat(draws, 3)
    assert diagnostics.nested_rhat(7.0 * draws - 3.0, 3) == pytest.approx(value)
    shuffled = draws.reshape(3, 4, 5)[:, [2, 0, 3, 1]].reshape(12, 5)  # chains swapped within their superchain
    assert diagnostics.nested_rhat(shuffled, 3) == pytest.approx(value)
    regrouped = draws[[0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]]  # the same chains, grouped otherwise
    assert diagnostics.nested_rhat(regrouped, 3) != pytest.approx(value)


@pytest.mark.parametrize("shape", [(12,), (2, 3, 4)])
def test_nested_rhat_needs_chain_and_draw_axes(shape):
    with pytest.raises(ValueError, match=r"shape \(chain, draw\).*one quantity at a time"):
        diagnostics.nested_rhat(np.zeros(shape), 2)


@pytest.mark.parametrize("bad", [1, 0, 2.0, True])
def test_nested_rhat_needs_two_superchains_or_more(bad):
    with pytest.raises(ArgumentError, match="num_superchains must be a whole number >= 2"):
        diagnostics.nested_rhat(np.random.default_rng(0).normal(size=(4, 3)), bad)


def test_nested_rhat_needs_equal_superchains():
    with pytest.raises(ValueError, match="6 chains cannot be split into 4 superchains of equal size"):
        diagnostics.nested_rhat(np.random.default_rng(0).normal(size=(6, 3)), 4)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nested_rhat_refuses_non_finite_draws(bad):
    draws = np.random.default_rng(0).normal(size=(4, 3))
    draws[1, 2] = bad
    with pytest.raises(ValueError, match=r"chain\(s\) \[1\] hold NaN or infinite values.*diverged"):
        diagnostics.nested_rhat(draws, 2)


def test_nested_rhat_of_constant_chains_is_undefined():
    with pytest.raises(ValueError, match="every chain is constant; the chains did not move"):
        diagnostics.nested_rhat(np.repeat([[1.0], [1.0], [2.0], [2.0]], 5, axis=1), 2)
    with pytest.raises(ValueError, match="one chain a superchain and one draw a chain.*several chains"):
        diagnostics.nested_rhat(np.array([[1.0], [2.0]]), 2)
