"""parallel_mcmc.measure.xla_threads and the worker program behind it: the profiling page's workloads, and a device
with one XLA thread in another process that runs them on request."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from jax.sharding import AxisType

from parallel_mcmc.measure import hlo, xla_threads


def test_the_workloads_on_one_device_and_on_two():
    one = xla_threads.workloads()
    assert set(one) == {"chains", "one chain", "large data", "large data, half"}
    fn, *args = one["large data, half"]
    assert args[1].shape == (xla_threads.NUM_OBSERVATIONS // 2,)
    mesh = jax.make_mesh((2,), ("d",), axis_types=(AxisType.Explicit,), devices=jax.devices()[:2])
    two = xla_threads.workloads(mesh)
    assert set(two) - set(one) == {"chains, 2 devices", "large data, 2 devices", "large data, 2 devices, 2 observations"}
    fn, position, data = two["large data, 2 devices"]
    # split over two devices, the steps add their halves' gradients: the same as one device's steps on all the data
    whole = one["large data"]
    np.testing.assert_allclose(jax.tree.leaves(fn(position, data)), jax.tree.leaves(whole[0](*whole[1:])), rtol=1e-4)
    text = fn.lower(position, data).compile().as_text()
    assert [c.kind for c in hlo.collectives(text)].count("all-reduce") >= 1


def test_a_one_thread_device_runs_a_workload_in_its_own_process():
    with xla_threads.OneThreadDevice() as device:
        assert isinstance(device.partitions, int) and device.partitions >= 0
        out = device.call("one chain")
        fn, *args = xla_threads.workloads()["one chain"]
        mine = fn(*args)
        assert set(out) == {"['loc']", "['log_scale']"}
        np.testing.assert_allclose(out["['loc']"], mine["loc"], rtol=1e-5)
        again = device.caller("one chain")
        again()
        assert len(device.wall_seconds["one chain"]) == 2
        assert 0 < device.cores_busy("one chain") < 1.5  # one thread: at most one core, give or take the clocks
        with pytest.raises(RuntimeError, match="the one-thread worker failed: KeyError"):
            device.call("no such workload")
        with pytest.raises(KeyError, match="no call of 'chains' yet"):
            device.cores_busy("chains")


def test_a_device_not_started_says_how_to_start_it():
    with pytest.raises(RuntimeError, match="start the worker first"):
        xla_threads.OneThreadDevice().call("one chain")
