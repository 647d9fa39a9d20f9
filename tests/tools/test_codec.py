"""The grader's data path: values to JSON in the sandbox (harness), back in the verdict runner (codec), and the verdict runner."""

from __future__ import annotations

import functools
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from booktools.coursework import verdict_runner
from booktools.coursework.codec import ForgedData, Replay, decode
from booktools.coursework.harness import Recorder, encode
from parallel_mcmc import pools
from parallel_mcmc.exercises import beyond_one_machine
from parallel_mcmc.exercises.beyond_one_machine import ex_processes_chains
from parallel_mcmc.measure.timing import Timing


def round_trip(value, recorders=None):
    recorders = {} if recorders is None else recorders
    data = json.loads(json.dumps(encode(value, recorders)))
    return decode(data, records={str(i): {"calls": r.calls, "programs": r.programs} for i, r in recorders.items()})


def test_plain_values_and_containers_come_back():
    value = {"a": (1, 2.5, None, "x", float("inf")), "b": [np.arange(3), np.float32(0.5)], 3: {1, 2},
             "stub": ..., "other": object()}
    back = round_trip(value)
    assert back["stub"] is Ellipsis and type(back["other"]).__name__ == "object"
    assert back["a"][:4] == (1, 2.5, None, "x") and back["a"][4] == float("inf")
    np.testing.assert_array_equal(back["b"][0], np.arange(3))
    assert back["b"][1].dtype == np.float32 and back[3] == {1, 2}


def test_sharded_arrays_keys_and_helper_objects_come_back():
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    a = jax.device_put(jnp.arange(32.0).reshape(4, 8), NamedSharding(mesh, P("x", "y")))
    keys = jax.random.split(jax.random.key(3), 8)
    timing = Timing(label="t", times=(1.0, 2.0, 3.0), first_call=4.0)
    back = round_trip({"a": a, "keys": keys, "t": timing, "spec": P("x", None), "last": jax.devices()[-1],
                       "f": functools.partial(pools.log_prob_with_data, cost=0.0)})
    assert back["a"].sharding.is_equivalent_to(a.sharding, 2) and str(jax.typeof(back["a"])) == str(jax.typeof(a))
    np.testing.assert_array_equal(np.asarray(back["a"]), np.asarray(a))
    np.testing.assert_array_equal(jax.random.key_data(back["keys"]), jax.random.key_data(keys))
    assert back["t"] == timing and back["spec"] == P("x", None) and back["last"] == jax.devices()[-1]
    assert back["f"].func is pools.log_prob_with_data and back["f"].keywords == {"cost": 0.0}


def test_a_learners_function_answers_only_recorded_calls():
    recorder = Recorder(lambda x: (_ for _ in ()).throw(KeyError("k")) if x == 0 else 2 * x, 0)
    recorder(3)
    with pytest.raises(KeyError):
        recorder(0)
    back = round_trip(recorder, {0: recorder})
    assert isinstance(back, Replay) and back(3) == 6
    with pytest.raises(KeyError) as err:
        back(0)
    assert str(err.value) == "'k'"
    with pytest.raises(ForgedData, match="no record"):
        back(4)


def test_the_verdict_runner_decides_on_the_record_and_on_unseen_inputs(capsys):
    """A record that holds right answers for the chapter's inputs only (forged, or a lookup table) fails."""
    table = {args: want for args, want in ex_processes_chains.CASES}

    def lookup(pid, n, c):
        if c % n:
            raise ValueError("uneven")
        return table.get((pid, n, c), [0])

    recorder = Recorder(lookup, 0)
    beyond_one_machine.my_chains(recorder)  # the chapter's own check passes, in the kernel, and the calls are recorded
    assert "my_chains: correct" in capsys.readouterr().out
    observation = {"args": [encode(recorder)], "kwargs": [], "outcome": {"stage": "check", "kind": "returned"},
                   "records": {"0": {"calls": recorder.calls, "programs": {}}}}
    item = {"label": "ex", "module": "parallel_mcmc.exercises.beyond_one_machine", "function": "my_chains",
            "observation": json.loads(json.dumps(observation))}
    verdict = verdict_runner.run_check(item, None, seed=1)
    assert verdict["status"] == "error" and "no record" in verdict["message"]  # the unseen inputs were never answered
    item["module"] = "os"
    assert verdict_runner.run_check(item, None, seed=1)["status"] == "error"


def test_unseen_calls_can_use_the_chapters_own_arguments(tmp_path):
    """An unseen call may pass the check's own argument (sharded data) next to the grader's inputs."""
    from booktools.coursework import references
    from booktools.coursework.harness import observe

    mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))
    rng = np.random.default_rng(0)
    X, y = jax.device_put((rng.normal(size=(160, 5)).astype(np.float32), (rng.uniform(size=160) < 0.5).astype(np.float32)),
                          NamedSharding(mesh, P("data")))

    def log_density(b, X, y):
        logits = X @ b
        return jax.lax.psum(jnp.sum(y * logits - jnp.logaddexp(0.0, logits)), "data") - 0.5 * jnp.sum(b**2) / 2.5**2

    gradient = jax.jit(jax.shard_map(jax.grad(log_density), mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P()))
    name = "parallel_mcmc.exercises.other_parallelism.sharded_gradient"
    index, make_calls = references.CALLS[name]
    calls = make_calls(references.unseen(name, 11))
    assert all(isinstance(c[1], references.Argument) for c in calls)
    path = tmp_path / "observation.json"
    observe(str(path), "ex", "parallel_mcmc.exercises.other_parallelism", "sharded_gradient", ["gradient", "X", "y", "2.5"],
            {}, [[index, [encode(tuple(c)) for c in calls]]], {"gradient": gradient, "X": X, "y": y})
    observation = json.loads(path.read_text())
    (record,) = observation["records"].values()
    assert len(record["calls"]) == 3 + len(calls)  # the chapter's three betas, then the grader's
    item = {"label": "ex", "module": "parallel_mcmc.exercises.other_parallelism", "function": "sharded_gradient",
            "observation": observation}
    assert verdict_runner.run_check(item, 8, seed=11) == {"label": "ex", "status": "passed", "message": ""}
    assert verdict_runner.run_check(item, 8, seed=12)["status"] == "error"  # other unseen inputs were never answered
