"""Tests of parallel_mcmc.measure: integration-step accounting."""

from __future__ import annotations

import numpy as np
import pytest

from parallel_mcmc.measure.lockstep import device_loads, integration_steps, lockstep_cost

STEPS = np.array([[1, 7, 3], [3, 1, 15]])


def test_lockstep_cost():
    assert lockstep_cost(STEPS) == 3 + 7 + 15
    assert lockstep_cost(np.full((4, 3), 5)) == 15


def test_device_loads():
    np.testing.assert_array_equal(device_loads(STEPS, 2), [11, 19])
    np.testing.assert_array_equal(device_loads(STEPS, 1), [30])


def test_accounting_rejects_bad_input():
    with pytest.raises(ValueError, match=r"\(chain, draw\)"):
        lockstep_cost(np.arange(5))
    with pytest.raises(ValueError, match="non-negative"):
        lockstep_cost(-STEPS)
    with pytest.raises(ValueError, match="evenly"):
        device_loads(STEPS, 3)
    with pytest.raises(TypeError, match="num_integration_steps"):
        integration_steps(object())


def test_integration_steps_reads_the_info_field_or_the_counts():
    class Info:
        num_integration_steps = np.array([[1, 2], [3, 4]], dtype=np.int32)

    np.testing.assert_array_equal(integration_steps(Info()), [[1, 2], [3, 4]])
    assert integration_steps(Info()).dtype == np.int64
    np.testing.assert_array_equal(integration_steps([[5, 6]]), [[5, 6]])


def test_expected_lockstep_steps_is_the_expected_maximum():
    from parallel_mcmc.measure.lockstep import expected_lockstep_steps

    assert expected_lockstep_steps([7, 7, 7], 50) == 7.0  # no variation, no wait
    # one chain: the mean; two chains of {1, 3} equally likely: max 3 unless both draw 1 (probability 1/4)
    assert expected_lockstep_steps([1, 3], 1) == pytest.approx(2.0)
    assert expected_lockstep_steps([1, 3], 2) == pytest.approx(0.25 * 1 + 0.75 * 3)
    assert expected_lockstep_steps([1, 3], 10_000) == pytest.approx(3.0)
    # against a simulation of the maximum of 16 draws from a geometric distribution
    rng = np.random.default_rng(0)
    one = rng.geometric(0.2, size=200_000)
    simulated = rng.choice(one, size=(20_000, 16)).max(axis=1).mean()
    assert expected_lockstep_steps(one, 16) == pytest.approx(simulated, rel=0.02)


def test_expected_lockstep_steps_rejects_bad_input():
    from parallel_mcmc.measure.lockstep import expected_lockstep_steps

    with pytest.raises(ValueError, match="1-D"):
        expected_lockstep_steps(np.ones((2, 2)), 2)
    with pytest.raises(ValueError, match="whole"):
        expected_lockstep_steps([1.5, 2], 2)
    with pytest.raises(ValueError, match="num_chains"):
        expected_lockstep_steps([1, 2], 0)
