"""Tests of the sinusoid model: fixed data, NumPy and JAX log-densities that agree, clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from parallel_mcmc.models import sinusoid


def test_data_is_fixed_and_read_only():
    t, y = sinusoid.data()
    assert t.shape == y.shape == (sinusoid.NUM_POINTS,)
    t2, y2 = sinusoid.make_data()
    np.testing.assert_array_equal(t, t2)
    np.testing.assert_array_equal(y, y2)
    assert np.all(np.diff(t) >= 0) and 0 <= t[0] and t[-1] <= sinusoid.DURATION
    with pytest.raises(ValueError):
        y[0] = 0.0


def test_noise_has_the_stated_scale():
    t, y = sinusoid.data()
    A, f, phi, c = sinusoid.TRUE_PARAMS
    resid = y - (A * np.sin(2 * np.pi * f * t + phi) + c)
    assert resid.std() == pytest.approx(sinusoid.NOISE_SCALE, rel=0.02)


def test_log_prob_peaks_near_truth_and_respects_prior():
    truth = sinusoid.TRUE_PARAMS
    assert sinusoid.log_prob(truth) > sinusoid.log_prob(truth + [0.05, 0, 0, 0])
    assert sinusoid.log_prob(truth) > sinusoid.log_prob(truth + [0, 1e-3, 0, 0])
    assert sinusoid.log_prob([-1.0, 0.7, 0.4, 0.3]) == -np.inf
    assert sinusoid.log_prob([1.5, 0.7, 0.4, 5.0]) == -np.inf  # bound excluded


def test_log_prob_rejects_wrong_shape():
    with pytest.raises(ValueError, match="4 parameters"):
        sinusoid.log_prob(np.zeros(5))


def test_jax_batch_matches_numpy():
    batch = sinusoid.make_log_prob_batch()
    walkers = sinusoid.initial_walkers(16, seed=4)
    walkers[3, 0] = -1.0
    out = batch(walkers)
    assert isinstance(out, np.ndarray) and out.shape == (16,) and out.dtype == np.float64
    want = np.array([sinusoid.log_prob(w) for w in walkers])
    assert out[3] == -np.inf and want[3] == -np.inf
    finite = np.isfinite(want)
    # float32 in JAX (x64 off): compare differences between walkers, which decide acceptance.
    np.testing.assert_allclose(out[finite] - out[0], want[finite] - want[0], atol=0.5)
    np.testing.assert_allclose(out[finite], want[finite], rtol=1e-5)


def test_jax_batch_on_own_data_and_bad_input():
    t, y = sinusoid.make_data(num_points=50, seed=1)
    batch = sinusoid.make_log_prob_batch(t, y)
    assert batch(sinusoid.initial_walkers(8)).shape == (8,)
    with pytest.raises(ValueError, match=r"\(num_walkers, 4\)"):
        batch(np.zeros(4))
    with pytest.raises(ValueError, match="both t and y"):
        sinusoid.make_log_prob_batch(t, None)
    with pytest.raises(ValueError, match="equal length"):
        sinusoid.make_log_prob_batch(t, y[:-1])


@pytest.mark.parametrize("bad", [1, 4, 2.5, True])
def test_initial_walkers_rejects_bad_counts(bad):
    with pytest.raises(ValueError, match="num_walkers"):
        sinusoid.initial_walkers(bad)


def test_make_data_rejects_bad_size():
    with pytest.raises(ValueError, match="num_points"):
        sinusoid.make_data(num_points=1)
