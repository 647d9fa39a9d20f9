"""The measurements of the GPU run: what one GPU changes in the book's comparisons, each beside its model.

``python -m booktools.gpu_run.cases NAME --out FILE [--dry-run]`` runs one case and writes its figures as JSON.
Every case is a :class:`parallel_mcmc.measure.Experiment`: its runs and the pieces its model is calibrated on are
timed in the same rounds, compilation left out, and every sentence comes from the book's narrator. ``--dry-run``
runs the same code at toy sizes on whatever JAX finds (the CPU in ``make test``).

- ``device``: what the run ran on (GPU name, driver, memory, JAX's devices and versions).
- ``state_machine``: randomized HMC in lockstep against the same chains as a state machine, at 4 to 4,096 chains
  (chains_that_never_wait; on 2 CPU cores the machine's gain stopped at 256 chains).
- ``vmap_shard_map``: BlackJAX NUTS chains one after another, under ``vmap``, and under ``shard_map`` on a
  one-device mesh with ``lax.map`` or ``vmap`` inside (vmap_pmap_shard_map, on one device).
- ``smc_work``: the work of a tempered SMC stage, every particle's log-likelihood and gradient over every row, on
  the GPU against the machine's CPU at growing particles x rows (tempered_smc; on 2 cores no size paid).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

CASES: dict[str, Callable[[bool], dict[str, Any]]] = {}


def case(fn: Callable[[bool], dict[str, Any]]) -> Callable[[bool], dict[str, Any]]:
    """Register ``fn`` as a case under its name."""
    CASES[fn.__name__] = fn
    return fn


def _summary(result, prefix: str) -> dict[str, Any]:
    """A result's numbers and sentences (the narrator's) and the judge's verdict, as JSON."""
    return {"numbers": {k: (float(v) if isinstance(v, (int, float)) else v) for k, v in result.numbers(prefix).items()},
            "verdict": str(result.verdict), "failures": [str(run) for run in result.verdict.failures]}


@case
def device(dry: bool) -> dict[str, Any]:
    import jax
    import jaxlib

    from parallel_mcmc.devices import device_report

    smi = {}
    if shutil.which("nvidia-smi"):
        query = "name,driver_version,memory.total"
        out = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.strip().splitlines()
        smi = dict(zip(("name", "driver", "memory"), (part.strip() for part in out[0].split(",")))) if out else {}
    accelerator = jax.devices()[0]
    stats = accelerator.memory_stats() or {}
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "gpu": smi.get("name", "none"), "driver": smi.get("driver", ""), "gpu_memory": smi.get("memory", ""),
        "jax": jax.__version__, "jaxlib": jaxlib.__version__, "python": platform.python_version(),
        "backend": jax.default_backend(), "devices": [str(d) for d in jax.devices()],
        "device_kind": accelerator.device_kind, "bytes_limit": int(stats.get("bytes_limit", 0)),
        "report": str(device_report()), "dry_run": dry,
    }


def _regression(rows: int, dim: int):
    import jax.numpy as jnp
    import numpy as np

    from parallel_mcmc.models.regression import linear_posterior, make_linear_data

    data = make_linear_data(rows, dim, seed=0)
    X, y = jnp.asarray(data.X, jnp.float32), jnp.asarray(data.y, jnp.float32)
    mean, _ = linear_posterior(data.X, data.y)

    def logdensity(beta):
        residual = y - X @ beta
        return -0.5 * residual @ residual - 0.5 * beta @ beta

    return logdensity, np.asarray(mean, np.float32)


