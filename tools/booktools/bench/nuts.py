"""The benchmark's chain groups: BlackJAX NUTS (one after another, ``vmap``, ``pmap`` of ``vmap``, ``shard_map``)
and NumPyro's chain methods, each beside the cost model."""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
from numpyro.infer import MCMC, NUTS

from parallel_mcmc.measure import (
    CompileLog, StepCost, cores_busy, integration_steps, lockstep_cost, lockstep_time, predict, sequential_time,
    sharded_time, time_with_calibration,
)
from parallel_mcmc.models import normal
from parallel_mcmc.models.regression import linear_model, make_linear_data
from parallel_mcmc.sample import sequential_runner, shard_map_runner, vmap_runner

from .sizes import BenchSize, Row, best_per_step, judged

__all__ = ["bench_nuts", "bench_numpyro"]


def bench_nuts(size: BenchSize, num_devices: int, cores: int) -> list[Row]:
    """BlackJAX NUTS: one after another, vmap, pmap(vmap), shard_map + lax.map."""
    import blackjax  # importing BlackJAX starts JAX's backend: only once the devices are set

    per_device, draws = size.nuts_chains_per_device, size.nuts_draws
    num_chains = per_device * num_devices
    nuts = blackjax.nuts(normal.make_logdensity(normal.observed()), step_size=1e-3,
                         inverse_mass_matrix=jnp.array([0.5, 0.01]))
    states = jax.vmap(nuts.init)(normal.spread_positions(num_chains))
    keys = jax.random.split(jax.random.key(0), num_chains)
    mesh = jax.make_mesh((num_devices,), ("chains",), axis_types=(AxisType.Explicit,))
    by_chain = NamedSharding(mesh, P("chains"))

    def per_dev(tree):
        return jax.tree.map(lambda x: x.reshape((num_devices, -1) + x.shape[1:]), tree)

    one_by_one = sequential_runner(nuts.step, draws)
    lockstep = vmap_runner(nuts.step, draws)
    pmap_vmap = jax.pmap(vmap_runner(nuts.step, draws))
    sharded = shard_map_runner(nuts.step, draws, mesh, "chains", inner="map")
    # calibration: other keys, widths 1, chains per device and all chains, on one device, timed in the same
    # rounds as the runs (a re-measurement repeats both)
    cal_keys = jax.random.split(jax.random.key(1), num_chains)
    widths = sorted({1, per_device, num_chains})
    calibration = {"width 1": (one_by_one, cal_keys, states)}
    for w in widths[1:]:
        calibration[f"width {w}"] = (lockstep, cal_keys[:w], jax.tree.map(lambda x, w=w: x[:w], states))
    devices = {"one after another": 1, "vmap": 1, "pmap(vmap)": num_devices, "shard_map + lax.map": num_devices}

    def measure():
        (timings, outs), (cal, cal_out) = time_with_calibration({
            "one after another": (one_by_one, keys, states),
            "vmap": (lockstep, keys, states),
            "pmap(vmap)": (pmap_vmap, *per_dev((keys, states))),
            "shard_map + lax.map": (sharded, *jax.device_put((keys, states), by_chain)),
        }, calibration, repeats=size.repeats)
        steps = integration_steps(outs["one after another"][1])
        cal_steps = integration_steps(cal_out["width 1"][1])
        seconds = [best_per_step(cal["width 1"], cal_steps.sum())]
        seconds += [best_per_step(cal[f"width {w}"], lockstep_cost(cal_steps[:w])) for w in widths[1:]]
        step = StepCost(tuple(widths), tuple(seconds))
        predicted = {
            "one after another": sequential_time(steps, step),
            "vmap": lockstep_time(steps, step),
            "pmap(vmap)": sharded_time(steps, step, num_devices, cores, inner="vmap"),
            "shard_map + lax.map": sharded_time(steps, step, num_devices, cores, inner="map"),
        }
        # what the model leaves out: one device's work may keep more than one core busy (XLA's own threads),
        # and then the devices compete for the cores the model gives each of them
        busy = cores_busy(lockstep, cal_keys[:per_device], jax.tree.map(lambda x: x[:per_device], states), calls=2)
        note = f"one device's vmap of {per_device} chains keeps {busy:.2f} cores busy"
        return {m: predict(timings[m], predicted[m]) for m in predicted}, note

    return judged("BlackJAX NUTS", measure, "one after another", num_chains, devices, cores)


