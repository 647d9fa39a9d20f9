"""Checks of the chapter "Devices": right answers pass, plausible wrong ones are rejected."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from parallel_mcmc.exercises import getting_started as check


def test_ideal_speedup_accepts_the_minimum(capsys):
    check.ideal_speedup(lambda n, c: min(n, c))
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize("wrong, message", [
    (lambda n, c: n, "share the machine"),
    (lambda n, c: c, "at most"),
    (lambda n, c: max(n, c), "core count|device count"),
    (lambda n, c: n / c, "expected"),
    (lambda n, c: "2", "should return one number"),
])
def test_ideal_speedup_rejects_wrong_formulas(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check.ideal_speedup(wrong)


def test_ideal_speedup_rejects_a_value_instead_of_a_function():
    with pytest.raises(AssertionError, match="function itself"):
        check.ideal_speedup(2)


def test_placement_accepts_the_last_device(capsys):
    v = jnp.linspace(0.0, 1.0, 5)
    check.placed_on_last_device(jax.device_put(v, jax.devices()[-1]), v)
    assert "correct" in capsys.readouterr().out


def test_placement_rejects_the_default_device():
    v = jnp.linspace(0.0, 1.0, 5)
    with pytest.raises(AssertionError, match="not on the last device"):
        check.placed_on_last_device(v, v)


def test_placement_rejects_an_array_spread_over_devices():
    v = jnp.arange(8.0)
    mesh = jax.make_mesh((8,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
    with pytest.raises(AssertionError, match="spread over 8 devices"):
        check.placed_on_last_device(jax.device_put(v, NamedSharding(mesh, P("d"))), v)


def test_placement_rejects_changed_values():
    v = jnp.linspace(0.0, 1.0, 5)
    with pytest.raises(AssertionError, match="values or shape changed"):
        check.placed_on_last_device(jax.device_put(v + 1, jax.devices()[-1]), v)


def test_placement_rejects_a_numpy_array():
    v = jnp.linspace(0.0, 1.0, 5)
    with pytest.raises(AssertionError, match="jax.Array"):
        check.placed_on_last_device(list(v), v)


def test_ideal_speedup_accepts_jnp_and_names_own_errors(capsys):
    import jax.numpy as jnp

    check.ideal_speedup(lambda n, c: jnp.minimum(n, c).astype(jnp.float32))  # a 0-d float32 array
    assert "ideal_speedup: correct" in capsys.readouterr().out
    with pytest.raises(AssertionError, match=r"ideal_speedup\(1, 1\) raised NameError: name 'cores' is not defined"):
        check.ideal_speedup(lambda n, c: min(n, cores))  # noqa: F821 - the learner's own mistake


def test_ideal_speedup_on_unseen_cases():
    check.ideal_speedup(min, cases=[((12, 5), 5), ((5, 12), 5)])
    with pytest.raises(AssertionError, match="the device count"):
        check.ideal_speedup(lambda n, c: n, cases=[((12, 5), 5)])


def _layout(steps, step_seconds, num_devices, cores, inner):
    blocks = np.split(np.asarray(steps), num_devices)
    times = ([b.sum() * step_seconds[0] for b in blocks] if inner == "map"
             else [b.max(axis=0).sum() * step_seconds[len(b) - 1] for b in blocks])
    return max(max(times), sum(times) / cores)


def test_predict_sharded_accepts_the_rules_and_the_book_model(capsys):
    from parallel_mcmc import costmodel

    check.predict_sharded(_layout)

    def by_the_helper(steps, step_seconds, num_devices, cores, inner):
        cost = costmodel.StepCost(tuple(range(1, len(step_seconds) + 1)), tuple(step_seconds))
        return costmodel.sharded_time(steps, cost, num_devices, cores, inner=inner)

    check.predict_sharded(by_the_helper)  # the book's model agrees with the rules the check states
    assert capsys.readouterr().out.count("✔") == 2


def _max_only(steps, step_seconds, num_devices, cores, inner):
    return _layout(steps, step_seconds, num_devices, 1e9, inner)


def _work_over_cores(steps, step_seconds, num_devices, cores, inner):
    blocks = np.split(np.asarray(steps), num_devices)
    times = ([b.sum() * step_seconds[0] for b in blocks] if inner == "map"
             else [b.max(axis=0).sum() * step_seconds[len(b) - 1] for b in blocks])
    return sum(times) / cores


def _full_width(steps, step_seconds, num_devices, cores, inner):
    if inner == "map":
        return _layout(steps, step_seconds, num_devices, cores, inner)
    blocks = np.split(np.asarray(steps), num_devices)
    times = [b.max(axis=0).sum() * step_seconds[len(steps) - 1] for b in blocks]
    return max(max(times), sum(times) / cores)


def _summed_lockstep(steps, step_seconds, num_devices, cores, inner):
    blocks = np.split(np.asarray(steps), num_devices)
    times = [b.sum() * step_seconds[len(b) - 1 if inner == "vmap" else 0] for b in blocks]
    return max(max(times), sum(times) / cores)


def _over_draws(steps, step_seconds, num_devices, cores, inner):
    if inner == "map":
        return _layout(steps, step_seconds, num_devices, cores, inner)
    blocks = np.split(np.asarray(steps), num_devices)
    times = [b.max(axis=1).sum() * step_seconds[len(b) - 1] for b in blocks]
    return max(max(times), sum(times) / cores)


@pytest.mark.parametrize("wrong, message", [
    (_max_only, "longest device alone"),
    (_work_over_cores, "all the work over the cores"),
    (_full_width, "width of its own block"),
    (_summed_lockstep, "slowest chain"),
    (_over_draws, "over draws"),
    (lambda *a: 1 / _layout(*a), "expected"),
])
def test_predict_sharded_rejects_plausible_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check.predict_sharded(wrong)
    with pytest.raises(AssertionError, match="function itself"):
        check.predict_sharded(1.0)
