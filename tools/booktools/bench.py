"""``make bench``: the book's ways of running chains at larger sizes, each measured beside the cost model.

``python -m booktools.bench [--size smoke|laptop|large] [--out DIR]``

Three groups of rows, each timed with compilation left out, against the
prediction of :mod:`parallel_mcmc.measure` built from costs measured in the
same run (never from the timed runs themselves):

- **BlackJAX NUTS** on :mod:`parallel_mcmc.models.normal`, chains one after
  another, ``vmap``, ``pmap`` of ``vmap`` and ``shard_map`` with ``lax.map``
  over every device. The step cost is measured at each width on a calibration
  run with other keys; the step counts are the chains' own.
- **NumPyro chain methods** (``sequential``, ``vectorized``, ``parallel``) on
  the regression of :mod:`parallel_mcmc.models.regression`, warmup and
  sampling, with NumPyro's NUTS kernel timed alone for the step cost. NumPyro
  compiles again on every run, so a run's time is its wall time less the time
  spent compiling; JAX's CPU client runs without asynchronous dispatch here, so
  that no compilation overlaps a running computation (NumPyro compiles its
  post-processing while the sampling loop runs, and taking that out made
  ``vectorized`` look 1.4x faster than the model's best case).
- **emcee**: a log-probability of known CPU cost, serially, with a
  ``multiprocessing`` pool and (where ``mpiexec`` is found) with the MPI pool
  whose master shares the work; and the sinusoid model in NumPy serially
  against one vectorised JAX call per half ensemble, with emcee's own work
  timed on a log-probability that costs next to nothing.

Each group is judged as the book's pages are (:func:`parallel_mcmc.measure.judge`):
its runs and their model's calibration are measured together, and measured
again while a rule fails. It writes ``bench.csv`` and ``bench.json`` (the rows
and a description of the machine) and ``bench.png`` (measured against
predicted seconds) to ``--out``, and prints the table. A row's ``ratio`` is
predicted over measured time, its ``status`` the judge's verdict ("agrees",
"beats the model": the model is wrong, "a cost missing": ``note`` gives what
the run measured about it, "far slower"), its ``ideal_speedup`` the model's own
ratio (the group's baseline predicted over this row's predicted) beside the
measured ``speedup`` (median over median). The CPU devices are forced to one per physical
core; on a GPU machine JAX's GPUs are used as they are.
"""

from __future__ import annotations

import argparse
import csv
import json
import multiprocessing as mp
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import emcee
import jax
import jax.numpy as jnp
import matplotlib
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
from numpyro.infer import MCMC, NUTS
from rich.console import Console
from rich.table import Table

from parallel_mcmc import measure
from parallel_mcmc.sample import sequential_runner, shard_map_runner, vmap_runner
from parallel_mcmc.devices import PLATFORM_ENV, physical_cores, use_cpu_devices
from parallel_mcmc.pools.emcee_tasks import NUM_WALKERS, initial_walkers, run_sampler
from parallel_mcmc.measure import integration_steps, judge, lockstep_cost
from parallel_mcmc.models import normal, sinusoid
from parallel_mcmc.models.regression import linear_model, make_linear_data
from parallel_mcmc.pools import CountingPool, MPIExecNotFound, busy_log_prob, find_mpiexec
from parallel_mcmc.measure import (CompileLog, Timing, cores_busy, time_call, time_interleaved,
                                  time_with_calibration)

__all__ = ["BenchSize", "SIZES", "Row", "run", "main"]

@dataclass(frozen=True)
class BenchSize:
    """How much work each group of the benchmark does."""

    nuts_chains_per_device: int  #: BlackJAX NUTS chains on each device
    nuts_draws: int  #: NUTS draws per chain
    numpyro_warmup: int  #: NumPyro warmup iterations per chain
    numpyro_samples: int  #: NumPyro sampling iterations per chain
    emcee_steps: int  #: emcee ensemble steps
    repeats: int  #: timed repeats of each NUTS and emcee run
    numpyro_repeats: int  #: timed repeats of each NumPyro sampling program (compiled once, then called again)


#: The sizes ``--size`` can name.
SIZES = {
    "smoke": BenchSize(nuts_chains_per_device=2, nuts_draws=10, numpyro_warmup=50, numpyro_samples=300,
                       emcee_steps=2, repeats=2, numpyro_repeats=3),
    "laptop": BenchSize(nuts_chains_per_device=4, nuts_draws=60, numpyro_warmup=500, numpyro_samples=2000,
                        emcee_steps=10, repeats=3, numpyro_repeats=3),
    "large": BenchSize(nuts_chains_per_device=16, nuts_draws=200, numpyro_warmup=1000, numpyro_samples=10000,
                       emcee_steps=40, repeats=5, numpyro_repeats=3),
}


