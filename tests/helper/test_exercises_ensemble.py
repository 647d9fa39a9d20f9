"""Tests of the checks of the part "Ensemble samplers in parallel": solutions pass, wrong answers fail."""

from __future__ import annotations

import functools
import math
import sys

import numpy as np
import pytest

from parallel_mcmc import measure, pools
from parallel_mcmc.exercises import ensemble as check
from parallel_mcmc.models import sinusoid

# --- data_sent_once -----------------------------------------------------------------

@pytest.fixture(scope="module")
def data():
    return np.random.default_rng(5).normal(size=(1_000, 50))


def test_data_sent_once_accepts_initializer(data, capsys):
    check.data_sent_once(pools.log_prob_worker_data, dict(processes=2, initializer=pools.set_worker_data, initargs=(data,)), data)
    assert "✔" in capsys.readouterr().out


def test_data_sent_once_accepts_small_partial(data, capsys):
    fn = functools.partial(pools.log_prob_worker_data, cost=0.0)
    check.data_sent_once(fn, dict(initializer=pools.set_worker_data, initargs=(data,)), data)
    assert "✔" in capsys.readouterr().out


def test_data_sent_once_rejects_data_in_args(data):
    with pytest.raises(AssertionError, match="still carries"):
        check.data_sent_once(pools.log_prob_with_data, {}, data, args=(data,))


def test_data_sent_once_rejects_data_in_partial(data):
    with pytest.raises(AssertionError, match="still carries"):
        check.data_sent_once(functools.partial(pools.log_prob_with_data, data=data), {}, data)


def test_data_sent_once_rejects_missing_initializer(data):
    with pytest.raises(AssertionError, match="no initializer"):
        check.data_sent_once(pools.log_prob_worker_data, dict(processes=2), data)


def test_data_sent_once_rejects_notebook_function(data, monkeypatch):
    def log_prob_global(theta):
        return 0.0

    # What a notebook defines: a function of __main__, which pickles but cannot be imported by a spawned worker.
    log_prob_global.__module__, log_prob_global.__qualname__ = "__main__", "log_prob_global"
    monkeypatch.setattr(sys.modules["__main__"], "log_prob_global", log_prob_global, raising=False)
    with pytest.raises(AssertionError, match="spawned worker"):
        check.data_sent_once(log_prob_global, dict(initializer=pools.set_worker_data, initargs=(data,)), data)


def test_data_sent_once_rejects_function_without_data(data):
    with pytest.raises(AssertionError, match="do not read this data"):
        check.data_sent_once(pools.busy_log_prob, dict(initializer=pools.set_worker_data, initargs=(data,)), data)


def test_data_sent_once_rejects_wrong_initargs(data):
    other = np.random.default_rng(6).normal(size=data.shape)
    with pytest.raises(AssertionError, match="do not read this data"):
        check.data_sent_once(pools.log_prob_worker_data, dict(initializer=pools.set_worker_data, initargs=(other,)), data)


# --- sharing_crossover -----------------------------------------------------------------

def _closed_form(round_overhead, maps, ranks, cores):
    saved = sum(n - max(math.ceil(n / ranks), n / cores) for n in maps)
    return len(maps) * round_overhead / saved if saved > 0 else None


def _by_search(round_overhead, maps, ranks, cores):
    """The first cost on a fine grid at which the book's model of the pool beats the serial run."""
    for c in np.geomspace(1e-7, 1.0, 20_000):
        if measure.chunked_pool_run_time(maps, c, ranks, cores, round_overhead=round_overhead) < sum(maps) * c:
            return c
    return None


def test_sharing_crossover_accepts_the_closed_form_and_the_models_search(capsys):
    check.sharing_crossover(_closed_form)
    check.sharing_crossover(_by_search)
    check.sharing_crossover(lambda *a: None if _closed_form(*a) is None else np.float32(_closed_form(*a)))
    assert capsys.readouterr().out.count("sharing_crossover: correct") == 3