class _Kept:
    """A NumPyro ``chain_method`` that runs ``transform(one_chain)`` and keeps that program and its inputs,
    so that the compiled sampling program can be called again and timed alone (as the chain-methods page
    does): no compilation, no set-up outside the program, whatever NumPyro does around it."""

    def __init__(self, transform: Callable[[Any], Any]) -> None:
        self.transform = transform

    def __call__(self, one_chain: Any) -> Callable[[Any], Any]:
        program = self.transform(one_chain)

        def run(map_args: Any) -> Any:
            self.program, self.args = program, map_args
            return program(map_args)

        return run


def _chain_after_chain(num_chains: int) -> Callable[[Any], Any]:
    """The twin of NumPyro's ``"sequential"``: the one-chain program jitted once, called on each chain in turn."""
    def transform(one_chain: Any) -> Callable[[Any], Any]:
        compiled = jax.jit(one_chain)

        def run(map_args: Any) -> Any:
            outs = [compiled(jax.tree.map(lambda x, i=i: x[i], map_args)) for i in range(num_chains)]
            return jax.tree.map(lambda *xs: jnp.stack(xs), *outs)

        return run

    return transform


def _with_keys(map_args: Any, seed: int, num_chains: int) -> Any:
    """The same inputs with other keys for the chains: other trajectories from the same adapted state."""
    keys = jax.random.split(jax.random.key(seed), num_chains)
    _, state, init_params = map_args
    return keys, state._replace(rng_key=keys), init_params


def bench_numpyro(size: BenchSize, num_devices: int, cores: int) -> list[Row]:
    """NumPyro's sequential, vectorized and parallel chain methods, one chain per device, each method's
    compiled sampling program timed directly (its twin kept from a run, then called again)."""
    data = make_linear_data(2000, 4, seed=0)
    X, y = jnp.asarray(data.X), jnp.asarray(data.y)
    num_chains = num_devices
    twins = {"sequential": _chain_after_chain(num_chains), "vectorized": lambda one: jax.jit(jax.vmap(one)),
             "parallel": jax.pmap}
    programs = {}
    for method, twin in twins.items():
        warm = MCMC(NUTS(linear_model), num_warmup=size.numpyro_warmup, num_samples=1, num_chains=num_chains,
                    chain_method=method, progress_bar=False)
        warm.run(jax.random.key(0), X, y)
        kept = _Kept(twin)
        mcmc = MCMC(NUTS(linear_model), num_warmup=size.numpyro_warmup, num_samples=size.numpyro_samples,
                    num_chains=num_chains, chain_method=kept, progress_bar=False)
        # a one-device program keeps its chains on one device (a jit of arrays spread over the devices
        # would compile one program over all of them)
        mcmc.post_warmup_state = (warm.last_state if method == "parallel"
                                  else jax.device_put(warm.last_state, jax.devices()[0]))
        mcmc.run(jax.random.key(1), X, y, extra_fields=("num_steps",))  # compiles the program we keep
        programs[method] = (kept.program, kept.args)
    calibration = {"width 1, other keys": (programs["sequential"][0],
                                           _with_keys(programs["sequential"][1], 11, num_chains))}
    if num_chains > 1:
        calibration[f"width {num_chains}, other keys"] = (programs["vectorized"][0],
                                                          _with_keys(programs["vectorized"][1], 11, num_chains))
    devices = {"sequential": 1, "vectorized": 1, "parallel": num_devices}

    def measure():
        with CompileLog() as log:
            (timings, outs), (cal, cal_out) = time_with_calibration(programs, calibration,
                                                                    repeats=size.numpyro_repeats)
        if log.compiles:
            raise RuntimeError(f"{log.compiles} compilation(s) while timing NumPyro's kept programs")
        steps = {name: np.asarray(out[0]["num_steps"]) for name, out in {**outs, **cal_out}.items()}
        seconds = (cal["width 1, other keys"].best / steps["width 1, other keys"].sum(),)
        if num_chains > 1:
            wide = f"width {num_chains}, other keys"
            seconds += (cal[wide].best / lockstep_cost(steps[wide]),)
        step = StepCost((1, num_chains) if num_chains > 1 else (1,), seconds)
        predicted = {
            "sequential": sequential_time(steps["sequential"], step),
            "vectorized": lockstep_time(steps["vectorized"], step),
            "parallel": sharded_time(steps["parallel"], step, num_devices, cores),
        }
        predictions = {m: predict(timings[m], predicted[m], "the compiled program's steps")
                       for m in predicted}
        busy = cores_busy(programs["sequential"][0], programs["sequential"][1], calls=1)
        return predictions, f"one chain's NUTS keeps {busy:.2f} cores busy"

    return judged("NumPyro", measure, "sequential", num_chains, devices, cores)

