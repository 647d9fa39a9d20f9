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
    (lambda ws, ns, wl, nl: 3.0, "pair of numbers"),
])
def test_split_compile_rejects_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check.split_compile(wrong)


def test_split_compile_rejects_a_value():
    with pytest.raises(AssertionError, match="function itself"):
        check.split_compile((1.0, 2.0))


def good_chain_split(num_chains, num_devices):
    base, extra = divmod(num_chains, num_devices)
    groups, start = [], 0
    for k in range(num_devices):
        size = base + (k < extra)
        groups.append(list(range(start, start + size)))
        start += size
    return groups


def seed_style_split(num_chains, num_devices):
    """The old bug: at least one chain per device, so 2 chains on 8 devices become 8."""
    per = max(1, num_chains // num_devices)
    return [list(range(k * per, (k + 1) * per)) for k in range(num_devices)]


def test_chain_split_accepts_an_even_split(capsys):
    check.chain_split(good_chain_split)
    check.chain_split(lambda n, d: [range(k, n, d) for k in range(d)])  # round robin is fine too
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize("wrong, message", [
    (seed_style_split, "made up extra chains|drops"),
    (lambda n, d: [list(range(k * (n // d), (k + 1) * (n // d))) for k in range(d)], "drops chain"),
    (lambda n, d: [list(range(-(-n // d) * k, min(n, -(-n // d) * (k + 1)))) for k in range(d)], "evenly"),
    (lambda n, d: [list(range(n))] + [[0]] * (d - 1), "more than once"),
    (lambda n, d: [list(range(n))], "exactly one per device|evenly"),
    (lambda n, d: 3, "one list"),
])
def test_chain_split_rejects_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check.chain_split(wrong)


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
    (lambda m, c: good_consensus(m, c)[0], "pair|shape"),
])
def test_gaussian_consensus_rejects_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
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


def test_chain_split_names_swapped_arguments():
    with pytest.raises(AssertionError, match=r"\(num_chains, num_devices\), in that order"):
        check.chain_split(lambda num_chains, num_devices: good_chain_split(num_devices, num_chains))


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
