"""Tests of parallel_mcmc.lockstep: integration-step accounting."""

from __future__ import annotations

import numpy as np
import pytest

from parallel_mcmc.lockstep import device_loads, integration_steps, lockstep_cost

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