@dataclass
class Row:
    """One way of running chains: measured and predicted seconds, the judge's verdict, and a gap's reading.

    ``speedup`` is the baseline's median over this row's median and ``ideal_speedup`` the model's own
    ratio, the baseline's predicted time over this row's (both 1 on the group's baseline row);
    ``status`` is the judge's verdict on the row (:mod:`parallel_mcmc.measure`) after ``tries`` measurements.
    """

    group: str
    method: str
    chains: int
    devices: int
    measured_s: float
    spread: float
    predicted_s: float
    ratio: float
    speedup: float
    ideal_speedup: float
    status: str
    tries: int
    note: str = ""


def _judged(group: str, measure: Callable[[], tuple[dict[str, measure.Prediction], str]], baseline: str,
            chains: int, devices: dict[str, int], cores: int) -> list[Row]:
    """Judge a group's runs (``measure()`` gives their predictions and a note on what the model leaves out),
    measuring again while a rule fails, as the book's pages do; one :class:`Row` a run."""
    notes: list[str] = []

    def predictions() -> dict[str, measure.Prediction]:
        found, note = measure()
        notes.append(note)
        return found

    verdict = judge(predictions, cores=cores)
    rows = []
    for method, run in verdict.runs.items():
        p, c = run.prediction, verdict.compare(baseline, method)
        rows.append(Row(group, method, chains, devices[method], p.measured.median, p.spread, p.predicted, p.ratio,
                        c.measured, c.ideal, run.status, verdict.tries, "" if run.status == "agrees" else notes[-1]))
    return rows


def _best_per_step(timing: Timing, steps: float) -> float:
    return timing.best / steps


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
        seconds = [_best_per_step(cal["width 1"], cal_steps.sum())]
        seconds += [_best_per_step(cal[f"width {w}"], lockstep_cost(cal_steps[:w])) for w in widths[1:]]
        step = measure.StepCost(tuple(widths), tuple(seconds))
        predicted = {
            "one after another": measure.sequential_time(steps, step),
            "vmap": measure.lockstep_time(steps, step),
            "pmap(vmap)": measure.sharded_time(steps, step, num_devices, cores, inner="vmap"),
            "shard_map + lax.map": measure.sharded_time(steps, step, num_devices, cores, inner="map"),
        }
        # what the model leaves out: one device's work may keep more than one core busy (XLA's own threads),
        # and then the devices compete for the cores the model gives each of them
        busy = cores_busy(lockstep, cal_keys[:per_device], jax.tree.map(lambda x: x[:per_device], states), calls=2)
        note = f"one device's vmap of {per_device} chains keeps {busy:.2f} cores busy"
        return {m: measure.predict(timings[m], predicted[m]) for m in predicted}, note

    return _judged("BlackJAX NUTS", measure, "one after another", num_chains, devices, cores)


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
        step = measure.StepCost((1, num_chains) if num_chains > 1 else (1,), seconds)
        predicted = {
            "sequential": measure.sequential_time(steps["sequential"], step),
            "vectorized": measure.lockstep_time(steps["vectorized"], step),
            "parallel": measure.sharded_time(steps["parallel"], step, num_devices, cores),
        }
        predictions = {m: measure.predict(timings[m], predicted[m], "the compiled program's steps")
                       for m in predicted}
        busy = cores_busy(programs["sequential"][0], programs["sequential"][1], calls=1)
        return predictions, f"one chain's NUTS keeps {busy:.2f} cores busy"

    return _judged("NumPyro", measure, "sequential", num_chains, devices, cores)


def _emcee_busy(pool: Any, steps: int) -> None:
    run_sampler(pool, steps)


def _noop(_: Any) -> None:
    return None


class _InProcess:
    """A pool that evaluates every task in this process, one after another (emcee without a pool)."""

    @staticmethod
    def map(func: Any, tasks: Any) -> list[Any]:
        return [func(t) for t in tasks]


