"""The benchmark's emcee group: a log-probability of known CPU cost through pools, and the sinusoid in NumPy
against one vectorised JAX call per half ensemble."""

from __future__ import annotations

import multiprocessing as mp
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import emcee
import numpy as np

from parallel_mcmc.measure import Timing, pool_run_time, predict, time_call
from parallel_mcmc.models import sinusoid
from parallel_mcmc.pools import CountingPool, MPIExecNotFound, busy_log_prob, find_mpiexec
from parallel_mcmc.pools.emcee_tasks import NUM_WALKERS, initial_walkers, run_sampler

from .sizes import BenchSize, Row, judged

__all__ = ["bench_emcee", "bench_emcee_jax"]


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
            "serial": predict(serial, sum(tasks) * one_call, "every call one after another"),
            f"Pool({workers})": predict(
                pooled, pool_run_time(tasks, one_call, workers, cores, overhead_per_task=round_trip,
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
            predicted = pool_run_time(result["tasks_per_map"].tolist(), one_call, workers, cores)
            predictions[mpi_run.label] = predict(mpi_run, predicted, f"{workers} ranks, master shares")
        note = (f"one log-probability {1e3 * one_call:.2f} ms, a task's round trip through the pool "
                f"{1e6 * round_trip:.0f} µs")
        return predictions, note

    rows = judged("emcee, 2 ms log-probability", measure, "serial", NUM_WALKERS, devices, cores)
    return rows + bench_emcee_jax(size, cores)


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
            "NumPy, serial": predict(serial, own + sum(tasks) * one, "emcee + every walker one call"),
            "JAX, vectorize=True": predict(vectorised, own + calls, "emcee + one call per half ensemble"),
        }
        note = (f"inside a run the vectorised calls took {1e3 * inside.seconds:.0f} ms against "
                f"{1e3 * calls:.0f} ms timed alone; emcee's own work {1e3 * own:.0f} ms")
        return predictions, note

    return judged("emcee, sinusoid", measure, "NumPy, serial", walkers, devices, cores)