@pytest.mark.parametrize("wrong, message", [
    (lambda r, m, k, c: r, "the round overhead itself"),
    (lambda r, m, k, c: r / m[-1], "as if the pool saved all their work"),
    (lambda r, m, k, c: r / (m[-1] - math.ceil(m[-1] / k)) if k > 1 else None, "emcee's first map"),
    (lambda r, m, k, c: _closed_form(r, m, k, 1e12), "core of its own"),
    (lambda r, m, k, c: len(m) * r / sum(n - n / k for n in m) if k > 1 else None, "split evenly|core of its own"),
    (lambda r, m, k, c: _closed_form(r, m, k, c) or float("inf"), "return None"),
    (lambda r, m, k, c: _closed_form(r, m, k, c) or 0.0, "return None"),
    (lambda r, m, k, c: None, "returned None"),
    (lambda r, m, k, c: 2 * (_closed_form(r, m, k, c) or 1.0), "breaks even at"),
])
def test_sharing_crossover_rejects_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check.sharing_crossover(wrong)
    with pytest.raises(AssertionError, match="function itself"):
        check.sharing_crossover(1e-3)


# --- cost_for_speedup ----------------------------------------------------------------

def _speedup_search(speedup, overhead, emcee, maps, workers, cores, master):
    """The book's model, searched: bisection in log cost for the first cost whose predicted speedup reaches
    the target."""
    def reaches(c):
        pool = measure.pool_run_time(maps, c, workers, cores, overhead_per_task=overhead, master_cores=master)
        return emcee + sum(maps) * c >= speedup * (emcee + pool)

    low, high = 1e-8, 10.0
    if not reaches(high):
        return None
    while high / low > 1.0001:
        mid = math.sqrt(low * high)
        low, high = (low, mid) if reaches(mid) else (mid, high)
    return high


def test_cost_for_speedup_accepts_the_models_search(capsys):
    check.cost_for_speedup(_speedup_search)
    assert "cost_for_speedup: correct" in capsys.readouterr().out


@pytest.mark.parametrize("wrong, message", [
    (lambda s, o, e, m, k, c, mc: s * o, "speedup times the overhead"),
    (lambda s, o, e, m, k, c, mc: _speedup_search(s, o, 0.0, m, k, c, mc), "emcee's own work"),
    (lambda s, o, e, m, k, c, mc: _speedup_search(s, o / k, e, m, k, c, mc), "shared the overhead"),
    (lambda s, o, e, m, k, c, mc: _speedup_search(1.0, o, e, m, k, c, mc), "break-even"),
    (lambda s, o, e, m, k, c, mc: _speedup_search(s, o, e, m, k, c, 0.0), "used no core|return None"),
    (lambda s, o, e, m, k, c, mc: _speedup_search(s, o, e, m, k, c, mc) or float("inf"), "return None"),
    (lambda s, o, e, m, k, c, mc: None, "returned None"),
])
def test_cost_for_speedup_rejects_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check.cost_for_speedup(wrong)
    with pytest.raises(AssertionError, match="function itself"):
        check.cost_for_speedup(2e-3)


# --- vectorized_log_prob ---------------------------------------------------------------

# The prior box of (amplitude, frequency, phase, offset, log sigma).
LOW, HIGH = np.append(sinusoid.PRIOR_LOW, -5.0), np.append(sinusoid.PRIOR_HIGH, 5.0)


def numpy_solution(thetas, prior=True):
    """A right answer in NumPy (float64), the base of the wrong answers below (``prior=False``: one)."""
    th = np.asarray(thetas, dtype=float)
    t, y = sinusoid.data()
    fit = th[:, :1] * np.sin(2 * np.pi * th[:, 1:2] * t + th[:, 2:3]) + th[:, 3:4]
    loglik = -0.5 * np.sum((y - fit) ** 2, axis=1) * np.exp(-2 * th[:, 4]) - t.size * th[:, 4]
    inside = np.all((th > LOW) & (th < HIGH), axis=1) if prior else True
    return np.where(inside, loglik, -np.inf)


def jax_solution():
    import jax
    import jax.numpy as jnp

    t, y = (jnp.asarray(a) for a in sinusoid.data())
    low, high = jnp.asarray(LOW), jnp.asarray(HIGH)

    def one(theta):
        amplitude, frequency, phase, offset, log_sigma = theta
        resid = y - (amplitude * jnp.sin(2 * jnp.pi * frequency * t + phase) + offset)
        loglik = -0.5 * jnp.sum(resid**2) * jnp.exp(-2 * log_sigma) - t.size * log_sigma
        return jnp.where(jnp.all((theta > low) & (theta < high)), loglik, -jnp.inf)

    return jax.jit(jax.vmap(one))


@pytest.fixture(scope="module")
def batched():
    return jax_solution()


