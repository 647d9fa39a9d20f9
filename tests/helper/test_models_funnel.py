"""Tests of the funnel: both forms are the same distribution of v, the starts are fixed, bad input is refused."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from parallel_mcmc.models import funnel


def _position(v, x, centring):
    return {"v": jnp.float32(v), "y": jnp.asarray(x * np.exp(-(1 - centring) * v / 2), jnp.float32)}


@pytest.mark.parametrize("centring", [0.0, 1.0])
def test_the_log_density_is_the_funnels_up_to_a_constant(centring):
    """Against the exact joint density of (v, x), times the Jacobian of y -> x (e^{(1 - c) v d / 2})."""
    rng = np.random.default_rng(0)
    logdensity = funnel.make_logdensity(centring)
    got, want = [], []
    for _ in range(5):
        v, x = rng.normal(0, 2), rng.normal(size=funnel.DIM)
        got.append(float(logdensity(_position(v, x, centring))))
        want.append(stats.norm.logpdf(v, 0, funnel.V_SCALE) + stats.norm.logpdf(x, 0, np.exp(v / 2)).sum()
                    + (1 - centring) * v * funnel.DIM / 2)
    differences = np.array(got) - np.array(want)
    np.testing.assert_allclose(differences, differences[0], atol=1e-3)


def test_the_centring_may_be_traced():
    value = jax.jit(lambda c, p: funnel.make_logdensity(c)(p))(0.0, _position(0.5, np.ones(funnel.DIM), 0.0))
    assert np.isfinite(float(value))


def test_bulk_starts_are_fixed_and_in_the_bulk():
    a, b = funnel.bulk_starts(8, centring=1.0), funnel.bulk_starts(8, centring=1.0)
    np.testing.assert_array_equal(a["v"], b["v"])
    assert a["v"].shape == (8,) and a["y"].shape == (8, funnel.DIM)
    assert np.all(np.abs(np.asarray(a["v"])) < 2)
    non_centred = funnel.bulk_starts(8, centring=0.0)
    expected_y = np.exp(np.asarray(a["v"]) / 2)[:, None] * np.asarray(non_centred["y"])
    np.testing.assert_allclose(np.asarray(a["y"]), expected_y, rtol=1e-5)


@pytest.mark.parametrize("bad", [{"num_chains": 0}, {"num_chains": 2.5}, {"seed": -1}, {"dim": 0},
                                 {"centring": "centred"}])
def test_bad_arguments_say_what_to_pass(bad):
    arguments = {"num_chains": 4, **bad}
    with pytest.raises(ValueError):
        funnel.bulk_starts(**arguments)


def test_make_logdensity_refuses_a_bad_dim():
    with pytest.raises(ValueError, match="dim"):
        funnel.make_logdensity(0.0, dim=0)
