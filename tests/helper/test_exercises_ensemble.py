"""Tests of the checks of the part "Ensemble samplers in parallel": solutions pass, wrong answers fail."""

from __future__ import annotations

import functools
import sys

import numpy as np
import pytest

from parallel_mcmc import mpi, pools
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


# --- mpi_command ---------------------------------------------------------------------

def good_command(script, workers):
    return [mpi.find_mpiexec(), "-n", str(workers + 1), sys.executable, script]


def test_mpi_command_accepts_solution(capsys):
    check.mpi_command(good_command)
    assert "✔" in capsys.readouterr().out


def test_mpi_command_rejects_one_rank_per_worker():
    with pytest.raises(AssertionError, match="need 3 ranks"):
        check.mpi_command(lambda s, w: [mpi.find_mpiexec(), "-n", str(w), sys.executable, s])


def test_mpi_command_rejects_bare_python():
    with pytest.raises(AssertionError, match="sys.executable"):
        check.mpi_command(lambda s, w: [mpi.find_mpiexec(), "-n", str(w + 1), "python", s])


def test_mpi_command_rejects_bare_mpiexec():
    with pytest.raises(AssertionError, match="find_mpiexec"):
        check.mpi_command(lambda s, w: ["mpiexec", "-n", str(w + 1), sys.executable, s])


def test_mpi_command_rejects_numbers_and_strings():
    with pytest.raises(AssertionError, match="list of strings"):
        check.mpi_command(lambda s, w: [mpi.find_mpiexec(), "-n", w + 1, sys.executable, s])
    with pytest.raises(AssertionError, match="list of strings"):
        check.mpi_command(lambda s, w: f"mpiexec -n {w + 1} python {s}")


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


def test_mpi_command_names_swapped_arguments_and_own_errors():
    with pytest.raises(AssertionError, match=r"the arguments are \(script, workers\)"):
        check.mpi_command(lambda script, workers: [mpi.find_mpiexec(), "-n", "3", sys.executable, str(workers)])
    with pytest.raises(AssertionError, match="raised FileNotFoundError: no mpiexec"):
        check.mpi_command(lambda s, w: (_ for _ in ()).throw(FileNotFoundError("no mpiexec")))


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
