"""The exercise ``ex-pools-spawn-data`` of the chapter ``chapters/ensemble/process_pools.md``: its check, :func:`data_sent_once`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

import inspect
import multiprocessing as mp
import pickle
from typing import Any, Callable, Sequence

import numpy as np
from emcee.ensemble import _FunctionWrapper

from parallel_mcmc.pools.workers import log_prob_with_data
from parallel_mcmc.exercises.common import WrongType, error_text, expect, expect_type, importable, passed

__all__ = ["data_sent_once", "WRONG_ANSWERS"]


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

    Parameters
    ----------
    log_prob_fn, pool_kwargs, data, args, timeout
        The learner's answers, as the chapter's exercise asks for them.

    Returns
    -------
    None
        Prints ``✔ data_sent_once (... bytes per task; the data goes to each worker once): correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When the data travel with every task, or the set-up does not work under ``spawn``.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When an answer has the wrong type: ``log_prob_fn`` or the initializer not a function (the result of
        calling one), ``pool_kwargs`` not a dict, ``initargs`` not a tuple (``(data)`` without the comma is
        ``data`` itself), ``processes`` not a whole number.
    """
    data = np.asarray(data)
    expect_type(callable(log_prob_fn),
                f"log_prob_fn must be the function to give EnsembleSampler, not its result (got a "
                f"{type(log_prob_fn).__name__}).")
    expect_type(isinstance(pool_kwargs, dict),
                f"pool_kwargs must be a dict of Pool keyword arguments, got {type(pool_kwargs).__name__}.")
    if "initializer" in pool_kwargs:
        initializer = pool_kwargs["initializer"]
        expect_type(initializer is not None and callable(initializer),
                    f"initializer={initializer!r} ({type(initializer).__name__}): give the function itself "
                    "(initializer=set_worker_data), not the result of calling it; the pool calls it in each worker.")
    if "initargs" in pool_kwargs:
        initargs = pool_kwargs["initargs"]
        if isinstance(initargs, np.ndarray):
            raise WrongType(
                f"initargs is an array of shape {initargs.shape}, not a tuple: initargs=(data) is data itself, "
                "since brackets alone make no tuple. A tuple of one needs the comma, initargs=(data,); without it "
                "each worker would call the initializer with every row of the data as an argument, fail as it "
                "starts, and the pool would hang.")
        expect_type(isinstance(initargs, (tuple, list)),
                    f"initargs is a {type(initargs).__name__}, not a tuple: the pool calls initializer(*initargs). "
                    "A tuple of one needs the comma: initargs=(data,).")
    workers = pool_kwargs.get("processes")
    expect_type(workers is None or isinstance(workers, (int, np.integer)) and not isinstance(workers, bool),
                f"processes={workers!r} ({type(workers).__name__}): give the number of workers as a whole number "
                "(the exercise asks for two).")
    task = _FunctionWrapper(log_prob_fn, list(args) if args else None, None)
    try:
        task_bytes = len(pickle.dumps(task))
    except Exception as err:  # a lambda, a local function, ...
        raise AssertionError(
            f"emcee could not send this log-probability to a worker: pickling it failed ({error_text(err)}). "
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
    try:
        inspect.signature(initializer).bind(*pool_kwargs.get("initargs", ()))
    except TypeError as err:
        raise AssertionError(
            f"The pool would call {getattr(initializer, '__qualname__', initializer)}(*initargs) in each worker, "
            f"and that call fails ({err}): each worker would die as it starts and the pool hang. Give initargs "
            "what the initializer takes, as a tuple: initargs=(data,).") from None
    except ValueError:  # a built-in without a signature: the pool will tell
        pass
    unknown = set(pool_kwargs) - {"processes", "initializer", "initargs", "maxtasksperchild"}
    expect(not unknown, f"Unknown Pool keyword argument(s) {sorted(unknown)}; Pool takes processes, initializer, initargs.")
    workers = pool_kwargs.get("processes")
    expect(
        workers is None or 1 <= int(workers) <= 8,
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
        raise AssertionError(f"Calling the log-probability in a spawn worker failed: {error_text(err)}. Look at "
                             "the log-probability and what the initializer leaves for it.") from None
    finally:
        pool.terminate()
        pool.join()
    expect(
        np.allclose(got, want),
        f"The workers returned {np.round(got, 4).tolist()}, but log_prob_with_data gives {np.round(want, 4).tolist()} "
        "for the same points: the workers do not read this data (wrong function, or wrong initargs?).",
    )
    passed(f"data_sent_once ({task_bytes} bytes per task; the data goes to each worker once)")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = []
