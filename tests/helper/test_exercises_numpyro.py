"""Checks of the NumPyro chains part: right answers pass, plausible wrong ones are rejected."""

import numpy as np
import pytest

from parallel_mcmc.exercises import numpyro as check


def good_split_compile(ws, ns, wl, nl):
    per = (wl - ws) / (nl - ns)
    return ws - ns * per, per


def test_split_compile_accepts_the_difference(capsys):
    check.split_compile(good_split_compile)
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize("wrong, message", [
    (lambda ws, ns, wl, nl: (0.0, wl / nl), "still contains the compilation"),
    (lambda ws, ns, wl, nl: good_split_compile(ws, ns, wl, nl)[::-1], "wrong way round"),
    (lambda ws, ns, wl, nl: (ws - nl * (wl - ws) / (nl - ns), (wl - ws) / (nl - ns)), "compilation is"),
    (lambda ws, ns, wl, nl: (ws, (wl - ws) / nl), "time per\niteration|time per iteration"),
])
def test_split_compile_rejects_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check.split_compile(wrong)


@pytest.mark.parametrize("wrong, message", [
    (lambda ws, ns, wl, nl: 3.0, r"returned 3.0 \(float\); return a pair of numbers"),
    (lambda ws, ns, wl, nl: dict(zip(("compile", "per"), good_split_compile(ws, ns, wl, nl))),
     r"\(dict\); return a pair of numbers"),
    (lambda ws, ns, wl, nl: None, r"returned None \(NoneType\); return a pair"),
    (lambda ws, ns, wl, nl: (str(good_split_compile(ws, ns, wl, nl)[0]), 0.002), r"\(tuple\); return a pair of numbers"),
    ((1.0, 2.0), r"function itself.*\(got tuple\)"),
])
def test_split_compile_refuses_answers_of_the_wrong_type(wrong, message):
    with pytest.raises(TypeError, match=message):
        check.split_compile(wrong)


