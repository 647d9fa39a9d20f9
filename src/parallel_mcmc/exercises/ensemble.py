"""Checks for the exercises of the part "Ensemble samplers in parallel"."""

from __future__ import annotations

import multiprocessing as mp
import pickle
from typing import Any, Callable, Sequence

import numpy as np
from emcee.ensemble import _FunctionWrapper

from parallel_mcmc.measure.queue import pool_run_time
from parallel_mcmc.models import sinusoid
from parallel_mcmc.pools.workers import log_prob_with_data
from . import as_float, call, expect, importable, passed

__all__ = ["data_sent_once", "sharing_crossover", "cost_for_speedup", "vectorized_log_prob"]

# A task of emcee holds the log-probability (with its args); more than this is data travelling.
_SMALL_TASK_BYTES = 10_000


def data_sent_once(
    log_prob_fn: Callable[..., Any],
    pool_kwargs: dict,
    data: np.ndarray,
    args: Sequence[Any] = (),
    timeout: float = 60.0,
) -> None:
    """Check a pool set-up that sends ``data`` once per worker and works under ``spawn``.

    ``log_prob_fn`` and ``args`` are what the sampler would be given
    (``EnsembleSampler(..., log_prob_fn, args=args, pool=pool)``), ``pool_kwargs``
    the keyword arguments of ``multiprocessing.get_context("spawn").Pool``. The
    check measures the bytes pickled per task, then starts a spawn pool and
    compares the log-probabilities it returns with
    ``pools.log_prob_with_data(theta, data)``.
    """
    data = np.asarray(data)
    expect(callable(log_prob_fn), "log_prob_fn must be the function to give EnsembleSampler, not its result.")
    expect(isinstance(pool_kwargs, dict), f"pool_kwargs must be a dict of Pool keyword arguments, got {type(pool_kwargs).__name__}.")
    task = _FunctionWrapper(log_prob_fn, list(args) if args else None, None)
    try:
        task_bytes = len(pickle.dumps(task))
    except Exception as err:  # a lambda, a local function, ...
        raise AssertionError(
            f"emcee could not send this log-probability to a worker: pickling it failed ({err}). "
            "Use a function defined at the top level of an importable module (such as parallel_mcmc.pools)."
        ) from None
    expect(
        task_bytes < _SMALL_TASK_BYTES,
        f"Every task still carries {task_bytes:,} bytes (the data is {data.nbytes:,} bytes): the data travels "
        "with the log-probability on every call. Take it out of args (and out of any partial or closure) and "
        "give it to the workers once, through the pool's initializer.",
    )
    expect(
        importable(log_prob_fn),
        f"{getattr(log_prob_fn, '__qualname__', log_prob_fn)!r} is defined in the notebook (__main__) or is not "
        "importable: a spawned worker starts a fresh Python and cannot find it. Use a function from a module, "
        "such as parallel_mcmc.pools.",
    )
    initializer = pool_kwargs.get("initializer")
    expect(
        initializer is not None,
        "The pool has no initializer. A spawned worker starts as a fresh Python that has never seen the data "
        "(a module-level global only reaches workers made by fork): give an initializer and its initargs.",
    )
    expect(
        importable(initializer),
        f"The initializer {getattr(initializer, '__qualname__', initializer)!r} is not importable by a spawned "
        "worker (it is defined in the notebook); use one from a module, such as parallel_mcmc.pools.",
    )
    unknown = set(pool_kwargs) - {"processes", "initializer", "initargs", "maxtasksperchild"}
    expect(not unknown, f"Unknown Pool keyword argument(s) {sorted(unknown)}; Pool takes processes, initializer, initargs.")
    workers = pool_kwargs.get("processes")
    expect(
        workers is None or isinstance(workers, int) and not isinstance(workers, bool) and 1 <= workers <= 8,
        f"processes={workers!r}: give the pool a few workers as a whole number (the exercise asks for two).",
    )

    rng = np.random.default_rng(3)
    ndim = min(data.shape[1], 5) if data.ndim == 2 else 5
    thetas = [rng.normal(size=ndim) for _ in range(4)]
    want = [log_prob_with_data(th, data, cost=0.0) for th in thetas]
    kwargs = dict(pool_kwargs)
    kwargs["processes"] = 2 if kwargs.get("processes") in (None, 0) else kwargs["processes"]
    ctx = mp.get_context("spawn")
    pool = ctx.Pool(**kwargs)
    try:
        got = pool.map_async(task, thetas).get(timeout=timeout)
    except mp.TimeoutError:
        raise AssertionError(
            f"The spawn pool gave no answer within {timeout:.0f} s: a worker probably failed to start or "
            "to unpickle its task. Check that the initializer and log-probability come from a module."
        ) from None
    except Exception as err:
        raise AssertionError(f"Calling the log-probability in a spawn worker failed: {type(err).__name__}: {err}") from None
    finally:
        pool.terminate()
        pool.join()
    expect(
        np.allclose(got, want),
        f"The workers returned {np.round(got, 4).tolist()}, but log_prob_with_data gives {np.round(want, 4).tolist()} "
        "for the same points: the workers do not read this data (wrong function, or wrong initargs?).",
    )
    passed(f"data_sent_once ({task_bytes} bytes per task; the data goes to each worker once)")


