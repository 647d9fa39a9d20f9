"""parallel_mcmc.pools (workers.py): process-pool workers, the data they are given, a pool that counts tasks."""

from __future__ import annotations

import multiprocessing as mp
import pickle
import time
from multiprocessing import shared_memory

import numpy as np
import pytest

from parallel_mcmc.pools import workers as pools


@pytest.fixture
def no_worker_data(monkeypatch):
    monkeypatch.setattr(pools, "_DATA", None)
    monkeypatch.setattr(pools, "_SHM", None)


def test_burn_cpu_burns_cpu_time():
    before = time.process_time()
    pools.burn_cpu(0.02)
    assert time.process_time() - before >= 0.02


@pytest.mark.parametrize("bad", [-0.1, float("nan")])
def test_burn_cpu_rejects_bad_seconds(bad):
    with pytest.raises(ValueError, match="non-negative"):
        pools.burn_cpu(bad)


def test_busy_log_prob_is_standard_normal():
    theta = np.array([1.0, -2.0, 0.5])
    assert pools.busy_log_prob(theta, cost=0.0) == pytest.approx(-0.5 * (1 + 4 + 0.25))


def test_data_versions_agree(no_worker_data):
    data = np.random.default_rng(0).normal(size=(10, 6))
    theta = np.arange(4.0)
    want = -0.5 * np.sum((theta - data[0, :4]) ** 2)
    assert pools.log_prob_with_data(theta, data, cost=0.0) == pytest.approx(want)
    pools.set_worker_data(data)
    assert pools.log_prob_worker_data(theta, cost=0.0) == pytest.approx(want)


def test_log_prob_with_data_rejects_bad_data():
    with pytest.raises(ValueError, match="2-d array with at least 4 columns"):
        pools.log_prob_with_data(np.zeros(4), np.zeros((3, 2)), cost=0.0)


def test_worker_data_unset_says_what_to_do(no_worker_data):
    with pytest.raises(RuntimeError, match="initializer=set_worker_data"):
        pools.log_prob_worker_data(np.zeros(2), cost=0.0)


def test_attach_shared_data_views_the_block(no_worker_data):
    data = np.random.default_rng(1).normal(size=(5, 3))
    block = shared_memory.SharedMemory(create=True, size=data.nbytes)
    try:
        np.ndarray(data.shape, data.dtype, buffer=block.buf)[:] = data
        pools.attach_shared_data(block.name, data.shape, data.dtype.str)
        np.testing.assert_array_equal(pools.worker_data(), data)
        assert not pools.worker_data().flags.owndata  # a view, not a copy
    finally:
        view_holder = pools._SHM
        pools._DATA = None
        view_holder.close()
        block.close()
        block.unlink()


def test_attach_shared_data_rejects_bad_name():
    with pytest.raises(TypeError, match="shm.name"):
        pools.attach_shared_data(None, (2, 2), "<f8")


def test_task_with_worker_data_is_small():
    from emcee.ensemble import _FunctionWrapper

    data = np.zeros((1000, 100))
    assert len(pickle.dumps(_FunctionWrapper(pools.log_prob_with_data, [data], None))) > data.nbytes
    assert len(pickle.dumps(_FunctionWrapper(pools.log_prob_worker_data, None, None))) < 1000


def test_initializer_works_under_spawn():
    data = np.random.default_rng(2).normal(size=(20, 5))
    thetas = [np.full(5, float(i)) for i in range(4)]
    with mp.get_context("spawn").Pool(2, initializer=pools.set_worker_data, initargs=(data,)) as pool:
        got = pool.map(pools.log_prob_worker_data, thetas)
    np.testing.assert_allclose(got, [pools.log_prob_with_data(t, data, cost=0.0) for t in thetas])


def test_sinusoid_log_prob_points():
    from parallel_mcmc.models import sinusoid

    theta = sinusoid.initial_walkers(8, seed=2)[3]
    assert pools.sinusoid_log_prob_points(theta, sinusoid.NUM_POINTS) == sinusoid.log_prob(theta)
    t, y = sinusoid.data()
    resid = y[:10] - (theta[0] * np.sin(2 * np.pi * theta[1] * t[:10] + theta[2]) + theta[3])
    assert pools.sinusoid_log_prob_points(theta, 10) == pytest.approx(-2 * np.sum(resid**2), rel=1e-12)
    assert pools.sinusoid_log_prob_points(np.array([-1.0, 0.7, 0.4, 0.3]), 10) == -np.inf
    with pytest.raises(ValueError, match="at most"):
        pools.sinusoid_log_prob_points(theta, sinusoid.NUM_POINTS + 1)