def bench_emcee(size: BenchSize, cores: int) -> list[Row]:
    """emcee with a log-probability of known cost: serial, a process pool, MPI; and NumPy against vectorised JAX."""
    steps, repeats, workers = size.emcee_steps, size.repeats, cores
    counted = CountingPool(_InProcess())
    run_sampler(counted, steps)  # the initial ensemble, then two half ensembles a step
    tasks = counted.tasks_per_map
    try:
        mpiexec = find_mpiexec()
    except MPIExecNotFound:
        mpiexec = None
    devices = {"serial": 1, f"Pool({workers})": workers} | ({f"MPI, {workers} ranks": workers} if mpiexec else {})

    def measure():
        # the model's costs (one log-probability, a task's round trip) are timed with the runs, every time
        one_call = time_call(busy_log_prob, initial_walkers()[0], repeats=21, label="one log-probability").best
        serial = time_call(_emcee_busy, None, steps, repeats=repeats, label="serial")
        with mp.get_context("spawn").Pool(workers) as pool:
            pool.map(_noop, range(workers))  # start the workers before timing
            half = NUM_WALKERS // 2
            round_trip = time_call(pool.map, _noop, range(half), repeats=repeats).best / half
            pooled = time_call(_emcee_busy, pool, steps, repeats=repeats, label=f"Pool({workers})")
        predictions = {
            "serial": measure.predict(serial, sum(tasks) * one_call, "every call one after another"),
            f"Pool({workers})": measure.predict(
                pooled, measure.pool_run_time(tasks, one_call, workers, cores, overhead_per_task=round_trip,
                                                pool_map_chunks=True),
                f"{workers} workers, measured round trip per task"),
        }
        if mpiexec is not None:
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / "mpi.npz"
                cmd = [mpiexec, "-n", str(workers), sys.executable, "-m", "parallel_mcmc.programs.emcee_mpi", str(out),
                       "--pool", "sharing", "--steps", str(steps), "--repeats", str(repeats)]
                subprocess.run(cmd, check=True, capture_output=True, timeout=600)
                result = dict(np.load(out))
            # one cost (the default one), so the first row of every per-cost array
            mpi_run = Timing(f"MPI, {workers} ranks", tuple(result["times"][0]), float(result["first_time"][0]))
            predicted = measure.pool_run_time(result["tasks_per_map"].tolist(), one_call, workers, cores)
            predictions[mpi_run.label] = measure.predict(mpi_run, predicted, f"{workers} ranks, master shares")
        note = (f"one log-probability {1e3 * one_call:.2f} ms, a task's round trip through the pool "
                f"{1e6 * round_trip:.0f} µs")
        return predictions, note

    rows = _judged("emcee, 2 ms log-probability", measure, "serial", NUM_WALKERS, devices, cores)
    return rows + bench_emcee_jax(size, cores)