# (round_overhead, tasks_per_map, ranks, cores): emcee's maps (all walkers, then half of them twice a step) over
# the sharing pool, with more ranks than cores, uneven chunks, and one rank (no crossover).
_EMCEE_MAPS = [32] + [16] * 8
_SHARING_CASES = [
    (0.6e-3, _EMCEE_MAPS, 2, 2.0),
    (0.25e-3, _EMCEE_MAPS, 4, 2.0),
    (1.5e-3, [64] + [32] * 10, 3, 4.0),
    (2e-3, [24] + [12] * 6, 8, 8.0),
    (0.6e-3, _EMCEE_MAPS, 1, 2.0),
]


def _sharing_saved(tasks_per_map: Sequence[int], ranks: int, cores: float) -> float:
    """Task-times one run saves through the sharing pool: each map's tasks less its longest share."""
    return float(sum(n - max(-(-n // ranks), n / cores) for n in tasks_per_map))


def sharing_crossover(fn: Callable[..., Any], cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(round_overhead, tasks_per_map, ranks, cores)``: the cost of one log-probability at which the
    sharing pool's run takes as long as the serial run, in the book's model; ``None`` where it never pays.

    A map of ``n`` tasks of ``c`` seconds takes ``n * c`` serially and, through the pool
    (:func:`parallel_mcmc.measure.chunked_pool_run_time`), ``round_overhead`` plus the larger of
    ``ceil(n / ranks) * c`` and ``n * c / cores``; emcee's own work is the same on both sides. ``cases``
    (default: a fixed table) lists the arguments.
    """
    expect(callable(fn), "Pass your function itself, `sharing_crossover`, not the cost it returns.")
    for overhead, maps, ranks, cores in cases if cases is not None else _SHARING_CASES:
        maps = [int(n) for n in maps]
        where = f"sharing_crossover({overhead:g}, {_maps_text(maps)}, {ranks}, {cores:g})"
        got = call(fn, overhead, list(maps), ranks, cores, what=where)
        saved = _sharing_saved(maps, ranks, cores)
        if saved <= 0:
            if got is None:
                continue
            raise AssertionError(
                f"{where} returned {got!r}; with {ranks} rank(s) on {cores:g} core(s) no map is shorter through the "
                "pool than serially, whatever a log-probability costs, and every map pays the overhead: return None.")
        want = len(maps) * overhead / saved
        expect(got is not None, f"{where} returned None, but the pool pays from about {want * 1e6:.0f} µs on.")
        value = as_float(got, where)
        if np.isclose(value, want, rtol=0.02):
            continue
        wrong = {
            overhead: "the round overhead itself. A map pays it once, not once a task; what it buys is the "
                      "work of every rank but the slowest",
            overhead / maps[-1]: "the overhead over a map's tasks, as if the pool saved all their work. The longest "
                                 "share (the master's own chunk among them) still takes its time",
            overhead / (maps[-1] - max(-(-maps[-1] // ranks), maps[-1] / cores)):
                "right for a half-ensemble map, but emcee's first map asks for all the walkers: a run's maps differ, "
                "so add the overheads and the savings over all of them",
            len(maps) * overhead / sum(n - n / ranks for n in maps):
                "as if the tasks split evenly; a map of n tasks gives some rank ceil(n / ranks) of them",
            len(maps) * overhead / sum(n - -(-n // ranks) for n in maps):
                f"as if every rank had a core of its own; {ranks} ranks share {cores:g} core(s), so a map's work "
                "takes at least n * c / cores",
        }
        for value_wrong, why in wrong.items():
            if not np.isclose(value_wrong, want, rtol=0.02) and np.isclose(value, value_wrong, rtol=0.02):
                raise AssertionError(f"{where} returned {value * 1e6:.1f} µs: {why}.")
        raise AssertionError(f"{where} returned {value * 1e6:.1f} µs; the model breaks even at {want * 1e6:.1f} µs.")
    passed("sharing_crossover")


def _maps_text(maps: Sequence[int]) -> str:
    return f"[{maps[0]}] + [{maps[1]}] * {len(maps) - 1}" if len(maps) > 2 and len(set(maps[1:])) == 1 else str(list(maps))


# (speedup, overhead_per_task, emcee_seconds, tasks_per_map, workers, cores, master_cores): a pool that deals out
# one task at a time (the Dask pool) wanting a speedup over the serial run; the last ones cannot reach it.
_SPEEDUP_CASES = [
    (1.5, 0.5e-3, 0.02, _EMCEE_MAPS, 2, 2.0, 0.3),
    (1.2, 1e-3, 0.2, _EMCEE_MAPS, 2, 2.0, 0.0),
    (3.0, 0.3e-3, 0.05, [64] + [32] * 10, 8, 8.0, 1.0),
    (1.5, 2e-3, 0.01, [24] + [12] * 6, 4, 2.0, 0.5),
    (2.0, 0.5e-3, 0.02, _EMCEE_MAPS, 2, 2.0, 0.3),
    (1.9, 0.5e-3, 0.02, _EMCEE_MAPS, 4, 2.0, 0.2),
]


def _pool_speedup(cost: float, overhead: float, emcee: float, maps: Sequence[int], workers: int, cores: float,
                  master: float) -> float:
    pool = pool_run_time(maps, cost, workers, cores, overhead_per_task=overhead, master_cores=master)
    return (emcee + sum(maps) * cost) / (emcee + pool)


def _cost_for_speedup(speedup: float, overhead: float, emcee: float, maps: Sequence[int], workers: int, cores: float,
                      master: float) -> float | None:
    """The cheapest log-probability at which the model's speedup reaches ``speedup`` (bisection in log cost)."""
    low, high = 1e-9, 1e3
    if _pool_speedup(high, overhead, emcee, maps, workers, cores, master) < speedup:
        return None
    for _ in range(60):
        mid = (low * high) ** 0.5
        low, high = (low, mid) if _pool_speedup(mid, overhead, emcee, maps, workers, cores, master) >= speedup else (mid, high)
    return high


def cost_for_speedup(fn: Callable[..., Any], cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(speedup, overhead_per_task, emcee_seconds, tasks_per_map, workers, cores, master_cores)``: the
    cheapest log-probability at which a pool that deals out one task at a time reaches ``speedup`` over the serial
    run, in the book's model; ``None`` where no cost reaches it.

    The serial run takes ``emcee_seconds + sum(tasks_per_map) * c``, the pool's
    ``emcee_seconds + costmodel.pool_run_time(tasks_per_map, c, workers, cores, overhead_per_task=...,
    master_cores=...)``. ``cases`` (default: a fixed table) lists the arguments.
    """
    expect(callable(fn), "Pass your function itself, `cost_for_speedup`, not the cost it returns.")
    for case in cases if cases is not None else _SPEEDUP_CASES:
        speedup, overhead, emcee, maps, workers, cores, master = case
        maps = [int(n) for n in maps]
        where = (f"cost_for_speedup({speedup:g}, {overhead:g}, {emcee:g}, {_maps_text(maps)}, {workers}, {cores:g}, "
                 f"{master:g})")
        got = call(fn, speedup, overhead, emcee, list(maps), workers, cores, master, what=where)
        want = _cost_for_speedup(speedup, overhead, emcee, maps, workers, cores, master)
        if want is None:
            if got is None:
                continue
            most = _pool_speedup(1e3, overhead, emcee, maps, workers, cores, master)
            raise AssertionError(
                f"{where} returned {got!r}; however dear a log-probability, {workers} workers on the "
                f"{cores - master:g} cores the master leaves them run at most {most:.2f} times the serial speed: "
                "return None.")
        expect(got is not None, f"{where} returned None, but the pool reaches {speedup:g}x from about "
                                f"{want * 1e6:.0f} µs a log-probability on.")
        value = as_float(got, where)
        if np.isclose(value, want, rtol=0.02):
            continue
        wrong = {
            speedup * overhead: "the speedup times the overhead, as if a round were only its overheads or only its "
                                "work: a round lasts its tasks' sending and the last task's work, and emcee's own "
                                "work runs serially in both runs",
            _cost_for_speedup(speedup, overhead, 0.0, maps, workers, cores, master) or -1.0:
                "as if emcee's own work (proposals, bookkeeping) cost nothing; it runs in the master, one step after "
                "another, in the pool's run as in the serial one, and dilutes the speedup",
            _cost_for_speedup(speedup, overhead, emcee, maps, workers, cores, 0.0) or -1.0:
                f"as if the master used no core; it keeps {master:g} busy, which the workers lose",
            _cost_for_speedup(speedup, overhead / workers, emcee, maps, workers, cores, master) or -1.0:
                "as if the workers shared the overhead; the master sends the tasks one after another, so a round pays "
                "every task's overhead in turn",
            _cost_for_speedup(1.0, overhead, emcee, maps, workers, cores, master) or -1.0:
                f"the break-even (a speedup of 1), not the cost at which the pool reaches {speedup:g}x",
        }
        for value_wrong, why in wrong.items():
            if not np.isclose(value_wrong, want, rtol=0.02) and np.isclose(value, value_wrong, rtol=0.02):
                raise AssertionError(f"{where} returned {value * 1e6:.1f} µs: {why}.")
        raise AssertionError(f"{where} returned {value * 1e6:.1f} µs; the model reaches {speedup:g}x from "
                             f"{want * 1e6:.1f} µs.")
    passed("cost_for_speedup")


# The log-densities of the fixed points the check tries (-inf: outside the prior), written out.
_LOG_PROB_VALUES = [
    [18580.812173, 19042.898101, 19118.775483, 18945.281523, 18395.699762, None],
    [None, 19043.133431, 19108.847204, 18172.64063, 18936.440444, 19024.022174, 18967.751303, 19035.224879, None],
    [18350.488049, 18706.607761, None],
]


def _fixed_log_prob_cases() -> list[tuple[np.ndarray, np.ndarray]]:
    """(thetas, log-densities) near the true parameters, with walkers outside the prior box."""
    rng = np.random.default_rng(11)
    truth = np.append(sinusoid.TRUE_PARAMS, np.log(sinusoid.NOISE_SCALE))
    cases = []
    for values in _LOG_PROB_VALUES:
        n = len(values)
        thetas = truth + 1e-3 * rng.normal(size=(n, 5))
        thetas[-1, 0] = -1.0  # a negative amplitude: outside the prior
        if n == 9:
            thetas[0, 4] = 6.0  # log sigma above the prior's bound
        cases.append((thetas, np.array([-np.inf if v is None else v for v in values])))
    return cases


def vectorized_log_prob(fn: Callable[[np.ndarray], Any], cases: Sequence[tuple[Any, Any]] | None = None) -> None:
    """Check a vectorised log-density for emcee: ``(n, 5)`` NumPy in, ``(n,)`` NumPy float out.

    ``cases`` (default: fixed points near the true parameters) lists ``(thetas, log-densities)``.
    """
    expect(callable(fn), "Pass your function itself, not the result of calling it.")
    for thetas, want in cases if cases is not None else _fixed_log_prob_cases():
        thetas, want = np.array(thetas, dtype=float), np.asarray(want, dtype=float)
        n = thetas.shape[0]
        out = call(fn, thetas.copy(), what=f"your log-density on {n} walkers")
        if type(out).__module__.startswith("jax"):
            raise AssertionError(
                f"The function returned a {type(out).__name__}, a JAX array. emcee works on NumPy arrays: "
                "convert the result with np.asarray(...) before returning it."
            )
        expect(isinstance(out, np.ndarray), f"The function returned {type(out).__name__}; return a NumPy array.")
        expect(
            out.shape == (n,),
            f"For {n} walkers the function returned shape {out.shape}; emcee needs one value per walker, shape ({n},)."
            + (" Drop the extra axis (for example with out[:, 0] or by returning a scalar per walker)." if out.size == n else "")
            + (" Do not sum over the walkers." if out.size == 1 else ""),
        )
        expect(np.issubdtype(out.dtype, np.floating), f"The values have dtype {out.dtype}; they should be floats.")
        outside = ~np.isfinite(want)
        expect(
            np.all(out[outside] == -np.inf),
            "Walkers outside the prior box (for example a negative amplitude, or log sigma above 5) must get -inf; "
            f"got {out[outside].tolist()}.",
        )
        ok = np.isclose(out[~outside], want[~outside], rtol=1e-5, atol=0.5)
        if not ok.all():
            diff = out[~outside] - want[~outside]
            hint = ""
            norm = sinusoid.NUM_POINTS * thetas[~outside, 4]
            if np.allclose(diff, norm, rtol=1e-4, atol=0.5):
                hint = (
                    " The difference is n*log(sigma): the -n*log(sigma) term is missing. With sigma unknown "
                    "it is not a constant and cannot be dropped."
                )
            elif np.allclose(diff, diff[0], rtol=1e-4, atol=0.5):
                hint = " The values differ by a constant: drop constant terms such as -n*log(2*pi)/2."
            raise AssertionError(
                f"The log-densities differ from the expected ones by up to {np.abs(diff).max():.3g} "
                f"(for example {out[~outside][0]:.2f} instead of {want[~outside][0]:.2f}).{hint}"
            )
    passed("vectorized_log_prob")