def test_vectorized_accepts_solution(batched, capsys):
    check.vectorized_log_prob(lambda th: np.asarray(batched(th)))
    assert "✔" in capsys.readouterr().out


def test_vectorized_accepts_numpy_solution(capsys):
    check.vectorized_log_prob(numpy_solution)
    assert "✔ vectorized_log_prob: correct." in capsys.readouterr().out


def test_vectorized_rejects_jax_array(batched):
    with pytest.raises(AssertionError, match="JAX array"):
        check.vectorized_log_prob(batched)


def test_vectorized_rejects_column(batched):
    with pytest.raises(AssertionError, match=r"shape \(6, 1\)"):
        check.vectorized_log_prob(lambda th: np.asarray(batched(th))[:, None])


def test_vectorized_rejects_sum_over_walkers(batched):
    with pytest.raises(AssertionError, match="Do not sum over the walkers"):
        check.vectorized_log_prob(lambda th: np.asarray(batched(th)).sum(keepdims=True))


def test_vectorized_rejects_missing_prior():
    with pytest.raises(AssertionError, match="outside the prior"):
        check.vectorized_log_prob(lambda th: numpy_solution(th, prior=False))


def test_vectorized_rejects_missing_normalisation():
    with pytest.raises(AssertionError, match="n\\*log\\(sigma\\)"):
        check.vectorized_log_prob(
            lambda th: numpy_solution(th) + sinusoid.NUM_POINTS * np.asarray(th)[:, 4]
        )


def test_vectorized_rejects_known_sigma():
    def known_sigma(th):
        out = numpy_solution(th)
        fixed = np.array(th, dtype=float)
        fixed[:, 4] = np.log(sinusoid.NOISE_SCALE)
        return np.where(np.isfinite(out), numpy_solution(fixed), -np.inf)

    with pytest.raises(AssertionError, match="differ from the expected"):
        check.vectorized_log_prob(known_sigma)


def test_the_checks_name_a_learners_own_error():
    with pytest.raises(AssertionError, match="raised ZeroDivisionError"):
        check.sharing_crossover(lambda r, m, k, c: r / 0)
    with pytest.raises(AssertionError, match="raised ValueError: no speedup"):
        check.cost_for_speedup(lambda *a: (_ for _ in ()).throw(ValueError("no speedup")))


def test_vectorized_on_given_cases(batched):
    """The check compares with the log-densities it is given (the grader's: tests/tools/test_references.py)."""
    rng = np.random.default_rng(5)
    truth = np.append(sinusoid.TRUE_PARAMS, np.log(sinusoid.NOISE_SCALE))
    thetas = truth + 1e-3 * rng.normal(size=(7, 5))
    case = (thetas, numpy_solution(thetas))
    check.vectorized_log_prob(lambda th: np.asarray(batched(th)), cases=[case])
    with pytest.raises(AssertionError, match="differ from the expected"):
        check.vectorized_log_prob(lambda th: np.asarray(batched(th)) + 3.0, cases=[case])


def test_data_sent_once_rejects_an_unreasonable_pool(data):
    kwargs = {"processes": 10**6, "initializer": pools.set_worker_data, "initargs": (data,)}
    with pytest.raises(AssertionError, match="a few workers"):
        check.data_sent_once(pools.log_prob_worker_data, kwargs, data)


# --- answers of the wrong type: WrongType (a TypeError and an AssertionError), never a crash of the check itself

@pytest.mark.parametrize("wrong, message", [
    (lambda r, m, k, c: str(_closed_form(r, m, k, c)), r"returned '.*' \(str\); it should return one number"),
    (lambda r, m, k, c: {"cost": _closed_form(r, m, k, c)}, r"\(dict\); it should return one number"),
    (lambda r, m, k, c: (_closed_form(r, m, k, c), r), r"\(tuple\); it should return one number"),
    (lambda r, m, k, c: np.array([_closed_form(r, m, k, c) or 0.0]), r"\(ndarray\); it should return one number"),
])
def test_sharing_crossover_refuses_answers_of_the_wrong_type(wrong, message):
    with pytest.raises(TypeError, match=message):
        check.sharing_crossover(wrong)


def test_sharing_crossover_and_cost_for_speedup_refuse_a_value_for_the_function():
    with pytest.raises(TypeError, match=r"function itself.*got a float"):
        check.sharing_crossover(_closed_form(0.6e-3, [32] + [16] * 8, 2, 2.0))
    with pytest.raises(TypeError, match=r"function itself.*got a NoneType"):
        check.cost_for_speedup(None)


