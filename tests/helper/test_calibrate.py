"""parallel_mcmc.measure (calibrate.py): the calibration loops, on a real pool and a real mesh."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from parallel_mcmc import measure as cm
from parallel_mcmc.measure.timing import Timing


class _SlowMap:
    """A pool whose map costs a fixed 2 ms per task, whatever the function."""

    def __init__(self):
        self.maps = 0

    def map(self, fn, tasks):
        import time

        self.maps += 1
        end = time.perf_counter() + 2e-3 * len(tasks)
        while time.perf_counter() < end:
            pass
        return [fn(t) for t in tasks]


def test_pool_overhead_is_the_map_time_per_task():
    pool = _SlowMap()
    per_task = cm.pool_overhead(pool, abs, range(5), repeats=3)
    assert pool.maps == 4  # one untimed map, then the repeats
    assert 2e-3 <= per_task < 4e-3


def test_pool_overhead_refuses_nonsense():
    with pytest.raises(ValueError, match="tasks is empty"):
        cm.pool_overhead(_SlowMap(), abs, [])
    with pytest.raises(TypeError, match="map method"):
        cm.pool_overhead(object(), abs, [1])


def test_collective_calls_time_a_collective_between_work_and_the_work_alone():
    from jax.sharding import AxisType, NamedSharding, PartitionSpec

    mesh = jax.make_mesh((2,), ("d",), axis_types=(AxisType.Explicit,), devices=jax.devices()[:2])
    local = jax.device_put(jnp.ones(4), NamedSharding(mesh, PartitionSpec("d")))
    calls = cm.collective_calls(lambda v: jax.lax.psum(v, "d"), mesh, "d", local, calls=3, work=2)
    assert set(calls) == {"collective between work", "work alone"}
    programs = {name: fn.lower(*args).compile().as_text() for name, (fn, *args) in calls.items()}
    # the loops hold what they say: one all-reduce in the loop with the collective, none in the work alone,
    # and the work in both (its sine was not dropped as unused)
    assert "all-reduce" in programs["collective between work"] and "all-reduce" not in programs["work alone"]
    assert all("sine" in text for text in programs.values())
    assert all(fn(*args).shape == (4,) for fn, *args in calls.values())
    timings = {"collective between work": Timing("a", (0.010, 0.012), 0.02), "work alone": Timing("b", (0.004, 0.005), 0.01)}
    assert cm.collective_cost(timings, calls=3) == pytest.approx(0.002)
    timings["work alone"] = Timing("b", (0.020,), 0.02)  # noise: never a negative cost
    assert cm.collective_cost(timings, calls=3) == 0.0
    with pytest.raises(KeyError, match="work alone"):
        cm.collective_cost({"collective between work": timings["collective between work"]})
    with pytest.raises(ValueError):
        cm.collective_calls(lambda v: v, mesh, "d", local, calls=0)
