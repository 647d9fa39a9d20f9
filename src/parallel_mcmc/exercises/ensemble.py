"""Checks for the exercises of the part "Ensemble samplers in parallel"."""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import sys
from typing import Any, Callable, Sequence

import numpy as np
from emcee.ensemble import _FunctionWrapper

from ..models import sinusoid
from ..mpi import find_mpiexec
from ..pools import log_prob_with_data
from . import call, expect, importable, passed

__all__ = ["data_sent_once", "mpi_command", "vectorized_log_prob"]

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


def mpi_command(fn: Callable[[str, int], Sequence[str]], cases: Sequence[tuple[str, int]] | None = None) -> None:
    """Check ``fn(script, workers)``: the argument list that runs ``script`` with ``workers`` MPI workers.

    ``cases`` (default: a fixed list) gives the ``(script, workers)`` to try.
    """
    expect(callable(fn), "Pass your function itself, `mpi_command`, not the result of calling it.")
    for script, workers in cases if cases is not None else (("run.py", 2), ("/tmp/sampler.py", 1), ("fit.py", 7)):
        got = call(fn, script, workers, what=f"mpi_command({script!r}, {workers})")
        if isinstance(got, (list, tuple)) and got and str(got[-1]) == str(workers) and script not in got:
            raise AssertionError(
                f"mpi_command({script!r}, {workers}) returned {list(got)}, which does not run {script!r}: the "
                "arguments are (script, workers), the script first."
            )
        expect(
            isinstance(got, (list, tuple)) and all(isinstance(a, str) for a in got),
            f"mpi_command({script!r}, {workers}) returned {got!r}; it should return a list of strings "
            "(the arguments for subprocess.run), numbers converted with str().",
        )
        got = list(got)
        expect(
            len(got) >= 5 and os.path.basename(got[0]).startswith("mpiexec"),
            f"mpi_command({script!r}, {workers}) returned {got}; it should start with the mpiexec program "
            "(find_mpiexec() gives its path).",
        )
        expect(
            got[0] == find_mpiexec() or os.path.isabs(got[0]),
            f"The first argument {got[0]!r} is a bare name: use the full path from find_mpiexec(), so that the "
            "mpiexec of this environment runs, not another one on PATH.",
        )
        expect("-n" in got[:-1], f"{got} does not say how many processes to start: add '-n' and a count.")
        count = got[got.index("-n") + 1]
        if count == str(workers):
            raise AssertionError(
                f"For {workers} worker(s) you start {count} process(es), but rank 0 is the master and evaluates no "
                f"log-probabilities: {workers} workers need {workers + 1} ranks."
            )
        expect(count == str(workers + 1), f"For {workers} worker(s), '-n' is followed by {count!r}; expected {str(workers + 1)!r}.")
        expect(
            sys.executable in got,
            f"{got} does not run this Python ({sys.executable}). A bare 'python' may find another interpreter, "
            "one without emcee or mpi4py: use sys.executable.",
        )
        expect(
            got[-1] == script and got.index(sys.executable) < len(got) - 1,
            f"{got} should end with the script, {script!r}, after the Python interpreter.",
        )
    passed("mpi_command")


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
