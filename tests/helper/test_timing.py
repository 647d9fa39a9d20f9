"""parallel_mcmc.measure: compilation left out, outputs blocked on, speedups beside ideals."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from parallel_mcmc.measure import timing
from parallel_mcmc.measure.timing import Timing, speedup, time_call, time_interleaved, timed


def test_counts_warmup_and_repeats():
    calls = []

    def fn(x):
        calls.append(x)
        return x

    t = time_call(fn, 1, repeats=4, warmup=2, label="counted")
    assert len(calls) == 6
    assert len(t.times) == 4 and t.label == "counted"
    assert t.first_call >= 0 and t.median >= 0 and t.spread >= 0


def test_blocks_on_every_output(monkeypatch):
    blocked = []
    monkeypatch.setattr(timing, "_block", lambda out: blocked.append(out))
    out = {"a": jnp.ones(3), "b": (jnp.zeros(2), jnp.arange(4))}
    time_call(lambda: out, repeats=2, warmup=1)
    assert len(blocked) == 3 and all(b is out for b in blocked)
    blocked.clear()
    time_interleaved({"a": (lambda: out,), "b": (lambda: out,)}, repeats=2, warmup=0)
    assert len(blocked) == 4, "every call of the one timing loop waits for its output"


def test_one_loop_keeps_wall_and_cpu_seconds_of_every_timed_call():
    import time

    def spin(seconds):
        end = time.process_time() + seconds
        while time.process_time() < end:
            pass

    timings, _ = time_interleaved({"sleep": (time.sleep, 0.03), "spin": (spin, 0.03)}, repeats=3)
    sleep, spun = timings["sleep"], timings["spin"]
    assert len(sleep.cpu_times) == len(sleep.times) == 3
    assert sleep.cores_busy < 0.3 < spun.cores_busy  # loose on the upper side: the machine may be shared
    assert all(cpu >= 0.03 * 0.9 for cpu in spun.cpu_times)
    with pytest.raises(ValueError, match="no CPU times"):
        Timing("typed", (1.0,), first_call=1.0).cores_busy


def test_warmup_zero_takes_the_first_timed_call_as_first_call():
    calls = []
    timings, _ = time_interleaved({"f": (calls.append, 1)}, repeats=2, warmup=0)
    assert len(calls) == 2 and timings["f"].first_call == timings["f"].times[0]
    with pytest.raises(ValueError, match="warmup"):
        time_interleaved({"f": (calls.append, 1)}, warmup=-1)


def test_real_pytree_output_is_waited_for():
    f = jax.jit(lambda x: {"sum": x.sum(), "parts": (x * 2, x - 1)})
    t = time_call(f, jnp.arange(1000.0), repeats=3)
    assert t.first_call > t.best  # the first call compiles
    assert t.compile_estimate > 0


def test_median_and_spread():
    t = Timing("t", (3.0, 1.0, 2.0), first_call=10.0)
    assert t.median == 2.0 and t.best == 1.0 and t.spread == 2.0 and t.compile_estimate == 8.0
    assert "median 2.00 s over 3 runs" in str(t)


def test_time_with_calibration_times_both_in_the_same_rounds_and_returns_them_apart():
    order = []

    def call(name):
        order.append(name)
        return name

    (timings, outputs), (calibration, calibration_out) = timing.time_with_calibration(
        {"run": (call, "run")}, {"cost": (call, "cost")}, repeats=2)
    assert order == ["run", "cost"] * 3  # compile, then two rounds, taking turns
    assert list(timings) == ["run"] and list(calibration) == ["cost"] and len(calibration["cost"].times) == 2
    assert outputs == {"run": "run"} and calibration_out == {"cost": "cost"}
    with pytest.raises(ValueError, match="own label"):
        timing.time_with_calibration({"a": (call, "a")}, {"a": (call, "a")})
    with pytest.raises(TypeError, match="calibration"):
        timing.time_with_calibration({"a": (call, "a")}, {})


@pytest.mark.parametrize("kwargs, match", [
    ({"repeats": 0}, "repeats"),
    ({"warmup": 0}, "warmup"),
    ({"repeats": 2.5}, "repeats"),
])
def test_rejects_bad_counts(kwargs, match):
    with pytest.raises(ValueError, match=match):
        time_call(lambda: 1, **kwargs)


def test_rejects_a_result_instead_of_a_function():
    with pytest.raises(TypeError, match="not its result"):
        time_call(jnp.ones(3))


def test_a_speedup_is_said_by_the_narrator_with_its_interval_and_ideal():
    base = Timing("serial", (4.0, 4.1, 3.9), first_call=5.0)
    fast = Timing("parallel", (2.0, 2.05, 1.95), first_call=3.0)
    s = speedup(base, fast, ideal=4, ideal_reason="4 cores")
    assert s.measured == 2.0 and s.ideal == 4.0
    said = str(s)
    assert said.startswith("parallel against serial: faster, 2.00x (95% interval") and "ideal is 4.00x" in said, said
    assert said.endswith("The ideal counts 4 cores."), said
    assert "efficiency" not in said and "%" not in said.replace("95%", ""), said  # no share of a bound


def test_a_speedup_above_its_ideal_is_not_a_share_over_100_percent():
    base = Timing("serial", (4.0, 4.1, 3.9), first_call=5.0)
    fast = Timing("parallel", (1.0, 1.02, 0.98), first_call=3.0)
    said = str(speedup(base, fast, ideal=2))  # 4x measured against a model's 2x: the model is wrong
    assert "4.00x" in said and "ideal is 2.00x" in said and "%" not in said.replace("95%", ""), said
    assert "model" in said, said


def test_speedup_rejects_bad_parts():
    t = Timing("t", (1.0,), first_call=1.0)
    with pytest.raises(ValueError, match="positive"):
        speedup(t, t, ideal=0)
    with pytest.raises(TypeError, match="Timing"):
        speedup(1.0, t, ideal=2)


def test_timed_and_interleaved_keep_outputs():
    f = jax.jit(lambda x: x * 2)
    t, out = timed(f, jnp.arange(3.0), repeats=2, label="double")
    assert isinstance(t, Timing) and len(t.times) == 2 and t.label == "double"
    np.testing.assert_array_equal(out, [0, 2, 4])
    timings, outs = time_interleaved({"a": (f, jnp.ones(2)), "b": (jnp.sin, jnp.zeros(2))}, repeats=2)
    assert set(timings) == {"a", "b"} and all(len(t.times) == 2 for t in timings.values())
    np.testing.assert_array_equal(outs["a"], [2, 2])
    with pytest.raises(TypeError, match="non-empty"):
        time_interleaved({})
    with pytest.raises(TypeError, match="callable"):
        time_interleaved({"a": ("f",)})