def good_max_draws(memory, num_chains, num_devices, num_latent, data_bytes):
    per_device = -(-num_chains // num_devices)
    return max((memory - data_bytes - per_device * 40 * num_latent) // (per_device * 4 * num_latent), 0)


def test_max_draws_accepts_the_rule_and_a_search_with_the_runners_estimate(capsys):
    from parallel_mcmc.sample.numpyro_plan import ChainPlan, estimate_memory

    check.max_draws(good_max_draws)

    def by_estimate(memory, num_chains, num_devices, num_latent, data_bytes):
        base, extra = divmod(num_chains, num_devices)
        counts = tuple(c for c in (base + (k < extra) for k in range(num_devices)) if c)
        plan = ChainPlan(num_chains, tuple(range(len(counts))), counts)
        fits = lambda n: estimate_memory(plan, n, num_latent, data_bytes).per_device_bytes <= memory  # noqa: E731
        if not fits(1):
            return 0
        lo, hi = 1, 2
        while fits(hi):
            lo, hi = hi, 2 * hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if fits(mid) else (lo, mid)
        return lo

    check.max_draws(by_estimate)  # the check's rule is the runner's estimate
    assert capsys.readouterr().out.count("max_draws: correct") == 2


@pytest.mark.parametrize("wrong, message", [
    (lambda m, c, d, l, b: max((m - b - c / d * 40 * l) / (c / d * 4 * l), 0), "evenly"),
    (lambda m, c, d, l, b: good_max_draws(m, c, d, l, 0), "leaving out the data"),
    (lambda m, c, d, l, b: max((m - b) // (-(-c // d) * 4 * l), 0), "sampler state"),
    (lambda m, c, d, l, b: good_max_draws(m, c, 1, l, b), "one device held all"),
    (lambda m, c, d, l, b: (m - b - -(-c // d) * 40 * l) / (-(-c // d) * 4 * l), "round down|expected"),
    (lambda m, c, d, l, b: good_max_draws(m, c, d, l, b) + 1, "expected"),
    (lambda m, c, d, l, b: (m - b - -(-c // d) * 40 * l) // (-(-c // d) * 4 * l), "clip at 0"),
    (lambda m, c, d, l, b: float("inf"), r"The answer is wrong here: max_draws\(1048576, 3, 2, 4, 32000\) returned inf"),
])
def test_max_draws_rejects_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check.max_draws(wrong)


@pytest.mark.parametrize("wrong, message", [
    (lambda m, c, d, l, b: None, r"returned None \(NoneType\); it should return one number"),
    (lambda m, c, d, l, b: {"num_samples": good_max_draws(m, c, d, l, b)}, r"\(dict\); it should return one number"),
    (lambda m, c, d, l, b: f"{good_max_draws(m, c, d, l, b)} draws", r"\(str\); it should return one number"),
    (1000, r"function itself.*\(got int\)"),
])
def test_max_draws_refuses_answers_of_the_wrong_type(wrong, message):
    with pytest.raises(TypeError, match=message):
        check.max_draws(wrong)


def good_consensus(means, covs):
    prec = np.linalg.inv(covs)
    cov = np.linalg.inv(prec.sum(0))
    return cov @ np.einsum("sij,sj->i", prec, means), cov


def test_gaussian_consensus_accepts_the_product(capsys):
    check.gaussian_consensus(good_consensus)
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize("wrong, message", [
    (lambda m, c: (m.mean(0), good_consensus(m, c)[1]), "plain average"),
    (lambda m, c: (good_consensus(m, c)[0], c.mean(0) / len(c)), "averages the shards' covariances"),
    (lambda m, c: (good_consensus(m, c)[0], np.linalg.inv(np.linalg.inv(c).mean(0))), "covariance is wrong"),
    (lambda m, c: (m.sum(0), good_consensus(m, c)[1]), "mean is not"),
])
def test_gaussian_consensus_rejects_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check.gaussian_consensus(wrong)


@pytest.mark.parametrize("wrong, message", [
    (lambda m, c: good_consensus(m, c)[0], r"returned ndarray of shape \(1,\); return a pair \(mean, cov\)"),
    (lambda m, c: dict(zip(("mean", "cov"), good_consensus(m, c))), r"returned dict; return a pair"),
    (lambda m, c: (None, good_consensus(m, c)[1]), r"a mean of type NoneType; it should be an array of numbers"),
    (lambda m, c: (good_consensus(m, c)[0], {"cov": good_consensus(m, c)[1]}), r"a covariance of type dict"),
    (lambda m, c: (good_consensus(m, c)[0][None, :], good_consensus(m, c)[1]), r"mean must have shape \(1,\), got \(1, 1\)"),
    (good_consensus(np.zeros((2, 1)), np.ones((2, 1, 1))), r"function itself.*\(got tuple\)"),
])
def test_gaussian_consensus_refuses_answers_of_the_wrong_type(wrong, message):
    with pytest.raises(TypeError, match=message):
        check.gaussian_consensus(wrong)


def test_split_compile_accepts_jnp_float32_and_an_array_pair(capsys):
    import jax.numpy as jnp

    def float32(ws, ns, wl, nl):
        per = (jnp.float32(wl) - jnp.float32(ws)) / (nl - ns)
        return jnp.stack([jnp.float32(ws) - ns * per, per])  # one float32 array of two

    check.split_compile(float32)
    assert "split_compile: correct" in capsys.readouterr().out


def test_split_compile_names_swapped_roles_and_own_errors():
    with pytest.raises(AssertionError, match="iterations per second"):
        check.split_compile(lambda ws, ns, wl, nl: (0.0, (nl - ns) / (wl - ws)))
    with pytest.raises(AssertionError, match="raised ZeroDivisionError: division by zero"):
        check.split_compile(lambda ws, ns, wl, nl: (1 / 0, 0))


def test_gaussian_consensus_accepts_float32_and_rejects_a_swapped_pair(capsys):
    import jax.numpy as jnp

    def float32(means, covs):
        mean, cov = good_consensus(means, covs)
        return jnp.asarray(mean, dtype=jnp.float32), jnp.asarray(cov, dtype=jnp.float32)

    check.gaussian_consensus(float32)
    assert "gaussian_consensus: correct" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="wrong way round"):
        check.gaussian_consensus(lambda m, c: good_consensus(m, c)[::-1])


def test_gaussian_consensus_compares_with_the_given_answers():
    """Two shards of one parameter, worked by hand: precisions 1 + 1/2, so cov 2/3 and mean 2/3 * (0 + 3/2) = 1.
    (The grader's unseen cases and reference answers: tests/tools/test_references.py.)"""
    means, covs = np.array([[0.0], [3.0]]), np.array([[[1.0]], [[2.0]]])
    check.gaussian_consensus(good_consensus, cases=[(means, covs, [1.0], [[2 / 3]])])
    with pytest.raises(AssertionError, match="precision"):
        check.gaussian_consensus(lambda m, c: (m.mean(0), np.linalg.inv(np.linalg.inv(c).sum(0)) * 2),
                                 cases=[(means, covs, [1.0], [[2 / 3]])])
    with pytest.raises(AssertionError, match="mean is not"):  # the given answer, not the product, is what counts
        check.gaussian_consensus(good_consensus, cases=[(means, covs, [1.5], [[2 / 3]])])