@pytest.mark.parametrize("wrong, message", [
    (lambda *a: f"{_speedup_search(*a)} s", r"\(str\); it should return one number"),
    (lambda *a: {"cost": _speedup_search(*a)}, r"\(dict\); it should return one number"),
    (lambda *a: (_speedup_search(*a), a[0]), r"\(tuple\); it should return one number"),
])
def test_cost_for_speedup_refuses_answers_of_the_wrong_type(wrong, message):
    with pytest.raises(TypeError, match=message):
        check.cost_for_speedup(wrong)


@pytest.mark.parametrize("wrong, message", [
    (lambda th: None, "returned NoneType"),
    (lambda th: numpy_solution(th).tolist(), "returned list"),
    (lambda th: float(np.sum(numpy_solution(th, prior=False))), "a number for the whole batch"),
    (lambda th: np.round(numpy_solution(th, prior=False)).astype(np.int64), "should be floats"),
])
def test_vectorized_refuses_answers_of_the_wrong_type(wrong, message):
    with pytest.raises(TypeError, match=message):
        check.vectorized_log_prob(wrong)


def test_vectorized_refuses_values_for_the_function(batched):
    with pytest.raises(TypeError, match="function itself.*got a ndarray"):
        check.vectorized_log_prob(numpy_solution(np.zeros((3, 5))))
    with pytest.raises(TypeError, match="JAX array"):
        check.vectorized_log_prob(batched)


def test_data_sent_once_names_initargs_without_the_comma(data):
    """initargs=(data) is the data itself: the workers would die as they start and the pool time out."""
    with pytest.raises(TypeError, match=r"initargs=\(data\) is data itself.*needs the comma, initargs=\(data,\)"):
        check.data_sent_once(pools.log_prob_worker_data, dict(processes=2, initializer=pools.set_worker_data,
                                                              initargs=(data)), data)


def test_data_sent_once_names_initargs_the_initializer_cannot_take(data):
    with pytest.raises(AssertionError, match=r"set_worker_data\(\*initargs\).*fails"):
        check.data_sent_once(pools.log_prob_worker_data, dict(initializer=pools.set_worker_data, initargs=()), data)


@pytest.mark.parametrize("log_prob_fn, pool_kwargs, message", [
    (lambda data: -3.5, lambda data: dict(initializer=pools.set_worker_data,
                                                                           initargs=(data,)),
     "not its result"),
    (lambda data: pools.log_prob_worker_data, lambda data: [("initializer", pools.set_worker_data)],
     "dict of Pool keyword arguments, got list"),
    (lambda data: pools.log_prob_worker_data, lambda data: dict(initializer=None, initargs=(data,)),
     "not the result of calling it"),
    (lambda data: pools.log_prob_worker_data,
     lambda data: dict(initializer=pools.set_worker_data, initargs=data.tolist()[0]),
     None),
    (lambda data: pools.log_prob_worker_data, lambda data: dict(initializer=pools.set_worker_data, initargs=data[0, 0]),
     r"initargs is a float64, not a tuple"),
    (lambda data: pools.log_prob_worker_data, lambda data: dict(processes="2", initializer=pools.set_worker_data,
                                                              initargs=(data,)),
     r"processes='2' \(str\)"),
])
def test_data_sent_once_refuses_answers_of_the_wrong_type(data, log_prob_fn, pool_kwargs, message):
    if message is None:  # a list of 50 numbers: the initializer takes one argument
        with pytest.raises(AssertionError, match="fails"):
            check.data_sent_once(log_prob_fn(data), pool_kwargs(data), data)
        return
    with pytest.raises(TypeError, match=message):
        check.data_sent_once(log_prob_fn(data), pool_kwargs(data), data)


def test_the_ensemble_checks_name_an_empty_error():
    from parallel_mcmc.exercises.common import error_text

    def bare():  # a bare assert in the learner's code (pytest would give one in this file a message)
        raise AssertionError

    try:
        bare()
    except AssertionError as err:
        said = error_text(err)
    assert said.startswith("AssertionError: with no message, at line ") and "raise AssertionError" in said, said
    assert error_text(ValueError("bad")) == "ValueError: bad"
    assert error_text(ValueError("first\nsecond"), first_line=True) == "ValueError: first"