@case
def state_machine(dry: bool) -> dict[str, Any]:
    import jax
    import jax.numpy as jnp
    import numpy as np

    from parallel_mcmc.measure import Experiment, lockstep_cost, measure
    from parallel_mcmc.sample import RandomizedHMC

    counts, num_draws = ((4, 16), 20) if dry else ((4, 64, 256, 4096), 100)
    logdensity, mean = _regression(200, 4)
    hmc = RandomizedHMC(logdensity, dim=4, step_size=0.02, mean_length=10)
    lockstep, machine = jax.jit(hmc.lockstep), jax.jit(hmc.state_machine)
    start = lambda c: jnp.asarray(mean) + 0.05 * jax.random.normal(jax.random.key(1), (c, 4))
    inputs, lengths = {}, {}
    for c in counts:
        momenta, lens, uniforms = hmc.randoms(jax.random.split(jax.random.key(0), c), num_draws)
        inputs[c] = (momenta, lens, uniforms, start(c))
        lengths[c] = np.asarray(lens[:, :num_draws])
        np.testing.assert_array_equal(np.asarray(lockstep(*inputs[c])), np.asarray(machine(*inputs[c])[0]))

    def constant(c):
        momenta, _, uniforms = hmc.randoms(jax.random.split(jax.random.key(3), c), num_draws)
        return momenta, jnp.full((c, num_draws + 1), 10), uniforms, start(c)

    lock, mach = (lambda c: f"lockstep, {c} chains"), (lambda c: f"state machine, {c} chains")

    def model(m):
        steps = 10 * num_draws
        return {**{lock(c): lockstep_cost(lengths[c]) * m.best(f"step, width {c}") / steps for c in counts},
                **{mach(c): lengths[c].sum(axis=1).max() * m.best(f"iteration, width {c}") / steps for c in counts}}

    result = measure(Experiment(
        runs={**{lock(c): (lockstep, *inputs[c]) for c in counts}, **{mach(c): (machine, *inputs[c]) for c in counts}},
        pieces={**{f"step, width {c}": (lockstep, *constant(c)) for c in counts},
                **{f"iteration, width {c}": (machine, *constant(c)) for c in counts}},
        model=model, baseline=lock(counts[-1]), repeats=5, decide=[(mach(c), lock(c)) for c in counts]))
    return {"chains": list(counts), "draws": num_draws, **_summary(result, "hmc"),
            "pairs": {str(c): {"sentence": result.sentence(mach(c), lock(c)),
                               "speedup": result.speedup(mach(c), lock(c)).estimate,
                               "low": result.speedup(mach(c), lock(c)).low,
                               "high": result.speedup(mach(c), lock(c)).high,
                               "ideal": result.ideal(mach(c), lock(c)),
                               "overhead": result.timings[f"iteration, width {c}"].best
                               / result.timings[f"step, width {c}"].best} for c in counts}}


@case
def vmap_shard_map(dry: bool) -> dict[str, Any]:
    import blackjax
    import jax
    import jax.numpy as jnp
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

    from parallel_mcmc.measure import Experiment, integration_steps, lockstep_cost, measure
    from parallel_mcmc.sample import sequential_runner, shard_map_runner, vmap_runner

    num_chains, num_draws = (4, 5) if dry else (128, 20)
    logdensity, mean = _regression(200, 4)
    nuts = blackjax.nuts(logdensity, step_size=0.05, inverse_mass_matrix=jnp.ones(4))
    mesh = jax.make_mesh((1,), ("chains",), axis_types=(AxisType.Explicit,))

    def chains(seed):
        keys = jax.random.split(jax.random.key(seed), num_chains)
        states = jax.vmap(nuts.init)(jnp.asarray(mean) + 0.1 * jax.random.normal(jax.random.key(seed + 1),
                                                                                  (num_chains, 4)))
        return keys, states

    runners = {"one after another": sequential_runner(nuts.step, num_draws),
               "vmap": vmap_runner(nuts.step, num_draws),
               "shard_map, lax.map inside": shard_map_runner(nuts.step, num_draws, mesh, inner="map"),
               "shard_map, vmap inside": shard_map_runner(nuts.step, num_draws, mesh, inner="vmap")}
    run_args, calibration_args = chains(0), chains(10)
    placed = jax.device_put(run_args, NamedSharding(mesh, P("chains")))  # shard_map's inputs, on the mesh

    def model(m):
        steps = integration_steps(m.outputs["vmap"][1])
        calibration = integration_steps(m.outputs["calibration, vmap"][1])
        one = m.best("calibration, one after another") / calibration.sum()
        wide = m.best("calibration, vmap") / lockstep_cost(calibration)
        return {"one after another": steps.sum() * one, "vmap": lockstep_cost(steps) * wide,
                "shard_map, lax.map inside": steps.sum() * one, "shard_map, vmap inside": lockstep_cost(steps) * wide}

    result = measure(Experiment(
        runs={name: (fn, *(placed if name.startswith("shard_map") else run_args)) for name, fn in runners.items()},
        pieces={"calibration, one after another": (runners["one after another"], *calibration_args),
                "calibration, vmap": (runners["vmap"], *calibration_args)},
        model=model, baseline="one after another", repeats=5,
        decide=[("vmap", "one after another"), ("shard_map, vmap inside", "vmap")]))
    return {"chains": num_chains, "draws": num_draws, **_summary(result, "layouts"),
            "pairs": {name: {"sentence": result.sentence(name), "speedup": result.speedup(name).estimate,
                             "low": result.speedup(name).low, "high": result.speedup(name).high,
                             "ideal": result.ideal(name)} for name in runners if name != "one after another"}}