def bench_emcee_jax(size: BenchSize, cores: int) -> list[Row]:
    """The sinusoid model: emcee with NumPy serially, and with one vectorised JAX call per half ensemble."""
    steps, repeats, walkers = size.emcee_steps, size.repeats, 32
    start = sinusoid.initial_walkers(walkers)
    batch = sinusoid.make_log_prob_batch()

    def run(log_prob, vectorize):
        sampler = emcee.EnsembleSampler(walkers, start.shape[1], log_prob, vectorize=vectorize)
        sampler.run_mcmc(start, steps)

    batch(start[: walkers // 2])  # compile
    counted = CountingPool(_InProcess())
    emcee.EnsembleSampler(walkers, start.shape[1], sinusoid.log_prob, pool=counted).run_mcmc(start, steps)
    tasks = counted.tasks_per_map  # the whole ensemble once, then two halves a step
    devices = {"NumPy, serial": 1, "JAX, vectorize=True": 1}

    def measure():
        serial = time_call(run, sinusoid.log_prob, False, repeats=repeats, label="NumPy, serial")
        vectorised = time_call(run, batch, True, repeats=repeats, label="JAX, vectorize=True")
        # emcee's own work (proposals, acceptance, storing the chain): the same run with a log-probability
        # that costs next to nothing
        own = time_call(run, _flat_log_prob, True, repeats=repeats, label="emcee alone").best
        inside = _TimedCalls(batch)
        run(inside, True)  # the seconds the vectorised calls took inside a real run
        one = time_call(sinusoid.log_prob, start[0], repeats=21).best
        by_width = {n: time_call(batch, start[:n], repeats=21).best for n in set(tasks)}
        calls = sum(by_width[n] for n in tasks)
        predictions = {
            "NumPy, serial": measure.predict(serial, own + sum(tasks) * one, "emcee + every walker one call"),
            "JAX, vectorize=True": measure.predict(vectorised, own + calls, "emcee + one call per half ensemble"),
        }
        note = (f"inside a run the vectorised calls took {1e3 * inside.seconds:.0f} ms against "
                f"{1e3 * calls:.0f} ms timed alone; emcee's own work {1e3 * own:.0f} ms")
        return predictions, note

    return _judged("emcee, sinusoid", measure, "NumPy, serial", walkers, devices, cores)


def _flat_log_prob(thetas: np.ndarray) -> np.ndarray:
    """A vectorised log-probability that costs next to nothing: emcee's own work, timed."""
    return -0.5 * np.sum(np.square(thetas), axis=1)


class _TimedCalls:
    """Calls ``fn`` and adds up the seconds its calls take."""

    def __init__(self, fn: Any) -> None:
        self.fn, self.seconds = fn, 0.0

    def __call__(self, *args: Any) -> Any:
        start = time.perf_counter()
        out = self.fn(*args)
        self.seconds += time.perf_counter() - start
        return out


def machine() -> dict[str, Any]:
    return {
        "platform": jax.default_backend(),
        "devices": [str(d) for d in jax.devices()],
        "physical_cores": physical_cores(),
        "cpu": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "jax": jax.__version__,
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def plot(rows: Sequence[Row], path: Path) -> None:
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # after choosing the back-end that needs no display

    groups = list(dict.fromkeys(r.group for r in rows))
    fig, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups), 3.6), squeeze=False)
    for ax, group in zip(axes[0], groups):
        mine = [r for r in rows if r.group == group]
        x = np.arange(len(mine))
        ax.bar(x - 0.2, [r.measured_s for r in mine], width=0.4, label="measured")
        ax.bar(x + 0.2, [r.predicted_s for r in mine], width=0.4, label="predicted (best case)",
               color="lightgray", edgecolor="gray")
        for xi, r in zip(x, mine):
            ax.annotate(f"{r.ratio:.2f}", (xi + 0.2, r.predicted_s), ha="center", va="bottom", fontsize=8)
        ax.set_xticks(x, [r.method for r in mine], rotation=20, ha="right", fontsize=8)
        ax.set_title(group, fontsize=10)
        ax.set_ylabel("seconds (median)")
    axes[0][0].legend(frameon=False, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(size: str = "laptop", out: str | Path = "_build/bench") -> list[Row]:
    """Run every group at ``size``; write bench.csv, bench.json and bench.png to ``out``; return the rows."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {sorted(SIZES)}, got {size!r}.")
    cores = physical_cores()
    # Without asynchronous dispatch, JAX's CPU client runs each computation before returning, so no
    # compilation overlaps a run: NumPyro traces and compiles its post-processing while its sampling
    # loop still runs, and taking compilation out of such a run would take running time out with it.
    # The CPU client reads this when it starts: set it first.
    jax.config.update("jax_cpu_enable_async_dispatch", False)
    # one CPU device per core, or the accelerators chosen with PARALLEL_MCMC_PLATFORM as they are
    use_cpu_devices(1 if os.environ.get(PLATFORM_ENV) else cores)
    num_devices = jax.device_count()
    params = SIZES[size]
    rows = bench_nuts(params, num_devices, cores) + bench_numpyro(params, num_devices, cores) + bench_emcee(params, cores)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "bench.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(asdict(rows[0])))
        writer.writeheader()
        writer.writerows(asdict(r) for r in rows)
    (out / "bench.json").write_text(json.dumps({"size": size, "machine": machine(),
                                                "rows": [asdict(r) for r in rows]}, indent=2))
    plot(rows, out / "bench.png")
    return rows


def print_table(rows: Sequence[Row]) -> None:
    table = Table(title="measured against the cost model (ratio = predicted / measured; "
                        "ideal = the model's own ratio, predicted over predicted)")
    for col in ("group", "method", "chains", "devices", "measured", "predicted", "ratio", "verdict", "tries",
                "speedup", "ideal", "note"):
        table.add_column(col)
    for r in rows:
        table.add_row(r.group, r.method, str(r.chains), str(r.devices), f"{r.measured_s:.3f} s (±{r.spread:.0%})",
                      f"{r.predicted_s:.3f} s", f"{r.ratio:.2f}", r.status, str(r.tries), f"{r.speedup:.2f}x",
                      f"{r.ideal_speedup:.2f}x", r.note)
    Console(width=200).print(table)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=list(SIZES), default="laptop",
                        help="smoke: seconds (the test suite's run); laptop: about a minute or two; large: longer")
    parser.add_argument("--out", default="_build/bench", help="folder for bench.csv, bench.json and bench.png")
    args = parser.parse_args(argv)
    rows = run(args.size, args.out)
    print_table(rows)
    print(f"wrote {Path(args.out) / 'bench.csv'}, bench.json and bench.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
