"""parallel_mcmc.models.normal: the observations, the log-density against the normal density written out,
its maximum at the sample mean and standard deviation, and the chains' starting points."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from parallel_mcmc.models import normal
from parallel_mcmc._validate import ArgumentError


def test_observations_are_drawn_once_from_the_fixed_key():
    data = np.asarray(normal.observed())
    assert data.shape == (normal.NUM_OBSERVATIONS,) == (1000,)
    np.testing.assert_array_equal(data, np.asarray(normal.observed(normal.NUM_OBSERVATIONS, normal.DATA_KEY)))
    # N(10, 20^2): the sample mean is within 4 standard errors (20 / sqrt(1000) = 0.63), the sd within 10 %
    assert abs(data.mean() - normal.TRUE_LOC) < 4 * normal.TRUE_SCALE / np.sqrt(1000)
    assert abs(data.std() / normal.TRUE_SCALE - 1) < 0.1
    other = np.asarray(normal.observed(50, key=3))
    assert other.shape == (50,) and not np.allclose(other, data[:50])


@pytest.mark.parametrize("bad", [1, 0, 10.0, True, "100"])
def test_observed_needs_a_whole_number_of_at_least_two(bad):
    with pytest.raises(ArgumentError, match="num must be a whole number of observations >= 2"):
        normal.observed(bad)


def written_out(data, loc, scale):
    """The normal log-density of the observations, summed: -n log(sigma sqrt(2 pi)) - sum (x - mu)^2 / (2 sigma^2)."""
    data = np.asarray(data, dtype=np.float64)
    return -data.size * np.log(scale * np.sqrt(2 * np.pi)) - np.sum((data - loc) ** 2) / (2 * scale**2)


def test_logdensity_is_the_sum_of_normal_log_densities():
    data = np.array([1.0, 2.0, 4.0])
    logdensity = normal.make_logdensity(data)
    for loc, scale in [(2.0, 2.0), (0.0, 1.0), (-3.0, 0.5)]:
        value = logdensity({"loc": loc, "log_scale": np.log(scale)})
        assert float(value) == pytest.approx(written_out(data, loc, scale), rel=1e-5)


def test_default_logdensity_uses_the_default_observations():
    position = {"loc": 9.0, "log_scale": 3.0}
    want = written_out(normal.observed(), 9.0, np.exp(3.0))
    assert float(normal.logdensity(position)) == pytest.approx(want, rel=1e-5)


def test_logdensity_is_largest_at_the_sample_mean_and_sd():
    # flat priors: the mode is the maximum-likelihood estimate, (mean, log of the sd with divisor n)
    data = np.asarray(normal.observed(200, key=5), dtype=np.float64)
    mode = {"loc": jnp.float32(data.mean()), "log_scale": jnp.float32(np.log(data.std()))}
    logdensity = jax.jit(normal.make_logdensity(data))
    gradient = jax.grad(logdensity)(mode)
    assert abs(float(gradient["loc"])) < 1e-3 and abs(float(gradient["log_scale"])) < 1e-2
    for step in ({"loc": 0.5, "log_scale": 0.0}, {"loc": 0.0, "log_scale": 0.05}, {"loc": -0.5, "log_scale": -0.05}):
        assert logdensity(jax.tree.map(lambda a, b: a + b, mode, step)) < logdensity(mode)


def test_logdensity_runs_under_vmap_over_chains():
    positions = normal.spread_positions(5)
    values = jax.vmap(normal.logdensity)(positions)
    assert values.shape == (5,)
    one_by_one = [normal.logdensity({k: v[i] for k, v in positions.items()}) for i in range(5)]
    np.testing.assert_allclose(values, one_by_one, rtol=1e-6)


@pytest.mark.parametrize("data", [np.zeros((3, 2)), np.zeros(1), np.float32(3.0)])
def test_make_logdensity_needs_a_vector_of_two_observations_or_more(data):
    with pytest.raises(ValueError, match="data must be a 1-D array of at least 2 observations"):
        normal.make_logdensity(data)


@pytest.mark.parametrize("position", [{"loc": 1.0}, {"loc": 1.0, "scale": 2.0}, {"loc": 1.0, "log_scale": 0.0, "x": 1},
                                      (1.0, 0.0), jnp.zeros(2)])
def test_logdensity_names_the_keys_it_needs(position):
    with pytest.raises(TypeError, match="exactly the keys 'loc' and 'log_scale'"):
        normal.logdensity(position)


def test_constant_positions_start_every_chain_at_one_point():
    positions = normal.constant_positions(4)
    assert set(positions) == {"loc", "log_scale"}
    for value in positions.values():
        assert value.dtype == np.float32 and value.shape == (4,)
        np.testing.assert_array_equal(value, 1.0)
    other = normal.constant_positions(2, loc=10.0, log_scale=3.0)
    np.testing.assert_array_equal(other["loc"], [10.0, 10.0])
    np.testing.assert_array_equal(other["log_scale"], [3.0, 3.0])


def test_spread_positions_fill_the_box_from_the_seed():
    positions = normal.spread_positions(500)
    loc, log_scale = positions["loc"], positions["log_scale"]
    assert loc.dtype == log_scale.dtype == np.float32 and loc.shape == log_scale.shape == (500,)
    assert loc.min() >= 0.0 and loc.max() <= 20.0 and log_scale.min() >= 2.0 and log_scale.max() <= 4.0
    assert loc.std() > 5.0 and log_scale.std() > 0.5  # uniform over the box (sd 5.8 and 0.58), not one point
    np.testing.assert_array_equal(normal.spread_positions(500)["loc"], loc)
    assert not np.allclose(normal.spread_positions(500, seed=2)["loc"], loc)
    narrow = normal.spread_positions(50, loc_range=(8.0, 12.0), log_scale_range=(2.9, 3.1))
    assert 8.0 <= narrow["loc"].min() and narrow["loc"].max() <= 12.0
    assert 2.9 <= narrow["log_scale"].min() and narrow["log_scale"].max() <= 3.1


@pytest.mark.parametrize("make", [normal.constant_positions, normal.spread_positions])
@pytest.mark.parametrize("bad", [0, -1, 2.0, True])
def test_positions_need_a_whole_number_of_chains(make, bad):
    with pytest.raises(ArgumentError, match="num_chains must be a whole number >= 1"):
        make(bad)


def test_observed_refuses_a_key_that_is_not_a_seed():
    import pytest

    from parallel_mcmc.models import normal

    for bad in (-1, 1.5, "0"):
        with pytest.raises(ValueError, match="key"):
            normal.observed(10, key=bad)