@case
def smc_work(dry: bool) -> dict[str, Any]:
    import jax
    import jax.numpy as jnp

    from parallel_mcmc.measure import Experiment, measure

    dim = 8
    sizes = [(16, 100), (64, 400), (128, 1_000)] if dry else [(64, 1_000), (256, 5_000), (1_024, 20_000),
                                                             (2_048, 50_000)]
    accelerator, host = jax.devices()[0], jax.devices("cpu")[0]
    where = {"GPU" if accelerator.platform == "gpu" else f"{accelerator.platform} (as the accelerator)": accelerator,
             "CPU": host}

    @jax.jit
    def stage_work(particles, X, y):
        """Every particle's log-likelihood (logistic) and its gradient over every row: a stage's work."""
        def log_likelihood(beta):
            z = X @ beta
            return jnp.sum(y * z - jnp.logaddexp(0.0, z))

        return jax.vmap(jax.value_and_grad(log_likelihood))(particles)

    def problem(num_particles, num_rows, seed, device):
        k1, k2, k3 = jax.random.split(jax.random.key(seed), 3)
        X = jax.random.normal(k1, (num_rows, dim))
        y = (jax.random.uniform(k2, (num_rows,)) < 0.5).astype(jnp.float32)
        return jax.device_put((jax.random.normal(k3, (num_particles, dim)), X, y), device)

    label = lambda who, size: f"{who}, {size[0]:,} particles x {size[1]:,} rows"
    small, large = sizes[0], sizes[-1]

    def model(m):
        """Per device: the larger of its fixed cost (the smallest size) and its throughput times the size."""
        out = {}
        for who in where:
            fixed = m.best(f"piece, {label(who, small)}")
            per_element = m.best(f"piece, {label(who, large)}") / (large[0] * large[1])
            out.update({label(who, s): max(fixed, per_element * s[0] * s[1]) for s in sizes})
        return out

    gpu_name, cpu_name = list(where)
    result = measure(Experiment(
        runs={label(who, s): (stage_work, *problem(*s, 0, dev)) for s in sizes for who, dev in where.items()},
        pieces={f"piece, {label(who, s)}": (stage_work, *problem(*s, 1, dev))
                for s in (small, large) for who, dev in where.items()},
        model=model, baseline=label(cpu_name, small), repeats=5,
        decide=[(label(gpu_name, s), label(cpu_name, s)) for s in sizes]))
    return {"sizes": [list(s) for s in sizes], "dim": dim, **_summary(result, "smc"),
            "pairs": {f"{s[0]}x{s[1]}": {"sentence": result.sentence(label(gpu_name, s), label(cpu_name, s)),
                                         "speedup": result.speedup(label(gpu_name, s), label(cpu_name, s)).estimate,
                                         "low": result.speedup(label(gpu_name, s), label(cpu_name, s)).low,
                                         "high": result.speedup(label(gpu_name, s), label(cpu_name, s)).high,
                                         "ideal": result.ideal(label(gpu_name, s), label(cpu_name, s))}
                      for s in sizes}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools.gpu_run.cases", description=__doc__.splitlines()[0])
    parser.add_argument("name", choices=sorted(CASES))
    parser.add_argument("--out", type=Path, required=True, help="the JSON file to write")
    parser.add_argument("--dry-run", action="store_true", help="toy sizes, on whatever JAX finds")
    args = parser.parse_args(argv)
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # the CPU and GPU runs share the machine
    figures = CASES[args.name](args.dry_run)
    args.out.write_text(json.dumps(figures, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
