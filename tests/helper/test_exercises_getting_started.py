"""Checks of the chapter "Devices": right answers pass, plausible wrong ones are rejected."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from parallel_mcmc.exercises import getting_started as check


import math


def _pay(work, fixed, num_devices, cores, busy=1.0):
    share = max(1 / num_devices, min(max(busy, 1.0), cores) / cores)
    return None if share >= 1 else math.floor(fixed / (work * (1 - share))) + 1


def test_steps_to_pay_accepts_the_rule_and_the_book_model(capsys):
    from parallel_mcmc import measure

    check.steps_to_pay(_pay)

    def by_search(work, fixed, d, cores, busy):  # the first n at which the book's model says the split is faster
        for n in range(1, 10_000):
            if measure.split_call_time(n * work / d, d, cores, fixed, busy) < n * work:
                return n
        return None

    check.steps_to_pay(by_search)
    check.steps_to_pay(lambda w, f, d, c, b: None if _pay(w, f, d, c, b) is None else jnp.int32(_pay(w, f, d, c, b)))
    assert capsys.readouterr().out.count("✔") == 3


@pytest.mark.parametrize("wrong, message", [
    (lambda w, f, d, c, b: _pay(w, f, d, 1e12, 1.0), "core of its own|never faster"),
    (lambda w, f, d, c, b: _pay(w, f, d, c, 1.0), "kept one core busy|never faster"),
    (lambda w, f, d, c, b: None if _pay(w, f, d, c, b) is None else _pay(w, f, d, c, b) - 1, "still slower"),
    (lambda w, f, d, c, b: None if _pay(w, f, d, c, b) is None
     else f / (w * (1 - max(1 / d, min(max(b, 1), c) / c))), "break-even itself"),
    (lambda w, f, d, c, b: _pay(w, f, d, c, b) or math.inf, "return None"),
    (lambda w, f, d, c, b: None, "pays from"),
    (lambda w, f, d, c, b: _pay(w, 2 * f, d, c, b), "expected"),
])
def test_steps_to_pay_rejects_plausible_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check.steps_to_pay(wrong)


def _pay_unraised(work, fixed, num_devices, cores, busy=1.0):
    """The rule with a reading of cores_busy below 1 taken as it is (not raised to 1)."""
    share = max(1 / num_devices, min(busy, cores) / cores)
    return None if share >= 1 else math.floor(fixed / (work * (1 - share))) + 1


def test_steps_to_pay_refuses_a_reading_below_one_taken_as_it_is():
    with pytest.raises(AssertionError, match=r"takes the reading 0\.5 as it is.*counts as 1"):
        check.steps_to_pay(_pay_unraised)
    never = (5e-6, 1e-4, 4, 1.0, 0.5)  # one core, a piece keeps it busy: never pays, unless 0.5 is taken as it is
    with pytest.raises(AssertionError, match=r"return None\. A piece keeps one core busy at least"):
        check.steps_to_pay(_pay_unraised, cases=[never])
    check.steps_to_pay(_pay, cases=[never])


def test_steps_to_pay_has_a_case_that_pays_from_the_first_step():
    def searched_from_two(w, f, d, c, b):  # a search that starts one too late
        answer = _pay(w, f, d, c, b)
        return None if answer is None else max(answer, 2)

    with pytest.raises(AssertionError, match=r"returned 2; expected 1"):
        check.steps_to_pay(searched_from_two)


@pytest.mark.parametrize("wrong, message", [
    (lambda w, f, d, c, b: {"steps": _pay(w, f, d, c, b)}, r"returned \{'steps': 203\} \(dict\); it should return one number"),
    (lambda w, f, d, c, b: str(_pay(w, f, d, c, b)), r"returned '203' \(str\)"),
    (lambda w, f, d, c, b: (_pay(w, f, d, c, b), None), r"\(tuple\); it should return one number"),
    (_pay(1e-6, 1.013e-4, 2, 2.0, 1.0), r"function itself, `steps_to_pay`, not the number it returns \(got int\)"),
])
def test_steps_to_pay_refuses_answers_of_the_wrong_type(wrong, message):
    with pytest.raises(TypeError, match=message):
        check.steps_to_pay(wrong)


def test_steps_to_pay_rejects_a_value_and_names_own_errors():
    with pytest.raises(AssertionError, match="function itself"):
        check.steps_to_pay(203)
    with pytest.raises(AssertionError, match=r"raised NameError: name 'cores' is not defined"):
        check.steps_to_pay(lambda w, f, d, c, b: _pay(w, f, d, cores, b))  # noqa: F821 - the learner's own mistake


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


def test_placement_rejects_the_device_before_the_last():
    v = jnp.linspace(0.0, 1.0, 5)
    with pytest.raises(AssertionError, match="not on the last device"):
        check.placed_on_last_device(jax.device_put(v, jax.devices()[len(jax.devices()) - 2]), v)


@pytest.mark.parametrize("make, given", [
    (lambda v: list(v), "list"),
    (lambda v: np.asarray(v), "ndarray"),
    (lambda v: jax.devices()[-1], "CpuDevice|Device"),
    (lambda v: None, "NoneType"),
])
def test_placement_refuses_answers_of_the_wrong_type(make, given):
    v = jnp.linspace(0.0, 1.0, 5)
    with pytest.raises(TypeError, match=f"Expected a jax.Array, got ({given})"):
        check.placed_on_last_device(make(v), v)


def _layout(steps, step_seconds, num_devices, cores, inner):
    blocks = np.split(np.asarray(steps), num_devices)
    times = ([b.sum() * step_seconds[0] for b in blocks] if inner == "map"
             else [b.max(axis=0).sum() * step_seconds[len(b) - 1] for b in blocks])
    return max(max(times), sum(times) / cores)


def test_predict_sharded_accepts_the_rules_and_the_book_model(capsys):
    from parallel_mcmc import measure

    check.predict_sharded(_layout)

    def by_the_helper(steps, step_seconds, num_devices, cores, inner):
        cost = measure.StepCost(tuple(range(1, len(step_seconds) + 1)), tuple(step_seconds))
        return measure.sharded_time(steps, cost, num_devices, cores, inner=inner)

    check.predict_sharded(by_the_helper)  # the book's model agrees with the rules the check states
    assert capsys.readouterr().out.count("✔") == 2


def _max_only(steps, step_seconds, num_devices, cores, inner):
    return _layout(steps, step_seconds, num_devices, 1e9, inner)


def _work_over_cores(steps, step_seconds, num_devices, cores, inner):
    blocks = np.split(np.asarray(steps), num_devices)
    times = ([b.sum() * step_seconds[0] for b in blocks] if inner == "map"
             else [b.max(axis=0).sum() * step_seconds[len(b) - 1] for b in blocks])
    return sum(times) / cores


def _lockstep_slip(axis: int, all_chains_wide: bool):
    """A wrong lockstep rule: the maximum over ``axis`` of a block, a step as wide as all the chains or the block."""
    def wrong(steps, step_seconds, num_devices, cores, inner):
        if inner == "map":
            return _layout(steps, step_seconds, num_devices, cores, inner)
        blocks = np.split(np.asarray(steps), num_devices)
        times = [b.max(axis=axis).sum() * step_seconds[len(steps if all_chains_wide else b) - 1] for b in blocks]
        return max(max(times), sum(times) / cores)

    return wrong


_full_width = _lockstep_slip(axis=0, all_chains_wide=True)


def _summed_lockstep(steps, step_seconds, num_devices, cores, inner):
    blocks = np.split(np.asarray(steps), num_devices)
    times = [b.sum() * step_seconds[len(b) - 1 if inner == "vmap" else 0] for b in blocks]
    return max(max(times), sum(times) / cores)


_over_draws = _lockstep_slip(axis=1, all_chains_wide=False)


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
    with pytest.raises(TypeError, match=r"function itself.*\(got float\)"):
        check.predict_sharded(1.0)


def _per_device(steps, step_seconds, num_devices, cores, inner):
    """Each device's time, the list the model's maximum is taken over, returned as it is."""
    blocks = np.split(np.asarray(steps), num_devices)
    return ([b.sum() * step_seconds[0] for b in blocks] if inner == "map"
            else [b.max(axis=0).sum() * step_seconds[len(b) - 1] for b in blocks])


@pytest.mark.parametrize("wrong, message", [
    (_per_device, r"returned \[.*\] \(list\); it should return one number"),
    (lambda *a: None, r"returned None \(NoneType\)"),
    (lambda *a: {"time": _layout(*a)}, r"\(dict\); it should return one number"),
])
def test_predict_sharded_refuses_answers_of_the_wrong_type(wrong, message):
    with pytest.raises(TypeError, match=message):
        check.predict_sharded(wrong)


# --------------------------------------------------------------------------- bottleneck (the profiling page)


def _heaviest(events):
    totals = {}
    for e in events:
        totals[e["name"]] = totals.get(e["name"], 0.0) + e["dur"]
    return max(totals, key=totals.get)


def test_bottleneck_accepts_the_sum_by_name(capsys):
    check.bottleneck(_heaviest)
    assert "bottleneck" in capsys.readouterr().out


@pytest.mark.parametrize("wrong, message", [
    (lambda ev: max(ev, key=lambda e: e["dur"])["name"], "longest single event"),
    (lambda ev: max({e["name"] for e in ev}, key=lambda n: sum(e["name"] == n for e in ev)), "most frequent"),
    (lambda ev: _heaviest([e for e in ev if e["tid"] == ev[0]["tid"]]), "one thread only|longest single"),
    (lambda ev: "while.1", "no event's name"),
])
def test_bottleneck_rejects_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check.bottleneck(wrong)


def _totals(events):
    totals = {}
    for e in events:
        totals[e["name"]] = totals.get(e["name"], 0.0) + e["dur"]
    return totals


@pytest.mark.parametrize("wrong, message", [
    (lambda ev: 3, r"returned 3 \(int\); return the operation's name, a string"),
    (lambda ev: max(_totals(ev).values()), r"\(float\); return the operation's name"),
    (lambda ev: max(ev, key=lambda e: e["dur"]), r"\(dict\); return the operation's name"),
    (lambda ev: None, r"returned None \(NoneType\)"),
    (_heaviest([{"name": "x", "dur": 1.0}]), r"function itself.*\(got str\)"),
])
def test_bottleneck_refuses_answers_of_the_wrong_type(wrong, message):
    with pytest.raises(TypeError, match=message):
        check.bottleneck(wrong)
